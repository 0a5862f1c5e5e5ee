//! The repair actions driven from the dashboard: rollback (R), recovery (F)
//! and lock release (L on a lock row), each checked on the screen and in the
//! documents; `y` never forces, the dialog's `!` does.

use crate::common;
use crate::screen::{filter_to, pane};
use crate::tmux;
use crate::world::{quit, World};
use estx::protocol::trail::{ActOutcome, ActionKind, Interface, RecordStatus};
use estx::protocol::TxnState;
use std::time::Instant;

/// R on a half-applied pending transaction rolls it back (balances restored,
/// shown in the log and gone from the in-flight list); R on a committed one
/// is refused, `y` there changes nothing, and Esc closes the dialog.
#[test]
fn rollback_from_the_dashboard() {
    let started = Instant::now();
    let w = World::new();
    // Worker died after "apply to source": pending, source debited, destination not credited.
    let pend = w.stage("pend", 2, false, Some(90));
    let comm = w.stage("comm", 4, false, Some(90));
    let new = w.stage("new", 0, false, Some(90));
    assert_eq!(w.state(&pend.id), Some(TxnState::Pending));
    assert_eq!(w.state(&comm.id), Some(TxnState::Committed));
    assert_eq!(w.state(&new.id), Some(TxnState::Created));
    assert_eq!(
        (w.account(&pend.src).balance, w.account(&pend.dest).balance),
        (400, 500)
    );
    w.refresh();

    let tui = w.dashboard("rollback", &[]);
    tui.wait_for_all(&[&pend.id, &comm.id, &new.id, "transactions 3 of 3"]);

    filter_to(&tui, &pend.id);
    tui.wait_for_all(&["transactions 1 of 1"]);
    select_first(&tui, &pend.id);
    tui.keys(&["R"]);
    let title = format!("Roll back {}?", pend.id);
    // Every expectation is part of the wait: a capture may catch a frame
    // half written, so what the final frame must show is waited for.
    let dialog = tui.wait_for_all(&[
        &title,
        "rollback would run these steps:",
        " 1. rollback 1: pending -> terminating",
        " 2. rollback 2: undo on source",
        " 3. rollback 3: undo on destination",
        " 4. rollback 4: terminating -> rolled-back",
        "ends in: rolled-back",
        "balance effect:",
        "src-pend: 400 → 500 (+100)",
        "dst-pend: 500 → 500 (±0)",
        "[ Cancel ]",
        "[ Confirm (y) ]",
    ]);
    assert!(
        !dialog.contains("WARNING"),
        "a 90-minute-old transaction is not recent:\n{dialog}"
    );

    // y opens the reason field; a rollback does not run without a reason.
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (required", "Enter runs · Esc back"]);
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["rollback needs a reason for the audit trail"]);
    assert_eq!(
        w.state(&pend.id),
        Some(TxnState::Pending),
        "ran without a reason"
    );
    tui.type_text("worker died mid-transfer");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the transaction is rolled-back", tmux::DEADLINE, || {
        w.state(&pend.id) == Some(TxnState::RolledBack)
    });
    w.assert_settled(&pend, (500, 500), "balances restored");
    // The log says so at once; the row leaves the in-flight list with the
    // first poll that sees the writes (we refresh, the dashboard does not).
    let done = format!(
        "Roll back {}: completed: transaction is rolled-back",
        pend.id
    );
    let screen = tui.wait_for_with(
        "the rollback in the log, the row gone, and the detail saying what became of it",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && s.contains("transactions 0 of 0")
                && s.contains("no transaction matches the filter")
                && s.contains("now rolled-back")
                && s.contains(&format!("detail: {}", pend.id))
        },
    );
    assert!(!screen.contains(&title), "the dialog closed:\n{screen}");
    assert!(
        screen.contains(&format!(
            "Roll back {}: ran as previewed (4 lines)",
            pend.id
        )),
        "the log matches the preview:\n{screen}"
    );
    // The intervention is in the audit trail: who, why, the plan, each step.
    let records = w.history(&pend.id);
    let [r] = records.as_slice() else {
        panic!("one record expected: {records:?}")
    };
    assert_eq!(r.reason.as_deref(), Some("worker died mid-transfer"));
    assert_eq!(
        (r.action, r.interface, r.status, r.outcome),
        (
            ActionKind::Rollback,
            Interface::Dashboard,
            RecordStatus::Finished,
            Some(ActOutcome::Completed)
        )
    );
    assert_eq!((r.plan.len(), r.forced), (4, false), "{r:?}");
    assert!(r.steps.len() >= 4, "{r:?}");
    assert!(
        screen.contains(&format!("audit record {}", r.record_id)),
        "the log names the record:\n{screen}"
    );
    // And the detail pane lists it (read from the trail after the next poll).
    let user = r.operator.user.clone();
    tui.wait_for_with(
        "the detail listing the intervention",
        || w.refresh(),
        |s| {
            s.contains("interventions (1):")
                && s.contains(&format!("rollback by {user} (dashboard) —"))
                && s.contains("completed · \"worker died mid-transfer\"")
        },
    );

    // A committed transaction: refused, and `y` does nothing.
    tui.keys(&["Escape"]);
    tui.wait_for("the filter cleared", |s| {
        s.contains("transactions 2 of 2") && !s.contains("· /")
    });
    filter_to(&tui, &comm.id);
    // The rolled-back transaction stays selected until the operator picks a row.
    select_first(&tui, &comm.id);
    let before = w.documents_of(&comm);
    tui.keys(&["R"]);
    let title = format!("Roll back {}?", comm.id);
    let refused = [
        title.as_str(),
        "rollback refused: transaction is committed",
        "nothing will be changed.",
        "[ Close ]",
    ];
    tui.wait_for("the refusal with only a Close button", |s| {
        refused.iter().all(|n| s.contains(n)) && !s.contains("[ Confirm (y) ]")
    });
    tui.keys(&["y"]);
    let nothing = format!("Roll back {}: nothing to confirm", comm.id);
    tui.wait_for(&format!("{nothing:?} and the dialog closed"), |s| {
        s.contains(&nothing) && !s.contains(&title)
    });
    // `y` issued no command at all (the log line proves it was handled).
    assert_eq!(
        w.documents_of(&comm),
        before,
        "`y` on a refusal changed the documents"
    );
    assert_eq!(w.state(&comm.id), Some(TxnState::Committed));

    tui.keys(&["R"]);
    tui.wait_for_all(&refused);
    tui.keys(&["Escape"]);
    tui.wait_for("the dialog closed by Esc", |s| {
        !s.contains(&title) && s.contains(&format!("· /{} ", comm.id))
    });
    assert_eq!(w.documents_of(&comm), before, "Esc changed the documents");

    quit(&tui, "rollback_from_the_dashboard", started);
}

