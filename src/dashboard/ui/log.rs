//! The event log: newest line at the bottom, `HH:MM:SS` and the text,
//! coloured by level (updated green, no-op gray, error red, info plain).
//! `app.scroll[2]` scrolls back from the newest line.

use super::theme::{clock, dim, pane_block, DANGER, GOOD};
use crate::dashboard::app::{App, LogLevel, Pane};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the log pane.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let len = app.log.len();
    let back = app.scroll[2].min(len.saturating_sub(1));
    let end = len - back;
    let rows = area.height.saturating_sub(2) as usize;
    let start = end.saturating_sub(rows);
    let mut title = String::from(" log ");
    if back > 0 {
        title.push_str(&format!("(scrolled back {back}) "));
    }
    let lines: Vec<Line> = app
        .log
        .iter()
        .skip(start)
        .take(end - start)
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
