//! The audit trail's share of a bulk run (`cargo bench --bench trail`):
//! on one fresh osmem-server (or the cluster at `ESTX_TEST_URL`, in unique
//! indices), the same stuck set — `ESTX_BENCH_TXNS` (default 2 000) stuck
//! transactions cycling through every non-terminal state and partial
//! progress, over 1 000 accounts — is seeded three times and recovered:
//!
//! 1. one transaction at a time, as the article's loop does
//!    (`Protocol::recover_all_stuck`, `ESTX_BENCH_WORKERS` workers, default
//!    1): the reference the batched path is compared with;
//! 2. batched, WITHOUT an audit record (`Protocol::recover_all_stuck_batched`):
//!    the work alone;
//! 3. batched WITH its audit record, as `recover --all-stuck` runs it: an
//!    `Intervention` started and run through `protocol::intervene` (the
//!    unfinished record and its plan's parts, the job's checkpoints and
//!    heartbeat, the completed record);
//! 4. the same act with its record written to a local file
//!    (`--audit-trail file:PATH`): the same planning, sweep of locks, steps
//!    and receipts, without the record's writes to the audit index. Runs 3
//!    and 4 go `ESTX_BENCH_ROUNDS` rounds (default 2), in turn first, each
//!    on a fresh seed; their times are the rounds' means
//!    (`ESTX_BENCH_PROXY=1`: through a counting proxy, their requests
//!    printed by kind).
//!
//! Then the record of run 3 is replayed alone on a fresh record (the same
//! draft, then the same ending with every step: `Trail::begin_run` and
//! `Trail::finish`) to time the trail's writes without the work beside
//! them, and the stored documents of run 3 (the record and its parts) are
//! read back and measured in bytes. The trail's share is given three ways:
//! the replay over run 3's time (an upper bound: every step written at the
//! end, nothing beside the work); (run 3 − run 4) over run 3's time (what
//! recording to the index costs the act); and (run 3 − run 2) over run 3's
//! time, which also counts what run 3 does and run 2 does not (the plan's
//! reads, the closing sweep of stale locks).
//! Every recovery is checked (every transaction completed, every balance as
//! expected, nothing pending, total kept). Numbers go in BENCHMARKS.md;
//! nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/protocol/batch/seed.rs"]
mod seed;

use common::{cpu_of, server, FaultProxy};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::account::AccountState;
use estx::protocol::audit::pace::process_cpu;
use estx::protocol::batch::{BatchOptions, DEFAULT_BATCH_SIZE};
use estx::protocol::intervene::{self, BulkAct, Choices, Intervention, Runner};
use estx::protocol::trail::pages::Listed;
use estx::protocol::trail::{Ending, Interface, RecordDraft, Trail, TrailStep};
use estx::protocol::{Indices, Procedure, ProcedureReport, Protocol, ProtocolConfig, Verdict};
use serde_json::{json, Value};
use std::time::Instant;

const ACCOUNTS: usize = 1_000;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn fresh_indices(cluster: &Cluster, prefix: &str, tag: &str) -> Indices {
    let ix = Indices {
        transactions: format!("{prefix}{tag}transactions"),
        accounts: format!("{prefix}{tag}accounts"),
        locks: format!("{prefix}{tag}locks"),
        audit: format!("{prefix}{tag}audit"),
        acks: format!("{prefix}{tag}acks"),
        locks_named: true,
    };
    server::create_shipped_indices(cluster, &ix).await;
    ix
}

/// Every report completed, every account as expected and carrying nothing.
async fn check(
    cluster: &Cluster,
    ix: &Indices,
    seeded: &seed::Seeded,
    reports: &[ProcedureReport],
) {
    assert_eq!(
        reports.len(),
        seeded.txns.len(),
        "one report per transaction"
    );
    for r in reports {
        assert!(
            matches!(r.verdict, Verdict::Completed(_)),
            "{}: {}",
            r.txn,
            r.verdict
        );
    }
    let docs = cluster.mget(&ix.accounts, &seeded.accounts).await.unwrap();
    let mut total = 0;
    for (id, doc) in seeded.accounts.iter().zip(docs) {
        let st = AccountState::from_source(&doc.unwrap().source).unwrap();
        assert!(st.pending.is_empty(), "{id} carries {:?}", st.pending);
        assert_eq!(st.balance, seeded.expected[id], "balance of {id}");
        total += st.balance;
    }
    assert_eq!(total, seeded.total, "total");
}