/// `g` in the table selects its first row and waits until the detail shows `id`.
fn select_first(tui: &tmux::Tmux, id: &str) {
    tui.keys(&["g"]);
    let title = format!("detail: {id} ");
    tui.wait_for(&format!("{id} selected"), |s| {
        s.contains(&title) && s.contains('▶') && !s.contains("hidden by the filter")
    });
}

/// A transaction modified seconds ago: `R` shows the protocol's refusal and
/// a red force key; `y` changes nothing (the refusal is logged), `!` rolls
/// it back, with its locks released as the dialog listed.
#[test]
fn a_recent_transaction_is_refused_by_y_and_rolled_back_only_by_force() {
    let started = Instant::now();
    let w = World::new();
    // Modified just now (within the 2-minute recovery window), under locks.
    let live = w.stage("live", 2, true, None);
    assert_eq!(w.state(&live.id), Some(TxnState::Pending));
    assert!(w.lock_exists(&live.src) && w.lock_exists(&live.dest));
    w.refresh();

    let tui = w.dashboard("force", &[]);
    tui.wait_for_all(&[&live.id, "transactions 1 of 1"]);
    select_first(&tui, &live.id);
    tui.keys(&["R"]);
    let title = format!("Roll back {}?", live.id);
    tui.wait_for_all(&[
        &title,
        "y is refused: transaction was modified",
        "a worker may still be running it",
        "only the force key ! acts anyway",
        "rollback would run these steps:",
        &format!("release lock {} — deletes the lock", live.src),
        &format!("release lock {} — deletes the lock", live.dest),
        "src-live: 400 → 500 (+100)",
        "[ Cancel ]",
        "[ FORCE (!) ]",
    ]);
    let before = w.documents_of(&live);
    tui.keys(&["y"]);
    let refused = format!("Roll back {}: refused: transaction was modified", live.id);
    tui.wait_for(&format!("{refused:?} with the dialog still open"), |s| {
        s.contains(&refused) && s.contains(&title)
    });
    assert_eq!(w.documents_of(&live), before, "`y` changed the documents");
    assert!(w.lock_exists(&live.src) && w.lock_exists(&live.dest));

    tui.keys(&["!"]);
    tui.type_text("owner crashed; locks live by mistake");
    tui.keys(&["Enter"]);
    common::wait_until_blocking(
        "the transaction is rolled back and its locks are gone",
        tmux::DEADLINE,
        || {
            w.state(&live.id) == Some(TxnState::RolledBack)
                && !w.lock_exists(&live.src)
                && !w.lock_exists(&live.dest)
        },
    );
    let (a, b) = (w.account(&live.src), w.account(&live.dest));
    assert_eq!((a.balance, b.balance), (500, 500), "{a:?} {b:?}");
    assert!(a.pending.is_empty() && b.pending.is_empty(), "{a:?} {b:?}");
    let done = format!(
        "Roll back {}: completed: transaction is rolled-back",
        live.id
    );
    let screen = tui.wait_for_with(
        "the forced rollback in the log, as previewed",
        || w.refresh(),
        |s| s.contains(&done) && s.contains("ran as previewed") && s.contains("now rolled-back"),
    );
    assert!(
        screen.contains("confirmed FORCED") || screen.contains("(6 lines)"),
        "{screen}"
    );

    quit(
        &tui,
        "a_recent_transaction_is_refused_by_y_and_rolled_back_only_by_force",
        started,
    );
}

