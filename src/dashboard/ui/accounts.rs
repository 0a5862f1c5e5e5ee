//! The accounts pane: every account of the snapshot, those carrying
//! pending transactions first, then malformed and missing ones (marked
//! `?`), then the rest — id, balance, and the pending ids (count and the
//! first). The selected row (by id) is highlighted; the view keeps it on
//! screen and the title says what is above and below.

use super::theme::{bold, more_hint, pane_block, short_id, Theme};
use crate::dashboard::app::{App, Pane};
use crate::protocol::read::poll::{AccountEntry, Snapshot};
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use ratatui::Frame;

/// Draws the accounts pane.
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let th = &app.theme;
    let v = &app.view;
    let height = usize::from(area.height.saturating_sub(3)).max(1);
    let shown = v
        .accounts
        .len()
        .saturating_sub(v.account_offset)
        .min(height);
    let title = format!(
        " accounts {} {}",
        v.accounts.len(),
        more_hint(v.account_offset, shown, v.accounts.len())
    );
    let block = pane_block(th, title, app.focus == Pane::Accounts);
    if v.accounts.is_empty() {
        frame.render_widget(
            Paragraph::new("no accounts loaded")
                .style(th.dim_text())
                .block(block),
            area,
        );
        return;
    }
    // The widths the table gives its id and pending columns (the symbol
    // column, the mark, the balance and three spaces fixed; the rest shared
    // 1:2), so ids are shortened in the middle to fit, never cut at the
    // edge; one width per column, so an id is cut alike on every row.
    let rest = usize::from(area.width.saturating_sub(2)).saturating_sub(1 + 1 + 8 + 3);
    let id_w = rest / 3;
    let pending_w = rest - id_w;
    let shown_entries: Vec<&AccountEntry> = v
        .accounts
        .iter()
        .skip(v.account_offset)
        .take(height)
        .filter_map(|id| snap.accounts.get(id))
        .collect();
    let pending_counts = shown_entries.iter().filter_map(|e| match e {
        AccountEntry::Ok(s) => Some(s.pending.len()),
        _ => None,
    });
    let most = pending_counts.max().unwrap_or(0);
    let prefix = most.to_string().len() + 1 + if most > 1 { 2 } else { 0 };
    let pending_id_w = pending_w.saturating_sub(prefix).max(5);
    let rows: Vec<Row> = v
        .accounts
        .iter()
        .enumerate()
        .skip(v.account_offset)
        .take(height)
        .filter_map(|(_, id)| Some(row(th, id, snap.accounts.get(id)?, (id_w, pending_id_w))))
        .collect();
    let header = Row::new(vec![
        Cell::from(""),
        Cell::from("id"),
        Cell::from(Line::from("balance").alignment(Alignment::Right)),
        Cell::from("pending"),
    ])
    .style(bold().add_modifier(Modifier::UNDERLINED));
    let widths = [
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(8),
        Constraint::Fill(2),
    ];
    let table = Table::new(rows, widths)
        .header(header)
        .block(block)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state = TableState::default().with_selected(
        v.account_cursor
            .and_then(|c| c.checked_sub(v.account_offset)),
    );
    frame.render_stateful_widget(table, area, &mut state);
}

/// One account; `(id_w, pending_w)`: the widths its id and the pending
/// transaction id are shortened to.
fn row<'a>(
    th: &Theme,
    id: &'a str,
    e: &'a AccountEntry,
    (id_w, pending_w): (usize, usize),
) -> Row<'a> {
    let id = short_id(id, id_w);
    match e {
        AccountEntry::Ok(s) => {
            let pending = match s.pending.as_slice() {
                [] => Cell::from("-").style(th.dim_text()),
                [first] => Cell::from(format!("1 {}", short_id(first, pending_w))),
                [first, ..] => Cell::from(format!(
                    "{} {} …",
                    s.pending.len(),
                    short_id(first, pending_w)
                )),
            };
            Row::new(vec![
                Cell::from(""),
                Cell::from(id),
                Cell::from(Line::from(s.balance.to_string()).alignment(Alignment::Right)),
                pending,
            ])
        }
        AccountEntry::Malformed(p) => Row::new(vec![
            Cell::from("?"),
            Cell::from(id),
            Cell::from(Line::from("?").alignment(Alignment::Right)),
            Cell::from(format!("malformed: {}", p.join("; "))),
        ])
        .style(Style::new().fg(th.odd)),
        AccountEntry::Missing => Row::new(vec![
            Cell::from("?"),
            Cell::from(id),
            Cell::from(Line::from("—").alignment(Alignment::Right)),
            Cell::from("missing"),
        ])
        .style(Style::new().fg(th.odd)),
    }
}
