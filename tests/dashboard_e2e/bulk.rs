//! Bulk rollback from the dashboard: three rows marked with Space, one R
//! dialog counting what each would do, a required reason, the items run
//! (progress and per-item outcomes in the log), ONE audit record for the
//! selection, as `rollback --ids-from` leaves.

use crate::common;
use crate::tmux;
use crate::world::{quit, World};
use estx::protocol::trail::{ActOutcome, ActionKind, Interface, RecordStatus};
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn three_marked_transactions_rolled_back_with_a_reason() {
    let started = Instant::now();
    let w = World::new();
    // Three half-applied transfers whose workers died an hour and a half ago,
    // and one committed (not marked: must stay as it is).
    let staged: Vec<_> = ["b1", "b2", "b3"]
        .into_iter()
        .map(|tag| w.stage(tag, 2, false, Some(90)))
        .collect();
    let other = w.stage("other", 4, false, Some(90));
    w.refresh();
    let tui = w.dashboard("bulk", &[]);
    tui.wait_for_all(&["transactions 4 of 4", &other.id]);

    // Filter to the three, mark each with Space.
    // Part of an account: the cluster finds `src-b1`, `dst-b2`, ...
    crate::screen::filter_to(&tui, "-b");
    tui.wait_for_all(&["transactions 3 of 3"]);
    tui.keys(&["g", "Space", "j", "Space", "j", "Space"]);
    tui.wait_for_all(&["· 3 marked"]);

    tui.keys(&["R"]);
    tui.wait_for_all(&[
        "Roll back 3 marked transaction(s)?",
        "3 marked row(s) of the table, re-read just now:",
        " 3 roll back",
        "balance effect of the 3 (net +300):",
        "reason (required",
    ]);
    tui.keys(&["y"]);
    tui.type_text("bulk cleanup after the outage");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("all three rolled back", tmux::DEADLINE, || {
        staged
            .iter()
            .all(|s| w.state(&s.id) == Some(TxnState::RolledBack))
    });
    let screen = tui.wait_for_with(
        "the run's summary and each item in the log",
        || w.refresh(),
        |s| {
            s.contains("bulk roll back: 3 of 3 ended (3 completed) · audit record ")
                // Each item has its line (the log keeps the last few).
                && staged.iter().any(|t| {
                    s.contains(&format!(
                        "Roll back {}: completed: transaction is rolled-back",
                        t.id
                    ))
                })
        },
    );
    assert!(!screen.contains("· 3 marked"), "marks cleared:\n{screen}");
    let mut ids = std::collections::BTreeSet::new();
    for s in &staged {
        let (a, b) = (w.account(&s.src), w.account(&s.dest));
        assert_eq!((a.balance, b.balance), (500, 500), "{a:?} {b:?}");
        let records = w.history(&s.id);
        let [r] = records.as_slice() else {
            panic!("one record for {}: {records:?}", s.id)
        };
        assert_eq!(r.reason.as_deref(), Some("bulk cleanup after the outage"));
        assert!(r.bulk, "{r:?}");
        ids.insert(r.record_id.clone());
        assert_eq!(
            (r.action, r.interface, r.status, r.outcome, r.forced),
            (
                ActionKind::Rollback,
                Interface::Dashboard,
                RecordStatus::Finished,
                Some(ActOutcome::Completed),
                false
            )
        );
    }
    assert_eq!(ids.len(), 1, "one record for the selection: {ids:?}");
    assert_eq!(w.state(&other.id), Some(TxnState::Committed), "not marked");
    quit(
        &tui,
        "three_marked_transactions_rolled_back_with_a_reason",
        started,
    );
}
