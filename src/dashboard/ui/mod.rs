//! Rendering: a pure function of [`App`](super::app::App) (being written).

use super::app::App;
use ratatui::Frame;

/// Draws the whole screen.
pub fn render(frame: &mut Frame, app: &App) {
    let _ = (frame, app);
}
