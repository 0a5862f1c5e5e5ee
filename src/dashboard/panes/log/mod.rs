//! The event log pane: the newest line at the bottom, followed until the
//! operator scrolls. Its view (`view.rs`: the first line on screen, derived
//! once), its keys (`j`/`k` and the wheel scroll, `G` follows the newest
//! again) and its drawing (`draw.rs`).

pub mod draw;
pub mod view;

use crate::dashboard::app::App;
use crate::dashboard::layout;
use view::LogView;

impl App {
    /// The first log entry shown when following the newest, at the log
    /// pane's size ([`view::last_top`]).
    pub fn log_last_top(&self) -> usize {
        let room = layout::pane_rows_in(self.screen()).log;
        let width = usize::from(self.areas().log.width.saturating_sub(2)).max(1);
        view::last_top(&self.log, room, width)
    }
}

/// The log pane's view, derived from the state.
pub fn derive(app: &App) -> LogView {
    view::derive(app.selection.log_top, app.log_last_top())
}

/// `j`/`k` (and the wheel) on the log: scrolls by `delta` entries; back at
/// the newest, it follows again.
pub fn scroll(app: &mut App, delta: isize) {
    let last_top = app.log_last_top();
    let top = (app.view.log.top as isize)
        .saturating_add(delta)
        .clamp(0, last_top as isize) as usize;
    app.selection.log_top = (top < last_top).then_some(top);
}

/// `G` on the log: follows the newest entry again.
pub fn follow(app: &mut App) {
    app.selection.log_top = None;
}
