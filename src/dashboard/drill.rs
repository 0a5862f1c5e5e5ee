//! The account drill-down (`Enter` in the accounts pane): it filters the
//! table to the account, and leaving it (`Esc`) puts back the filters that
//! were in place before, so nothing opened later is hidden by a filter the
//! operator never typed.

use super::app::{App, Pane};

/// `Enter` on an account: the detail pane shows the account (balance,
/// pending and settled records, the transactions naming it) and the table
/// is filtered to the transactions naming it; `Esc` goes back, to the
/// filters of before.
pub fn open(app: &mut App) {
    let Some(id) = app
        .view
        .account_cursor
        .and_then(|i| app.view.accounts.get(i))
        .cloned()
    else {
        return;
    };
    if app.filter_before_drill.is_none() {
        app.filter_before_drill = Some((app.filter.clone(), app.state_filter.clone()));
    }
    app.filter = id.clone();
    app.state_filter = None;
    super::follow::keep_selection_visible(app);
    app.account_drill = Some(id);
    app.detail_scroll = 0;
    app.focus = Pane::Detail;
}

/// Leaving a drill-down: the filters in place before it come back, so a
/// transaction opened later (from a lock, with `#`) is not hidden by an
/// account filter the operator never typed.
pub fn restore_filter(app: &mut App) {
    if let Some((filter, state)) = app.filter_before_drill.take() {
        app.filter = filter;
        app.state_filter = state;
    }
}
