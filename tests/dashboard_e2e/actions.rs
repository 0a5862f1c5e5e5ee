//! The repair actions driven from the dashboard: rollback (R), force recovery
//! (F) and lock release (L), each checked on the screen and in the documents.

use crate::common;
use crate::screen::{filter_to, pane};
use crate::tmux;
use crate::world::World;
use estx::protocol::account::SettledOutcome;
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
    tui.wait_for_all(&[&pend.id, &comm.id, &new.id, "transactions 3/3"]);

    filter_to(&tui, &pend.id);
    tui.wait_for_all(&["transactions 1/3"]);
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

    tui.keys(&["y"]);
    common::wait_until_blocking("the transaction is rolled-back", tmux::DEADLINE, || {
        w.state(&pend.id) == Some(TxnState::RolledBack)
    });
    let (a, b) = (w.account(&pend.src), w.account(&pend.dest));
    assert_eq!(
        (a.balance, b.balance),
        (500, 500),
        "balances restored: {a:?} {b:?}"
    );
    assert!(
        a.pending.is_empty() && b.pending.is_empty(),
        "pending left: {a:?} {b:?}"
    );
    assert_eq!(
        a.settled_of(&pend.id).map(|s| s.outcome),
        Some(SettledOutcome::Undone)
    );
    assert_eq!(
        b.settled_of(&pend.id).map(|s| s.outcome),
        Some(SettledOutcome::Undone)
    );
    // The log says so at once; the row leaves the in-flight list with the
    // first poll that sees the writes (we refresh, the dashboard does not).
    let done = format!(
        "Roll back {}: completed: transaction is rolled-back",
        pend.id
    );
    let screen = tui.wait_for_with(
        "the rollback in the log and the row gone",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && s.contains("transactions 0/2")
                && s.contains("no transaction matches the filter")
        },
    );
    assert!(!screen.contains(&title), "the dialog closed:\n{screen}");

    // A committed transaction: refused, and `y` does nothing.
    tui.keys(&["Escape"]);
    tui.wait_for("the filter cleared", |s| {
        s.contains("transactions 2/2") && !s.contains("· /")
    });
    filter_to(&tui, &comm.id);
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

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!("rollback_from_the_dashboard took {:?}", started.elapsed());
}

/// F on a transaction modified just now warns that a worker may still run
/// it, then finishes it (money moved once, its locks released); L on a
/// stuck locked transaction deletes its lock documents and the locks pane
/// empties.
#[test]
fn force_recovery_and_lock_release_from_the_dashboard() {
    let started = Instant::now();
    let w = World::new();
    // Modified just now (within the 2-minute recovery window), under locks.
    let live = w.stage("live", 2, true, None);
    // Stuck for 90 minutes after its first step, under locks.
    let stuck = w.stage("stuck", 1, true, Some(90));
    for s in [&live, &stuck] {
        assert_eq!(w.state(&s.id), Some(TxnState::Pending));
        assert!(
            w.lock_exists(&s.src) && w.lock_exists(&s.dest),
            "the transfer left its locks"
        );
    }
    w.refresh();

    let tui = w.dashboard("recover", &[]);
    let all_locks = [&live.src, &live.dest, &stuck.src, &stuck.dest];
    tui.wait_for("both transactions and their four locks", |s| {
        s.contains(&live.id)
            && s.contains(&stuck.id)
            // The stuck transaction's locks are stale: the one rule.
            && pane(s, "locks 4 (2 stale)")
                .is_some_and(|p| all_locks.iter().all(|r| p.contains(r.as_str())))
    });

    // F: forced recovery of the recent one.
    filter_to(&tui, &live.id);
    tui.keys(&["F"]);
    let title = format!("Force recovery of {}?", live.id);
    // The transaction was modified moments ago: the dialog must say so.
    tui.wait_for_all(&[
        &title,
        "WARNING",
        "ago: a worker may still be running it",
        "forced: the recovery window is not enforced",
        "recovery would run these steps:",
        "core 3: apply to destination",
        "ends in: finished",
        "dst-live: 500 → 600 (+100)",
        "[ Cancel ]",
        "[ Confirm (y) ]",
    ]);
    tui.keys(&["y"]);
    common::wait_until_blocking(
        "the transaction is finished and its locks are gone",
        tmux::DEADLINE,
        || {
            w.state(&live.id) == Some(TxnState::Finished)
                && !w.lock_exists(&live.src)
                && !w.lock_exists(&live.dest)
        },
    );
    let (a, b) = (w.account(&live.src), w.account(&live.dest));
    assert_eq!(
        (a.balance, b.balance),
        (400, 600),
        "moved exactly once: {a:?} {b:?}"
    );
    assert!(
        a.pending.is_empty() && b.pending.is_empty(),
        "pending left: {a:?} {b:?}"
    );
    assert_eq!(
        a.settled_of(&live.id).map(|s| s.outcome),
        Some(SettledOutcome::Applied)
    );
    assert_eq!(
        b.settled_of(&live.id).map(|s| s.outcome),
        Some(SettledOutcome::Applied)
    );
    assert!(
        w.lock_exists(&stuck.src) && w.lock_exists(&stuck.dest),
        "other locks untouched"
    );
    let done = format!(
        "Force recovery of {}: completed: transaction is finished",
        live.id
    );
    tui.wait_for_with(
        "the recovery in the log and two locks left",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && pane(s, "locks 2 (2 stale)").is_some_and(|p| {
                    p.contains(stuck.src.as_str())
                        && p.contains(stuck.dest.as_str())
                        && !p.contains(live.src.as_str())
                        && !p.contains(live.dest.as_str())
                })
        },
    );

    // L: release the locks of the stuck one.
    tui.keys(&["Escape"]);
    tui.wait_for("the filter cleared", |s| !s.contains("· /"));
    filter_to(&tui, &stuck.id);
    let before = w.documents_of(&stuck);
    tui.keys(&["L"]);
    let title = format!("Release the locks of {}?", stuck.id);
    tui.wait_for_all(&[
        &title,
        "locks that would be released:",
        &format!(" {} — ", stuck.src),
        &format!(" {} — ", stuck.dest),
        "stale (owner transaction",
        "[ Confirm (y) ]",
    ]);
    tui.keys(&["y"]);
    common::wait_until_blocking("the lock documents are deleted", tmux::DEADLINE, || {
        !w.lock_exists(&stuck.src) && !w.lock_exists(&stuck.dest)
    });
    assert_eq!(
        w.documents_of(&stuck),
        before,
        "releasing locks touched the transaction or accounts"
    );
    let done = format!(
        "Release the locks of {}: {} released, {} released",
        stuck.id, stuck.dest, stuck.src
    );
    // The locks pane (not the accounts pane, which still lists the accounts
    // of the transaction in flight) empties once a poll sees the deletes.
    tui.wait_for_with(
        "the release in the log and an empty locks pane",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && pane(s, "locks 0 (0 stale)").is_some_and(|p| {
                    p.contains("no locks held") && all_locks.iter().all(|r| !p.contains(r.as_str()))
                })
        },
    );

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "force_recovery_and_lock_release_from_the_dashboard took {:?}",
        started.elapsed()
    );
}