/// F on a stuck locked transaction finishes it with `y` (old enough: not
/// refused) and releases its locks as its dialog listed.
#[test]
fn recovery_from_the_dashboard_releases_the_locks_it_listed() {
    let started = Instant::now();
    let w = World::new();
    let stuck = w.stage("stuck", 2, true, Some(90));
    w.refresh();
    let tui = w.dashboard("recover", &[]);
    tui.wait_for("the transaction and its two locks", |s| {
        s.contains(&stuck.id) && pane(s, "locks 2").is_some_and(|p| p.contains(stuck.src.as_str()))
    });
    select_first(&tui, &stuck.id);
    tui.keys(&["F"]);
    tui.wait_for_all(&[
        &format!("Recover {}?", stuck.id),
        "recovery would run these steps:",
        "core 3: apply to destination",
        &format!("release lock {} — deletes the lock", stuck.dest),
        "ends in: finished",
        "dst-stuck: 500 → 600 (+100)",
        "[ Confirm (y) ]",
    ]);
    let screen = tui.screen();
    assert!(!screen.contains("FORCE"), "not refused:\n{screen}");
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (optional"]);
    tui.keys(&["Enter"]);
    common::wait_until_blocking("finished, locks gone", tmux::DEADLINE, || {
        w.state(&stuck.id) == Some(TxnState::Finished)
            && !w.lock_exists(&stuck.src)
            && !w.lock_exists(&stuck.dest)
    });
    w.assert_settled(&stuck, (400, 600), "moved once");
    let done = format!("Recover {}: completed: transaction is finished", stuck.id);
    tui.wait_for_with(
        "the recovery in the log, as previewed, and no locks left",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && s.contains(&format!("Recover {}: ran as previewed", stuck.id))
                && pane(s, "locks 0").is_some_and(|p| p.contains("no locks held"))
        },
    );
    quit(
        &tui,
        "recovery_from_the_dashboard_releases_the_locks_it_listed",
        started,
    );
}

/// A lock left behind by a transaction that was rolled back: selected in the
/// locks pane, `L` releases exactly that lock (stale: `y` is enough).
#[test]
fn a_stale_lock_of_a_rolled_back_transaction_is_released_from_the_locks_pane() {
    let started = Instant::now();
    let w = World::new();
    let gone = w.stage("gone", 2, true, Some(90));
    w.roll_back(&gone);
    assert_eq!(w.state(&gone.id), Some(TxnState::RolledBack));
    // Its worker died holding a lock after all (re-taken, never released).
    w.put_lock(&gone.src, &gone.id);
    // And a live lock of a transaction in flight, which must stay.
    let busy = w.stage("busy", 1, true, None);
    w.refresh();

    let tui = w.dashboard("locks", &[]);
    tui.wait_for("three locks, one stale", |s| {
        pane(s, "locks 3 (1 stale)").is_some_and(|p| p.contains(gone.src.as_str()))
    });
    // Tab to the locks pane and select the stale lock's row.
    tui.keys(&["Tab", "Tab", "Tab"]);
    tui.wait_for("the locks pane focused", |s| s.contains("┏ locks 3"));
    // The oldest lock (the stale one) is the first row: `j` selects it.
    tui.keys(&["j"]);
    tui.wait_for("the stale lock selected", |s| {
        s.lines()
            .any(|l| l.contains("▶") && l.contains(gone.src.as_str()) && l.contains("stale"))
    });
    tui.keys(&["L"]);
    let title = format!("Release the lock on {}?", gone.src);
    tui.wait_for_all(&[
        &title,
        &format!("txn {} (worker-9:999)", gone.id),
        "owner transaction: rolled-back",
        &format!("1. delete lock {} — stale", gone.src),
        "[ Confirm (y) ]",
    ]);
    assert!(
        !tui.screen().contains("FORCE"),
        "a stale lock needs no force"
    );
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (optional"]);
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the stale lock is deleted", tmux::DEADLINE, || {
        !w.lock_exists(&gone.src)
    });
    assert!(
        w.lock_exists(&busy.src) && w.lock_exists(&busy.dest),
        "the live locks stay"
    );
    let done = format!("Release the lock on {}: {} released", gone.src, gone.src);
    tui.wait_for_with(
        "the release in the log and two live locks left",
        || w.refresh(),
        |s| s.contains(&done) && s.contains("locks 2 (0 stale)"),
    );
    quit(
        &tui,
        "a_stale_lock_of_a_rolled_back_transaction_is_released_from_the_locks_pane",
        started,
    );
}
