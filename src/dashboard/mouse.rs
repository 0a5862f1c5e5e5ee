//! The mouse: a left click focuses the pane under the pointer and, in
//! the transaction table, the accounts and the locks, selects the row (by
//! the same layout the renderer draws); the wheel scrolls the pane under
//! the pointer (focusing it), as `j`/`k` would.

use super::app::{App, Pane};
use super::keymap::Op;
use super::layers::{audit::Audit, OverlayKind};
use super::layout;

/// A left click focuses the pane under the pointer; in the transaction
/// table, the accounts and the locks it also selects the row.
pub fn click(app: &mut App, column: u16, row: u16) {
    if app.overlays.is_open(OverlayKind::Audit) {
        // The audit pane covers the panes: nothing behind it is clicked.
        return;
    }
    let areas = app.areas();
    let Some(pane) = areas.pane_at(column, row) else {
        return;
    };
    app.focus = pane;
    let locks = app.snapshot.as_ref().map_or(0, |s| s.locks.len());
    // Area, first row on screen, rows, lines per row, header lines.
    let (area, offset, len, per_row, header) = match pane {
        Pane::Transactions => (
            areas.transactions,
            app.view.table.offset,
            app.view.table.rows.len(),
            1,
            1,
        ),
        Pane::Accounts => (
            areas.accounts,
            app.view.accounts.offset,
            app.view.accounts.ids.len(),
            1,
            1,
        ),
        Pane::Locks if layout::locks_one_line(areas.locks) => {
            (areas.locks, app.view.locks.offset, locks, 1, 1)
        }
        Pane::Locks => (areas.locks, app.view.locks.offset, locks, 2, 0),
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
        Pane::Accounts => super::panes::accounts::select(app, index),
        _ => super::panes::locks::select(app, index),
    }
}

/// The wheel over a pane: focuses it and moves its selection (or scroll)
/// by `delta`, as `j`/`k` would; outside every pane it does nothing; over
/// the audit pane it moves among the findings.
pub fn wheel(app: &mut App, column: u16, row: u16, delta: isize) {
    if app.overlays.is_open(OverlayKind::Audit) {
        // Over the audit pane (it covers the others): its findings.
        let op = if delta > 0 { Op::Down } else { Op::Up };
        if let Some(pane) = app.overlays.get_mut::<Audit>() {
            pane.on_op(&app.audit, op);
        }
        return;
    }
    let Some(pane) = app.areas().pane_at(column, row) else {
        return;
    };
    app.focus = pane;
    super::selection::navigation::move_selection(app, delta);
}
