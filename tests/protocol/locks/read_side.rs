//! Locks through the one read side: the resolved `owner` field on an
//! auto-created locks index (`text` + `.keyword`), totals, and shard
//! failures (rewritten by the test proxy as a red shard answers) that make
//! the sweep of abandoned locks refuse unless allowed.

use super::ts;
use crate::common::proxy::{partial_search, FaultProxy};
use crate::deployments::{Deployed, Shape};
use crate::fixture::Fx;
use chrono::Duration as ChronoDuration;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::Protocol;
use serde_json::{json, Value};

fn stale_lock(owner: &str) -> serde_json::Value {
    json!({"owner": owner, "process_id": "w",
        "created_at": ts(ChronoDuration::minutes(-30)),
        "expires_at": ts(ChronoDuration::minutes(-20))})
}

/// An index auto-created by the application's first lock: `owner` is `text`
/// with a `.keyword`; the search for a transaction's locks goes through the
/// keyword (an analysed match would also find `ghost-2`'s), and the listing
/// reads every lock with its total and a complete coverage.
#[tokio::test]
async fn an_auto_created_locks_index_is_read_through_owner_keyword() {
    let d = Deployed::new(Shape::AutoCreated).await;
    // The application's first writes create the indices (and lock `A`,
    // whose owner `stuck` is live).
    d.seed_the_application(&d.ix.transactions).await;
    d.put(&d.ix.locks, "R1", stale_lock("ghost")).await;
    d.put(&d.ix.locks, "R2", stale_lock("ghost 2")).await;
    d.refresh().await;
    let disc = d.proto.discovery().await.unwrap();
    assert_eq!(disc.fields.owner.exact.as_deref(), Some("owner.keyword"));

    let (ids, summary) = d.proto.lock_ids_owned_by("ghost").await.unwrap();
    assert_eq!(ids, ["R1"]);
    assert!(!summary.coverage.is_partial());

    let listing = d.proto.list_locks_with(true).await.unwrap();
    let resources: Vec<&str> = listing
        .locks
        .iter()
        .map(|l| l.info.resource.as_str())
        .collect();
    assert_eq!(resources.len(), 3, "{resources:?}");
    assert_eq!(listing.summary.total, 3);
    assert!(listing.summary.coverage.describe().is_none());
    let stale: Vec<&str> = listing
        .locks
        .iter()
        .filter(|l| l.staleness.is_stale())
        .map(|l| l.info.resource.as_str())
        .collect();
    assert!(stale.contains(&"R1") && stale.contains(&"R2"), "{stale:?}");

    // Both owners are missing: the sweep releases both, and not `A` (its
    // owner is in flight: left to that transaction's recovery).
    let sweep = d
        .proto
        .release_abandoned_locks_allowing(false)
        .await
        .unwrap();
    let mut swept: Vec<(String, ReleaseOutcome)> = sweep
        .swept
        .iter()
        .map(|s| (s.view.info.resource.clone(), s.outcome.clone()))
        .collect();
    swept.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        swept,
        [
            ("R1".to_string(), ReleaseOutcome::Released),
            ("R2".to_string(), ReleaseOutcome::Released)
        ]
    );
    assert!(d.cluster().get(&d.ix.locks, "A").await.unwrap().is_some());
}

/// 600 locks: the `locks` listing reads them all, total from the same view.
#[tokio::test]
async fn every_one_of_six_hundred_locks_is_listed_with_its_total() {
    let fx = Fx::new().await;
    let docs: Vec<(String, serde_json::Value)> = (0..600)
        .map(|i| (format!("R{i:03}"), stale_lock(&format!("t{i}"))))
        .collect();
    fx.cluster().bulk_index(&fx.ix.locks, &docs).await.unwrap();
    fx.refresh().await;
    let listing = fx.proto.list_locks_with(true).await.unwrap();
    assert_eq!(listing.locks.len(), 600);
    assert_eq!(listing.summary.total, 600);
    assert!(estx::protocol::locks::read::count_text(&listing).is_none());
}

