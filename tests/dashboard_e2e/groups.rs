//! Issue 18's "a group opened and bulk-acted": `c` counts the stuck
//! transactions by cause on the cluster; Enter on a group makes it the
//! table's filter; `*` marks its rows and `R` rolls them back in one bulk
//! act with the dialog's preview, count and reason. A transaction outside
//! the group is untouched.

use crate::common;
use crate::tmux;
use crate::world::{quit, World};
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn a_group_opened_from_the_causes_view_is_rolled_back_in_bulk() {
    let started = Instant::now();
    let w = World::new();
    // Three half-applied transfers stuck in `pending` for 90 minutes, and
    // one further on (`committed`) from the same outage.
    let staged: Vec<_> = ["g1", "g2", "g3"]
        .into_iter()
        .map(|tag| w.stage(tag, 2, true, Some(90)))
        .collect();
    let other = w.stage("gother", 4, false, Some(90));
    w.refresh();
    let tui = w.dashboard("groups", &[]);
    tui.wait_for_all(&["transactions 4 of 4", &other.id]);

    tui.keys(&["c"]);
    let view = tui.wait_for_all(&[
        "stuck by cause: 4 stuck",
        "by state × age",
        "▶ pending · 1h–6h",
        "by account (hot accounts)",
        "by modification time (outage window)",
    ]);
    assert!(view.contains("committed · 1h–6h"), "{view}");
    assert!(view.contains("by lock holder (process)"), "{view}");
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["transactions 3 of 3", "group pending · 1h–6h"]);
    tui.keys(&["*"]);
    tui.wait_for_all(&["· 3 marked"]);
    tui.keys(&["R"]);
    tui.wait_for_all(&[
        "Roll back 3 marked transaction(s)?",
        " 3 roll back",
        "reason (required",
    ]);
    tui.keys(&["y"]);
    tui.type_text("the pending ones of the outage");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the group rolled back", tmux::DEADLINE, || {
        staged
            .iter()
            .all(|s| w.state(&s.id) == Some(TxnState::RolledBack))
    });
    // The run ends (locks released, receipts verified) before `q`: a `q`
    // during the run would ask whether to stop it.
    tui.wait_for("the run's end line", |s| {
        s.contains("bulk roll back: 3 of 3 ended (3 completed)")
    });
    assert_eq!(
        w.state(&other.id),
        Some(TxnState::Committed),
        "not in the group"
    );
    for s in &staged {
        let [r] = w
            .history(&s.id)
            .try_into()
            .unwrap_or_else(|h| panic!("{h:?}"));
        assert!(r.bulk && r.reason.as_deref() == Some("the pending ones of the outage"));
    }
    quit(
        &tui,
        "a_group_opened_from_the_causes_view_is_rolled_back_in_bulk",
        started,
    );
}
