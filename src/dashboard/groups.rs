//! The view of the stuck transactions by cause (`c`), drawn over the panes
//! like the audit: the cluster's counts by state × age, lock holder,
//! account and band of modification times (see
//! [`crate::protocol::read::groups`]). Enter opens the selected group: it
//! becomes the table's filter, run by the cluster, so its rows are listed,
//! paged and marked (`*`) for a bulk act like any filter's, with the bulk
//! dialog's dry-run preview, count and reason. `Esc` on the table (with no
//! text filter) closes the group.

use super::app::{App, LogLevel, Pane};
use super::event::IoRequest;
use super::keymap::Op;
use super::overlay::{Overlay, OverlayKind};

/// `c`: opens the view and counts the groups again (one count at a time).
pub fn open(app: &mut App) -> Vec<IoRequest> {
    app.overlays.open(Overlay::Groups);
    recount(app)
}

fn recount(app: &mut App) -> Vec<IoRequest> {
    if app.groups.is_loading() {
        return vec![];
    }
    app.groups.reload();
    vec![IoRequest::LoadGroups]
}

/// A key while the view is open: move, open a group, recount, or close.
pub fn on_groups_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    let n = app.groups.value().map_or(0, |g| g.groups.len());
    let last = n.saturating_sub(1);
    match op {
        Op::Down => app.group_cursor = (app.group_cursor + 1).min(last),
        Op::Up => app.group_cursor = app.group_cursor.saturating_sub(1),
        Op::PageDown => app.group_cursor = (app.group_cursor + 10).min(last),
        Op::PageUp => app.group_cursor = app.group_cursor.saturating_sub(10),
        Op::Top => app.group_cursor = 0,
        Op::Bottom => app.group_cursor = last,
        Op::Refresh => return recount(app),
        Op::Open => open_group(app),
        Op::Quit => return super::stop::quit(app),
        _ => {
            app.overlays.close(OverlayKind::Groups);
        }
    }
    vec![]
}

/// Enter: the selected group becomes the table's filter (the text, state
/// and age toggles give way to it).
fn open_group(app: &mut App) {
    let Some(g) = app
        .groups
        .value()
        .and_then(|g| g.groups.get(app.group_cursor))
        .cloned()
    else {
        return;
    };
    app.overlays.close(OverlayKind::Groups);
    app.filter.clear();
    app.filter_before_drill = None;
    app.state_filter = None;
    app.stuck_only = false;
    app.old_only = false;
    app.focus = Pane::Transactions;
    app.push_log(
        LogLevel::Info,
        format!(
            "group {}: {} ({} stuck)",
            g.kind.heading(),
            g.label,
            g.count
        ),
    );
    app.group = Some(g);
    super::follow::keep_selection_visible(app);
}
