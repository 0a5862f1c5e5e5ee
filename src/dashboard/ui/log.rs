//! The event log: newest line at the bottom, `HH:MM:SS` and the text,
//! coloured by level (updated green, no-op gray, error red, info plain).
//! It follows the newest line until scrolled (k/↑ go to older lines, j/↓ to
//! newer, G back to following); the view bounds the scroll.

use super::theme::{clock, dim, more_hint, pane_block, DANGER, GOOD};
use crate::dashboard::app::{App, LogLevel, Pane};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the log pane.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let len = app.log.len();
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let start = app.view.log_top.min(len);
    let shown = len.saturating_sub(start).min(rows);
    let mut title = String::from(" log ");
    title.push_str(&more_hint(start, shown, len));
    if app.log_top.is_some() {
        title.push_str("(scrolled; G follows) ");
    }
    let lines: Vec<Line> = app
        .log
        .iter()
        .skip(start)
        .take(shown)
        .map(|e| {
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
        })
        .collect();
    let body = if lines.is_empty() {
        vec![Line::styled("nothing yet", dim())]
    } else {
        lines
    };
    frame.render_widget(
        Paragraph::new(body).block(pane_block(title, app.focus == Pane::Log)),
        area,
    );
}
