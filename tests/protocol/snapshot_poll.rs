//! The dashboard's poll against a real server: counts by state (unknown
//! states included), in-flight transactions oldest first with the total,
//! the accounts they name, locks with staleness, missing indices — in a fixed
//! number of requests.

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::read::poll::{self, AccountEntry};
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
    let snap = poll::load(fx.cluster(), &ix, 500).await.unwrap();
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
    // msearch (the odd document read in it), one mget (the accounts and
    // the lock's owner), health.
    assert_eq!(snap.requests, 3, "requests per poll");
    // Without odd documents or foreign lock owners, the same three.
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
    let healthy = poll::load(fx.cluster(), &ix, 500).await.unwrap();
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
        acks: fx.ix.acks.clone(),
        locks_named: true,
    };
    let snap = poll::load(fx.cluster(), &ix, 500).await.unwrap();
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
    let err = poll::load(&cluster, &Indices::default(), 10)
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

/// More stuck transactions than the poll lists: the poll counts them over
/// every document (in its one `_msearch`, no extra request), so the
/// dashboard's alert line says what `check` says — 600 stuck, 410 needing
/// investigation (the undated in both), 3 odd — while 100 rows are listed.
#[tokio::test]
async fn the_polls_attention_counts_agree_with_check_past_the_listing_cap() {
    use estx::dashboard::app::{App, Settings};
    use estx::dashboard::event::Event;
    use estx::protocol::read::poll::AttentionCounts;
    use futures::StreamExt;
    let fx = Fx::new().await;
    let ago = |m: i64| {
        estx::protocol::time::format_timestamp(chrono::Utc::now() - chrono::Duration::minutes(m))
    };
    let mut docs = Vec::new();
    let mut add = |n: usize, tag: &str, state: &str, modified: Option<String>| {
        for i in 0..n {
            let mut doc = json!({"src_acct": "A", "dest_acct": "B", "amount": 1,
                "transaction_state": state});
            if let Some(m) = &modified {
                doc["modification_time"] = json!(m);
            }
            docs.push((format!("{tag}-{i:03}"), doc));
        }
    };
    add(400, "old", "pending", Some(ago(120)));
    add(190, "stuck", "committed", Some(ago(10)));
    add(10, "undated", "created", None);
    add(20, "recent", "pending", Some(ago(0)));
    add(3, "odd", "paused", Some(ago(120)));
    futures::stream::iter(docs)
        .for_each_concurrent(16, |(id, doc)| {
            let fx = &fx;
            async move { fx.put_txn(&id, doc).await }
        })
        .await;
    fx.refresh().await;

    let snap = fx.proto.poll_snapshot(100).await.unwrap();
    let check = fx.proto.check_reading().await.unwrap().counts;
    assert_eq!(
        (check.stuck, check.needs_investigation, check.odd_documents),
        (600, 410, 3)
    );
    assert_eq!(
        snap.read.attention,
        Some(AttentionCounts {
            stuck: Some(check.stuck),
            needs_investigation: Some(check.needs_investigation),
            odd: check.odd_documents,
        })
    );
    assert_eq!(snap.in_flight_total, 620);
    assert!(
        snap.transactions.len() <= 103,
        "{}",
        snap.transactions.len()
    );

    // The dashboard's alert line takes them, not the listed rows' counts.
    let settings = Settings {
        url: "http://test".into(),
        recovery_window: fx.proto.config().recovery_window,
        investigate_after: fx.proto.config().investigate_after,
        read_only: true,
        transactions_index: fx.ix.transactions.clone(),
        profile: None,
        mark: None,
        runbooks: Default::default(),
        others_unavailable: None,
    };
    let mut app = App::new(settings, std::time::Duration::from_secs(5), snap.taken_at);
    estx::dashboard::update::update(&mut app, Event::Polled(Ok(Box::new(snap))));
    let a = app.view.attention;
    assert_eq!((a.stuck, a.needs_investigation, a.odd), (600, 410, 3));
}

/// The article's deployment: transactions and accounts, no locks index,
/// none named. The poll says the deployment takes no locks; it does not
/// name a missing index (which would turn the header's health into
/// "indices missing").
#[tokio::test]
async fn a_poll_of_a_deployment_without_a_locks_index_says_it_has_no_locks() {
    let fx = Fx::new().await;
    stage(&fx, "s2", 2).await;
    fx.refresh().await;
    let ix = Indices {
        locks: format!("{}-none", fx.ix.locks),
        locks_named: false,
        ..fx.ix.indices()
    };
    let snap = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    assert!(
        snap.missing_indices.is_empty(),
        "{:?}",
        snap.missing_indices
    );
    assert!(snap.locks_absent);
    assert!(snap.locks.is_empty());
    assert_eq!(snap.in_flight_total, 1);
    let named = Indices {
        locks_named: true,
        ..ix
    };
    let snap = poll::load(fx.cluster(), &named, 500).await.unwrap();
    assert_eq!(snap.missing_indices, vec![named.locks.clone()]);
    assert!(!snap.locks_absent);
}

/// Issue 30 item 3: an ack made by one operator is in the next poll of
/// any other (a second dashboard), read as one more search of the poll's
/// `_msearch`: no request more than before it; taken back, it is gone
/// from the next poll.
#[tokio::test]
async fn a_poll_sees_an_ack_within_one_poll_at_no_extra_request() {
    use estx::protocol::intervene::{self, Acknowledge, Choices, Intervention};
    use estx::protocol::trail::Interface;
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let (id, _, _) = stage(&fx, "acked", 2).await;
    fx.refresh().await;
    let ix = fx.ix.indices();
    let before = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    assert!(before.acks.is_empty());

    let why = Choices::new(Interface::Cli, Some("finance is on it".into()));
    let act = Acknowledge::ids(vec![id.clone()], std::time::Duration::from_secs(3600), None);
    intervene::run(&fx.proto, Intervention::new(act, why.clone()))
        .await
        .unwrap();
    fx.cluster().refresh(&ix.acks).await.unwrap();
    let after = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    let ack = after.acks.get(&id).expect("the ack, in the next poll");
    assert_eq!(ack.reason, "finance is on it");
    assert_eq!(after.acks.total, 1);
    assert_eq!(after.requests, before.requests, "requests per poll");

    let act = Acknowledge::take_back(vec![id.clone()]);
    intervene::run(&fx.proto, Intervention::new(act, why))
        .await
        .unwrap();
    fx.cluster().refresh(&ix.acks).await.unwrap();
    let gone = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    assert!(gone.acks.is_empty(), "{:?}", gone.acks);
}
