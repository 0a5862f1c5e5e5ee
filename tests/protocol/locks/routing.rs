//! Documents an application indexed with custom routing (`?routing=X`,
//! not required by the mapping), behind the test proxy answering as an
//! index of several shards does (a GET or `_mget` by id without the routing
//! value misses; a conditional write without it conflicts): a lock owner
//! that only a search finds is never called missing, so its live lock is
//! never judged stale, swept, released without force or counted stale; a
//! routed transaction is shown and recovered (its writes carry the routing).

use super::ts;
use crate::common::http;
use crate::common::proxy::FaultProxy;
use crate::fixture::Fx;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::batch::BatchOptions;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::locks::{LivenessSource, Staleness};
use estx::protocol::time::format_timestamp;
use estx::protocol::{Protocol, TxnState};
use serde_json::{json, Value};
use std::time::Duration;

/// Indexes `doc` as `index/id` with routing value `routing`.
fn put_routed(fx: &Fx, index: &str, id: &str, routing: &str, doc: &Value) {
    let url = format!(
        "{}/{index}/_doc/{id}?routing={routing}&refresh=true",
        fx.url
    );
    let (status, body) = http("PUT", &url, Some(&doc.to_string()));
    assert!((200..300).contains(&status), "{status}: {body}");
}

/// A transaction in `state` between `src` and `dest`, modified `minutes_ago`.
fn txn_doc(state: &str, src: &str, dest: &str, minutes_ago: i64) -> Value {
    let t = format_timestamp(Utc::now() - ChronoDuration::minutes(minutes_ago));
    json!({"src_acct": src, "dest_acct": dest, "amount": 10, "transaction_state": state,
           "creation_time": t, "modification_time": t})
}

/// A handle through a proxy answering as an index of several shards.
fn sharded(fx: &Fx) -> (FaultProxy, Protocol) {
    let proxy = FaultProxy::start(&fx.url);
    proxy.route_by_shards(true);
    let via = fx.proto_via(&proxy.url());
    (proxy, via)
}

/// Heartbeats in `<locks>-heartbeats`; process `w` last beat 10 minutes ago
/// (dead, by the 60 s timeout).
async fn with_dead_worker() -> Fx {
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
    let mapping = json!({"mappings": {"properties": {"instance": {"type": "keyword"},
        "heartbeatDate": {"type": "date"}}}});
    fx.cluster().create_index(&hb, mapping).await.unwrap();
    let beat = json!({"instance": "w", "heartbeatDate": ts(ChronoDuration::minutes(-10))});
    fx.put(&hb, "w", beat).await;
    fx.cluster().refresh(&hb).await.unwrap();
    fx
}

