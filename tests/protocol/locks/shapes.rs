//! Locks by their shape: a transaction's lock on a resource other than its
//! accounts (found by owner, shown, released with the transaction's end),
//! the guide's shared tree lock (released by a conditional decrement), and
//! a heartbeat index deciding for locks held by instances.

use super::lock_owner;
use crate::fixture::Fx;
use crate::procedures::stage;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::locks::{LivenessSource, StaleReason, Staleness, UnknownReason};
use estx::protocol::time::format_timestamp;
use estx::protocol::{Procedure, TxnState, Verdict};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

fn ts(offset: ChronoDuration) -> String {
    format_timestamp(Utc::now() + offset)
}

/// An application's lock on `invoice-0030` owned by transaction `owner`.
fn invoice_lock(owner: &str) -> serde_json::Value {
    json!({"owner": owner, "process_id": "billing-7", "created_at": ts(ChronoDuration::minutes(-5)),
           "expires_at": ts(ChronoDuration::hours(1))})
}

#[tokio::test]
async fn a_lock_a_stuck_transaction_holds_elsewhere_is_shown_and_released_by_its_rollback() {
    let fx = Fx::new().await;
    let (id, _, _) = stage(&fx, "inv", 2).await;
    fx.put(&fx.ix.locks, "invoice-0030", invoice_lock(&id))
        .await;
    fx.refresh().await;

    let detail = fx.proto.transaction_detail(&id).await.unwrap().unwrap();
    let shown: Vec<&str> = detail
        .locks
        .iter()
        .map(|l| l.info.resource.as_str())
        .collect();
    assert_eq!(shown, ["invoice-0030"]);
    assert_eq!(detail.lock_releases(Procedure::Rollback), ["invoice-0030"]);

    let report = fx.proto.rollback(&id, false).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{report:#?}"
    );
    assert!(
        report
            .steps
            .iter()
            .any(|s| s.label == "release lock" && s.target.ends_with("/invoice-0030")),
        "{:#?}",
        report.steps
    );
    assert_eq!(lock_owner(&fx, "invoice-0030").await, None);
}

#[tokio::test]
async fn a_batched_recovery_releases_the_locks_its_transactions_hold_elsewhere() {
    let fx = Fx::new().await;
    let (id, _, _) = stage(&fx, "binv", 3).await;
    fx.put(&fx.ix.locks, "invoice-0031", invoice_lock(&id))
        .await;
    fx.refresh().await;
    let done = fx
        .proto
        .recover_all_stuck_with(
            estx::protocol::stuck::Pace::Batched(Default::default()),
            false,
        )
        .await
        .unwrap();
    assert_eq!(done.reports.len(), 1);
    let report = &done.reports[0];
    assert_eq!(fx.state(&id).await, TxnState::Finished);
    assert!(
        report
            .steps
            .iter()
            .any(|s| s.label == "release lock" && s.target.ends_with("/invoice-0031")),
        "{:#?}",
        report.steps
    );
    assert_eq!(lock_owner(&fx, "invoice-0031").await, None);
}

#[tokio::test]
async fn a_forced_release_of_a_shared_tree_lock_releases_one_holder() {
    let fx = Fx::new().await;
    fx.put(
        &fx.ix.locks,
        "clinton",
        json!({"lock_type": "shared", "lock_count": 2}),
    )
    .await;
    // Nobody is named: unknown, refused without force.
    assert!(matches!(
        fx.proto.release_lock("clinton", false).await.unwrap(),
        ReleaseOutcome::Refused(_)
    ));
    assert_eq!(
        fx.proto.release_lock("clinton", true).await.unwrap(),
        ReleaseOutcome::Decremented { left: 1 }
    );
    let src = fx.source(&fx.ix.locks, "clinton").await;
    assert_eq!(src.get("lock_count"), Some(&json!(1)));
    assert_eq!(src.get("lock_type"), Some(&json!("shared")));
    // The last holder: deleted.
    assert_eq!(
        fx.proto.release_lock("clinton", true).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "clinton")
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn a_heartbeat_index_decides_for_locks_held_by_instances() {
    let fx = Fx::with(|c| {
        c.liveness = Some(LivenessSource {
            index: format!("{}-heartbeats", c.indices.locks),
            instance_field: "instance".into(),
            time_field: "heartbeatDate".into(),
            timeout: Duration::from_secs(60),
        })
    })
    .await;
    let hb = fx.proto.config().liveness.clone().unwrap().index;
    fx.cluster()
        .create_index(
            &hb,
            json!({"mappings": {"properties": {"instance": {"type": "keyword"},
                "heartbeatDate": {"type": "date"}}}}),
        )
        .await
        .unwrap();
    for (instance, ago) in [("alive", 5), ("dead", 600)] {
        let doc = json!({"instance": instance, "heartbeatDate": ts(ChronoDuration::seconds(-ago))});
        fx.put(&hb, instance, doc).await;
    }
    fx.cluster().refresh(&hb).await.unwrap();
    for owner in ["alive", "dead", "silent"] {
        let doc = json!({"category": "execution", "id": owner, "owner": owner,
                         "createdAt": ts(ChronoDuration::minutes(-3))});
        fx.put(&fx.ix.locks, &format!("execution_{owner}"), doc)
            .await;
    }
    fx.refresh().await;

    let by: BTreeMap<String, Staleness> = fx
        .proto
        .list_locks()
        .await
        .unwrap()
        .into_iter()
        .map(|v| (v.info.resource, v.staleness))
        .collect();
    assert_eq!(by["execution_alive"], Staleness::Live);
    assert!(
        matches!(&by["execution_dead"], Staleness::Stale(StaleReason::HolderDead { silent, .. }) if *silent > 60),
        "{:?}",
        by["execution_dead"]
    );
    assert!(
        matches!(
            &by["execution_silent"],
            Staleness::Unknown(UnknownReason::NoHeartbeat { .. })
        ),
        "{:?}",
        by["execution_silent"]
    );

    // The sweep releases the dead holder's lock only.
    let swept = fx.proto.release_abandoned_locks().await.unwrap();
    let swept: Vec<&str> = swept
        .iter()
        .map(|s| s.view.info.resource.as_str())
        .collect();
    assert_eq!(swept, ["execution_dead"]);
    for r in ["execution_alive", "execution_silent"] {
        assert!(matches!(
            fx.proto.release_lock(r, false).await.unwrap(),
            ReleaseOutcome::Refused(_)
        ));
        assert!(lock_owner(&fx, r).await.is_some(), "{r}");
    }
}
