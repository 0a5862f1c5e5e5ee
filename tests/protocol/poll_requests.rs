//! What one steady poll costs the cluster, counted by the proxy it goes
//! through: the `_msearch`, one multi-index `_mget` for the accounts the
//! page names and the locks' owners not on it, the health; and what each
//! index's part of that `_mget` answers on its own.

use crate::common::proxy::Canned;
use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::locks::{Staleness, UnknownReason};
use estx::protocol::read::poll::{AccountEntry, Snapshot};
use estx::protocol::{Protocol, TxnState};
use serde_json::json;

/// A created transaction (its two accounts read by id: neither carries a
/// pending entry), a finished one off the page owning a lock, and a lock
/// whose owner names no transaction.
async fn seed(fx: &Fx) {
    stage(fx, "c0", 0).await;
    stage(fx, "f7", 7).await;
    fx.put(
        &fx.ix.locks,
        "Ac0",
        json!({"owner": "tf7", "process_id": "w:1", "created_at": "2026-01-01T00:00:00Z"}),
    )
    .await;
    fx.put(
        &fx.ix.locks,
        "Bc0",
        json!({"owner": "nobody", "process_id": "w:2", "created_at": "2026-01-01T00:00:00Z"}),
    )
    .await;
    fx.refresh().await;
}

/// A poll through `proxy` after one that discovered the indices and read
/// the cluster's clock, with the requests the proxy relayed for it.
async fn steady_poll(p: &Protocol, proxy: &FaultProxy) -> (Snapshot, usize) {
    p.poll_snapshot(500).await.unwrap();
    let before = proxy.forwarded();
    let snap = p.poll_snapshot(500).await.unwrap();
    (snap, proxy.forwarded() - before)
}

fn lock<'a>(snap: &'a Snapshot, resource: &str) -> &'a estx::protocol::locks::LockView {
    let found = snap.locks.iter().find(|l| l.info.resource == resource);
    found.unwrap_or_else(|| panic!("no lock on {resource}: {:?}", snap.locks))
}

#[tokio::test]
async fn a_poll_with_locks_naming_unlisted_transactions_costs_three_requests() {
    let fx = Fx::new().await;
    seed(&fx).await;
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let (snap, sent) = steady_poll(&p, &proxy).await;
    let log = proxy.log();
    let recent = log[log.len() - sent..].join("\n");
    assert_eq!(sent, 3, "msearch, one mget, health:\n{recent}");
    assert_eq!(snap.requests, 3);
    assert_eq!(recent.matches("_mget").count(), 1, "{recent}");

    let ids: Vec<&str> = snap.transactions.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["tc0"]);
    for account in ["Ac0", "Bc0"] {
        let entry = snap.accounts.get(account);
        assert!(
            matches!(entry, Some(AccountEntry::Ok(a)) if a.balance == 500),
            "{account}: {entry:?}"
        );
    }
    let owned = lock(&snap, "Ac0");
    assert_eq!(owned.owner_state, Some(TxnState::Finished));
    assert!(owned.staleness.is_stale(), "{:?}", owned.staleness);
    let orphan = lock(&snap, "Bc0");
    assert_eq!(orphan.owner_state, None);
    assert!(!orphan.staleness.is_stale(), "{:?}", orphan.staleness);
}

/// Elasticsearch authorises each index's items of an `_mget` apart
/// (the shard-level `indices:data/read/mget[shard]`) and answers a refused
/// one in place with its `security_exception`: the accounts still show,
/// and the locks whose owners could not be read are unknown, never stale.
#[tokio::test]
async fn an_owners_index_refused_in_the_mget_leaves_the_accounts_and_makes_its_locks_unknown() {
    let fx = Fx::new().await;
    seed(&fx).await;
    let mut docs = Vec::new();
    for id in ["Ac0", "Bc0"] {
        let d = fx
            .cluster()
            .get(&fx.ix.accounts, id)
            .await
            .unwrap()
            .unwrap();
        docs.push(json!({"_index": fx.ix.accounts, "_id": id, "_version": 1,
            "_seq_no": d.seq_no, "_primary_term": d.primary_term, "found": true,
            "_source": d.source}));
    }
    let reason = format!(
        "action [indices:data/read/mget[shard]] is unauthorized for user [ops] with \
         effective roles [estx] on indices [{}], this action is granted by the index \
         privileges [read,all]",
        fx.ix.transactions
    );
    docs.push(json!({"_index": fx.ix.transactions, "_id": "nobody",
        "error": {"type": "security_exception", "reason": reason,
            "root_cause": [{"type": "security_exception", "reason": reason}]}}));
    docs.push(json!({"_index": fx.ix.transactions, "_id": "tf7",
        "error": {"type": "security_exception", "reason": reason,
            "root_cause": [{"type": "security_exception", "reason": reason}]}}));
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    p.poll_snapshot(500).await.unwrap();
    proxy.answer(
        "POST",
        "/_mget",
        1,
        Canned::json(200, json!({ "docs": docs })),
    );
    let snap = p.poll_snapshot(500).await.unwrap();
    assert_eq!(proxy.canned(), 1, "{}", proxy.log().join("\n"));

    for account in ["Ac0", "Bc0"] {
        let entry = snap.accounts.get(account);
        assert!(
            matches!(entry, Some(AccountEntry::Ok(_))),
            "{account}: {entry:?}"
        );
    }
    for resource in ["Ac0", "Bc0"] {
        let l = lock(&snap, resource);
        assert!(
            matches!(
                &l.staleness,
                Staleness::Unknown(UnknownReason::OwnerUnreadable { .. })
            ),
            "{resource}: {:?}",
            l.staleness
        );
    }
    let warned = snap
        .read
        .warnings
        .iter()
        .any(|w| w.contains("could not be read"));
    assert!(warned, "{:?}", snap.read.warnings);
}

