//! The selection follows what the operator sees. A new text filter starts
//! at the top of its rows (the first row is selected, as in k9s, lazygit
//! and htop); a state cycle, an age toggle, `Esc` or a drill-down that
//! hides the selected row selects the first visible row. So the row the
//! action keys act on is always the highlighted one, and `/ id Enter R`
//! rolls back the row the filter found. A transaction opened explicitly
//! (`#`, or from its lock) stays selected: the detail names it as the
//! target. A poll alone never moves the selection (rows are selected by id).

use crate::dashboard::app::{App, LogLevel};

/// The text filter changed (typed, or erased): the first row of the new
/// filter is selected and shown at the top. With no row matching, the
/// selection stays where it was (hidden; the action keys refuse it).
pub fn new_filter(app: &mut App) {
    app.refresh_view();
    if !app.view.table.rows.is_empty() {
        app.select_index(0);
    }
}

/// The rows shown changed by something other than typing (a state cycle,
/// `x`/`X`, `Esc`, a drill-down): if the selection is no longer a row of
/// the table, the first visible row is selected instead — unless the
/// selection was opened explicitly (`#`, from a lock), which the detail
/// keeps naming as the keys' target.
pub fn keep_selection_visible(app: &mut App) {
    app.refresh_view();
    let pinned = app.selection.pinned.is_some() && app.selection.pinned == app.selection.txn;
    if app.view.table.cursor.is_none() && !pinned && !app.view.table.rows.is_empty() {
        app.select_index(0);
    }
}

/// `]` / `[`: the next or previous page of the filter's matches (read by
/// the next poll, asked at once; its first row is selected when it comes).
/// Past the last page, or the deepest one paging reaches, it says so.
pub fn turn_page(app: &mut App, forward: bool) {
    if !forward {
        app.query.page = app.query.page.saturating_sub(1);
        return;
    }
    match app.table_page() {
        Some(t) if t.has_next() => app.query.page += 1,
        Some(t) if t.beyond_reach() => app.push_log(
            LogLevel::Info,
            format!(
                "rows past {} are not paged to: narrow the filter",
                crate::protocol::read::table::MAX_WINDOW
            ),
        ),
        Some(_) => app.push_log(LogLevel::Info, "last page"),
        None => {}
    }
}
