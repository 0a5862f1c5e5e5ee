//! The locks pane: every lock of the snapshot, stale ones marked. Its view
//! (`view.rs`: the selected lock's row and the scroll, derived once), the
//! keys only it handles (moving among the locks; `Enter` opens the owner
//! transaction; `L` on it releases the lock, through the dialog) and its
//! drawing (`draw.rs`).

pub mod draw;
pub mod view;

use crate::dashboard::app::{App, Pane};
use crate::protocol::locks::LockView;

impl App {
    /// The lock under the locks pane's cursor.
    pub fn lock_at_cursor(&self) -> Option<&LockView> {
        let i = self.view.locks.cursor?;
        self.snapshot.as_ref()?.locks.get(i)
    }
}

/// `j`/`k` (and the wheel) on the locks: selects the lock `delta` rows on
/// (the first when none is selected yet).
pub fn step(app: &mut App, delta: isize) {
    let len = app.snapshot.as_ref().map_or(0, |s| s.locks.len());
    if let Some(i) =
        crate::dashboard::selection::navigation::step(app.view.locks.cursor, delta, len)
    {
        select(app, i);
    }
}

/// Selects the lock at `i` of the snapshot's locks (a click, a key).
pub fn select(app: &mut App, i: usize) {
    app.selection.lock = app
        .snapshot
        .as_ref()
        .and_then(|s| s.locks.get(i))
        .map(|l| l.info.resource.clone());
}

/// `Enter` on a lock opens its owner transaction in the detail, named there
/// as the target of `R`/`F`/`L` (explicitly opened, as a look-up with `#`).
pub fn open(app: &mut App) {
    let owner = app.lock_at_cursor().and_then(|l| l.info.owner.clone());
    if let Some(owner) = owner {
        app.select(owner.clone());
        app.selection.pinned = Some(owner);
        app.focus = Pane::Detail;
    }
}
