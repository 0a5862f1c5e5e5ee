//! What the account drill-down says, line by line: balance, every pending
//! entry (whole ids, with the state of that transaction when it is
//! listed), the settled records the protocol keeps, and the listed
//! transactions naming the account. Drawn by `draw.rs`, and measured by
//! `derive` (how far the detail pane scrolls), so the update never asks
//! the drawing.

use super::view::AccountDetail;
use crate::dashboard::ui::theme::{bold, datetime, wrapped_rows, Theme};
use crate::protocol::read::poll::AccountEntry;
use crate::protocol::transaction::TxnState;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Rows the drill-down takes in a detail pane `width` columns wide
/// (borders included).
pub fn rows(a: &AccountDetail, width: u16) -> usize {
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

/// The drill-down of `a`, styled by `th`.
pub fn lines(th: &Theme, a: &AccountDetail) -> Vec<Line<'static>> {
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
