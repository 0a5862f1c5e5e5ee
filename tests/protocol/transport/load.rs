//! Under load, as the products answer it: a thread pool's 429 carries no
//! `Retry-After`, a rejection can be one item of a 200 `_mget`/`_msearch`,
//! a keep-alive connection can be reset, and a PERMANENT circuit breaker
//! will not clear by waiting. Reads wait and ask again (exponentially, with
//! jitter, within a budget); a PERMANENT breaker is never retried.

use super::{proto_on, ten, two_accounts, via};
use crate::common::proxy::Canned;
use crate::common::FaultProxy;
use estx::protocol::batch::BatchOptions;
use estx::protocol::read::scan::{scan, Scan};
use estx::protocol::{RunLimits, StepResult, TxnState, Verdict};
use estx::Error;
use serde_json::json;
use std::time::Duration;

/// Every hit of the accounts index through `cluster`, by a full scan.
async fn scan_accounts(cluster: &estx::cluster::Cluster, index: &str) -> estx::Result<usize> {
    let what = Scan {
        query: json!({"match_all": {}}),
        sort: vec![json!({"_id": "asc"})],
        aggs: None,
        complete_only: false,
    };
    let mut seen = 0;
    scan(cluster, index, what, |page| {
        seen += page.len();
        true
    })
    .await?;
    Ok(seen)
}

#[tokio::test]
async fn a_scan_rides_out_three_seconds_of_429s_without_retry_after() {
    let fx = two_accounts().await;
    fx.refresh().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    proxy.answer_for("POST", "", Duration::from_secs(3), Canned::rejected());
    let seen = scan_accounts(&cluster, &fx.ix.accounts).await;
    assert_eq!(seen.unwrap(), 2, "{:#?}", proxy.log());
    let canned = proxy.canned();
    assert!(canned >= 2, "the proxy shed nothing: {:#?}", proxy.log());
    // Waiting longer each time: a handful of asks in three seconds, not hundreds.
    assert!(canned <= 15, "{canned} asks in 3 s: {:#?}", proxy.log());
}

#[tokio::test]
async fn a_read_whose_connection_dropped_is_asked_again() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    proxy.drop_responses("GET", "/_doc/A", 1);
    let doc = cluster.get(&fx.ix.accounts, "A").await.unwrap();
    assert!(doc.is_some());
    assert_eq!(proxy.dropped(), 1, "{:#?}", proxy.log());
}

#[tokio::test]
async fn a_step_whose_reads_keep_failing_gives_up_after_one_read_budget() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy).with_read_budget(Duration::from_millis(300));
    proxy.drop_responses("GET", &format!("/{}/_doc/B", fx.ix.accounts), 1000);
    let report = proto_on(&fx, cluster)
        .transfer(&ten("t-spent"), false, RunLimits::default())
        .await;
    assert!(matches!(report.verdict, Verdict::Failed(_)), "{report:#?}");
    let last = report.steps.last().unwrap();
    assert!(matches!(last.result, StepResult::Error(_)), "{report:#?}");
    assert_eq!(last.target, format!("{}/B", fx.ix.accounts));
    assert_eq!(fx.state("t-spent").await, TxnState::Pending);
    // One read budget: asked again after at least 100 ms, then 200 ms, so at
    // most four asks in 300 ms. The executor re-reading on top, as it did,
    // spent a whole budget per re-read: six budgets, twelve asks or more.
    let asked = proxy.dropped();
    assert!(
        (1..=4).contains(&asked),
        "{asked} reads: {:#?}",
        proxy.log()
    );
}

#[tokio::test]
async fn per_item_rejections_in_mget_and_msearch_are_asked_again_item_by_item() {
    let fx = two_accounts().await;
    fx.refresh().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    proxy.shed_read_items(2);
    let ids = vec!["A".to_string(), "B".to_string()];
    let docs = cluster.mget(&fx.ix.accounts, &ids).await.unwrap();
    assert!(docs.iter().all(Option::is_some), "{docs:?}");
    let searches = vec![
        (
            fx.ix.accounts.clone(),
            json!({"query": {"ids": {"values": ["A"]}}}),
        ),
        (
            fx.ix.accounts.clone(),
            json!({"query": {"ids": {"values": ["B"]}}}),
        ),
    ];
    let answers = cluster.msearch(&searches).await.unwrap();
    for a in &answers {
        let a = a.as_ref().unwrap();
        assert!(a.pointer("/hits/hits/0/_source").is_some(), "{a}");
    }
    assert!(proxy.shed_read_count() >= 2, "{:#?}", proxy.log());
}

#[tokio::test]
async fn a_permanent_circuit_breaker_is_named_and_never_retried() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    proxy.answer("GET", "/_doc/A", usize::MAX, Canned::breaker_permanent());
    let e = cluster.get(&fx.ix.accounts, "A").await.unwrap_err();
    assert!(matches!(e, Error::Breaker { .. }), "{e:?}");
    assert!(e.to_string().contains("PERMANENT"), "{e}");
    assert_eq!(proxy.canned(), 1, "{:#?}", proxy.log());
}

#[tokio::test]
async fn a_batch_whose_reads_keep_failing_gives_up_after_one_read_budget() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy).with_read_budget(Duration::from_millis(300));
    proxy.drop_responses("POST", &format!("/{}/_mget", fx.ix.transactions), 1000);
    let reports = proto_on(&fx, cluster)
        .recover_batched(&["t-1".to_string()], BatchOptions::default())
        .await;
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert!(
        matches!(reports[0].verdict, Verdict::Failed(_)),
        "{reports:#?}"
    );
    // One read budget: at most four asks in 300 ms (see above). The batch
    // re-reading on top, as it did, spent a whole budget per re-read.
    let asked = proxy.dropped();
    assert!(
        (1..=4).contains(&asked),
        "{asked} reads: {:#?}",
        proxy.log()
    );
}
