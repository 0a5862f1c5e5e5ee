//! Self-test of the shared integration-test harness in `tests/common/`.
//!
//! Proves, against a real server (spawned `osmem-server`, or `ESTX_TEST_URL`),
//! that `TestServer` starts and answers, that the raw `http` helpers work, and
//! that `FaultProxy` really produces "lost responses": the upstream applies a
//! write while the client — the raw helper as well as the official
//! `elasticsearch` client the crate uses — only sees a closed connection —
//! and that its rewrite rules answer as deployments do (canned answers with
//! or without forwarding, a shifted `Date`, forward-proxy requests).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{
    http, refresh, try_http, unique_prefix, wait_until, wait_until_blocking, FaultProxy,
    TestIndices, TestServer,
};
use elasticsearch::http::transport::Transport;
use elasticsearch::{CreateParts, Elasticsearch};
use serde_json::{json, Value};

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Fetches a document directly; `None` if it does not exist.
fn get_doc(url: &str, index: &str, id: &str) -> Option<Value> {
    let (status, body) = http("GET", &format!("{url}/{index}/_doc/{id}"), None);
    match status {
        200 => Some(parse(&body)),
        404 => None,
        other => panic!("GET {index}/{id} returned {other}: {body}"),
    }
}

#[test]
fn server_creates_gets_and_searches_documents() {
    let server = TestServer::start();
    let idx = TestIndices::unique();
    let url = server.url();

    let (status, body) = http(
        "PUT",
        &format!("{url}/{}/_doc/a1?op_type=create", idx.accounts),
        Some(r#"{"owner":"alice","balance":100}"#),
    );
    assert_eq!(status, 201, "create: {body}");
    assert_eq!(parse(&body)["result"], "created");

    let doc = get_doc(url, &idx.accounts, "a1").expect("document a1 exists");
    assert_eq!(doc["_source"]["balance"], 100);
    assert!(doc["_seq_no"].is_u64() && doc["_primary_term"].is_u64());

    // A second create of the same id conflicts.
    let (status, body) = http(
        "PUT",
        &format!("{url}/{}/_doc/a1?op_type=create", idx.accounts),
        Some(r#"{"owner":"mallory","balance":0}"#),
    );
    assert_eq!(status, 409, "second create must conflict: {body}");

    assert!(get_doc(url, &idx.accounts, "nope").is_none());

    refresh(url, &idx.accounts);
    let (status, body) = http(
        "POST",
        &format!("{url}/{}/_search", idx.accounts),
        Some(r#"{"query":{"match_all":{}}}"#),
    );
    assert_eq!(status, 200, "search: {body}");
    assert_eq!(parse(&body)["hits"]["total"]["value"], 1);
}

#[test]
fn proxy_drops_response_but_upstream_applies_the_write() {
    let server = TestServer::start();
    let idx = TestIndices::unique();
    let proxy = FaultProxy::start(server.url());
    proxy.drop_responses("PUT", "/_doc/", 1);

    let through_proxy = format!(
        "{}/{}/_doc/t1?op_type=create",
        proxy.url(),
        idx.transactions
    );
    let outcome = try_http("PUT", &through_proxy, Some(r#"{"state":"initial"}"#));
    assert!(
        outcome.is_err(),
        "client must not see a response, got {outcome:?}"
    );
    assert_eq!(proxy.dropped(), 1);
    assert_eq!(proxy.forwarded(), 0);

    // The upstream applied the write even though nobody heard about it.
    let doc = get_doc(server.url(), &idx.transactions, "t1").expect("t1 written upstream");
    assert_eq!(doc["_source"]["state"], "initial");

    // The rule is used up: the same kind of request now goes through.
    let (status, body) = http(
        "PUT",
        &format!(
            "{}/{}/_doc/t2?op_type=create",
            proxy.url(),
            idx.transactions
        ),
        Some(r#"{"state":"pending"}"#),
    );
    assert_eq!(status, 201, "second PUT through proxy: {body}");
    let (status, body) = http(
        "GET",
        &format!("{}/{}/_doc/t1", proxy.url(), idx.transactions),
        None,
    );
    assert_eq!(status, 200, "GET through proxy: {body}");
    assert_eq!(parse(&body)["_source"]["state"], "initial");

    assert_eq!(proxy.dropped(), 1);
    assert_eq!(proxy.forwarded(), 2);
    assert_eq!(proxy.log().len(), 3, "log: {:?}", proxy.log());
}

#[test]
fn proxy_drops_only_matching_requests_and_passes_statuses_through() {
    let server = TestServer::start();
    let idx = TestIndices::unique();
    let proxy = FaultProxy::start(server.url());
    proxy.drop_responses("POST", "/_update/", 2);
    let base = format!("{}/{}", proxy.url(), idx.accounts);

    // Neither a PUT nor a GET matches the rule.
    let (status, _) = http("PUT", &format!("{base}/_doc/a1"), Some(r#"{"balance":1}"#));
    assert_eq!(status, 201);
    let (status, _) = http("GET", &format!("{base}/_doc/missing"), None);
    assert_eq!(status, 404, "error statuses pass through unchanged");
    let (status, _) = http("HEAD", &format!("{base}/_doc/a1"), None);
    assert_eq!(status, 200, "HEAD passes through");

    // Two updates are swallowed (but applied), the third is answered.
    for expected_balance in [2, 3] {
        let update = format!(r#"{{"doc":{{"balance":{expected_balance}}}}}"#);
        assert!(try_http("POST", &format!("{base}/_update/a1"), Some(&update)).is_err());
        let doc = get_doc(server.url(), &idx.accounts, "a1").expect("a1 exists");
        assert_eq!(doc["_source"]["balance"], expected_balance);
    }
    let (status, body) = http(
        "POST",
        &format!("{base}/_update/a1"),
        Some(r#"{"doc":{"balance":4}}"#),
    );
    assert_eq!(status, 200, "{body}");

    assert_eq!(proxy.dropped(), 2);
    assert_eq!(proxy.forwarded(), 4);

    // clear_rules removes pending drops.
    proxy.drop_responses("GET", "", 5);
    proxy.clear_rules();
    let (status, _) = http("GET", &format!("{base}/_doc/a1"), None);
    assert_eq!(status, 200);
    assert_eq!(proxy.dropped(), 2);
}

#[test]
fn proxy_serves_concurrent_clients() {
    let server = TestServer::start();
    let idx = TestIndices::unique();
    let proxy = FaultProxy::start(server.url());
    let base = format!("{}/{}", proxy.url(), idx.locks);

    std::thread::scope(|scope| {
        for i in 0..16 {
            let base = &base;
            scope.spawn(move || {
                let body = format!(r#"{{"holder":"tx{i}"}}"#);
                let (status, body) = http(
                    "PUT",
                    &format!("{base}/_doc/lock{i}?op_type=create"),
                    Some(&body),
                );
                assert_eq!(status, 201, "lock{i}: {body}");
            });
        }
    });
    assert_eq!(proxy.forwarded(), 16);
    refresh(server.url(), &idx.locks);
    let (_, body) = http(
        "GET",
        &format!("{}/{}/_count", server.url(), idx.locks),
        None,
    );
    assert_eq!(parse(&body)["count"], 16);
}

/// The crate talks to the cluster through the official client (reqwest/hyper
/// underneath); a dropped response must surface there as an error, and must
/// not be retried behind our back.
#[tokio::test]
async fn official_client_sees_an_error_for_a_dropped_response() {
    let server = TestServer::start();
    let idx = TestIndices::unique();
    let proxy = FaultProxy::start(server.url());
    let transport = Transport::single_node(&proxy.url()).expect("transport");
    let client = Elasticsearch::new(transport);

    // The client sends `create` as `POST /{index}/_create/{id}`.
    proxy.drop_responses("POST", "/_create/", 1);
    let lost = client
        .create(CreateParts::IndexId(&idx.transactions, "tx1"))
        .body(json!({"state": "initial"}))
        .send()
        .await;
    assert!(lost.is_err(), "dropped response must be an error: {lost:?}");
    assert_eq!(proxy.dropped(), 1);
    assert_eq!(proxy.forwarded(), 0, "no silent retry: {:?}", proxy.log());

    let url = server.url().to_string();
    let index = idx.transactions.clone();
    wait_until("tx1 is visible upstream", Duration::from_secs(5), || {
        let (url, index) = (url.clone(), index.clone());
        async move {
            tokio::task::spawn_blocking(move || get_doc(&url, &index, "tx1").is_some())
                .await
                .expect("blocking GET")
        }
    })
    .await;

    // Retrying the create now reports the conflict: the first attempt landed.
    let retry = client
        .create(CreateParts::IndexId(&idx.transactions, "tx1"))
        .body(json!({"state": "initial"}))
        .send()
        .await
        .expect("retry gets a response");
    assert_eq!(retry.status_code().as_u16(), 409);
    assert_eq!(proxy.forwarded(), 1);
}

#[tokio::test]
#[should_panic(expected = "timed out after 100ms waiting until the impossible happens")]
async fn wait_until_panics_with_its_description() {
    wait_until(
        "the impossible happens",
        Duration::from_millis(100),
        || async { false },
    )
    .await;
}

#[tokio::test]
async fn wait_until_returns_once_the_condition_holds() {
    let mut calls = 0;
    wait_until("third call", Duration::from_secs(5), || {
        calls += 1;
        let done = calls >= 3;
        async move { done }
    })
    .await;
    assert_eq!(calls, 3);
}

#[test]
fn unique_names_are_lowercase_prefixed_and_distinct() {
    let a = TestIndices::unique();
    let b = TestIndices::unique();
    assert_ne!(a.prefix, b.prefix);
    assert_eq!(a.transactions, format!("{}transactions", a.prefix));
    assert_eq!(a.accounts, format!("{}accounts", a.prefix));
    assert_eq!(a.locks, format!("{}locks", a.prefix));
    let prefix = unique_prefix();
    assert!(prefix.ends_with('-'), "{prefix}");
    assert!(
        prefix.starts_with(|c: char| c.is_ascii_lowercase()),
        "{prefix}"
    );
    assert!(
        prefix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{prefix}"
    );
}

#[test]
fn dropping_the_server_stops_a_spawned_server() {
    let server = TestServer::start();
    let url = server.url().to_string();
    let external = server.is_external();
    assert_eq!(http("GET", &format!("{url}/"), None).0, 200);
    drop(server);
    if external {
        return; // ESTX_TEST_URL: not ours to stop.
    }
    wait_until_blocking(
        "the server refuses connections",
        Duration::from_secs(5),
        || try_http("GET", &format!("{url}/"), None).is_err(),
    );
}

#[test]
fn dropping_the_proxy_stops_it() {
    let server = TestServer::start();
    let proxy = FaultProxy::start(server.url());
    let url = proxy.url();
    assert_eq!(http("GET", &format!("{url}/"), None).0, 200);
    drop(proxy);
    assert!(try_http("GET", &format!("{url}/"), None).is_err());
}

/// The head (status line and headers) of a GET answer, read with `std::net`.
fn response_head(base: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    raw.split("\r\n\r\n").next().unwrap_or_default().to_string()
}

fn date_of(head: &str) -> std::time::SystemTime {
    let line = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("date:"))
        .unwrap_or_else(|| panic!("no Date in {head}"));
    httpdate::parse_http_date(line[5..].trim()).unwrap()
}

#[test]
fn proxy_answers_canned_responses_without_forwarding_or_after_forwarding() {
    let server = TestServer::shared();
    let idx = TestIndices::unique();
    let proxy = FaultProxy::start(server.url());
    let doc = |id: &str| format!("{}/{}/_doc/{id}", proxy.url(), idx.accounts);

    proxy.answer("PUT", "/_doc/c1", 1, common::proxy::Canned::empty(401));
    let (status, body) = http("PUT", &doc("c1"), Some(r#"{"balance":1}"#));
    assert_eq!((status, body.as_str()), (401, ""));
    assert!(
        get_doc(server.url(), &idx.accounts, "c1").is_none(),
        "forwarded"
    );

    let page = common::proxy::Canned::html(502, "502 Bad Gateway");
    proxy.answer_after_forwarding("PUT", "/_doc/c2", 1, page);
    let (status, body) = http("PUT", &doc("c2"), Some(r#"{"balance":2}"#));
    assert_eq!(status, 502);
    assert!(body.contains("<title>502 Bad Gateway</title>"), "{body}");
    assert!(
        get_doc(server.url(), &idx.accounts, "c2").is_some(),
        "not applied"
    );

    proxy.answer("GET", "/_doc/c2", 1, common::proxy::Canned::throttled("7"));
    let head = response_head(&proxy.url(), &format!("/{}/_doc/c2", idx.accounts));
    assert!(head.starts_with("HTTP/1.1 429"), "{head}");
    assert!(head.contains("Retry-After: 7"), "{head}");
    // Rules are used up: the next read is the cluster's.
    let (status, _) = http("GET", &doc("c2"), None);
    assert_eq!(status, 200);
    assert_eq!(proxy.canned(), 3);
}

#[test]
fn proxy_shifts_the_date_and_serves_absolute_form_requests() {
    let server = TestServer::shared();
    let proxy = FaultProxy::start(server.url());
    let direct = date_of(&response_head(server.url(), "/"));
    proxy.shift_date(-3600);
    // As a client configured with HTTP_PROXY asks: the full URL as target.
    let head = response_head(&proxy.url(), "http://elsewhere.invalid:9200/");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let shifted = date_of(&head);
    let behind = direct.duration_since(shifted).unwrap().as_secs();
    assert!((3595..=3605).contains(&behind), "{behind}s");
    assert_eq!(proxy.proxied_requests(), 1);
}
