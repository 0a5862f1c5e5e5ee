//! How fresh a search is, per product: Elasticsearch Serverless shows no
//! `refresh_interval` and refreshes every 5 s, so discovery reads
//! `build_flavor: serverless` from `GET /` and assumes 5 s there (not the
//! 1 s of every other product); `doctor` and the poll's data age say so.

use super::common::{proxy::Personality, FaultProxy, TestServer};
use super::session::Session;
use estx::protocol::read::Refresh;
use serde_json::Value;

/// `doctor --json`'s refresh of each index, `doctor`'s words, and the
/// poll's refresh under `p`; `None` against an external cluster.
fn freshness(p: Personality) -> Option<(Vec<Value>, String, Option<Refresh>)> {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("{}: personalities apply to osmem-server only", p.name());
        return None;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    let s = Session::new(&proxy.url(), p.name());
    s.init();
    let doctor = s.run(&["doctor", "--json"]);
    let refresh = doctor.json()["indices"]
        .as_array()
        .unwrap_or_else(|| panic!("no indices: {doctor}"))
        .iter()
        .map(|i| i["info"]["refresh"].clone())
        .collect();
    let text = s.run(&["doctor"]).stdout.clone();
    let snap = s.rt.block_on(s.proto.poll_snapshot(10)).expect("poll");
    Some((refresh, text, snap.read.refresh))
}

#[test]
fn serverless_searches_are_taken_to_lag_by_its_5_s_refresh() {
    let Some((refresh, text, polled)) = freshness(Personality::ElasticsearchServerless) else {
        return;
    };
    assert_eq!(
        refresh,
        vec![Value::from("serverless_default"); 3],
        "{text}"
    );
    assert!(
        text.contains("refresh 5s (Elasticsearch Serverless's default"),
        "{text}"
    );
    let polled = polled.expect("the poll reads the transactions' refresh");
    assert_eq!(polled, Refresh::ServerlessDefault);
    assert_eq!(polled.interval(), Some(std::time::Duration::from_secs(5)));
}

#[test]
fn other_products_state_their_refresh_and_keep_it() {
    let Some((refresh, text, polled)) = freshness(Personality::Elasticsearch8) else {
        return;
    };
    for r in &refresh {
        assert_eq!(r["every"], 1.0, "{text}");
    }
    assert!(!text.contains("Serverless"), "{text}");
    assert_eq!(
        polled.and_then(|r| r.interval()),
        Some(std::time::Duration::from_secs(1))
    );
}
