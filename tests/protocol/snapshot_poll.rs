//! The dashboard's poll against a real server: counts by state (unknown
//! states included), in-flight transactions oldest first with the total,
//! the accounts they name, locks with staleness, missing indices — in a fixed
//! number of requests.

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::dashboard::snapshot::{self, AccountEntry};
use estx::protocol::{Indices, TxnState};
use serde_json::json;

#[tokio::test]
async fn a_poll_sees_every_state_in_a_fixed_number_of_requests() {
    let fx = Fx::new().await;
    for k in [0, 2, 4, 7] {
        stage(&fx, &format!("s{k}"), k).await;
    }
    fx.put_txn(
        "odd",
        json!({"src_acct": "As0", "dest_acct": "Bs0", "amount": 5, "transaction_state": "paused",
        "modification_time": "2020-01-01T00:00:00Z"}),
    )
    .await;
    fx.put(
        &fx.ix.locks,
        "As2",
        json!({"owner": "ts7", "process_id": "w:1", "created_at": "2026-01-01T00:00:00Z"}),
    )
    .await;
    fx.refresh().await;
    let ix = fx.ix.indices();
    let snap = snapshot::load(fx.cluster(), &ix, 500).await.unwrap();
    assert!(snap.missing_indices.is_empty());
    let count = |s: TxnState| {
        snap.state_counts
            .iter()
            .find(|c| c.state.as_ref() == Some(&s))
            .map(|c| c.count)
            .unwrap_or(0)
    };
    assert_eq!(
        [
            count(TxnState::Created),
            count(TxnState::Pending),
            count(TxnState::Committed),
            count(TxnState::Finished)
        ],
        [1, 1, 1, 1]
    );
    assert_eq!(count(TxnState::Unknown("paused".into())), 1);
    assert_eq!(snap.in_flight_total, 3);
    let ids: Vec<&str> = snap.transactions.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.contains(&"odd"));
    assert!(matches!(snap.accounts.get("As2"), Some(AccountEntry::Ok(a)) if a.carries("ts2")));
    assert_eq!(snap.locks.len(), 1);
    assert!(snap.locks[0].staleness.is_stale(), "owner ts7 is finished");
    // msearch, accounts mget, lock owners mget, the odd-state search (there
    // is one), health.
    assert_eq!(snap.requests, 5, "requests per poll");
    // Without odd documents or foreign lock owners, three requests.
    fx.cluster()
        .put(
            &fx.ix.transactions,
            "odd",
            &json!({"src_acct": "As0", "dest_acct": "Bs0", "amount": 5,
        "transaction_state": "finished", "modification_time": "2020-01-01T00:00:00Z"}),
        )
        .await
        .unwrap();
    fx.cluster()
        .put(
            &fx.ix.locks,
            "As2",
            &json!({"owner": "ts2", "process_id": "w:1"}),
        )
        .await
        .unwrap();
    fx.refresh().await;
    let healthy = snapshot::load(fx.cluster(), &ix, 500).await.unwrap();
    assert_eq!(healthy.requests, 3, "requests per poll");
}

#[tokio::test]
async fn a_poll_names_missing_indices() {
    let fx = Fx::new().await;
    let ix = Indices {
        transactions: format!("{}-nope", fx.ix.transactions),
        accounts: fx.ix.accounts.clone(),
        locks: format!("{}-nope", fx.ix.locks),
        audit: fx.ix.audit.clone(),
    };
    let snap = snapshot::load(fx.cluster(), &ix, 500).await.unwrap();
    assert_eq!(
        snap.missing_indices,
        vec![ix.locks.clone(), ix.transactions.clone()]
    );
}

#[tokio::test]
async fn an_unreachable_cluster_is_a_transient_poll_failure() {
    let cluster =
        estx::cluster::Cluster::connect(&estx::cluster::ConnectOptions::new("http://127.0.0.1:9"))
            .unwrap();
    let err = snapshot::load(&cluster, &Indices::default(), 10)
        .await
        .unwrap_err();
    assert!(
        matches!(
            estx::dashboard::poller::classify(&err),
            estx::dashboard::event::PollFailure::Transient(_)
        ),
        "{err}"
    );
}
