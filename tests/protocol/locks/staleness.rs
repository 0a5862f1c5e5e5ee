//! Whether a lock is stale: from its owner transaction's state and its lease,
//! unknown for article-shaped locks, and never presumed abandoned when the
//! owner exists but cannot be read.

use super::{lock_owner, ts, txn};
use crate::fixture::Fx;
use chrono::Duration as ChronoDuration;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::locks::Staleness;
use estx::protocol::TxnState;
use serde_json::json;
use std::collections::BTreeMap;

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
        Staleness::Stale(why) => why.to_string(),
        other => panic!("{r} should be stale, is {other:?}"),
    };
    assert!(stale("L-fin").contains("finished"));
    assert_eq!(by["L-fin"].owner_state, Some(TxnState::Finished));
    assert!(stale("L-rb").contains("rolled-back"));
    // An owner that names no transaction is no evidence either way.
    assert!(
        matches!(&by["L-missing"].staleness, Staleness::Unknown(why)
            if why.to_string().contains("cannot tell whether it is alive")),
        "{:?}",
        by["L-missing"].staleness
    );
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