/// Where the cluster refuses an index in a multi request's body (Amazon
/// OpenSearch Service with `rest.action.multi.allow_explicit_index:
/// false`), the poll's cross-index reads go one request per index: the
/// cost the dashboard shows counts each request the cluster answered, as
/// the proxy saw them, not one per multi request the poll made.
#[tokio::test]
async fn a_scoped_poll_counts_every_request_the_cluster_answered() {
    use crate::common::proxy::Personality;
    let fx = Fx::new().await;
    seed(&fx).await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.personality(Personality::AwsOpenSearch2ExplicitIndexRefused);
    let p = fx.proto_via(&proxy.url());
    let seen = || proxy.log().len();
    // The first poll learns the refusal (remembered on the handle).
    p.poll_snapshot(500).await.unwrap();
    let before = seen();
    let snap = p.poll_snapshot(500).await.unwrap();
    let sent = seen() - before;
    let log = proxy.log();
    let recent = log[before..].join("\n");
    assert!(sent > 3, "one request per index:\n{recent}");
    assert_eq!(snap.requests as usize, sent, "{recent}");
}

/// Issue 30 item 5: the fullest poll stays within its budget of four
/// requests, counted at the proxy: documents in an unknown state, a lock
/// whose holder's heartbeat must be read (its owner names no
/// transaction), the healing verdict's searches (the application's
/// heartbeat index named) and a live ack. Every further read the poll
/// needs rides in the `_msearch` as a search of its own.
#[tokio::test]
async fn the_fullest_poll_stays_within_four_requests() {
    use estx::protocol::intervene::{self, Acknowledge, Choices, Intervention};
    use estx::protocol::locks::LivenessSource;
    use estx::protocol::trail::Interface;
    let beats = format!("{}beats", crate::common::server::unique_prefix());
    let source = LivenessSource {
        index: beats.clone(),
        instance_field: "instance".into(),
        time_field: "at".into(),
        timeout: std::time::Duration::from_secs(30),
    };
    let fx = Fx::with(|c| c.liveness = Some(source)).await;
    fx.proto.ensure_indices().await.unwrap();
    seed(&fx).await;
    let keyword = json!({"mappings": {"properties": {
        "instance": {"type": "keyword"}, "at": {"type": "date"}}}});
    fx.cluster().create_index(&beats, keyword).await.unwrap();
    fx.put(
        &beats,
        "w2",
        json!({"instance": "w:2", "at": "2026-01-01T00:00:00Z"}),
    )
    .await;
    fx.put_txn("odd", json!({"state": "wibble", "amount": 1}))
        .await;
    let why = Choices::new(Interface::Cli, Some("finance is on it".into()));
    let act = Acknowledge::ids(
        vec!["tc0".into()],
        std::time::Duration::from_secs(3600),
        None,
    );
    intervene::run(&fx.proto, Intervention::new(act, why))
        .await
        .unwrap();
    fx.cluster().refresh(&beats).await.unwrap();
    fx.cluster().refresh(&fx.ix.acks).await.unwrap();
    fx.refresh().await;
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let (snap, sent) = steady_poll(&p, &proxy).await;
    let log = proxy.log();
    let recent = log[log.len() - sent..].join("\n");
    assert!(sent <= 4, "{sent} requests:\n{recent}");
    assert_eq!(snap.requests as usize, sent, "{recent}");
    // What each read found, so none of them was skipped to fit.
    assert!(snap.acks.get("tc0").is_some(), "{:?}", snap.acks);
    assert!(
        snap.transactions.iter().any(|t| t.id == "odd"),
        "the odd document listed"
    );
    let held = lock(&snap, "Bc0");
    assert!(
        held.staleness.is_stale(),
        "its holder's old heartbeat read: {:?}",
        held.staleness
    );
}
