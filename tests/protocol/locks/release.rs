//! Operator releases: a single lock (stale ones freely, live ones only with
//! `--force`) and all the locks of one transaction.

use super::{lock_owner, txn};
use crate::fixture::Fx;
use estx::protocol::locks::ReleaseOutcome;
use serde_json::json;
use std::collections::BTreeMap;

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
        fx.proto.release_lock("stale", false).await.unwrap(),
        ReleaseOutcome::NotHeld
    );

    // `orphan`: its owner names no transaction, its lease runs: no evidence.
    for resource in ["live", "article", "orphan"] {
        let before = fx
            .cluster()
            .get(&fx.ix.locks, resource)
            .await
            .unwrap()
            .unwrap();
        match fx.proto.release_lock(resource, false).await.unwrap() {
            ReleaseOutcome::Refused(why) => {
                assert!(why.to_string().contains("--force"), "{why}");
                assert!(why.to_string().contains(resource), "{why}");
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
            matches!(&out[r], ReleaseOutcome::Refused(why) if why.to_string().contains("--force")),
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
