//! What the locks pane shows, derived once (by `derive`, never while
//! drawing): where the selected lock is among the snapshot's locks, and
//! the first lock on screen. Pure: it imports nothing of the dashboard but
//! `layout`.

use crate::dashboard::layout::keep_visible;
use crate::protocol::locks::LockView;

/// The locks pane's derived cursor and scroll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LocksView {
    /// Position of the selected lock in `snapshot.locks`.
    pub cursor: Option<usize>,
    /// First lock row on screen.
    pub offset: usize,
}

/// The pane's view over `locks`, the lock `selected` (by resource) kept on
/// screen in `fit` rows, scrolled as little as possible from `prev`.
pub fn derive(
    locks: &[LockView],
    selected: Option<&String>,
    prev: LocksView,
    fit: usize,
) -> LocksView {
    let cursor = selected.and_then(|r| locks.iter().position(|l| &l.info.resource == r));
    LocksView {
        cursor,
        offset: keep_visible(prev.offset, cursor, locks.len(), fit),
    }
}
