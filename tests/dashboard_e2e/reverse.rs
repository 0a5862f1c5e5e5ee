//! Reversing a finished transfer from the dashboard (`V`): looked up by id,
//! the dialog previews the compensating transfer, the reason is typed, the
//! reversal runs, the log says it ran as previewed, and the `-reversal`
//! transaction shows its link in the detail pane; the audit trail holds the
//! record with the reason.

use crate::common;
use crate::tmux;
use crate::world::World;
use estx::protocol::trail::{ActOutcome, ActionKind, RecordStatus};
use estx::protocol::TxnState;

#[test]
fn a_finished_transfer_is_reversed_from_the_dashboard() {
    let w = World::new();
    let s = w.stage("rev", 4, false, Some(90));
    w.finish(&s);
    // Committed and finished: 100 moved from the source to the destination.
    assert_eq!(w.account(&s.src).balance, 400);
    w.refresh();
    let rev = format!("{}-reversal", s.id);

    let tui = w.dashboard("reverse", &[]);
    tui.wait_for("the first poll", |sc| sc.contains("in flight"));
    // Finished: not in the in-flight list; looked up by id.
    tui.keys(&["#"]);
    tui.type_text(&s.id);
    tui.keys(&["Enter"]);
    tui.wait_for("the finished transaction read by id", |sc| {
        sc.contains("now finished (read by id")
    });
    tui.keys(&["V"]);
    tui.wait_for_all(&[
        &format!("Reverse {}?", s.id),
        &format!(
            "compensating transfer {rev}: {} → {}, amount 100",
            s.dest, s.src
        ),
        "reverse: create reversal",
        "[ Confirm (y) ]",
    ]);
    assert_eq!(w.account(&s.src).balance, 400, "nothing before y");
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (required"]);
    tui.type_text("INC-42 wrong payee");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the amount moved back", tmux::DEADLINE, || {
        w.account(&s.src).balance == 500
    });
    tui.wait_for_all(&[
        &format!("Reverse {}: reversed by {rev}", s.id),
        &format!("Reverse {}: ran as previewed", s.id),
    ]);
    assert_eq!(w.state(&rev), Some(TxnState::Finished));
    assert_eq!(w.account(&s.dest).balance, 500);
    // The original, read again after the action, names its reversal.
    tui.wait_for("the original's link in the detail", |sc| {
        sc.contains(&format!("↩ reversed by {rev}"))
    });

    // The reversal, looked up, names what it reverses.
    tui.keys(&["#"]);
    tui.type_text(&rev);
    tui.keys(&["Enter"]);
    tui.wait_for("the reversal's link in the detail", |sc| {
        sc.contains(&format!("↩ reverses {}", s.id))
    });

    let records: Vec<_> = w
        .history(&s.id)
        .into_iter()
        .filter(|r| r.action == ActionKind::Reverse)
        .collect();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0].reason.as_deref(), Some("INC-42 wrong payee"));
    assert_eq!(records[0].status, RecordStatus::Finished, "{records:#?}");
    assert_eq!(
        records[0].outcome,
        Some(ActOutcome::Completed),
        "{records:#?}"
    );
    assert!(
        records[0]
            .plan
            .iter()
            .any(|l| *l == format!("create {rev}: {} -> {}, amount 100", s.dest, s.src)),
        "{records:#?}"
    );
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
}