/// The documents of record `id` (the record and its parts) as stored:
/// how many, and their sources' bytes as JSON.
async fn stored(cluster: &Cluster, index: &str, id: &str) -> (usize, usize) {
    cluster.refresh(index).await.unwrap();
    let query = json!({"bool": {"should": [
        {"term": {"record_id": id}},
        {"term": {"run_id": id}},
    ]}});
    let hits = cluster
        .scan(index, json!({"query": query, "size": 100}))
        .await
        .unwrap();
    let bytes = hits
        .iter()
        .map(|h| {
            serde_json::to_vec(&Value::Object(h.source.clone()))
                .unwrap()
                .len()
        })
        .sum();
    (hits.len(), bytes)
}

/// `recover --all-stuck` as the CLI runs it (an `Intervention` started and
/// run through `protocol::intervene`): its time, its record's draft, and
/// what it did.
async fn recorded_run(
    proto: &Protocol,
    opts: BatchOptions,
) -> (f64, RecordDraft, intervene::Done<intervene::BulkDone>) {
    let act = BulkAct::all_stuck(Procedure::Recover, Runner::Batched(opts));
    let choices = Choices::new(Interface::Cli, Some("bench: the trail's share".into()));
    let started = Instant::now();
    let i = Intervention::new(act, choices);
    let begun = intervene::start(proto, i).await.unwrap();
    let draft = intervene::draft(begun.plan(), begun.intervention());
    let done = begun.run(proto).await;
    let run = started.elapsed().as_secs_f64();
    assert!(done.record_error.is_none(), "{:?}", done.record_error);
    (run, draft, done)
}