/// The lock on `acct-a` is held by process `w` (whose heartbeats stopped)
/// for transaction `t-routed`, pending and modified a minute ago (in flight,
/// within the recovery window), which the application routed by its source
/// account. Found by a search, the owner says the lock is live: it is never
/// swept, never released without force, never counted stale. Judged on the
/// dead heartbeat alone (owner "missing"), it would be all three.
#[tokio::test]
async fn a_live_lock_whose_owner_is_routed_is_never_judged_stale() {
    let fx = with_dead_worker().await;
    let owner = txn_doc("pending", "acct-a", "acct-b", 1);
    put_routed(&fx, &fx.ix.transactions, "t-routed", "acct-a", &owner);
    let lock = json!({"owner": "t-routed", "process_id": "w",
        "created_at": ts(ChronoDuration::minutes(-1))});
    fx.put(&fx.ix.locks, "acct-a", lock).await;
    fx.refresh().await;
    let (proxy, via) = sharded(&fx);

    // The proxy answers as the shards do: by id alone, the owner is missed.
    let get = format!("{}/{}/_doc/t-routed", proxy.url(), fx.ix.transactions);
    let (status, body) = http("GET", &get, None);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("\"found\":false"), "{body}");

    let locks = via.list_locks().await.unwrap();
    assert_eq!(locks.len(), 1);
    assert_eq!(locks[0].staleness, Staleness::Live, "{:?}", locks[0]);
    assert_eq!(locks[0].owner_state, Some(TxnState::Pending));
    let view = via.lock_view("acct-a").await.unwrap().unwrap();
    assert_eq!(view.staleness, Staleness::Live);
    // The dashboard's poll reads the owners by `_mget`.
    let snap = via.poll_snapshot(500).await.unwrap();
    assert_eq!(snap.locks.len(), 1);
    assert_eq!(snap.locks[0].staleness, Staleness::Live, "{:?}", snap.locks);

    assert!(matches!(
        via.release_lock("acct-a", false).await.unwrap(),
        ReleaseOutcome::Refused(_)
    ));
    let released = via
        .release_transaction_locks("t-routed", false)
        .await
        .unwrap();
    assert!(
        released
            .iter()
            .all(|(_, o)| matches!(o, ReleaseOutcome::Refused(_))),
        "{released:?}"
    );
    assert!(via.release_abandoned_locks().await.unwrap().is_empty());
    assert_eq!(via.check_reading().await.unwrap().counts.stale_locks, 0);
    let audit = via.audit(None, false).await.unwrap();
    assert!(
        !audit
            .findings
            .iter()
            .any(|f| f.kind.as_str() == "stale_lock"),
        "{:?}",
        audit.findings
    );
    // `recover --all-stuck`: nothing stuck, and its sweep leaves the lock.
    let run = via.recover_all_stuck(1).await.unwrap();
    assert!(run.reports.is_empty());
    assert!(run.locks.unwrap().swept.is_empty());
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "acct-a")
        .await
        .unwrap()
        .is_some());

    // Once the owner has finished, the same lock is stale and swept.
    let done = txn_doc("finished", "acct-a", "acct-b", 1);
    put_routed(&fx, &fx.ix.transactions, "t-routed", "acct-a", &done);
    let swept = via.release_abandoned_locks().await.unwrap();
    assert_eq!(swept.len(), 1);
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "acct-a")
        .await
        .unwrap()
        .is_none());
}

/// A routed transaction is read by id (`show`), recovered one at a time and
/// in a batch: every write passes its routing value (without it, the
/// shards answer 409 for ever), so it ends finished, no second copy is
/// indexed, and the money moves once.
#[tokio::test]
async fn a_routed_transaction_is_shown_and_recovered_with_its_routing() {
    let fx = Fx::new().await;
    for a in ["acct-a", "acct-b"] {
        fx.account(a, 100).await;
    }
    for (id, src, dest) in [
        ("t-one", "acct-a", "acct-b"),
        ("t-batch", "acct-b", "acct-a"),
    ] {
        put_routed(
            &fx,
            &fx.ix.transactions,
            id,
            src,
            &txn_doc("created", src, dest, 90),
        );
    }
    fx.refresh().await;
    let (_proxy, via) = sharded(&fx);

    let (t, doc) = via.read_transaction("t-one").await.unwrap().unwrap();
    assert_eq!(t.state, Some(TxnState::Created));
    assert_eq!(doc.routing.as_deref(), Some("acct-a"));

    let one = via.recover("t-one", false).await;
    assert_eq!(
        one.reached.as_ref().map(|r| &r.0),
        Some(&TxnState::Finished),
        "{one:?}"
    );
    let batch = via
        .recover_batched(&["t-batch".to_string()], BatchOptions::default())
        .await;
    assert_eq!(
        batch[0].reached.as_ref().map(|r| &r.0),
        Some(&TxnState::Finished),
        "{batch:?}"
    );
    for (id, routing) in [("t-one", "acct-a"), ("t-batch", "acct-b")] {
        let url = format!(
            "{}/{}/_doc/{id}?routing={routing}",
            fx.url, fx.ix.transactions
        );
        let (status, body) = http("GET", &url, None);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"finished\""), "{id}: {body}");
    }
    let search = json!({"query": {"ids": {"values": ["t-one", "t-batch"]}}});
    let answer = fx
        .cluster()
        .search(&fx.ix.transactions, search)
        .await
        .unwrap();
    assert_eq!(estx::cluster::hits(&answer).unwrap().len(), 2, "{answer}");
    assert_eq!(fx.acct("acct-a").await.balance, 100);
    assert_eq!(fx.acct("acct-b").await.balance, 100);
}
