//! Locks: taken with `op_type=create`, released only by their owner with a
//! delete conditional on the `_seq_no` read when ownership was checked,
//! staleness from the owner transaction and the lease, operator releases,
//! and transfers that run under locks on both accounts.

use crate::fixture::Fx;
use chrono::{Duration as ChronoDuration, Utc};
use estx::cluster::DeleteOutcome;
use estx::protocol::lock::Staleness;
use estx::protocol::locks::{AcquireOutcome, ReleaseOutcome};
use estx::protocol::time::format_timestamp;
use estx::protocol::{NewTransfer, Refusal, RunLimits, StepResult, TxnState, Verdict};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// Writes a well-formed transaction in `state`, modified `minutes_ago`.
async fn txn(fx: &Fx, id: &str, state: &str, src: &str, dest: &str, minutes_ago: i64) {
    let t = format_timestamp(Utc::now() - ChronoDuration::minutes(minutes_ago));
    fx.put_txn(
        id,
        json!({"src_acct": src, "dest_acct": dest, "amount": 10, "transaction_state": state,
               "creation_time": t, "modification_time": t}),
    )
    .await;
}

/// The owner recorded in the lock on `resource`, `None` when there is no lock.
async fn lock_owner(fx: &Fx, resource: &str) -> Option<Option<String>> {
    fx.cluster()
        .get(&fx.ix.locks, resource)
        .await
        .unwrap()
        .map(|d| {
            d.source
                .get("owner")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
}

fn ts(offset: ChronoDuration) -> String {
    format_timestamp(Utc::now() + offset)
}

#[tokio::test]
async fn acquire_is_exclusive_and_idempotent_for_the_owner() {
    let fx = Fx::new().await;
    let proto = fx.proto.clone().with_holder("worker-1");
    assert_eq!(
        proto.acquire_lock("A", "t1").await.unwrap(),
        AcquireOutcome::Acquired
    );
    let doc = fx.source(&fx.ix.locks, "A").await;
    assert_eq!(doc["owner"], "t1");
    assert_eq!(doc["process_id"], "worker-1");
    assert!(
        doc.contains_key("created_at") && doc.contains_key("expires_at"),
        "{doc:?}"
    );

    match fx.proto.acquire_lock("A", "t2").await.unwrap() {
        AcquireOutcome::Held(info) => {
            assert_eq!(info.owner.as_deref(), Some("t1"));
            assert_eq!(info.process_id.as_deref(), Some("worker-1"));
            assert_eq!(info.holder_label(), "txn t1 (worker-1)");
        }
        other => panic!("a second owner must find the lock held, got {other:?}"),
    }
    // Re-acquiring by the same owner (e.g. after a lost response) is fine and
    // does not rewrite the lock.
    let before = fx.cluster().get(&fx.ix.locks, "A").await.unwrap().unwrap();
    assert_eq!(
        fx.proto.acquire_lock("A", "t1").await.unwrap(),
        AcquireOutcome::Acquired
    );
    let after = fx.cluster().get(&fx.ix.locks, "A").await.unwrap().unwrap();
    assert_eq!(before, after);
}

#[tokio::test]
async fn only_the_owner_releases() {
    let fx = Fx::new().await;
    fx.proto.acquire_lock("A", "t1").await.unwrap();
    let before = fx.cluster().get(&fx.ix.locks, "A").await.unwrap().unwrap();
    match fx.proto.release_owned("A", "t2").await.unwrap() {
        ReleaseOutcome::Refused(why) => assert!(why.contains("t1") && why.contains("t2"), "{why}"),
        other => panic!("a non-owner must be refused, got {other:?}"),
    }
    assert_eq!(
        fx.cluster().get(&fx.ix.locks, "A").await.unwrap().unwrap(),
        before,
        "refusal touched the lock"
    );
    assert_eq!(
        fx.proto.release_owned("A", "t1").await.unwrap(),
        ReleaseOutcome::Released
    );
    assert_eq!(lock_owner(&fx, "A").await, None);
    assert_eq!(
        fx.proto.release_owned("A", "t1").await.unwrap(),
        ReleaseOutcome::NotHeld
    );
    // An article-shaped lock names no owner transaction: nobody owns it.
    fx.put(&fx.ix.locks, "P", json!({"process_id": 123})).await;
    assert!(matches!(
        fx.proto.release_owned("P", "t1").await.unwrap(),
        ReleaseOutcome::Refused(_)
    ));
    assert!(lock_owner(&fx, "P").await.is_some());
}

#[tokio::test]
async fn a_lock_retaken_by_someone_else_is_never_deleted_by_the_old_owner() {
    let fx = Fx::new().await;
    let (c, locks) = (fx.cluster(), &fx.ix.locks);
    fx.proto.acquire_lock("R", "old").await.unwrap();
    // The old owner reads its lock (this is the ownership check) ...
    let seen = c.get(locks, "R").await.unwrap().unwrap();
    assert_eq!(seen.source["owner"], "old");
    // ... meanwhile an operator force-releases it and another transfer takes it.
    assert_eq!(
        fx.proto.release_lock("R", true).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert_eq!(
        fx.proto.acquire_lock("R", "new").await.unwrap(),
        AcquireOutcome::Acquired
    );
    let retaken = c.get(locks, "R").await.unwrap().unwrap();
    assert_ne!(
        (seen.seq_no, seen.primary_term),
        (retaken.seq_no, retaken.primary_term)
    );
    // The delete the old owner would now send, conditional on what it read,
    // is rejected: the new lock survives.
    assert_eq!(
        c.delete_if(locks, "R", seen.seq_no, seen.primary_term)
            .await
            .unwrap(),
        DeleteOutcome::Conflict
    );
    assert_eq!(c.get(locks, "R").await.unwrap().unwrap(), retaken);
    // And through the procedure: the owner differs, so it is refused.
    assert!(matches!(
        fx.proto.release_owned("R", "old").await.unwrap(),
        ReleaseOutcome::Refused(_)
    ));
    assert_eq!(c.get(locks, "R").await.unwrap().unwrap(), retaken);
    // A conditional delete at the current tokens does delete.
    assert_eq!(
        c.delete_if(locks, "R", retaken.seq_no, retaken.primary_term)
            .await
            .unwrap(),
        DeleteOutcome::Deleted
    );
    // Once gone, a conditional delete finds nothing to delete (Elasticsearch
    // answers 409 for a missing document with if_seq_no).
    assert_ne!(
        c.delete_if(locks, "R", retaken.seq_no, retaken.primary_term)
            .await
            .unwrap(),
        DeleteOutcome::Deleted
    );
    assert_eq!(lock_owner(&fx, "R").await, None);
}

#[tokio::test]
async fn staleness_from_owner_state_and_lease_and_unknown_for_article_shapes() {
    let fx = Fx::new().await;
    txn(&fx, "t-fin", "finished", "A", "B", 1).await;
    txn(&fx, "t-rb", "rolled-back", "A", "B", 1).await;
    txn(&fx, "t-live", "pending", "A", "B", 0).await;
    txn(&fx, "t-exp", "pending", "A", "B", 0).await;
    let created = ts(ChronoDuration::seconds(-30));
    let lock = |owner: &str, expires: String| json!({"owner": owner, "process_id": "w:1", "created_at": created, "expires_at": expires});
    let future = ts(ChronoDuration::minutes(2));
    fx.put(&fx.ix.locks, "L-fin", lock("t-fin", future.clone()))
        .await;
    fx.put(&fx.ix.locks, "L-rb", lock("t-rb", future.clone()))
        .await;
    fx.put(&fx.ix.locks, "L-missing", lock("t-nowhere", future.clone()))
        .await;
    fx.put(
        &fx.ix.locks,
        "L-exp",
        lock("t-exp", ts(ChronoDuration::seconds(-5))),
    )
    .await;
    fx.proto.acquire_lock("L-live", "t-live").await.unwrap();
    fx.put(&fx.ix.locks, "L-proc", json!({"process_id": 123}))
        .await;
    fx.put(&fx.ix.locks, "L-excl", json!({"lock_type": "exclusive"}))
        .await;
    fx.put(
        &fx.ix.locks,
        "L-shared",
        json!({"lock_type": "shared", "lock_count": 2}),
    )
    .await;
    fx.refresh().await;

    let views = fx.proto.list_locks().await.unwrap();
    let by: BTreeMap<String, _> = views
        .iter()
        .map(|v| (v.info.resource.clone(), v.clone()))
        .collect();
    assert_eq!(by.len(), 8, "{views:#?}");
    let stale = |r: &str| match &by[r].staleness {
        Staleness::Stale(why) => why.clone(),
        other => panic!("{r} should be stale, is {other:?}"),
    };
    assert!(stale("L-fin").contains("finished"));
    assert_eq!(by["L-fin"].owner_state, Some(TxnState::Finished));
    assert!(stale("L-rb").contains("rolled-back"));
    assert!(stale("L-missing").contains("does not exist"));
    assert_eq!(by["L-missing"].owner_state, None);
    assert!(stale("L-exp").contains("expired"));
    assert_eq!(by["L-exp"].owner_state, Some(TxnState::Pending));
    assert_eq!(by["L-live"].staleness, Staleness::Live);
    assert_eq!(by["L-live"].owner_state, Some(TxnState::Pending));
    for (r, label) in [
        ("L-proc", "process 123"),
        ("L-excl", "exclusive lock"),
        ("L-shared", "shared lock x2"),
    ] {
        assert_eq!(by[r].info.holder_label(), label);
        assert!(
            matches!(by[r].staleness, Staleness::Unknown(_)),
            "{r}: {:?}",
            by[r].staleness
        );
        assert!(
            by[r].info.problems.is_empty(),
            "{r}: {:?}",
            by[r].info.problems
        );
    }
    assert_eq!(by["L-shared"].info.lock_count, Some(2));
    // Oldest first; locks without a creation time come before the others.
    let created: Vec<_> = views.iter().map(|v| v.info.created_at).collect();
    let mut sorted = created.clone();
    sorted.sort();
    assert_eq!(created, sorted);

    // The single-lock view agrees with the list.
    for (r, v) in &by {
        let one = fx.proto.lock_view(r).await.unwrap().unwrap();
        assert_eq!(one.info, v.info);
        assert_eq!(one.owner_state, v.owner_state);
        assert_eq!(
            std::mem::discriminant(&one.staleness),
            std::mem::discriminant(&v.staleness),
            "{r}: {:?} vs {:?}",
            one.staleness,
            v.staleness
        );
    }
    assert_eq!(fx.proto.lock_view("L-none").await.unwrap(), None);
}

#[tokio::test]
async fn operator_release_takes_stale_locks_and_needs_force_for_live_ones() {
    let fx = Fx::new().await;
    txn(&fx, "t-live", "pending", "A", "B", 0).await;
    txn(&fx, "t-fin", "finished", "A", "B", 3).await;
    fx.proto.acquire_lock("live", "t-live").await.unwrap();
    fx.proto.acquire_lock("stale", "t-fin").await.unwrap();
    fx.proto
        .acquire_lock("orphan", "t-never-written")
        .await
        .unwrap();
    fx.put(&fx.ix.locks, "article", json!({"process_id": 123}))
        .await;

    assert_eq!(
        fx.proto.release_lock("stale", false).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert_eq!(lock_owner(&fx, "stale").await, None);
    assert_eq!(
        fx.proto.release_lock("orphan", false).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert_eq!(
        fx.proto.release_lock("stale", false).await.unwrap(),
        ReleaseOutcome::NotHeld
    );

    for resource in ["live", "article"] {
        let before = fx
            .cluster()
            .get(&fx.ix.locks, resource)
            .await
            .unwrap()
            .unwrap();
        match fx.proto.release_lock(resource, false).await.unwrap() {
            ReleaseOutcome::Refused(why) => {
                assert!(why.contains("--force"), "{why}");
                assert!(why.contains(resource), "{why}");
            }
            other => {
                panic!("{resource}: a lock not known to be stale must be refused, got {other:?}")
            }
        }
        assert_eq!(
            fx.cluster()
                .get(&fx.ix.locks, resource)
                .await
                .unwrap()
                .unwrap(),
            before
        );
        assert_eq!(
            fx.proto.release_lock(resource, true).await.unwrap(),
            ReleaseOutcome::Released
        );
        assert_eq!(lock_owner(&fx, resource).await, None);
    }
}

#[tokio::test]
async fn releasing_a_transactions_locks() {
    let fx = Fx::new().await;
    txn(&fx, "tp", "pending", "A", "B", 0).await;
    txn(&fx, "other", "pending", "C", "D", 0).await;
    for r in ["A", "B", "X"] {
        fx.proto.acquire_lock(r, "tp").await.unwrap();
    }
    fx.proto.acquire_lock("C", "other").await.unwrap();

    // Before any refresh: the transaction's own accounts are read by id.
    let out: BTreeMap<String, ReleaseOutcome> = fx
        .proto
        .release_transaction_locks("tp", false)
        .await
        .unwrap()
        .into_iter()
        .collect();
    for r in ["A", "B"] {
        assert!(
            matches!(&out[r], ReleaseOutcome::Refused(why) if why.contains("--force")),
            "{r}: {out:?}"
        );
    }
    assert!(!out.contains_key("C"));

    // After a refresh the search also finds the lock on another resource.
    fx.refresh().await;
    let out: BTreeMap<String, ReleaseOutcome> = fx
        .proto
        .release_transaction_locks("tp", false)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(out.keys().collect::<Vec<_>>(), ["A", "B", "X"], "{out:?}");
    assert!(
        out.values()
            .all(|o| matches!(o, ReleaseOutcome::Refused(_))),
        "{out:?}"
    );
    for r in ["A", "B", "X"] {
        assert_eq!(
            lock_owner(&fx, r).await,
            Some(Some("tp".into())),
            "{r} released without force"
        );
    }

    let out = fx
        .proto
        .release_transaction_locks("tp", true)
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![
            ("A".to_string(), ReleaseOutcome::Released),
            ("B".to_string(), ReleaseOutcome::Released),
            ("X".to_string(), ReleaseOutcome::Released)
        ]
    );
    for r in ["A", "B", "X"] {
        assert_eq!(lock_owner(&fx, r).await, None);
    }
    assert_eq!(
        lock_owner(&fx, "C").await,
        Some(Some("other".into())),
        "another transaction's lock was released"
    );

    // A terminal transaction's locks go without force.
    txn(&fx, "tf", "finished", "E", "F", 0).await;
    fx.proto.acquire_lock("E", "tf").await.unwrap();
    fx.proto.acquire_lock("F", "tf").await.unwrap();
    let out = fx
        .proto
        .release_transaction_locks("tf", false)
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![
            ("E".to_string(), ReleaseOutcome::Released),
            ("F".to_string(), ReleaseOutcome::Released)
        ]
    );
    // Nothing left: an empty answer.
    fx.refresh().await;
    assert!(fx
        .proto
        .release_transaction_locks("tf", false)
        .await
        .unwrap()
        .is_empty());
}

fn labels(report: &estx::protocol::ProcedureReport) -> Vec<String> {
    report.steps.iter().map(|s| s.label.clone()).collect()
}

#[tokio::test]
async fn a_transfer_under_locks_holds_both_and_releases_them_at_the_end() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    let req = NewTransfer {
        id: Some("t1".into()),
        src: "B".into(),
        dest: "A".into(),
        amount: 100,
    };
    let report = fx
        .proto
        .transfer(&req, true, RunLimits { max_steps: Some(3) })
        .await;
    assert!(
        matches!(report.verdict, Verdict::Stopped(_)),
        "{:?}",
        report.verdict
    );
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
        Verdict::Refused(Refusal::LockHeld { resource, holder }) => {
            assert_eq!(resource, "B");
            assert!(
                holder.contains("holder") && holder.contains("worker-9"),
                "{holder}"
            );
        }
        other => panic!("expected LockHeld, got {other:?}"),
    }
    assert_eq!(report.verdict.exit_code(), 1);
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
        let (src, dest, id) = (format!("A{tag}"), format!("B{tag}"), format!("t{tag}"));
        fx.account(&src, 500).await;
        fx.account(&dest, 500).await;
        let req = NewTransfer {
            id: Some(id.clone()),
            src: src.clone(),
            dest: dest.clone(),
            amount: 100,
        };
        let report = fx
            .proto
            .transfer(&req, true, RunLimits { max_steps: Some(k) })
            .await;
        assert!(
            matches!(report.verdict, Verdict::Stopped(_)),
            "{tag}: {:?}",
            report.verdict
        );
        fx.backdate(&id, 5).await;
        // The dead worker's locks are still there, and still live (lease).
        for r in [&src, &dest] {
            assert_eq!(lock_owner(&fx, r).await, Some(Some(id.clone())), "{tag}");
            assert!(
                !fx.proto
                    .release_lock(r, false)
                    .await
                    .unwrap()
                    .eq(&ReleaseOutcome::Released),
                "{tag}"
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

#[tokio::test]

async fn a_lock_owned_by_an_existing_but_unreadable_transaction_is_not_presumed_abandoned() {
    let fx = Fx::new().await;
    // The owner exists; its state cannot be read, so nobody can tell whether
    // its worker is done with the lock.
    fx.put_txn(
        "odd",
        json!({"src_acct": "A", "dest_acct": "B", "amount": 10, "modification_time": ts(ChronoDuration::zero())}),
    )
    .await;
    fx.proto.acquire_lock("A", "odd").await.unwrap();
    fx.refresh().await;
    let listed = fx.proto.list_locks().await.unwrap();
    let one = fx.proto.lock_view("A").await.unwrap().unwrap();
    for staleness in [&listed[0].staleness, &one.staleness] {
        assert!(!staleness.is_stale(), "{staleness:?}");
    }
    assert!(matches!(
        fx.proto.release_lock("A", false).await.unwrap(),
        ReleaseOutcome::Refused(_)
    ));
    assert_eq!(lock_owner(&fx, "A").await, Some(Some("odd".into())));
}
