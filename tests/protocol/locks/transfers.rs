//! Transfers under locks: both accounts locked in sorted order and released at
//! the end, giving up (and cancelling) when a live lock stays held, opposite
//! transfers serialising on the locks, and recovery or rollback of a crashed
//! locked transfer releasing its locks.

use super::{lock_owner, txn};
use crate::common::world::Stop;
use crate::fixture::Fx;
use crate::procedures::stage_with;
use estx::protocol::locks::AcquireOutcome;
use estx::protocol::locks::Staleness;
use estx::protocol::{NewTransfer, ProcedureRefusal, RunLimits, StepResult, TxnState, Verdict};
use std::time::Duration;

fn labels(report: &estx::protocol::ProcedureReport) -> Vec<String> {
    report.steps.iter().map(|s| s.label.clone()).collect()
}

#[tokio::test]
async fn a_transfer_under_locks_holds_both_and_releases_them_at_the_end() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    let report = fx
        .kit()
        .stop(&Stop::new("t1", "B", "A", 100, 3).locked(true))
        .await;
    assert_eq!(
        labels(&report)[..2],
        ["acquire lock", "acquire lock"],
        "{:#?}",
        report.steps
    );
    assert_eq!(
        report.steps[0].target,
        format!("{}/A", fx.ix.locks),
        "locks are taken in sorted order"
    );
    assert_eq!(report.steps[1].target, format!("{}/B", fx.ix.locks));
    for r in ["A", "B"] {
        assert_eq!(lock_owner(&fx, r).await, Some(Some("t1".into())));
        assert_eq!(
            fx.proto.lock_view(r).await.unwrap().unwrap().staleness,
            Staleness::Live
        );
    }
    // Another transfer on one of these accounts cannot get in meanwhile.
    assert!(matches!(
        fx.proto.acquire_lock("A", "t2").await.unwrap(),
        AcquireOutcome::Held(_)
    ));

    let done = fx.proto.recover("t1", true).await;
    assert!(
        matches!(done.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        done.verdict
    );
    let released: Vec<_> = done
        .steps
        .iter()
        .filter(|s| s.label == "release lock")
        .collect();
    assert_eq!(released.len(), 2, "{:#?}", done.steps);
    assert!(released
        .iter()
        .all(|s| matches!(s.result, StepResult::Updated(_))));
    assert_eq!(
        (lock_owner(&fx, "A").await, lock_owner(&fx, "B").await),
        (None, None)
    );
    assert_eq!(
        (fx.acct("A").await.balance, fx.acct("B").await.balance),
        (600, 400)
    );

    // Uninterrupted: 2 acquires, 7 core steps, 2 releases; nothing left behind.
    let req = NewTransfer {
        id: Some("t2".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 50,
    };
    let report = fx.proto.transfer(&req, true, RunLimits::default()).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        report.verdict
    );
    let l = labels(&report);
    assert_eq!(
        l.iter().filter(|s| *s == "acquire lock").count(),
        2,
        "{l:?}"
    );
    assert_eq!(
        l.iter().filter(|s| *s == "release lock").count(),
        2,
        "{l:?}"
    );
    assert_eq!(
        l.iter().filter(|s| s.starts_with("core ")).count(),
        7,
        "{l:?}"
    );
    assert_eq!(
        (lock_owner(&fx, "A").await, lock_owner(&fx, "B").await),
        (None, None)
    );
    assert_eq!(
        (fx.acct("A").await.balance, fx.acct("B").await.balance),
        (550, 450)
    );
    fx.refresh().await;
    assert!(fx.proto.list_locks().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_transfer_blocked_by_a_live_lock_gives_up_and_is_cancelled() {
    let fx = Fx::with(|c| c.lock_wait = Duration::from_millis(200)).await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    txn(&fx, "holder", "pending", "B", "C", 0).await;
    let holder = fx.proto.clone().with_holder("worker-9");
    holder.acquire_lock("B", "holder").await.unwrap();
    let held = fx.cluster().get(&fx.ix.locks, "B").await.unwrap().unwrap();
    let accounts = (
        fx.source(&fx.ix.accounts, "A").await,
        fx.source(&fx.ix.accounts, "B").await,
    );

    let req = NewTransfer {
        id: Some("blocked".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 100,
    };
    let started = std::time::Instant::now();
    let report = fx.proto.transfer(&req, true, RunLimits::default()).await;
    let waited = started.elapsed();
    match &report.verdict {
        Verdict::Refused(ProcedureRefusal::LockHeld { resource, holder }) => {
            assert_eq!(resource, "B");
            assert!(
                holder.contains("holder") && holder.contains("worker-9"),
                "{holder}"
            );
        }
        other => panic!("expected LockHeld, got {other:?}"),
    }
    assert_eq!(estx::cli::exit::of_report(&report), 1);
    assert!(
        waited >= Duration::from_millis(200),
        "gave up after {waited:?}, before lock_wait"
    );
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    // Its own lock on A was taken and given back; the transaction was cancelled.
    let l = labels(&report);
    assert_eq!(
        l,
        [
            "acquire lock",
            "release lock",
            "rollback: created -> rolled-back"
        ],
        "{:#?}",
        report.steps
    );
    assert!(
        report
            .steps
            .iter()
            .all(|s| matches!(s.result, StepResult::Updated(_))),
        "{:#?}",
        report.steps
    );
    assert_eq!(lock_owner(&fx, "A").await, None);
    assert_eq!(fx.state("blocked").await, TxnState::RolledBack);
    assert_eq!(
        (
            fx.source(&fx.ix.accounts, "A").await,
            fx.source(&fx.ix.accounts, "B").await
        ),
        accounts
    );
    // The holder's lock is untouched.
    assert_eq!(
        fx.cluster().get(&fx.ix.locks, "B").await.unwrap().unwrap(),
        held
    );
}

#[tokio::test]
async fn transfers_in_opposite_directions_serialise_on_the_locks() {
    let fx = Fx::new().await;
    fx.account("A", 1000).await;
    fx.account("B", 1000).await;
    let mut reqs = Vec::new();
    for i in 0..6 {
        let (src, dest) = if i % 2 == 0 { ("A", "B") } else { ("B", "A") };
        reqs.push(NewTransfer {
            id: Some(format!("x{i}")),
            src: src.into(),
            dest: dest.into(),
            amount: 10 + i,
        });
    }
    let reports = futures::future::join_all(
        reqs.iter()
            .map(|r| fx.proto.transfer(r, true, RunLimits::default())),
    )
    .await;
    for r in &reports {
        assert!(
            matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
            "{}: {:?}",
            r.txn,
            r.verdict
        );
    }
    let (a, b) = (fx.acct("A").await, fx.acct("B").await);
    assert_eq!(a.balance + b.balance, 2000);
    assert_eq!(a.balance, 1000 - (10 + 12 + 14) + (11 + 13 + 15));
    assert!(a.pending.is_empty() && b.pending.is_empty());
    assert_eq!(
        (lock_owner(&fx, "A").await, lock_owner(&fx, "B").await),
        (None, None)
    );
}

#[tokio::test]
async fn recovery_or_rollback_of_a_crashed_locked_transfer_releases_its_locks() {
    let fx = Fx::new().await;
    for (tag, k, rollback) in [
        ("r0", 0, true),
        ("r2", 2, true),
        ("c2", 2, false),
        ("c5", 5, false),
    ] {
        let (id, src, dest) = stage_with(&fx, tag, k, true).await;
        // The dead worker's locks are still there (lease running), and stale
        // exactly because their owner is stuck (untouched for 5 minutes).
        for r in [&src, &dest] {
            assert_eq!(lock_owner(&fx, r).await, Some(Some(id.clone())), "{tag}");
            let view = fx.proto.lock_view(r).await.unwrap().unwrap();
            assert!(
                matches!(&view.staleness, Staleness::Stale(why) if why.to_string().contains("stuck")),
                "{tag}: {view:?}"
            );
        }
        let (report, end, balances) = if rollback {
            (
                fx.proto.rollback(&id, false).await,
                TxnState::RolledBack,
                (500, 500),
            )
        } else {
            (
                fx.proto.recover(&id, false).await,
                TxnState::Finished,
                (400, 600),
            )
        };
        assert!(
            matches!(&report.verdict, Verdict::Completed(s) if *s == end),
            "{tag}: {:?}",
            report.verdict
        );
        assert_eq!(
            report
                .steps
                .iter()
                .filter(|s| s.label == "release lock")
                .count(),
            2,
            "{tag}: {:#?}",
            report.steps
        );
        assert_eq!(
            (lock_owner(&fx, &src).await, lock_owner(&fx, &dest).await),
            (None, None),
            "{tag}"
        );
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            balances,
            "{tag}"
        );
    }
}
