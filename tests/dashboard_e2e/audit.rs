//! The audit pane (`A`) driven from the dashboard: a finding the background
//! audit reports is repaired through the confirmation dialog, and the
//! balance total is checked against `--expect-total`.

use crate::common;
use crate::tmux;
use crate::world::World;

/// A rolled-back transfer a late worker applied anyway (a dangling pending
/// entry, 100 missing from the total): the audit pane lists it and the
/// total's mismatch; Enter on it opens the repair dialog, `y` (then Enter
/// past the optional reason) repairs it
/// (balance and pending list restored), the next audit finds nothing and
/// the log says what was repaired.
#[test]
fn an_audit_finding_is_repaired_from_the_dashboard() {
    let w = World::new();
    let late = w.stage_late_apply("late");
    w.refresh();

    let tui = w.dashboard("audit", &["--expect-total", "1000"]);
    tui.wait_for("the first poll", |s| s.contains(late.src.as_str()));
    tui.keys(&["A"]);
    let dangling = format!("dangling_pending {}", late.src);
    tui.wait_for_with(
        "the dangling entry and the total in the audit pane",
        || w.refresh(),
        |s| s.contains(&dangling) && s.contains("total_mismatch") && s.contains("expected 1000"),
    );
    // Findings are ordered by kind: the dangling entry is the first, selected.
    tui.wait_for("the dangling entry selected", |s| {
        s.lines().any(|l| l.contains('▶') && l.contains(&dangling))
    });
    tui.keys(&["Enter"]);
    tui.wait_for_all(&[
        &format!("Repair the dangling entries of {}?", late.src),
        "dangling pending entries found by the audit just now:",
        "[ Confirm (y) ]",
    ]);
    assert_eq!(w.account(&late.src).balance, 400, "nothing before y");
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (optional"]);
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the late apply is undone", tmux::DEADLINE, || {
        let a = w.account(&late.src);
        a.balance == 500 && a.pending.is_empty()
    });
    // The audit runs again after the action (its pane stays open): nothing
    // left, and the total is back to the expected one.
    tui.wait_for_with(
        "an audit with no findings",
        || w.refresh(),
        |s| {
            s.contains("audit: 0 finding(s) · balances 1000")
                && s.contains("no findings")
                && s.contains("audit 0 (A)")
        },
    );
    tui.keys(&["Escape"]);
    tui.wait_for("the repair in the log", |s| {
        s.contains(&format!(
            "Repair the dangling entries of {}: repaired:",
            late.src
        ))
    });
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
}
