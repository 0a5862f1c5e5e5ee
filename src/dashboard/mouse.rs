//! Mouse clicks: a left click focuses the pane under the pointer and, in
//! the transaction table, the accounts and the locks, selects the row (by
//! the same layout the renderer draws).

use super::app::{App, Pane};
use super::ui;

/// A left click focuses the pane under the pointer; in the transaction
/// table, the accounts and the locks it also selects the row.
pub fn click(app: &mut App, column: u16, row: u16) {
    let areas = ui::areas(app);
    let Some(pane) = areas.pane_at(column, row) else {
        return;
    };
    app.focus = pane;
    let locks = app.snapshot.as_ref().map_or(0, |s| s.locks.len());
    // Area, first row on screen, rows, lines per row, header lines.
    let (area, offset, len, per_row, header) = match pane {
        Pane::Transactions => (
            areas.transactions,
            app.view.table_offset,
            app.view.rows.len(),
            1,
            1,
        ),
        Pane::Accounts => (
            areas.accounts,
            app.view.account_offset,
            app.view.accounts.len(),
            1,
            1,
        ),
        Pane::Locks if ui::locks_one_line(areas.locks) => {
            (areas.locks, app.view.lock_offset, locks, 1, 1)
        }
        Pane::Locks => (areas.locks, app.view.lock_offset, locks, 2, 0),
        _ => return,
    };
    let first = area.y + 1 + header;
    let last = area.y + area.height.saturating_sub(1);
    if row < first || row >= last {
        return;
    }
    let index = offset + usize::from((row - first) / per_row);
    if index >= len {
        return;
    }
    match pane {
        Pane::Transactions => app.select_index(index),
        Pane::Accounts => app.selected_account = app.view.accounts.get(index).cloned(),
        _ => {
            app.selected_lock = app
                .snapshot
                .as_ref()
                .and_then(|s| s.locks.get(index))
                .map(|l| l.info.resource.clone())
        }
    }
}
