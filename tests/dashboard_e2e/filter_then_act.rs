//! The natural flow of issue 18: `/`, an id, Enter, `R`, typed in one go
//! the way an operator types them, rolls back the row the filter found —
//! not the row selected before the filter hid it.

use crate::common;
use crate::tmux;
use crate::world::{quit, World};
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn slash_id_enter_r_rolls_back_the_row_the_filter_found() {
    let started = Instant::now();
    let w = World::new();
    // `first` is the oldest: the row selected when the dashboard opens.
    let first = w.stage("first", 2, false, Some(120));
    let found = w.stage("found", 2, false, Some(90));
    w.refresh();
    let tui = w.dashboard("filter-act", &[]);
    tui.wait_for_all(&[&first.id, &found.id, "transactions 2 of 2"]);
    tui.wait_for_all(&[&format!("detail: {} ", first.id)]);

    tui.keys(&["/"]);
    tui.type_text(&found.id);
    tui.keys(&["Enter", "R"]);
    let title = format!("Roll back {}?", found.id);
    let screen = tui.wait_for_all(&[&title, "rollback would run these steps:", "[ Confirm (y) ]"]);
    assert!(
        !screen.contains(&format!("Roll back {}?", first.id)),
        "the row the filter hid:\n{screen}"
    );
    tui.keys(&["y"]);
    tui.type_text("found by id");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the found one rolled back", tmux::DEADLINE, || {
        w.state(&found.id) == Some(TxnState::RolledBack)
    });
    assert_eq!(w.state(&first.id), Some(TxnState::Pending), "untouched");
    quit(
        &tui,
        "slash_id_enter_r_rolls_back_the_row_the_filter_found",
        started,
    );
}
