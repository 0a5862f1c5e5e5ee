//! `estx-tui` against clusters `init` never touched: `doctor` says what will
//! work, a strict accounts index is refused before the first write with the
//! exact mapping change, and `init --upgrade-mappings` applies it.

use super::*;

/// The article's accounts mapping made `dynamic: strict`.
const STRICT_ACCOUNTS: &str = r#"{"mappings":{"dynamic":"strict","properties":{"balance":{"type":"long"},"pending_transactions":{"type":"keyword"}}}}"#;

/// A pending transaction whose source was applied 10 minutes ago, with its
/// two accounts, written as the application writes them.
fn seed(w: &World) {
    w.put(
        &w.ix.accounts,
        "A",
        &json!({"balance": 400, "pending_transactions": ["stuck"]}),
    );
    w.put(
        &w.ix.accounts,
        "B",
        &json!({"balance": 500, "pending_transactions": []}),
    );
    w.put(
        &w.ix.transactions,
        "stuck",
        &json!({"src_acct": "A", "dest_acct": "B", "amount": 100,
            "transaction_state": "pending", "modification_time": ago(10)}),
    );
    w.put(
        &w.ix.transactions,
        "undone",
        &json!({"src_acct": "A", "dest_acct": "B", "amount": 100,
            "transaction_state": "rolled-back", "modification_time": ago(30)}),
    );
    w.put(
        &w.ix.locks,
        "A",
        &json!({"owner": "stuck", "process_id": "app:1", "created_at": ago(10)}),
    );
    w.refresh();
}

#[test]
fn a_strict_accounts_index_is_refused_before_step_one_until_upgraded() {
    let w = World::bare();
    let (s, b) = common::http(
        "PUT",
        &format!("{}/{}", w.g.url, w.ix.accounts),
        Some(STRICT_ACCOUNTS),
    );
    assert_eq!(s, 200, "{b}");
    w.run(&["init"]).code(0).stdout_has("already exists");
    seed(&w);
    let before = (w.txn("stuck"), w.acct("A"), w.acct("B"));
    w.run(&["recover", "stuck"])
        .code(1)
        .stderr_has("refused before the first write")
        .stderr_has("dynamic: strict")
        .stderr_has("pending_deltas")
        .stderr_has("init --upgrade-mappings");
    assert_eq!(
        before,
        (w.txn("stuck"), w.acct("A"), w.acct("B")),
        "nothing written"
    );
    w.run(&["doctor"])
        .code(3)
        .stdout_has("dynamic strict")
        .stdout_has("REJECTS the protocol's writes");
    w.run(&["init", "--upgrade-mappings"])
        .code(0)
        .stdout_has("applied: PUT")
        .stdout_has("settled_transactions");
    w.run(&["init", "--upgrade-mappings"])
        .code(0)
        .stdout_has("mappings: nothing missing");
    w.run(&["recover", "stuck"]).code(0);
    assert_eq!(w.state("stuck"), "finished");
    assert_eq!(w.balance("B"), 600);
}

#[test]
fn doctor_on_an_auto_created_cluster_names_the_keyword_fields() {
    let w = World::bare();
    seed(&w);
    let out = w.run(&["doctor"]);
    // No audit index on an auto-created cluster: interventions would be
    // refused, so doctor warns (exit 1) instead of saying all works.
    out.code(1)
        .stdout_has("warn  audit index `")
        .stdout_has("transaction_state      text: exact through `transaction_state.keyword`")
        .stdout_has("owner                  text: exact through `owner.keyword`")
        .stdout_has("(ignore_above 256: values longer than 256 characters are missed")
        .stdout_has("security       off");
    let j = w.run(&["doctor", "--json"]).json();
    assert_eq!(
        j["indices"][0]["fields"][0]["exact"], "transaction_state.keyword",
        "{j}"
    );
    assert_eq!(j["indices"][0]["doc_count"], 2);
    w.run(&["list", "--all", "--json"]).code(0);
}

#[test]
fn doctor_without_indices_is_an_error() {
    let w = World::bare();
    w.run(&["doctor"])
        .code(3)
        .stdout_has("does not exist: run `estx-tui init`");
}

#[test]
fn list_refuses_a_partial_view_unless_allowed() {
    use common::proxy::{Canned, FaultProxy};
    let w = World::new();
    seed(&w);
    let proxy = FaultProxy::start(&w.g.url);
    let mut g = w.g.clone();
    g.url = proxy.url();
    let partial = json!({"_shards": {"total": 2, "successful": 1, "skipped": 0, "failed": 1},
        "timed_out": false,
        "hits": {"total": {"value": 1, "relation": "eq"},
            "hits": [{"_id": "stuck", "_index": w.ix.transactions, "_source": w.txn("stuck")}]}});
    let arm = || {
        let none = Canned::json(404, json!({"error": "no handler found"}));
        proxy.answer("POST", "/_pit", 1, none.clone());
        proxy.answer("POST", "point_in_time", 1, none);
        proxy.answer(
            "POST",
            "_search?scroll",
            1,
            Canned::json(200, partial.clone()),
        );
    };
    arm();
    let out = g.run(&["list"]);
    out.code(1)
        .stderr_has("partial: 1 of 2 shards failed")
        .stderr_has("--allow-partial");
    assert!(
        !out.stdout.contains("stuck"),
        "no row of a partial page: {out}"
    );
    arm();
    g.run(&["list", "--allow-partial"])
        .code(0)
        .stdout_has("stuck")
        .stderr_has("rows may be missing");
}

/// Elasticsearch and OpenSearch send no `Date` header: `doctor` says the
/// time comes from the cluster's own clock all the same, and says so when
/// the cluster cannot be asked.
#[test]
fn doctor_says_where_the_clock_comes_from() {
    use common::proxy::{Canned, FaultProxy};
    let w = World::new();
    seed(&w);
    let proxy = FaultProxy::start(&w.g.url);
    proxy.strip_date(true);
    let mut g = w.g.clone();
    g.url = proxy.url();
    g.run(&["doctor"])
        .stdout_has("clock          the cluster's own clock (`now` of a search, ±")
        .stdout_has("time field     modification_time  written as RFC 3339 (3 fraction digits)");
    let j = g.run(&["doctor", "--json"]).json();
    assert_eq!(j["clock"]["source"], "cluster", "{j}");
    assert!(
        j["clock"]["local_offset_ms"].as_i64().unwrap().abs() < 2000,
        "{j}"
    );
    proxy.answer(
        "POST",
        "request_cache=false",
        usize::MAX,
        Canned::text(403, "Forbidden"),
    );
    g.run(&["doctor"])
        .stdout_has("clock          this machine's clock, unchecked")
        .stdout_has("warn  the cluster told no time");
}
