//! The event log: newest line at the bottom, `HH:MM:SS` and the text,
//! coloured by level (updated green, no-op gray, error red, info plain).
//! It follows the newest line until scrolled (k/↑ go to older lines, j/↓ to
//! newer, G back to following); the view bounds the scroll. Long lines
//! wrap (never cut at the edge).

use super::theme::{clock, dim, more_hint, pane_block, wrapped_rows, DANGER, GOOD};
use crate::dashboard::app::{App, LogEntry, LogLevel, Pane};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// The line an entry is drawn as.
fn entry_line(e: &LogEntry) -> Line<'_> {
    let style = match e.level {
        LogLevel::Info => Style::new(),
        LogLevel::Updated => Style::new().fg(GOOD),
        LogLevel::Noop => Style::new().fg(Color::Gray),
        LogLevel::Error => Style::new().fg(DANGER),
    };
    Line::from(vec![
        Span::styled(format!("{} ", clock(e.at)), dim()),
        Span::styled(e.text.as_str(), style),
    ])
}

/// Rows the entry takes wrapped to `width` columns (the view bounds the
/// scroll with it).
pub fn entry_rows(e: &LogEntry, width: usize) -> usize {
    wrapped_rows(&[entry_line(e)], width)
}

/// Draws the log pane: entries from the view's first one, each wrapped
/// whole, as many as fit.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let len = app.log.len();
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let width = usize::from(area.width.saturating_sub(2)).max(1);
    let start = app.view.log_top.min(len);
    let (mut used, mut shown) = (0, 0);
    for e in app.log.iter().skip(start) {
        let h = entry_rows(e, width);
        if shown > 0 && used + h > rows {
            break;
        }
        used += h;
        shown += 1;
    }
    let mut title = String::from(" log ");
    title.push_str(&more_hint(start, shown, len));
    if app.log_top.is_some() {
        title.push_str("(scrolled; G follows) ");
    }
    let lines: Vec<Line> = app.log.iter().skip(start).take(shown).map(entry_line).collect();
    let body = if lines.is_empty() {
        vec![Line::styled("nothing yet", dim())]
    } else {
        lines
    };
    frame.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .block(pane_block(title, app.focus == Pane::Log)),
        area,
    );
}