/// A stale lock on `ghost-lock` (its owner `ghost` does not exist), and a
/// handle through a proxy that can answer a scan of the locks with it on a
/// page some shards failed to fill, `total` locks matching: the proxy, the
/// handle and that page.
async fn ghost_lock_behind_a_red_shard(fx: &Fx, total: u64) -> (FaultProxy, Protocol, Value) {
    fx.put(&fx.ix.locks, "ghost-lock", stale_lock("ghost"))
        .await;
    fx.refresh().await;
    let proxy = FaultProxy::start(&fx.url);
    let via = fx.proto_via(&proxy.url());
    let hit = json!({"_id": "ghost-lock", "_index": fx.ix.locks,
        "_source": fx.source(&fx.ix.locks, "ghost-lock").await});
    (proxy, via, partial_search(vec![hit], total))
}

/// A locks scan some shards failed to answer: the sweep refuses before any
/// release (the lock stays), and with `allow_partial` releases what it read
/// (by id, re-judged) and says the listing was partial.
#[tokio::test]
async fn a_partial_locks_listing_is_never_swept_unless_allowed() {
    let fx = Fx::new().await;
    let (proxy, via, partial) = ghost_lock_behind_a_red_shard(&fx, 3).await;
    let arm = || proxy.answer_next_scan(&fx.ix.locks, partial.clone());

    arm();
    let listing = via.list_locks_with(false).await.unwrap();
    assert_eq!(listing.locks.len(), 1);
    assert_eq!(
        listing.summary.coverage.describe().as_deref(),
        Some("partial: 1 of 2 shards failed")
    );
    assert_eq!(
        estx::protocol::locks::read::count_text(&listing).as_deref(),
        Some("1 of 3 locks read")
    );

    arm();
    let err = via.release_abandoned_locks().await.unwrap_err().to_string();
    assert!(
        err.contains("partial: 1 of 2 shards failed") && err.contains("--allow-partial"),
        "{err}"
    );
    assert!(
        fx.cluster()
            .get(&fx.ix.locks, "ghost-lock")
            .await
            .unwrap()
            .is_some(),
        "nothing released on a refusal"
    );

    arm();
    let sweep = via.release_abandoned_locks_allowing(true).await.unwrap();
    assert_eq!(
        sweep.coverage.describe().as_deref(),
        Some("partial: 1 of 2 shards failed")
    );
    assert_eq!(sweep.swept.len(), 1);
    assert_eq!(sweep.swept[0].outcome, ReleaseOutcome::Released);
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "ghost-lock")
        .await
        .unwrap()
        .is_none());
}

/// An operator release of a transaction's locks whose search for them some
/// shards failed to answer: refused before any release unless allowed; when
/// allowed, the locks found are released and the result says the search
/// was partial.
#[tokio::test]
async fn releasing_a_transactions_locks_on_a_partial_search_is_refused_unless_allowed() {
    let fx = Fx::new().await;
    let (proxy, via, partial) = ghost_lock_behind_a_red_shard(&fx, 1).await;
    let arm = || proxy.answer_next_scan(&fx.ix.locks, partial.clone());

    arm();
    let err = via
        .release_transaction_locks_allowing("ghost", false, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("partial: 1 of 2 shards failed") && err.contains("--allow-partial"),
        "{err}"
    );
    assert!(
        fx.cluster()
            .get(&fx.ix.locks, "ghost-lock")
            .await
            .unwrap()
            .is_some(),
        "nothing released on a refusal"
    );

    arm();
    let r = via
        .release_transaction_locks_allowing("ghost", false, true)
        .await
        .unwrap();
    assert_eq!(
        r.coverage.describe().as_deref(),
        Some("partial: 1 of 2 shards failed")
    );
    assert_eq!(
        r.released,
        vec![("ghost-lock".to_string(), ReleaseOutcome::Released)]
    );
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "ghost-lock")
        .await
        .unwrap()
        .is_none());
}
