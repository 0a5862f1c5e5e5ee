//! `_cluster/health` with short timeouts: a cluster without a master is a
//! state the poll shows, never a poll stalled for the client's full timeout.

use super::{two_accounts, via};
use crate::common::proxy::Canned;
use crate::common::FaultProxy;
use estx::cluster::ClusterHealth;
use estx::protocol::read::poll;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn health_asks_for_short_timeouts_and_reads_no_master_as_a_state() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    let h = cluster.health().await.unwrap();
    assert!(matches!(h, ClusterHealth::Reported { .. }), "{h:?}");
    let asked = proxy.log().join("\n");
    assert!(asked.contains("master_timeout=2000ms"), "{asked}");
    assert!(asked.contains("timeout=2000ms"), "{asked}");

    proxy.answer(
        "GET",
        "_cluster/health",
        1,
        Canned::json(
            503,
            json!({"error": {"type": "master_not_discovered_exception", "reason": null}, "status": 503}),
        ),
    );
    let h = cluster.health().await.unwrap();
    assert!(matches!(h, ClusterHealth::NoMaster { .. }), "{h:?}");
}

#[tokio::test]
async fn a_hanging_health_check_does_not_hold_the_poll() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    // Far longer than the client's 10 s timeout: only the health timeout ends it.
    proxy.delay(
        "GET",
        "_cluster/health",
        usize::MAX,
        Duration::from_secs(60),
    );
    let cluster = via(&proxy);
    let h = cluster.health().await.unwrap();
    assert!(matches!(h, ClusterHealth::NoMaster { .. }), "{h:?}");
    let snap = poll::load(&cluster, &fx.ix.indices(), 10).await.unwrap();
    assert_eq!(snap.health.as_deref(), Some("no master"));
    assert!(snap.missing_indices.is_empty());
}