#[tokio::main]
async fn main() {
    let txns = env_usize("ESTX_BENCH_TXNS", 2_000);
    let workers = env_usize("ESTX_BENCH_WORKERS", 1);
    let batch_size = env_usize("ESTX_BENCH_BATCH", DEFAULT_BATCH_SIZE);
    let server = server::TestServer::start();
    let prefix = server::unique_prefix();
    let cluster = Cluster::connect(&ConnectOptions::new(server.url())).expect("client");
    let proto_on = |ix: &Indices| {
        Protocol::new(
            cluster.clone(),
            ProtocolConfig {
                indices: ix.clone(),
                ..ProtocolConfig::default()
            },
        )
    };
    let opts = BatchOptions {
        batch_size,
        ..BatchOptions::default()
    };
    println!("{txns} stuck transactions over {ACCOUNTS} accounts, every non-terminal state");

    // 1. The article's loop: one transaction at a time.
    let ix = fresh_indices(&cluster, &prefix, "loop").await;
    let seeded = seed::seed(&cluster, &ix, "l", txns, ACCOUNTS, 1_000_000).await;
    let proto = proto_on(&ix);
    let started = Instant::now();
    let reports = proto.recover_all_stuck(workers).await.unwrap().reports;
    let one_by_one = started.elapsed().as_secs_f64();
    check(&cluster, &ix, &seeded, &reports).await;

    // 2. Batched, the work alone (no record).
    let ix = fresh_indices(&cluster, &prefix, "work").await;
    let seeded = seed::seed(&cluster, &ix, "w", txns, ACCOUNTS, 1_000_000).await;
    let proto = proto_on(&ix);
    let started = Instant::now();
    let reports = proto.recover_all_stuck_batched(opts, false).await.unwrap();
    let work = started.elapsed().as_secs_f64();
    check(&cluster, &ix, &seeded, &reports).await;

    // 3. Batched with its record: `recover --all-stuck` as the CLI runs it;
    // 4. the same act recorded to a local file (`--audit-trail file:PATH`):
    // the same plan, sweep, steps and receipts, the record's writes to the
    // audit index left out. `ESTX_BENCH_ROUNDS` rounds (default 2) of both,
    // in turn first (3 then 4, then 4 then 3), each on a fresh seed, so
    // neither gains from going second; the first run 3's record is the one
    // measured and replayed.
    let rounds = env_usize("ESTX_BENCH_ROUNDS", 2).max(1);
    // `ESTX_BENCH_PROXY=1`: runs 3 and 4 go through a counting proxy (its
    // own cost in their times) and print their requests by kind.
    let proxy = (env_usize("ESTX_BENCH_PROXY", 0) == 1).then(|| FaultProxy::start(server.url()));
    // `ESTX_BENCH_SERVER_PID`: the server's process (with `ESTX_TEST_URL`),
    // whose CPU each of runs 3 and 4 is printed with, beside this one's.
    let server_pid: Option<u32> = std::env::var("ESTX_BENCH_SERVER_PID")
        .ok()
        .and_then(|p| p.parse().ok());
    let dir = tempfile::tempdir().unwrap();
    let mut recorded: Vec<f64> = Vec::new();
    let mut filed: Vec<f64> = Vec::new();
    let mut first = None;
    for round in 0..rounds {
        for to_file in [round % 2 == 1, round % 2 == 0] {
            let tag = format!("{}{round}", if to_file { "f" } else { "r" });
            let ix = fresh_indices(&cluster, &prefix, &tag).await;
            let seeded = seed::seed(&cluster, &ix, &tag, txns, ACCOUNTS, 1_000_000).await;
            let via = proxy
                .as_ref()
                .map(|p| Cluster::connect(&ConnectOptions::new(p.url())).expect("client"));
            let proto = Protocol::new(
                via.unwrap_or_else(|| cluster.clone()),
                ProtocolConfig {
                    indices: ix.clone(),
                    audit_file: to_file.then(|| dir.path().join(format!("{tag}.jsonl"))),
                    ..ProtocolConfig::default()
                },
            );
            let logged = proxy.as_ref().map_or(0, |p| p.log().len());
            let (cpu, server_cpu) = (process_cpu(), server_pid.map(cpu_of));
            let (secs, draft, done) = recorded_run(&proto, opts).await;
            let server_cpu = server_pid.map(cpu_of).zip(server_cpu).map(|(b, a)| b - a);
            println!(
                "round {round}, recorded to {}: {secs:.2} s; this process's CPU {:.2?}{}",
                if to_file { "a file" } else { "the index" },
                process_cpu() - cpu,
                server_cpu
                    .map(|c| format!(", the server's {c:.2?}"))
                    .unwrap_or_default(),
            );
            if let Some(p) = &proxy {
                let to = if to_file { "a file" } else { "the index" };
                println!(
                    "recorded to {to}: {secs:.2} s; requests: {}",
                    p.kinds_since(logged)
                );
            }
            check(&cluster, &ix, &seeded, &done.value.reports).await;
            if to_file {
                filed.push(secs);
            } else {
                recorded.push(secs);
                first.get_or_insert((ix, proto, draft, done));
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let filed_runs = filed.clone();
    let (run, filed) = (mean(&recorded), mean(&filed));
    let (ix, proto, draft, done) = first.unwrap();
    let bulk = &done.value;

    let (docs, bytes) = stored(&cluster, &ix.audit, &done.record.0).await;

    // The same record written alone: its draft, then its ending.
    let steps: Vec<TrailStep> = bulk
        .reports
        .iter()
        .flat_map(|r| r.steps.iter().map(TrailStep::from))
        .collect();
    let n_steps = steps.len();
    let ending = Ending {
        outcome: done.outcome,
        summary: done.summary.clone(),
        counts: Some(bulk.tally()),
        steps,
    };
    let started = Instant::now();
    let trail = Trail::open(&proto).await.unwrap();
    let opened = started.elapsed().as_secs_f64();
    let (replayed, _) = trail.begin_run(&draft).await.unwrap();
    let begun = started.elapsed().as_secs_f64();
    // As the act completes it: the steps' parts index only what the plan
    // did not list.
    let listed = Listed::of(&draft.transactions);
    trail
        .finish_after(&replayed, 0, ending, &listed)
        .await
        .unwrap();
    let alone = started.elapsed().as_secs_f64();
    let (replayed_docs, replayed_bytes) = stored(&cluster, &ix.audit, &replayed.0).await;
    println!(
        "record written alone, by phase: open {:.3} s, begin {:.3} s, finish {:.3} s",
        opened,
        begun - opened,
        alone - begun
    );

    let rate = |secs: f64| txns as f64 / secs;
    println!(
        "one at a time ({workers} worker(s), the article's loop): {one_by_one:.2} s, {:.1} transactions/s",
        rate(one_by_one)
    );
    println!(
        "batched, no record: {work:.2} s, {:.1} transactions/s",
        rate(work)
    );
    println!(
        "batched with its record (recover --all-stuck): {run:.2} s (mean of {recorded:.2?}), {:.1} transactions/s: {:.1}x the article's loop",
        rate(run),
        one_by_one / run
    );
    println!(
        "record: {docs} document(s), {bytes} bytes, {:.0} bytes per transaction ({n_steps} steps)",
        bytes as f64 / txns as f64
    );
    println!(
        "record written alone (open, begin, finish): {alone:.2} s, {replayed_docs} document(s), {replayed_bytes} bytes: {:.1} % of the run",
        100.0 * alone / run
    );
    println!(
        "the same act recorded to a local file: {filed:.2} s (mean of {filed_runs:.2?}); run with record - run recorded to a file: {:.2} s: {:.1} % of the run",
        run - filed,
        100.0 * (run - filed) / run
    );
    println!(
        "run with record - batched run without (no plan, no sweep): {:.2} s: {:.1} % of the run",
        run - work,
        100.0 * (run - work) / run
    );
}
