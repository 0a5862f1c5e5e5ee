//! The locks pane: resource, holder, owner state, age and whether the lock
//! is stale (yellow), live or of unknown holder. Panes of usual width show
//! one line per lock (the owner state only when there is room); narrow ones
//! two (holder and owner state on the second).
//! Scrolled by `app.scroll[1]`.

use super::theme::{bold, dim, pane_block, GOOD, ODD, WARN};
use crate::dashboard::app::{App, Pane};
use crate::dashboard::snapshot::Snapshot;
use crate::protocol::lock::Staleness;
use crate::protocol::locks::LockView;
use crate::protocol::time::human_age;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

/// Inner width from which a lock fits on one line.
const WIDE: u16 = 40;
/// Inner width from which the owner's state gets a column.
const WIDER: u16 = 64;

/// Draws the locks pane.
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let skip = app.scroll[1].min(snap.locks.len().saturating_sub(1));
    let stale = snap.locks.iter().filter(|l| l.staleness.is_stale()).count();
    let mut title = format!(" locks {} ({stale} stale) ", snap.locks.len());
    if skip > 0 {
        title.push_str(&format!("(+{skip} above) "));
    }
    let block = pane_block(title, app.focus == Pane::Locks);
    if snap.locks.is_empty() {
        frame.render_widget(
            Paragraph::new("no locks held").style(dim()).block(block),
            area,
        );
        return;
    }
    let inner = area.width.saturating_sub(2);
    let wide = inner >= WIDE;
    let owner_col = inner >= WIDER;
    let rows: Vec<Row> = snap
        .locks
        .iter()
        .skip(skip)
        .map(|l| row(app, l, wide, owner_col))
        .collect();
    let table = if wide {
        let mut header = vec![Cell::from("resource"), Cell::from("holder")];
        let mut widths = vec![Constraint::Fill(1), Constraint::Fill(3)];
        if owner_col {
            header.push(Cell::from("owner state"));
            widths.push(Constraint::Length(11));
        }
        header.extend([
            Cell::from(Line::from("age").alignment(Alignment::Right)),
            Cell::from("status"),
        ]);
        widths.extend([Constraint::Length(6), Constraint::Length(7)]);
        let header = Row::new(header).style(bold().add_modifier(Modifier::UNDERLINED));
        Table::new(rows, widths).header(header)
    } else {
        let widths = [
            Constraint::Fill(1),
            Constraint::Length(7),
            Constraint::Length(6),
        ];
        Table::new(rows, widths)
    };
    frame.render_widget(table.block(block), area);
}

fn status(s: &Staleness) -> (&'static str, Style) {
    match s {
        Staleness::Live => ("live", Style::new().fg(GOOD)),
        Staleness::Stale(_) => ("stale", Style::new().fg(WARN).add_modifier(Modifier::BOLD)),
        Staleness::Unknown(_) => ("unknown", Style::new().fg(ODD)),
    }
}

fn row<'a>(app: &App, l: &'a LockView, wide: bool, owner_col: bool) -> Row<'a> {
    let age = l
        .info
        .age_seconds(app.now)
        .map(human_age)
        .unwrap_or_else(|| "-".into());
    let owner_state = l
        .owner_state
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| "-".into());
    let (word, style) = status(&l.staleness);
    let row_style = if l.staleness.is_stale() {
        Style::new().fg(WARN)
    } else {
        Style::new()
    };
    let age = Cell::from(Line::from(age).alignment(Alignment::Right));
    if wide {
        let mut cells = vec![
            Cell::from(l.info.resource.as_str()),
            Cell::from(l.info.holder_label()),
        ];
        if owner_col {
            cells.push(Cell::from(owner_state));
        }
        cells.extend([age, Cell::from(Span::styled(word, style))]);
        Row::new(cells).style(row_style)
    } else {
        let first = Text::from(vec![
            Line::from(l.info.resource.as_str()),
            Line::styled(format!(" {} · {owner_state}", l.info.holder_label()), dim()),
        ]);
        Row::new(vec![
            Cell::from(first),
            Cell::from(Span::styled(word, style)),
            age,
        ])
        .height(2)
        .style(row_style)
    }
}
