//! Taking and giving back a lock as its owner: `op_type=create` makes it
//! exclusive and idempotent for the owner, only the owner releases, and a
//! release conditional on the `_seq_no` read never deletes a lock someone else
//! has taken since.

use super::{lock_owner, txn};
use crate::fixture::Fx;
use estx::cluster::DeleteOutcome;
use estx::protocol::locks::{AcquireOutcome, ReleaseOutcome};
use serde_json::json;

#[tokio::test]
async fn acquire_is_exclusive_and_idempotent_for_the_owner() {
    let fx = Fx::new().await;
    // A live owner: a lock whose owner transaction is missing would be stale
    // (and taken over).
    txn(&fx, "t1", "pending", "A", "B", 0).await;
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
        ReleaseOutcome::Refused(why) => assert!(
            why.to_string().contains("t1") && why.to_string().contains("t2"),
            "{why}"
        ),
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
