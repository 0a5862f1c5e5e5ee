//! Mapping variety through the binary, under product personalities: custom
//! routing that is not required, behind the proxy answering as an index of
//! several shards does (`FaultProxy::route_by_shards`: a GET or `_mget` by
//! id without the routing value misses, a conditional write without it
//! conflicts), and `ignore_above` on a bare keyword field; and what a miss
//! by id costs by shard count: one more search on an index of several
//! primary shards (or of an unknown count), none on an index of one.

use super::common::proxy::Personality;
use super::common::{self, FaultProxy, TestServer};
use super::session::{ago, ids, Session};
use serde_json::{json, Value};

/// A proxy playing `p` and the shards, and a session through it (`None`
/// under `ESTX_TEST_URL`: the proxy fronts osmem-server only).
fn sharded(p: Personality) -> Option<(FaultProxy, Session)> {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("this test needs the proxy in front of osmem-server; skipped with ESTX_TEST_URL");
        return None;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    proxy.route_by_shards(true);
    let s = Session::new(&proxy.url(), p.name());
    s.init();
    Some((proxy, s))
}

/// Indexes `doc` as `index/id` with routing value `routing`, on the server.
fn put_routed(index: &str, id: &str, routing: &str, doc: &Value) {
    let url = format!(
        "{}/{index}/_doc/{id}?routing={routing}&refresh=true",
        TestServer::shared().url()
    );
    let (status, body) = common::http("PUT", &url, Some(&doc.to_string()));
    assert!((200..300).contains(&status), "{status}: {body}");
}

fn txn(state: &str, src: &str, dest: &str, minutes_ago: i64) -> Value {
    let t = ago(minutes_ago);
    json!({"src_acct": src, "dest_acct": dest, "amount": 10, "transaction_state": state,
           "creation_time": t, "modification_time": t})
}

/// The application routes transactions by source account. `stuck` (created,
/// 90 minutes old) is shown, listed and recovered by `recover --all-stuck`;
/// the lock on `C`, whose lease ran out, belongs to `live` (pending, just
/// modified): its owner is found, so the sweep leaves it to that
/// transaction, and `locks` shows the owner's state.
fn custom_routing_under(p: Personality) {
    let Some((_proxy, s)) = sharded(p) else {
        return;
    };
    put_routed(
        &s.ix.transactions,
        "stuck",
        "A",
        &txn("created", "A", "B", 90),
    );
    put_routed(
        &s.ix.transactions,
        "live",
        "C",
        &txn("pending", "C", "D", 0),
    );
    let lock = json!({"owner": "live", "process_id": "w",
        "created_at": ago(30), "expires_at": ago(20)});
    let (status, body) = s.http("PUT", &format!("{}/_doc/C", s.ix.locks), Some(&lock));
    assert!((200..300).contains(&status), "{body}");
    s.refresh();

    let show = s.run(&["show", "stuck", "--json"]);
    show.code(0);
    assert_eq!(show.json()["transaction"]["state"], "created", "{show}");
    let all = s.run(&["list", "--all", "--json"]);
    all.code(0);
    assert!(ids(&all.json()).contains("stuck"), "{all}");
    let locks = s.run(&["locks", "--json"]);
    locks.code(0);
    assert_eq!(locks.json()[0]["owner_state"], "pending", "{locks}");

    let run = s.run(&["recover", "--all-stuck", "--json"]);
    run.code(0);
    let url = TestServer::shared().url();
    let (_, doc) = common::http(
        "GET",
        &format!("{url}/{}/_doc/stuck?routing=A", s.ix.transactions),
        None,
    );
    assert!(doc.contains("\"finished\""), "{doc}\n{run}");
    assert_eq!(s.total_balance(), 6 * super::session::BALANCE);
    let (status, _) = s.http("GET", &format!("{}/_doc/C", s.ix.locks), None);
    assert_eq!(status, 200, "the live transaction's lock was swept: {run}");
}

#[test]
fn custom_routing_elasticsearch_8() {
    custom_routing_under(Personality::Elasticsearch8);
}

#[test]
fn custom_routing_opensearch_2() {
    custom_routing_under(Personality::OpenSearch2);
}

/// The transactions index as `init` maps it, with `src_acct` changed to `def`.
fn transactions_mapping(src_acct: Option<Value>) -> Value {
    let mut m: Value =
        serde_json::from_str(include_str!("../../assets/mappings/transactions.json")).unwrap();
    if let Some(def) = src_acct {
        m["mappings"]["properties"]["src_acct"] = def;
    }
    m
}

