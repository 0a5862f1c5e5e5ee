//! Several operators at once (issue 30 item 4), the done-when:
//! two dashboards (alice's and bob's) and one CLI job on the same rows.
//! Bob's dashboard marks the job's row within a poll of the job's record
//! being searchable, logs alice's act as it lands, and refuses his own
//! act on the job's row without force, saying whose job it is; forced,
//! with a reason, it runs and its record names the job it overrode.

use crate::screen::filter_to;
use crate::tmux::Tmux;
use crate::world::{quit, World};
use estx::protocol::TxnState;
use std::time::Instant;

/// Selects the first row of the (filtered) table, `id`.
fn select_first(tui: &Tmux, id: &str) {
    tui.keys(&["g"]);
    let title = format!("detail: {id} ");
    tui.wait_for(&format!("{id} selected"), |s| {
        s.contains(&title) && s.contains('▶') && !s.contains("hidden by the filter")
    });
}

/// R on the selected `id` (its plan shown), confirmed with `y` and `reason`.
fn roll_back(tui: &Tmux, id: &str, reason: &str) {
    tui.keys(&["R"]);
    tui.wait_for_all(&[
        &format!("Roll back {id}?"),
        "rollback would run these steps:",
        "[ Confirm (y) ]",
    ]);
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (required"]);
    tui.type_text(reason);
    tui.keys(&["Enter"]);
}

#[test]
fn two_dashboards_and_a_cli_job_see_each_other_and_a_colliding_act_is_refused() {
    let started = Instant::now();
    let w = World::new();
    let held = w.stage("held", 2, false, Some(90));
    let other = w.stage("other", 2, false, Some(90));
    w.refresh();
    let alice = w.dashboard_with_env("ops-alice", &[], &[("USER", "alice")]);
    let bob = w.dashboard_with_env("ops-bob", &[], &[("USER", "bob")]);
    alice.wait_for_all(&["transactions 2 of 2"]);
    bob.wait_for_all(&["transactions 2 of 2"]);

    // The CLI job on `held` (its heartbeat every ten minutes: live
    // throughout): bob's dashboard marks its row.
    let job = w.job_beating(&[&held.id], std::time::Duration::from_secs(600));
    let mark = format!("@ {}", held.id);
    bob.wait_for_with(
        "the job's row marked",
        || w.refresh(),
        |s| s.contains(&mark),
    );
    filter_to(&bob, &held.id);
    select_first(&bob, &held.id);
    bob.wait_for_all(&["@ held by", "live recover job", &job[..20]]);

    // Alice rolls back the other row: bob's log says so.
    filter_to(&alice, &other.id);
    select_first(&alice, &other.id);
    roll_back(&alice, &other.id, "INC-9");
    alice.wait_for_all(&[&format!("Roll back {}: completed", other.id)]);
    assert_eq!(w.state(&other.id), Some(TxnState::RolledBack));
    let line = format!("alice: rollback of {} completed (INC-9)", other.id);
    bob.wait_for_with(
        "alice's act in bob's log",
        || w.refresh(),
        |s| s.contains(&line),
    );

    // Bob's rollback of the job's row: the dialog says whose job holds
    // it and only the force key acts; `y` is refused, nothing written.
    let title = format!("Roll back {}?", held.id);
    bob.keys(&["R"]);
    bob.wait_for_all(&[&title, "y is refused:", "is held by", "[ FORCE (!) ]"]);
    bob.keys(&["y"]);
    let refused = format!("Roll back {}: refused: `{}` is held by", held.id, held.id);
    bob.wait_for(&format!("{refused:?} with the dialog open"), |s| {
        s.contains(&refused) && s.contains(&title)
    });
    assert_eq!(w.state(&held.id), Some(TxnState::Pending));
    // Forced, with a reason: it runs, and its record names the job.
    bob.keys(&["!"]);
    bob.type_text("INC-9 the job is wedged");
    bob.keys(&["Enter"]);
    bob.wait_for_all(&[&format!("Roll back {}: completed", held.id)]);
    let records = w.history(&held.id);
    let forced = records
        .iter()
        .find(|r| r.action == estx::protocol::trail::ActionKind::Rollback)
        .unwrap_or_else(|| panic!("the forced rollback's record: {records:?}"));
    assert!(forced.forced, "{forced:?}");
    assert!(
        forced.overrode.len() == 1 && forced.overrode[0].starts_with(&job),
        "{forced:?}"
    );
    // Alice's own act is not logged back to her as someone else's.
    let screen = alice.wait_for_all(&[&format!("Roll back {}: completed", other.id)]);
    assert!(!screen.contains(&line), "{screen}");

    alice.keys(&["q"]);
    assert_eq!(alice.wait_exit(), 0);
    quit(&bob, "two dashboards and a cli job", started);
}
