//! The key hint bar on the last line, for the mode the screen is in:
//! dialog, help, filter typing, or the main screen (where the action keys
//! say "read-only" in read-only mode). Hints that do not fit are dropped,
//! least useful first.

use super::theme::{dim, fit_segments, Segment, WARN};
use crate::dashboard::app::App;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the key bar.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let hints: Vec<(u8, &str, &str)> = if app.dialog.is_some() {
        vec![
            (0, "y", "confirm"),
            (0, "n/Esc", "cancel"),
            (1, "Tab/←/→", "move focus"),
            (1, "Enter", "press focused"),
        ]
    } else if app.help {
        vec![(0, "any key", "closes help")]
    } else if app.editing_filter {
        vec![
            (0, "type", "to filter"),
            (0, "Enter", "keep"),
            (0, "Esc", "clear"),
            (1, "Backspace", "delete"),
        ]
    } else if app.settings.read_only {
        vec![
            (0, "?", "help"),
            (1, "Tab", "pane"),
            (0, "/", "filter"),
            (0, "s", "state"),
            (2, "o/O", "sort"),
            (0, "R F L", "read-only"),
            (2, "r", "refresh"),
            (2, "p", "pause"),
            (0, "q", "quit"),
        ]
    } else {
        vec![
            (0, "?", "help"),
            (1, "Tab", "pane"),
            (0, "/", "filter"),
            (0, "s", "state"),
            (2, "o/O", "sort"),
            (0, "R", "rollback"),
            (0, "F", "recover"),
            (0, "L", "locks"),
            (2, "r", "refresh"),
            (2, "p", "pause"),
            (0, "q", "quit"),
        ]
    };
    let key_style = Style::new().add_modifier(Modifier::BOLD);
    let segs = hints
        .into_iter()
        .map(|(prio, key, what)| {
            let what_style = if what == "read-only" {
                Style::new().fg(WARN)
            } else {
                dim()
            };
            Segment::new(
                prio,
                vec![
                    Span::styled(key, key_style),
                    Span::raw(" "),
                    Span::styled(what, what_style),
                ],
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(fit_segments(segs, "  ", area.width)), area);
}
