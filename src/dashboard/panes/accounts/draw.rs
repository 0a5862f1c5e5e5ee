//! Drawing the accounts pane: every account of the snapshot, those carrying
//! pending transactions first, then malformed and missing ones (marked
//! `?`), then the rest — id, balance, and the pending ids (count and the
//! first). The selected row (by id) is highlighted; the view keeps it on
//! screen and the title says what is above and below.

use crate::dashboard::app::{App, Pane};
use crate::dashboard::ui::theme::{bold, more_hint, pane_block, short_id, Theme};
use crate::protocol::read::poll::{AccountEntry, Snapshot};
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use ratatui::Frame;

/// Draws the accounts pane.
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let th = &app.theme;
    let v = &app.view.accounts;
    let height = usize::from(area.height.saturating_sub(3)).max(1);
    let shown = v.ids.len().saturating_sub(v.offset).min(height);
    let title = format!(
        " accounts {} {}",
        v.ids.len(),
        more_hint(v.offset, shown, v.ids.len())
    );
    let block = pane_block(th, title, app.focus == Pane::Accounts);
    if v.ids.is_empty() {
        frame.render_widget(
            Paragraph::new("no accounts loaded")
                .style(th.dim_text())
                .block(block),
            area,
        );
        return;
    }
    let shown_ids: Vec<&String> = v.ids.iter().skip(v.offset).take(height).collect();
    let (id_w, pending_id_w) = column_widths(snap, &shown_ids, area.width.saturating_sub(2));
    let rows: Vec<Row> = v
        .ids
        .iter()
        .enumerate()
        .skip(v.offset)
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
        Constraint::Length(id_w as u16),
        Constraint::Length(BALANCE),
        Constraint::Fill(1),
    ];
    let table = Table::new(rows, widths)
        .header(header)
        .block(block)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state =
        TableState::default().with_selected(v.cursor.and_then(|c| c.checked_sub(v.offset)));
    frame.render_stateful_widget(table, area, &mut state);
}

/// Width of the balance column.
const BALANCE: u16 = 8;

/// The widths of the id column and of the first pending transaction id
/// (`None`: no room for it, the count alone) for the pane's `inner` width
/// and the accounts on screen. Account ids are what the operator types
/// into `/` and `--ids-from`: they get their width first, the pending
/// column what is left; only a pane too narrow for the ids alone shortens
/// them (in the middle). One width per column, so an id is cut alike on
/// every row.
fn column_widths(snap: &Snapshot, shown: &[&String], inner: u16) -> (usize, Option<usize>) {
    // The symbol column, the mark, the balance and three spaces are fixed.
    let rest = usize::from(inner.saturating_sub(1 + 1 + BALANCE + 3));
    let longest = shown.iter().map(|id| id.chars().count()).max().unwrap_or(0);
    let id_w = longest.max(2).min(rest);
    let most = shown
        .iter()
        .filter_map(|id| match snap.accounts.get(*id) {
            Some(AccountEntry::Ok(s)) => Some(s.pending.len()),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    // `N ` before the id, ` …` after it when there are more.
    let prefix = most.to_string().len() + 1 + if most > 1 { 2 } else { 0 };
    let pending_w = rest.saturating_sub(id_w + prefix);
    // Shorter than `txn-…74ca`, the first id would say nothing.
    (id_w, (pending_w >= 9).then_some(pending_w))
}

/// One account; `(id_w, pending_w)`: the widths its id and the pending
/// transaction id are shortened to (no pending id: its count alone).
fn row<'a>(
    th: &Theme,
    id: &'a str,
    e: &'a AccountEntry,
    (id_w, pending_w): (usize, Option<usize>),
) -> Row<'a> {
    let id = short_id(id, id_w);
    match e {
        AccountEntry::Ok(s) => {
            let pending = match (s.pending.as_slice(), pending_w) {
                ([], _) => Cell::from("-").style(th.dim_text()),
                (p, None) => Cell::from(p.len().to_string()),
                ([first], Some(w)) => Cell::from(format!("1 {}", short_id(first, w))),
                ([first, ..], Some(w)) => {
                    Cell::from(format!("{} {} …", s.pending.len(), short_id(first, w)))
                }
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
            Cell::from(format!("malformed: {p}")),
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
