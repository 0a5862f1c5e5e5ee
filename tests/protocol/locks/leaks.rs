//! Locks never leak: a lock left by each way a holder can lose track of it
//! (died between its last step and the release; its release's read failed;
//! its create's answer was lost and it gave up; a late create landed after
//! the transfer finished) is released by the next recovery — `recover ID` of
//! the terminal transaction, or the sweep of `recover --all-stuck` — and a
//! release whose reads fail transiently retries instead of giving up.

use super::lock_owner;
use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::{NewTransfer, RunLimits, StepResult, TxnState, Verdict};
use serde_json::json;

fn request(id: &str, src: &str, dest: &str) -> NewTransfer {
    NewTransfer {
        id: Some(id.into()),
        src: src.into(),
        dest: dest.into(),
        amount: 100,
    }
}

/// Every lock still in the index, as `(resource, owner)`.
async fn locks_left(fx: &Fx) -> Vec<(String, Option<String>)> {
    fx.refresh().await;
    fx.proto
        .list_locks()
        .await
        .unwrap()
        .into_iter()
        .map(|v| (v.info.resource, v.info.owner))
        .collect()
}

/// A handle through `proxy` whose transport does not retry reads (no read
/// budget): what is counted at the proxy is what the protocol itself asked,
/// and a read that keeps failing fails at once instead of after the 30 s
/// default budget (the give-up path under test does not depend on it).
fn without_read_retries(fx: &Fx, proxy: &FaultProxy) -> estx::protocol::Protocol {
    let via = fx.proto_via(&proxy.url());
    estx::protocol::Protocol::new(
        via.cluster().with_read_budget(std::time::Duration::ZERO),
        via.config().clone(),
    )
}

