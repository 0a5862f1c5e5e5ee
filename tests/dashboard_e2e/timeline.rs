//! The timeline view (`T`): empty before any act; after a rollback from the
//! dashboard, it lists that act — when, what, how it ended, who, from the
//! dashboard, why — read from the audit trail.

use crate::common;
use crate::tmux;
use crate::world::World;
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn the_timeline_shows_an_act_of_the_dashboard() {
    let started = Instant::now();
    let w = World::new();
    let pend = w.stage("tl", 2, false, Some(90));
    w.refresh();
    let tui = w.dashboard("timeline", &[]);
    tui.wait_for_all(&[&pend.id, "transactions 1 of 1"]);

    // Nothing recorded yet: the view says so.
    tui.keys(&["T"]);
    tui.wait_for_all(&["interventions since", "no recorded interventions since"]);
    tui.keys(&["Escape"]);
    tui.wait_for("the timeline closed", |s| {
        !s.contains("interventions since")
    });

    tui.keys(&["g"]);
    tui.wait_for_all(&[&format!("detail: {} ", pend.id)]);
    tui.keys(&["R"]);
    // The preview read: `y` confirms what it shows.
    tui.wait_for_all(&[
        &format!("Roll back {}?", pend.id),
        "rollback would run these steps:",
        "ends in: rolled-back",
        "[ Confirm (y) ]",
    ]);
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (required"]);
    tui.type_text("INC-42 timeline");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the transaction is rolled-back", tmux::DEADLINE, || {
        w.state(&pend.id) == Some(TxnState::RolledBack)
    });
    // The record completed (and the audit index refreshed: a search sees it).
    common::wait_until_blocking("the record completed", tmux::DEADLINE, || {
        w.history(&pend.id)
            .first()
            .is_some_and(|r| r.finished_at.is_some())
    });
    let user = w.history(&pend.id)[0].operator.user.clone();

    tui.keys(&["T"]);
    let screen = tui.wait_for_all(&[
        "interventions since",
        ": 1 ",
        "rollback · 1 transaction(s)",
        "completed",
        &format!("by {user} "),
        "via dashboard",
        "reason: INC-42 timeline",
    ]);
    assert!(!screen.contains("no recorded interventions"), "{screen}");
    tui.keys(&["Escape", "q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "the_timeline_shows_an_act_of_the_dashboard: {:?}",
        started.elapsed()
    );
}