/// The transactions are a rollover alias over two indices: `doctor` and
/// every intervention name the reason and what to do, and nothing is
/// written.
#[test]
fn a_rollover_alias_is_refused_with_its_reason() {
    let Some((_proxy, s)) = sharded(Personality::Elasticsearch8) else {
        return;
    };
    let tx = s.ix.transactions.clone();
    let (status, answer) = s.http("DELETE", &tx, None);
    assert_eq!(status, 200, "{answer}");
    for (n, write) in [(1, false), (2, true)] {
        let mut body = transactions_mapping(None);
        body["aliases"] = json!({ tx.clone(): {"is_write_index": write} });
        let (status, answer) = s.http("PUT", &format!("{tx}-00000{n}"), Some(&body));
        assert_eq!(status, 200, "{answer}");
    }
    put_routed(
        &format!("{tx}-000001"),
        "old",
        "old",
        &txn("created", "A", "B", 90),
    );
    let doctor = s.run(&["doctor"]);
    assert!(doctor.stdout.contains("rollover alias"), "{doctor}");
    let out = s.run(&["recover", "old"]);
    out.code(1);
    for why in ["can't execute a single index op", "`--transactions-index`"] {
        assert!(out.stderr.contains(why), "{why}: {out}");
    }
    let (_, doc) = s.http("GET", &format!("{tx}-000001/_doc/old"), None);
    assert_eq!(doc["_source"]["transaction_state"], "created", "{doc}");
}

/// `src_acct` is a bare keyword with `ignore_above: 256`: a transaction
/// naming a missing 300-character account is an audit finding.
#[test]
fn ignore_above_hides_no_account_from_the_audit() {
    let Some((_proxy, s)) = sharded(Personality::OpenSearch2) else {
        return;
    };
    let long = "a".repeat(300);
    let tx = s.ix.transactions.clone();
    let (status, answer) = s.http("DELETE", &tx, None);
    assert_eq!(status, 200, "{answer}");
    let def = json!({"type": "keyword", "ignore_above": 256});
    let (status, answer) = s.http("PUT", &tx, Some(&transactions_mapping(Some(def))));
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = s.http(
        "PUT",
        &format!("{tx}/_doc/long?refresh=true"),
        Some(&txn("created", &long, "B", 1)),
    );
    assert!((200..300).contains(&status), "{answer}");
    let audit = s.run(&["audit", "--json"]);
    let findings = audit.json()["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "missing_account" && f["id"] == "long"),
        "{audit}"
    );
}

/// The requests `proxy` saw since the first `from`, that search.
fn searches_since(proxy: &FaultProxy, from: usize) -> Vec<String> {
    proxy.log()[from..]
        .iter()
        .filter(|l| l.contains("/_search"))
        .cloned()
        .collect()
}

/// A GET and an `_mget` by id that miss, after discovery, through a proxy
/// playing `p` (and the shards when `sharded`): the searches they made.
fn searches_after_misses(p: Personality, sharded: bool) -> Option<Vec<String>> {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("this test needs the proxy in front of osmem-server; skipped with ESTX_TEST_URL");
        return None;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    proxy.route_by_shards(sharded);
    let s = Session::new(&proxy.url(), p.name());
    s.init();
    s.stage("here", "A", "B", 0);
    s.rt.block_on(s.proto.discovery()).unwrap();
    let from = proxy.log().len();
    let cluster = s.proto.cluster();
    let tx = &s.ix.transactions;
    let got = s.rt.block_on(cluster.get(tx, "absent")).unwrap();
    assert!(got.is_none());
    let ids = ["here".to_string(), "absent".to_string()];
    let docs = s.rt.block_on(cluster.mget(tx, &ids)).unwrap();
    assert!(docs[0].is_some() && docs[1].is_none(), "{docs:?}");
    Some(searches_since(&proxy, from))
}

/// With one primary shard a miss by id is final: neither the GET nor the
/// `_mget` is followed by the `ids` search that looks on the other shards.
#[test]
fn a_miss_on_a_single_shard_index_makes_no_search() {
    let Some(searches) = searches_after_misses(Personality::Elasticsearch8, false) else {
        return;
    };
    assert!(searches.is_empty(), "{searches:#?}");
}

/// With several primary shards (the proxy reports 3), each miss is still
/// confirmed by one `ids` search.
#[test]
fn a_miss_on_a_multi_shard_index_is_still_searched() {
    let Some(searches) = searches_after_misses(Personality::OpenSearch2, true) else {
        return;
    };
    assert_eq!(searches.len(), 2, "{searches:#?}");
}

/// Serverless shows no `number_of_shards`: not knowing, the tool checks.
#[test]
fn a_miss_where_the_shard_count_is_not_shown_is_still_searched() {
    let Some(searches) = searches_after_misses(Personality::ElasticsearchServerless, false) else {
        return;
    };
    assert_eq!(searches.len(), 2, "{searches:#?}");
}
