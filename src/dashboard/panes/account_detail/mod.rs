//! The account drill-down (`Enter` in the accounts pane), shown in the
//! detail pane's place: its view (`view.rs`: the account and the
//! transactions naming it, derived once), its text (`text.rs`, drawn and
//! measured), its keys and its drawing (`draw.rs`). Opening it filters the
//! table to the account, and leaving it (`Esc`) puts back the filters that
//! were in place before, so nothing opened later is hidden by a filter the
//! operator never typed.

pub mod draw;
pub mod text;
pub mod view;

use crate::dashboard::app::{App, Pane};

/// `Enter` on an account: the detail pane shows the account (balance,
/// pending and settled records, the transactions naming it) and the table
/// is filtered to the transactions naming it; `Esc` goes back, to the
/// filters of before.
pub fn open(app: &mut App) {
    let accounts = &app.view.accounts;
    let Some(id) = accounts.cursor.and_then(|i| accounts.ids.get(i)).cloned() else {
        return;
    };
    if app.query.before_drill.is_none() {
        app.query.before_drill = Some((app.query.text.clone(), app.query.state.clone()));
    }
    app.query.text = id.clone();
    app.query.state = None;
    crate::dashboard::selection::follow::keep_selection_visible(app);
    app.selection.drill = Some(id);
    app.selection.detail_scroll = 0;
    app.focus = Pane::Detail;
}

/// Leaving a drill-down: the filters in place before it come back, so a
/// transaction opened later (from a lock, with `#`) is not hidden by an
/// account filter the operator never typed.
pub fn restore_filter(app: &mut App) {
    if let Some((filter, state)) = app.query.before_drill.take() {
        app.query.text = filter;
        app.query.state = state;
    }
}
