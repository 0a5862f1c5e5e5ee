//! Errors by status first: what a load balancer, OpenSearch security or a
//! throttled cluster answers is classified by its status, whatever the body.

use super::{proto_on, ten, two_accounts, via};
use crate::common::proxy::Canned;
use crate::common::FaultProxy;
use estx::dashboard::event::PollFailure;
use estx::dashboard::poller;
use estx::protocol::read::poll;
use estx::protocol::{RunLimits, TxnState, Verdict};
use estx::Error;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn an_html_502_after_a_write_landed_is_an_unknown_outcome_the_re_read_resolves() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    // The first step's write lands, but the client sees a load balancer's page.
    proxy.answer_after_forwarding("POST", "/_update/", 1, Canned::html(502, "502 Bad Gateway"));
    // The first account write never reaches the cluster: a gateway timeout.
    let accounts = format!("/{}/_update/", fx.ix.accounts);
    proxy.answer(
        "POST",
        &accounts,
        1,
        Canned::html(504, "504 Gateway Time-out"),
    );
    let proto = proto_on(&fx, via(&proxy));
    let report = proto
        .transfer(&ten("t502"), false, RunLimits::default())
        .await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}\n{:#?}",
        report.verdict,
        proxy.log()
    );
    assert_eq!(proxy.canned(), 2, "{:#?}", proxy.log());
    assert_eq!(
        (fx.acct("A").await.balance, fx.acct("B").await.balance),
        (90, 110)
    );
}

#[tokio::test]
async fn a_refused_login_on_a_write_is_final_and_not_retried() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.answer(
        "POST",
        "/_create/",
        usize::MAX,
        Canned::text(403, "Forbidden"),
    );
    let proto = proto_on(&fx, via(&proxy));
    let report = proto
        .transfer(&ten("t403"), false, RunLimits::default())
        .await;
    match &report.verdict {
        Verdict::Failed(e @ Error::Auth { status: 403, .. }) => assert!(!e.is_transient()),
        other => panic!("expected an auth failure, got {other:?}"),
    }
    assert_eq!(proxy.canned(), 1, "retried: {:#?}", proxy.log());
    assert_eq!(
        (fx.acct("A").await.balance, fx.acct("B").await.balance),
        (100, 100)
    );
}

#[tokio::test]
async fn a_throttled_read_waits_as_asked_then_succeeds() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    proxy.answer("GET", "/_doc/A", 1, Canned::throttled("1"));
    let started = Instant::now();
    let doc = cluster.get(&fx.ix.accounts, "A").await.unwrap();
    assert!(doc.is_some());
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After not honoured"
    );
    assert_eq!(proxy.canned(), 1);

    // Asked to wait longer than a read may: the error says how long, at once.
    proxy.answer("GET", "/_doc/B", 1, Canned::throttled("120"));
    let e = cluster.get(&fx.ix.accounts, "B").await.unwrap_err();
    assert!(e.is_transient(), "{e:?}");
    assert_eq!(e.retry_after(), Some(Duration::from_secs(120)), "{e:?}");
    assert_eq!(proxy.canned(), 2);
}

#[tokio::test]
async fn a_poll_whose_login_is_refused_is_an_auth_failure() {
    let fx = two_accounts().await;
    for canned in [Canned::empty(401), Canned::text(401, "Unauthorized")] {
        let proxy = FaultProxy::start(&fx.url);
        proxy.answer("", "", usize::MAX, canned);
        let e = poll::load(&via(&proxy), &fx.ix.indices(), 10)
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Auth { status: 401, .. }), "{e:?}");
        assert!(matches!(poller::classify(&e), PollFailure::Auth(_)));
    }
}

#[tokio::test]
async fn mget_per_document_errors_keep_their_own_status() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    let cluster = via(&proxy);
    let ids = vec!["A".to_string()];
    let answer = |kind: &str| {
        Canned::json(
            200,
            json!({"docs": [{"_index": fx.ix.accounts, "_id": "A",
                "error": {"type": kind, "reason": "per-document failure"}}]}),
        )
    };
    proxy.answer("", "_mget", 1, answer("illegal_argument_exception"));
    let e = cluster.mget(&fx.ix.accounts, &ids).await.unwrap_err();
    assert!(matches!(e, Error::Cluster { status: 400, .. }), "{e:?}");
    assert!(!e.is_transient());
    // A rejected item is asked for again (item by item, see `load`): the
    // second ask reaches the cluster.
    proxy.answer("", "_mget", 1, answer("es_rejected_execution_exception"));
    assert!(cluster.mget(&fx.ix.accounts, &ids).await.unwrap()[0].is_some());
    assert_eq!(proxy.canned(), 2, "{:#?}", proxy.log());
    // Untouched, the same read works.
    assert!(cluster.mget(&fx.ix.accounts, &ids).await.unwrap()[0].is_some());
}
