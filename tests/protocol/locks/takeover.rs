//! Acquire takes over a stale lock (owner finished, missing, stuck, or lease
//! expired) safely and never a live one; a lock is stale exactly when its
//! owner is stuck; a transfer refused on a held lock says what really became
//! of its transaction.

use super::{lock_owner, ts, txn};
use crate::common::wait_until;
use crate::fixture::Fx;
use chrono::Duration as ChronoDuration;
use estx::cli::exit;
use estx::protocol::locks::Staleness;
use estx::protocol::read::rules::urgency;
use estx::protocol::{NewTransfer, ProcedureRefusal, ReachedBy, RunLimits, TxnState, Verdict};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

fn request(id: &str, src: &str, dest: &str) -> NewTransfer {
    NewTransfer {
        id: Some(id.into()),
        src: src.into(),
        dest: dest.into(),
        amount: 100,
    }
}

#[tokio::test]
async fn a_locked_transfer_takes_over_a_stale_lock_and_not_a_live_one() {
    let fx = Fx::with(|c| c.lock_wait = Duration::from_millis(300)).await;
    txn(&fx, "old-fin", "finished", "X", "Y", 1).await;
    txn(&fx, "old-stuck", "pending", "X", "Y", 90).await;
    txn(&fx, "old-live", "pending", "X", "Y", 0).await;
    let future = ts(ChronoDuration::minutes(2));
    let lock = |owner: &str, expires: &str| {
        json!({"owner": owner, "process_id": "w:dead", "created_at": ts(ChronoDuration::minutes(-1)),
               "expires_at": expires})
    };
    let cases = [
        ("fin", lock("old-fin", &future), "finished"),
        (
            "gone",
            lock("old-missing", &ts(ChronoDuration::seconds(-1))),
            "expired",
        ),
        ("stuck", lock("old-stuck", &future), "stuck"),
        (
            "lease",
            lock("old-live", &ts(ChronoDuration::seconds(-1))),
            "expired",
        ),
    ];
    for (tag, doc, why) in cases {
        let (src, dest, id) = (format!("A{tag}"), format!("B{tag}"), format!("t{tag}"));
        fx.account(&src, 500).await;
        fx.account(&dest, 500).await;
        fx.put(&fx.ix.locks, &src, doc).await;
        let report = fx
            .proto
            .transfer(&request(&id, &src, &dest), true, RunLimits::default())
            .await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "{tag}: {report:#?}"
        );
        let took: Vec<_> = report
            .steps
            .iter()
            .filter(|s| s.label.starts_with("take over stale lock"))
            .collect();
        assert_eq!(took.len(), 1, "{tag}: {:#?}", report.steps);
        assert!(took[0].label.contains(why), "{tag}: {}", took[0].label);
        assert_eq!(took[0].target, format!("{}/{src}", fx.ix.locks));
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            (400, 600),
            "{tag}"
        );
        assert_eq!(lock_owner(&fx, &src).await, None, "{tag}");
    }

    // A live lock is never taken over, nor one whose owner names no
    // transaction while its lease runs (no evidence the holder is gone):
    // the transfer waits, gives up, and cancels its own transaction; the
    // lock is untouched.
    fx.account("Aghost", 500).await;
    fx.account("Bghost", 500).await;
    fx.put(&fx.ix.locks, "Aghost", lock("old-missing", &future))
        .await;
    let report = fx
        .proto
        .transfer(
            &request("tghost", "Aghost", "Bghost"),
            true,
            RunLimits::default(),
        )
        .await;
    assert!(
        matches!(&report.verdict, Verdict::Refused(ProcedureRefusal::LockHeld { resource, .. }) if resource == "Aghost"),
        "{report:#?}"
    );
    assert_eq!(
        lock_owner(&fx, "Aghost").await,
        Some(Some("old-missing".into()))
    );
    fx.account("Alive", 500).await;
    fx.account("Blive", 500).await;
    fx.put(&fx.ix.locks, "Alive", lock("old-live", &future))
        .await;
    let held = fx.cluster().get(&fx.ix.locks, "Alive").await.unwrap();
    let report = fx
        .proto
        .transfer(
            &request("tlive", "Alive", "Blive"),
            true,
            RunLimits::default(),
        )
        .await;
    assert!(
        matches!(&report.verdict, Verdict::Refused(ProcedureRefusal::LockHeld { resource, .. }) if resource == "Alive"),
        "{report:#?}"
    );
    assert!(report.verdict.to_string().contains("cancelled"));
    assert_eq!(
        report.final_state(),
        (Some(&TxnState::RolledBack), Some(ReachedBy::ThisProcess))
    );
    assert_eq!(exit::of_report(&report), exit::REFUSED);
    assert_eq!(fx.cluster().get(&fx.ix.locks, "Alive").await.unwrap(), held);
    assert_eq!(fx.state("tlive").await, TxnState::RolledBack);
    assert_eq!(
        (
            fx.acct("Alive").await.balance,
            fx.acct("Blive").await.balance
        ),
        (500, 500)
    );
}

