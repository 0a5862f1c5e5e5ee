//! The accounts pane: every account of the snapshot, those carrying
//! pending transactions first. Its view (`view.rs`: the order, the
//! selected account's row and the scroll, derived once), the keys only it
//! handles (moving among the accounts; `Enter` drills into one, shown by
//! the detail pane: [`super::account_detail`]) and its drawing (`draw.rs`).

pub mod draw;
pub mod view;

use crate::dashboard::app::App;

/// `j`/`k` (and the wheel) on the accounts: selects the account `delta`
/// rows on (the first when none is selected yet).
pub fn step(app: &mut App, delta: isize) {
    let v = &app.view.accounts;
    if let Some(i) = crate::dashboard::selection::navigation::step(v.cursor, delta, v.ids.len()) {
        select(app, i);
    }
}

/// Selects the account at row `i` of the pane (a click, a key).
pub fn select(app: &mut App, i: usize) {
    app.selection.account = app.view.accounts.ids.get(i).cloned();
}
