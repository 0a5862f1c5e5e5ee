//! The account drill-down (`Enter` in the accounts pane), drawn in the
//! detail pane: balance, every pending entry (whole ids, with the state of
//! that transaction when it is listed), the settled records the protocol
//! keeps, and the listed transactions naming the account. Scrolls like the
//! transaction detail; `Esc` goes back to the accounts.

use super::theme::{bold, datetime, more_hint, pane_block, wrapped_rows, Theme};
use crate::dashboard::app::{App, Pane};
use crate::dashboard::view::AccountDetail;
use crate::protocol::read::poll::AccountEntry;
use crate::protocol::transaction::TxnState;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the drill-down, scrolled by `app.selection.detail_scroll` (bounded to its text).
pub fn render(frame: &mut Frame, app: &App, a: &AccountDetail, area: Rect) {
    let th = &app.theme;
    let body = lines(th, a);
    let inner_w = usize::from(area.width.saturating_sub(2)).max(1);
    let total = wrapped_rows(&body, inner_w);
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = app
        .selection
        .detail_scroll
        .min(total.saturating_sub(height));
    let title = format!(
        " account: {} {}",
        a.id,
        more_hint(scroll, height.min(total), total)
    );
    frame.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .scroll((scroll.min(usize::from(u16::MAX)) as u16, 0))
            .block(pane_block(th, title, app.focus == Pane::Detail)),
        area,
    );
}

/// Lines of the drill-down at `width`.
pub fn line_count(a: &AccountDetail, width: u16) -> usize {
    // Styles do not change how many rows the text takes.
    wrapped_rows(
        &lines(&Theme::default(), a),
        usize::from(width.saturating_sub(2)).max(1),
    )
}

fn state_word(th: &Theme, s: &Option<TxnState>) -> (String, Style) {
    match s {
        Some(s) => (s.to_string(), Style::new()),
        None => ("not listed (# looks it up)".into(), th.dim_text()),
    }
}

fn lines(th: &Theme, a: &AccountDetail) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let s = match &a.entry {
        Some(AccountEntry::Ok(s)) => s,
        Some(AccountEntry::Malformed(p)) => {
            out.push(Line::styled(
                format!("? malformed: {p}"),
                Style::new().fg(th.odd),
            ));
            return out;
        }
        Some(AccountEntry::Missing) => {
            out.push(Line::styled(
                "? missing: named by a transaction, no such account",
                Style::new().fg(th.odd),
            ));
            return out;
        }
        None => {
            out.push(Line::styled("not in the last poll", th.dim_text()));
            return out;
        }
    };
    out.push(Line::from(vec![
        Span::styled("balance ", bold()),
        Span::raw(s.balance.to_string()),
    ]));
    out.push(Line::styled(
        format!("pending_transactions ({}):", s.pending.len()),
        bold(),
    ));
    if a.pending.is_empty() {
        out.push(Line::styled(" none", th.dim_text()));
    }
    for (id, state) in &a.pending {
        let (word, style) = state_word(th, state);
        out.push(Line::from(vec![
            Span::styled(format!(" {id} "), Style::new().fg(th.warn)),
            Span::styled(word, style),
        ]));
    }
    out.push(Line::styled(
        format!("settled records ({}):", s.settled.len()),
        bold(),
    ));
    if s.settled.is_empty() {
        out.push(Line::styled(" none", th.dim_text()));
    }
    for r in &s.settled {
        out.push(Line::from(vec![
            Span::raw(format!(" {} ", r.txn)),
            Span::styled(r.outcome.as_str().to_string(), Style::new().fg(th.good)),
            Span::styled(format!(" · {}", datetime(r.at)), th.dim_text()),
        ]));
    }
    out.push(Line::styled(
        format!(
            "listed transactions naming it ({}; the table is filtered to them):",
            a.naming.len()
        ),
        bold(),
    ));
    for (id, state) in &a.naming {
        let (word, style) = state_word(th, state);
        out.push(Line::from(vec![
            Span::raw(format!(" {id} ")),
            Span::styled(word, style),
        ]));
    }
    out.push(Line::styled(
        "Esc: back to the accounts, the table's filter as before",
        th.dim_text(),
    ));
    out
}