#[tokio::test]
async fn a_lock_is_stale_exactly_when_its_owner_is_stuck() {
    let fx = Fx::new().await;
    let window = fx.proto.config().recovery_window;
    assert_eq!(window, Duration::from_secs(120));
    let mut owners = Vec::new();
    for state in ["created", "pending", "committed", "terminating"] {
        for minutes in [0, 1, 3, 90] {
            let id = format!("{state}-{minutes}");
            txn(&fx, &id, state, "X", "Y", minutes).await;
            // The lease runs well past the test: only the owner decides.
            fx.put(
                &fx.ix.locks,
                &format!("L-{id}"),
                json!({"owner": id, "process_id": "w", "created_at": ts(ChronoDuration::zero()),
                       "expires_at": ts(ChronoDuration::hours(3))}),
            )
            .await;
            owners.push(id);
        }
    }
    fx.refresh().await;
    let stuck: BTreeSet<String> = fx
        .proto
        .stuck_transactions()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    let stale: BTreeSet<String> = fx
        .proto
        .list_locks()
        .await
        .unwrap()
        .into_iter()
        .filter(|v| v.staleness.is_stale())
        .filter_map(|v| v.info.owner)
        .collect();
    assert_eq!(stale, stuck);
    let expected: BTreeSet<String> = owners
        .iter()
        .filter(|o| o.ends_with("-3") || o.ends_with("-90"))
        .cloned()
        .collect();
    assert_eq!(stuck, expected);
    // And one by one, through the one rule.
    let now = chrono::Utc::now();
    for id in &owners {
        let t = fx.txn(id).await;
        let view = fx
            .proto
            .lock_view(&format!("L-{id}"))
            .await
            .unwrap()
            .unwrap();
        let stuck = urgency(&t, now, fx.proto.config()).is_stuck();
        assert_eq!(view.staleness.is_stale(), stuck, "{id}");
        if let Staleness::Stale(why) = &view.staleness {
            assert!(why.to_string().contains("stuck"), "{why}");
        }
    }
}

/// A locked transfer waits on a live lock; meanwhile an operator forces a
/// recovery that finishes its transaction. When the transfer gives up on the
/// lock, it does not say "cancelled": it reports the transaction finished by
/// another process, exit 0.
#[tokio::test]
async fn a_lock_refusal_reports_a_transaction_finished_elsewhere_as_done() {
    let fx = Fx::with(|c| c.lock_wait = Duration::from_secs(3)).await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    txn(&fx, "holder", "pending", "X", "Y", 0).await;
    fx.proto.acquire_lock("B", "holder").await.unwrap();
    let req = request("t1", "A", "B");
    let worker = fx.proto.transfer(&req, true, RunLimits::default());
    let operator = async {
        let fxr = &fx;
        // It holds A (sorted first) and waits for B.
        wait_until(
            "the transfer holds A",
            Duration::from_secs(5),
            move || async move { lock_owner(fxr, "A").await == Some(Some("t1".into())) },
        )
        .await;
        let r = fx.proto.recover("t1", true).await;
        assert!(
            matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
            "{r:#?}"
        );
    };
    let (report, ()) = tokio::join!(worker, operator);
    assert!(
        matches!(report.verdict, Verdict::EndedElsewhere(TxnState::Finished)),
        "{report:#?}"
    );
    assert!(!report.verdict.to_string().contains("cancelled"));
    assert_eq!(
        report.final_state(),
        (Some(&TxnState::Finished), Some(ReachedBy::AnotherProcess))
    );
    assert_eq!(exit::of_report(&report), exit::DONE);
    assert_eq!(
        (fx.acct("A").await.balance, fx.acct("B").await.balance),
        (400, 600)
    );
    assert_eq!(lock_owner(&fx, "A").await, None);
    assert_eq!(lock_owner(&fx, "B").await, Some(Some("holder".into())));
}
