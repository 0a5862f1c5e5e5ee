//! The frame a profile draws around the whole screen (`label`, `colour`;
//! red with `PRODUCTION` for `production = true`), so the cluster an
//! operator is about to write to is never mistaken for another: a thick
//! border in its colour, its label reversed on the top and bottom edges.

use super::theme::Theme;
use crate::dashboard::app::{MarkColour, ProfileMark};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType};
use ratatui::Frame;

/// The frame's colour in the theme.
pub fn colour(th: &Theme, c: MarkColour) -> Color {
    match c {
        MarkColour::Danger => th.danger,
        MarkColour::Warn => th.warn,
        MarkColour::Named(c) => c,
    }
}

/// Draws the frame of `mark` around `area`; returns what is inside it.
pub fn render(frame: &mut Frame, th: &Theme, mark: &ProfileMark, area: Rect) -> Rect {
    let c = colour(th, mark.colour);
    let label = Line::from(format!(" {} ", mark.label))
        .style(th.alert(c))
        .centered();
    let block = Block::bordered()
        .border_type(BorderType::Thick)
        .border_style(Style::new().fg(c))
        .title_top(label.clone())
        .title_bottom(label);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    inner
}