#[tokio::test]
async fn a_lock_left_by_each_leak_path_is_released_by_the_next_recovery() {
    let fx = Fx::with(|c| c.lock_wait = std::time::Duration::from_millis(300)).await;
    let lock_path = |r: &str| format!("/{}/_doc/{r}", fx.ix.locks);

    // 1. The holder died between its last step and the release: the
    //    transaction is finished, its locks are still there.
    let (died, died_src, died_dest) = stage(&fx, "died", 7).await;
    for r in [&died_src, &died_dest] {
        fx.proto.acquire_lock(r, &died).await.unwrap();
    }

    // 2. The release's reads kept failing: reported as a failed step (not a
    //    silent success), the lock is left behind.
    fx.account("Arel", 500).await;
    fx.account("Brel", 500).await;
    let proxy = FaultProxy::start(&fx.url);
    let report = {
        // Only the release reads the lock (an acquire reads it after a 409).
        proxy.drop_responses("GET", &lock_path("Brel"), 1000);
        let r = without_read_retries(&fx, &proxy)
            .transfer(&request("trel", "Arel", "Brel"), true, RunLimits::default())
            .await;
        proxy.clear_rules();
        r
    };
    // The release read the lock once: nothing above the transport asked
    // again (each retry there would have cost a whole read budget).
    assert_eq!(proxy.dropped(), 1, "{:#?}", proxy.log());
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{report:#?}"
    );
    let failed: Vec<_> = report
        .steps
        .iter()
        .filter(|s| s.label == "release lock" && matches!(s.result, StepResult::Error(_)))
        .collect();
    assert_eq!(failed.len(), 1, "{:#?}", report.steps);
    // Not "done, exit 0": a lock is left for recovery.
    assert!(report.lock_left_behind());
    assert_eq!(
        estx::cli::exit::of_report(&report),
        estx::cli::exit::STOPPED
    );
    assert_eq!(lock_owner(&fx, "Brel").await, Some(Some("trel".into())));

    // 3. A lock create whose answer was lost, and the reads that would have
    //    told it was ours failing too: the transfer gives up and cancels its
    //    transaction; the lock it does not know it holds stays.
    fx.account("Alost", 500).await;
    fx.account("Blost", 500).await;
    proxy.drop_responses_then(
        "POST",
        &format!("/{}/_create/Blost", fx.ix.locks),
        1,
        ("GET", &lock_path("Blost"), 1000),
    );
    let dropped_before = proxy.dropped();
    let report = without_read_retries(&fx, &proxy)
        .transfer(
            &request("tlost", "Alost", "Blost"),
            true,
            RunLimits::default(),
        )
        .await;
    proxy.clear_rules();
    // The lost create, then one read of the lock by the acquire and one by
    // the release of the cancelled transfer.
    assert_eq!(proxy.dropped() - dropped_before, 3, "{:#?}", proxy.log());
    assert!(matches!(report.verdict, Verdict::Failed(_)), "{report:#?}");
    assert_eq!(fx.state("tlost").await, TxnState::RolledBack);
    assert_eq!(lock_owner(&fx, "Blost").await, Some(Some("tlost".into())));
    assert_eq!(lock_owner(&fx, "Alost").await, None, "{report:#?}");

    // 4. A late create that lands after the transfer finished.
    let (late, late_src, _) = stage(&fx, "late", 7).await;
    fx.put(
        &fx.ix.locks,
        &late_src,
        json!({"owner": late, "process_id": "slow", "created_at": "2026-01-01T00:00:00Z",
               "expires_at": "2099-01-01T00:00:00Z"}),
    )
    .await;

    let before = locks_left(&fx).await;
    assert_eq!(before.len(), 5, "{before:?}");

    // `recover ID` of a terminal transaction releases its leftover locks.
    let recovered = fx.proto.recover(&died, false).await;
    assert!(
        matches!(recovered.verdict, Verdict::NothingToDo(TxnState::Finished)),
        "{recovered:#?}"
    );
    let released: Vec<_> = recovered
        .steps
        .iter()
        .filter(|s| s.label == "release lock")
        .map(|s| (s.target.clone(), s.result.clone()))
        .collect();
    assert_eq!(released.len(), 2, "{recovered:#?}");
    assert!(released
        .iter()
        .all(|(_, r)| matches!(r, StepResult::Updated(_))));
    for r in [&died_src, &died_dest] {
        assert_eq!(lock_owner(&fx, r).await, None);
    }

    // The sweep of `recover --all-stuck` releases every other one.
    fx.refresh().await;
    let swept = fx.proto.release_abandoned_locks().await.unwrap();
    let mut resources: Vec<_> = swept
        .iter()
        .map(|s| (s.view.info.resource.clone(), s.outcome.clone()))
        .collect();
    resources.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        resources,
        vec![
            ("Alate".to_string(), ReleaseOutcome::Released),
            ("Blost".to_string(), ReleaseOutcome::Released),
            ("Brel".to_string(), ReleaseOutcome::Released),
        ]
    );
    assert_eq!(locks_left(&fx).await, vec![]);
    // Nothing left: a second sweep finds nothing.
    assert!(fx.proto.release_abandoned_locks().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_release_retries_reads_that_fail_transiently() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    let proxy = FaultProxy::start(&fx.url);
    // Two lost reads of each lock: fewer than the retry policy allows.
    for r in ["A", "B"] {
        proxy.drop_responses("GET", &format!("/{}/_doc/{r}", fx.ix.locks), 2);
    }
    let report = fx
        .proto_via(&proxy.url())
        .transfer(&request("t1", "A", "B"), true, RunLimits::default())
        .await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{report:#?}"
    );
    assert_eq!(proxy.dropped(), 4, "{:#?}", proxy.log());
    let released = report
        .steps
        .iter()
        .filter(|s| s.label == "release lock" && matches!(s.result, StepResult::Updated(_)))
        .count();
    assert_eq!(released, 2, "{:#?}", report.steps);
    assert_eq!(
        (lock_owner(&fx, "A").await, lock_owner(&fx, "B").await),
        (None, None)
    );
}

#[tokio::test]
async fn the_sweep_leaves_live_locks_and_those_of_stuck_owners_to_their_recovery() {
    let fx = Fx::new().await;
    super::txn(&fx, "live", "pending", "A", "B", 0).await;
    super::txn(&fx, "stuck", "pending", "C", "D", 90).await;
    fx.proto.acquire_lock("A", "live").await.unwrap();
    fx.proto.acquire_lock("C", "stuck").await.unwrap();
    fx.put(&fx.ix.locks, "P", json!({"process_id": 123})).await;
    fx.refresh().await;
    assert!(fx.proto.release_abandoned_locks().await.unwrap().is_empty());
    assert_eq!(locks_left(&fx).await.len(), 3);
}
