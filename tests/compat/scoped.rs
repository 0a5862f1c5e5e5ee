//! `rest.action.multi.allow_explicit_index: false` (Amazon OpenSearch
//! Service's advice for index-level access policies), at the wire: a
//! request for one index names it in the path and is never refused; the
//! first request across indices is refused once (400, nothing run), the
//! handle remembers it, and from then on such requests go one per index;
//! a conditional `_bulk` across indices refused that way is sent again per
//! index and every item lands exactly once.

use super::common::proxy::Personality;
use super::common::{FaultProxy, TestServer};
use super::session::Session;
use estx::cluster::{Changes, Cluster, CondWrite, ConnectOptions, ItemOutcome};
use serde_json::json;

/// Requests the proxy refused for naming an index in their body.
fn refusals(proxy: &FaultProxy) -> usize {
    proxy.log().iter().filter(|l| l.contains("-> 400")).count()
}

#[test]
fn the_refusal_is_learnt_once_and_requests_go_one_per_index() {
    let p = Personality::AwsOpenSearch2ExplicitIndexRefused;
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("{}: personalities apply to osmem-server only", p.name());
        return;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    let s = Session::new(&proxy.url(), p.name());
    s.init();
    let ix = s.ix.clone();
    let (status, body) = s.http(
        "PUT",
        &format!("{}/_doc/t1", ix.transactions),
        Some(
            &json!({"transaction_state": "created", "src_acct": "A", "dest_acct": "B",
            "amount": 5, "modification_time": super::session::ago(0)}),
        ),
    );
    assert!((200..300).contains(&status), "{body}");
    s.refresh();
    let cluster = s.proto.cluster();

    // One index: in the path from the start, never refused.
    let ids = vec!["A".to_string(), "B".to_string()];
    let docs = s.rt.block_on(cluster.mget(&ix.accounts, &ids)).unwrap();
    assert!(docs.iter().all(Option::is_some));
    let one = vec![(ix.accounts.clone(), json!({"size": 0}))];
    assert!(s.rt.block_on(cluster.msearch(&one)).unwrap()[0].is_ok());
    assert_eq!(refusals(&proxy), 0, "{:#?}", proxy.log());
    assert!(!cluster.index_scoped());

    // Across indices: refused once, remembered, answered per index.
    let across = vec![
        (ix.transactions.clone(), json!({"size": 0})),
        (ix.accounts.clone(), json!({"size": 0})),
    ];
    let answers = s.rt.block_on(cluster.msearch(&across)).unwrap();
    let totals: Vec<u64> = answers
        .iter()
        .map(|a| {
            a.as_ref().unwrap()["hits"]["total"]["value"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(totals, [1, 6], "each answer in its own slot");
    assert_eq!(refusals(&proxy), 1, "{:#?}", proxy.log());
    assert!(cluster.index_scoped());
    let again = s.rt.block_on(cluster.msearch(&across)).unwrap();
    assert!(again.iter().all(Result::is_ok));
    assert_eq!(refusals(&proxy), 1, "remembered: {:#?}", proxy.log());

    // A fresh handle: its conditional _bulk across indices is refused once
    // (nothing written), sent again per index, and each item lands once.
    let fresh = Cluster::connect(&ConnectOptions::new(proxy.url())).unwrap();
    let t1 =
        s.rt.block_on(fresh.get(&ix.transactions, "t1"))
            .unwrap()
            .unwrap();
    let a =
        s.rt.block_on(fresh.get(&ix.accounts, "A"))
            .unwrap()
            .unwrap();
    let tx_change = Changes::new().set("transaction_state", json!("pending"));
    let acct_change = Changes::new().set("balance", json!(995));
    let writes = [
        CondWrite {
            index: &ix.transactions,
            id: "t1",
            changes: &tx_change,
            seq_no: t1.seq_no,
            primary_term: t1.primary_term,
            routing: None,
        },
        CondWrite {
            index: &ix.accounts,
            id: "A",
            changes: &acct_change,
            seq_no: a.seq_no,
            primary_term: a.primary_term,
            routing: None,
        },
    ];
    let outcomes = s.rt.block_on(fresh.bulk_put_if_versioned(&writes)).unwrap();
    assert!(
        outcomes
            .iter()
            .all(|(o, v)| matches!(o, ItemOutcome::Written) && v.is_some()),
        "{outcomes:?}"
    );
    assert_eq!(refusals(&proxy), 2, "{:#?}", proxy.log());
    assert!(fresh.index_scoped());
    // Written once each: one version after the one read.
    for (index, id, field, value) in [
        (
            &ix.transactions,
            "t1",
            "transaction_state",
            json!("pending"),
        ),
        (&ix.accounts, "A", "balance", json!(995)),
    ] {
        let (_, doc) = s.http("GET", &format!("{index}/_doc/{id}"), None);
        assert_eq!(doc["_version"], 2, "{doc}");
        assert_eq!(doc["_source"][field], value, "{doc}");
    }
}
