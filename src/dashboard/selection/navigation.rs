//! Moving around: the focus between panes, and the cursor or scroll of the
//! focused pane (keys and the mouse wheel both move through here), each
//! bounded by what the pane holds and shows at the screen's size.

use crate::dashboard::app::{App, Pane};
use crate::dashboard::view::DetailView;

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
fn step(cursor: Option<usize>, delta: isize, len: usize) -> Option<usize> {
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

pub fn move_selection(app: &mut App, delta: isize) {
    match app.focus {
        Pane::Transactions => {
            if let Some(i) = step(app.view.cursor, delta, app.view.rows.len()) {
                app.select_index(i);
            }
        }
        Pane::Detail => {
            let max = detail_scroll_max(app, app.view.detail.as_ref());
            app.selection.detail_scroll = (app.selection.detail_scroll as isize)
                .saturating_add(delta)
                .clamp(0, max as isize) as usize;
        }
        Pane::Accounts => {
            if let Some(i) = step(app.view.account_cursor, delta, app.view.accounts.len()) {
                app.selection.account = app.view.accounts.get(i).cloned();
            }
        }
        Pane::Locks => {
            let len = app.snapshot.as_ref().map_or(0, |s| s.locks.len());
            if let Some(i) = step(app.view.lock_cursor, delta, len) {
                app.selection.lock = app
                    .snapshot
                    .as_ref()
                    .and_then(|s| s.locks.get(i))
                    .map(|l| l.info.resource.clone());
            }
        }
        Pane::Log => {
            let last_top = app.log_last_top();
            let top = (app.view.log_top as isize)
                .saturating_add(delta)
                .clamp(0, last_top as isize) as usize;
            app.selection.log_top = (top < last_top).then_some(top);
        }
    }
}

/// How far the detail can scroll: its lines less the pane's height.
fn detail_scroll_max(app: &App, d: Option<&DetailView>) -> usize {
    let area = crate::dashboard::layout::layout_for(app.screen(), Pane::Detail).detail;
    let lines = match (&app.view.account, d) {
        (Some(a), _) => crate::dashboard::ui::account_line_count(a, area.width),
        (None, Some(d)) => crate::dashboard::ui::detail_line_count(app, d, area.width),
        (None, None) => 0,
    };
    lines.saturating_sub(usize::from(area.height.saturating_sub(2)))
}
