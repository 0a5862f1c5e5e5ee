//! The accounts pane: every account of the snapshot, those carrying
//! pending transactions first, then malformed and missing ones (marked
//! `?`), then the rest — id, balance, and the pending ids (count and the
//! first). Scrolled by `app.scroll[0]`.

use super::theme::{bold, dim, pane_block, ODD};
use crate::dashboard::app::{App, Pane};
use crate::dashboard::snapshot::{AccountEntry, Snapshot};
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

/// Draws the accounts pane.
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let mut entries: Vec<(&String, &AccountEntry)> = snap.accounts.iter().collect();
    entries.sort_by_key(|(id, e)| (rank(e), (*id).clone()));
    let skip = app.scroll[0].min(entries.len().saturating_sub(1));
    let mut title = format!(" accounts {} ", entries.len());
    if skip > 0 {
        title.push_str(&format!("(+{skip} above) "));
    }
    let block = pane_block(title, app.focus == Pane::Accounts);
    if entries.is_empty() {
        frame.render_widget(
            Paragraph::new("no accounts loaded")
                .style(dim())
                .block(block),
            area,
        );
        return;
    }
    let rows: Vec<Row> = entries
        .into_iter()
        .skip(skip)
        .map(|(id, e)| row(id, e))
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
    frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
}

fn rank(e: &AccountEntry) -> u8 {
    match e {
        AccountEntry::Ok(s) if !s.pending.is_empty() => 0,
        AccountEntry::Malformed(_) | AccountEntry::Missing => 1,
        AccountEntry::Ok(_) => 2,
    }
}

fn row<'a>(id: &'a str, e: &'a AccountEntry) -> Row<'a> {
    match e {
        AccountEntry::Ok(s) => {
            let pending = match s.pending.as_slice() {
                [] => Cell::from("-").style(dim()),
                [first] => Cell::from(format!("1 {first}")),
                [first, ..] => Cell::from(format!("{} {first} …", s.pending.len())),
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
        .style(Style::new().fg(ODD)),
        AccountEntry::Missing => Row::new(vec![
            Cell::from("?"),
            Cell::from(id),
            Cell::from(Line::from("—").alignment(Alignment::Right)),
            Cell::from("missing"),
        ])
        .style(Style::new().fg(ODD)),
    }
}
