//! The application's own recovery loop, as the article's "Recovering from
//! errors" runs it: find the transactions in created, pending, committed or
//! terminating untouched for the recovery window (a search, oldest first,
//! 100 at a time), and resume each from its state as the search returned it.
//! Before that, Kestra's liveness check: the locks of instances whose
//! heartbeat is older than the timeout are deleted (each read, its owner
//! checked, deleted at that version).

use super::flow::{resume_point, End, Stop, Txn};
use super::instance::Injector;
use super::names::State;
use super::World;
use estx::cluster::{hits, DeleteOutcome, Hit};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Runs a pass every period until the world stops.
pub async fn run(w: Arc<World>) {
    let mut every = tokio::time::interval(w.cfg.recovery_every);
    let mut seed = 0u64;
    while !w.stopping() {
        every.tick().await;
        seed += 1;
        pass(&w, seed).await;
    }
}

/// One pass: clear dead instances' locks, then resume stuck transactions.
pub async fn pass(w: &World, seed: u64) {
    // osmem never refreshes by itself; a real cluster does every second.
    w.refresh().await;
    clear_dead_locks(w).await;
    for hit in stuck(w).await {
        resume(w, &hit, seed).await;
    }
}

async fn search(w: &World, index: &str, body: Value) -> Vec<Hit> {
    match w.cluster.search(index, body).await {
        Ok(answer) => hits(&answer).unwrap_or_default(),
        Err(e) => {
            eprintln!("application recovery: search of {index} failed: {e}");
            Vec::new()
        }
    }
}

/// Date math for `d` ago: whole seconds (date math has no milliseconds).
fn ago(d: std::time::Duration) -> String {
    assert_eq!(d.subsec_nanos(), 0, "{d:?}: date math counts whole seconds");
    format!("now-{}s", d.as_secs())
}

/// Instances whose last heartbeat is older than the timeout.
async fn dead_instances(w: &World) -> HashSet<String> {
    let n = w.names;
    let body = json!({"size": 1000, "query": {"range": {n.heartbeat: {"lt": ago(w.cfg.heartbeat_timeout)}}}});
    search(w, &w.ix.heartbeats, body)
        .await
        .into_iter()
        .filter_map(|h| {
            h.source
                .get(n.instance)
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

async fn clear_dead_locks(w: &World) {
    let n = w.names;
    let dead = dead_instances(w).await;
    if dead.is_empty() {
        return;
    }
    let owner = format!("{}.keyword", n.lock_owner);
    let body = json!({"size": 1000, "query": {"terms": {owner: dead.iter().collect::<Vec<_>>()}}});
    for hit in search(w, &w.ix.locks, body).await {
        let Ok(Some(doc)) = w.cluster.get(&w.ix.locks, &hit.id).await else {
            continue;
        };
        let Some(holder) = doc.source.get(n.lock_owner).and_then(Value::as_str) else {
            continue;
        };
        if !dead.contains(holder) {
            continue;
        }
        let deleted = w
            .cluster
            .delete_if(&w.ix.locks, &hit.id, doc.seq_no, doc.primary_term)
            .await;
        if matches!(deleted, Ok(DeleteOutcome::Deleted)) {
            w.stats.locks_cleared.fetch_add(1, Ordering::SeqCst);
            w.ledger
                .released_by_other("the application's liveness check", &hit.id, holder);
        }
    }
}

/// The article's stuck query.
async fn stuck(w: &World) -> Vec<Hit> {
    let n = w.names;
    let states: Vec<&str> = State::IN_FLIGHT.iter().map(|s| n.state_value(*s)).collect();
    let body = json!({"size": 100, "query": {"bool": {"filter": [
        {"terms": {n.state: states}},
        {"range": {n.modification_time: {"lte": ago(w.cfg.recovery_window)}}}]}},
        "sort": [{n.modification_time: {"order": "asc"}}]});
    search(w, &w.ix.transactions, body).await
}

/// Resumes one stuck transaction from the state the search returned.
async fn resume(w: &World, hit: &Hit, seed: u64) {
    let n = w.names;
    let s = &hit.source;
    let text = |f: &str| s.get(f).and_then(Value::as_str).map(str::to_string);
    let (Some(src), Some(dest), Some(amount), Some(state)) = (
        text(n.src),
        text(n.dest),
        s.get(n.amount).and_then(Value::as_i64),
        text(n.state).and_then(|v| n.parse_state(&v)),
    ) else {
        return;
    };
    let Some(from) = resume_point(state) else {
        return;
    };
    let t = Txn {
        id: hit.id.clone(),
        src,
        dest,
        amount,
    };
    let mut guard = Injector::new(seed, 0.0, w.cfg.budget);
    match w.run_from(&t, from, None, &mut guard).await {
        Ok(End::Finished) => w.stats.recovered_finished.fetch_add(1, Ordering::SeqCst),
        Ok(End::RolledBack) => w.stats.recovered_rolled_back.fetch_add(1, Ordering::SeqCst),
        Ok(End::Noop(_)) => w.stats.recovery_noops.fetch_add(1, Ordering::SeqCst),
        Err(Stop::Failed(e)) => {
            eprintln!("application recovery of {}: {e}", t.id);
            0
        }
        Err(_) => 0,
    };
}
