//! Moving around: the focus between panes, and the cursor or scroll of the
//! focused pane (keys and the mouse wheel both move through here, to the
//! pane's own step), each bounded by what the pane holds and shows at the
//! screen's size (as derived in the view: nothing here asks the drawing).

use crate::dashboard::app::{App, Pane};
use crate::dashboard::panes;

/// The detail follows the focused pane's selection: once the table has the
/// focus again it shows the selected transaction, not the account drilled
/// into (`Enter` on an account shows that account until then).
pub fn follow_focus(app: &mut App) {
    if app.focus == Pane::Transactions && app.selection.drill.take().is_some() {
        app.selection.detail_scroll = 0;
    }
}

pub fn cycle_focus(app: &mut App, step: isize) {
    let n = Pane::ORDER.len() as isize;
    let i = Pane::ORDER
        .iter()
        .position(|p| *p == app.focus)
        .unwrap_or(0) as isize;
    app.focus = Pane::ORDER[((i + step).rem_euclid(n)) as usize];
}

/// Moves `cursor` (`None`: nothing selected there yet → first row) by
/// `delta` within `len` rows.
pub fn step(cursor: Option<usize>, delta: isize, len: usize) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let next = match cursor {
        Some(c) => (c as isize).saturating_add(delta),
        None if delta >= isize::MAX / 2 => len as isize - 1,
        None => 0,
    };
    Some(next.clamp(0, len as isize - 1) as usize)
}

/// `j`/`k`, the page keys and the wheel: the focused pane moves its cursor
/// or scroll by `delta` (each pane's own keys, in [`crate::dashboard::panes`]).
pub fn move_selection(app: &mut App, delta: isize) {
    match app.focus {
        Pane::Transactions => panes::transactions::step(app, delta),
        Pane::Detail => panes::detail::scroll(app, delta),
        Pane::Accounts => panes::accounts::step(app, delta),
        Pane::Locks => panes::locks::step(app, delta),
        Pane::Log => panes::log::scroll(app, delta),
    }
}
