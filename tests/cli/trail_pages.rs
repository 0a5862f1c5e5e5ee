//! A large run's audit record stays small (issue 17): a bulk recovery's
//! transactions, plan and steps go into bounded part documents linked by
//! the run id, so behind nginx's default 1 MiB body limit the record is
//! still written and completed; `history` reads the parts back whole; a run
//! that dies leaves its record visibly unfinished; records written before
//! parts existed still read.

use super::*;
use estx::protocol::trail::{ActionKind, Interface, RecordDraft, Trail};

/// nginx's default `client_max_body_size`.
const NGINX_DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// How many stuck transactions the large run recovers
/// (`ESTX_TEST_TRAIL_TRANSACTIONS`, default 2 000).
fn how_many() -> usize {
    std::env::var("ESTX_TEST_TRAIL_TRANSACTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// `n` transactions `big-{i}` stuck in `created` for an hour, each between
/// its own two accounts.
fn stuck(w: &World, n: usize) {
    w.block(w.kit().seed_stuck("big", n, Payers::Own { balance: 100 }));
    w.refresh();
}

impl World {
    /// Every document of the audit index with its size in bytes (as JSON).
    fn audit_documents(&self) -> Vec<(String, Value, usize)> {
        self.stored_hits(&self.ix.audit, 10000)
            .iter()
            .map(|h| {
                let source = h["_source"].clone();
                let size = source.to_string().len();
                (h["_id"].as_str().unwrap().to_string(), source, size)
            })
            .collect()
    }
}

#[test]
fn a_large_bulk_recovery_behind_nginx_leaves_a_complete_trail_in_small_documents() {
    let n = how_many();
    let w = World::new();
    stuck(&w, n);
    let proxy = common::FaultProxy::start(&w.g.url);
    proxy.limit_body_size(NGINX_DEFAULT_BODY_LIMIT);
    let mut via = w.g.clone();
    via.url = proxy.url();
    let started = Instant::now();
    let out = via.run(&["recover", "--all-stuck", "--batch-size", "1000"]);
    let took = started.elapsed();
    out.code(0);
    assert_eq!(proxy.canned(), 0, "refused: {:#?}", proxy.log());
    for id in ["big-0", &format!("big-{}", n - 1)] {
        assert_eq!(w.state(id), "finished", "{id}");
    }
    let docs = w.audit_documents();
    let largest = docs.iter().map(|(_, _, size)| *size).max().unwrap();
    let total: usize = docs.iter().map(|(_, _, size)| *size).sum();
    eprintln!(
        "{n} transactions recovered in {took:?}: {} audit documents, {total} bytes, \
         the largest {largest} bytes; largest request body {} bytes",
        docs.len(),
        proxy.largest_body()
    );
    assert!(largest < NGINX_DEFAULT_BODY_LIMIT, "{largest} bytes");
    // A lean trail (issue 31 item 4): the record and its parts at most 300
    // bytes per transaction, the parts written in `_bulk`s (the run record
    // alone by `_create`), the indices discovered once in the run.
    let log = proxy.log();
    let count = |needle: &str| log.iter().filter(|l| l.contains(needle)).count();
    let creates = count(&format!("/{}/_create/", w.ix.audit));
    let bulks = count(&format!("/{}/_bulk", w.ix.audit));
    let discoveries = count(&format!("/_resolve/index/{}", w.ix.transactions));
    eprintln!(
        "{} bytes per transaction; audit: {creates} _create, {bulks} _bulk; \
         {discoveries} discoveries",
        total / n
    );
    assert!(total / n <= 300, "{} bytes per transaction", total / n);
    assert_eq!(creates, 1, "only the run record is created alone");
    assert!(bulks >= 1, "the parts go in _bulk requests");
    assert_eq!(discoveries, 1, "discovery once per run");
    let runs: Vec<&Value> = docs
        .iter()
        .filter(|(_, s, _)| s.get("run_id").is_none())
        .map(|(_, s, _)| s)
        .collect();
    assert_eq!(runs.len(), 1, "one run record");
    let run = runs[0];
    assert_eq!(run["status"], "finished", "{run:#}");
    assert_eq!(run["outcome"], "completed");
    let parts = run["parts"].as_u64().unwrap() as usize;
    assert!(parts >= 2, "the steps overflow into parts: {parts}");
    assert_eq!(docs.len(), parts + 1, "every part is counted");

    // `history` of a transaction whose steps sit in a late part: the record
    // whole, with every transaction's steps.
    let last = format!("big-{}", n - 1);
    let h = w.run(&["history", &last, "--json"]).json();
    let records = h.as_array().unwrap();
    assert_eq!(records.len(), 1, "{h:#}");
    let r = &records[0];
    assert_eq!(r["status"], "finished");
    assert_eq!(r["transactions"].as_array().unwrap().len(), n);
    assert_eq!(
        r["plan"].as_array().unwrap().len(),
        n + 1,
        "one line each, then the sweep"
    );
    let stepped: BTreeSet<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["txn"].as_str().unwrap())
        .collect();
    assert_eq!(stepped.len(), n, "every transaction's steps are read back");
    let text = w.run(&["history", &last]);
    text.code(0).stdout_has("completed");
    assert!(!text.stdout.contains("UNFINISHED"), "{text}");

    // Its receipts (issue 31): both applies of every transaction, each
    // adding up, read back from the record and its parts.
    let out = w.run(&["audit", "--receipts", "--json"]);
    out.code(0);
    let v = out.json();
    assert_eq!(v["writes"], json!(2 * n), "{out}");
    assert_eq!(v["verified"], json!(1), "{out}");
}

#[test]
fn a_bulk_run_that_dies_leaves_its_record_visibly_unfinished_and_old_records_still_read() {
    let w = World::new();
    // What the CLI writes before the first step of a bulk recovery of 3 000
    // transactions; the process then dies.
    let trail = w.block(Trail::open(&w.proto)).unwrap();
    let mut i = RecordDraft::new(ActionKind::Recover, Vec::new(), Interface::Cli);
    i.bulk = true;
    i.reason = Some("INC-11".into());
    i.transactions = (0..3000).map(|k| format!("c-{k}")).collect();
    i.plan = i
        .transactions
        .iter()
        .map(|t| format!("{t}: set pending, apply to source, apply to destination, set committed, remove from source, remove from destination, set finished"))
        .collect();
    let record = w.block(trail.begin(&i)).unwrap();
    let docs = w.audit_documents();
    assert!(
        docs.len() >= 2,
        "the plan overflows into parts: {}",
        docs.len()
    );
    assert!(docs
        .iter()
        .all(|(_, _, size)| *size < NGINX_DEFAULT_BODY_LIMIT));
    // A record as the previous version wrote it: one document, no parts.
    w.put(
        &w.ix.audit,
        "20250101T000000.000Z-rollback-0000beef",
        &json!({"record_id": "20250101T000000.000Z-rollback-0000beef", "action": "rollback",
                "transactions": ["c-2999"], "targets": [], "reason": "INC-1", "forced": false,
                "bulk": false, "interface": "cli",
                "operator": {"user": "bob", "source": "os", "host": "h"},
                "plan": ["terminate"], "status": "finished", "outcome": "completed",
                "summary": "rolled back", "steps": [{"txn": "c-2999", "label": "terminate",
                "target": "tx/c-2999", "result": "updated", "detail": "state pending -> terminating"}],
                "started_at": "2025-01-01T00:00:00Z", "finished_at": "2025-01-01T00:00:01Z",
                "tool_version": "0.0.9"}),
    );
    common::refresh(&w.g.url, &w.ix.audit);
    let h = w.run(&["history", "c-2999", "--json"]).json();
    let records = h.as_array().unwrap();
    assert_eq!(records.len(), 2, "{h:#}");
    assert_eq!(records[0]["reason"], "INC-1");
    assert_eq!(records[0]["steps"].as_array().unwrap().len(), 1);
    let r = &records[1];
    assert_eq!(r["record_id"], record.0.as_str());
    assert_eq!(r["status"], "running");
    assert_eq!(r["finished_at"], Value::Null);
    assert_eq!(r["transactions"].as_array().unwrap().len(), 3000);
    assert_eq!(r["plan"].as_array().unwrap().len(), 3000);
    let text = w.run(&["history", "c-2999"]);
    text.code(0).stdout_has("UNFINISHED").stdout_has("INC-11");
}
