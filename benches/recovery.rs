//! Recovery at outage speed (`cargo bench --bench recovery`): on one fresh
//! osmem-server (or the cluster at `ESTX_TEST_URL`, in unique indices), the
//! same stuck set is seeded twice — `ESTX_BENCH_TXNS` (default 10 000) stuck
//! transactions cycling through every non-terminal state and every partial
//! progress within it, over 1 000 accounts — and recovered once one
//! transaction at a time (`recover --all-stuck --sequential`, 4 workers) and
//! once in batches (`recover --all-stuck`, defaults or
//! `ESTX_BENCH_BATCH`/`ESTX_BENCH_CONCURRENCY`). Then the server's raw
//! `_bulk` write rate is measured for the same number of document writes as
//! one-at-a-time recovery makes. Both recoveries are checked (every
//! transaction terminal, every balance as expected, nothing pending).
//! Numbers are written down in BENCHMARKS.md; nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/protocol/batch/seed.rs"]
mod seed;

use common::server;
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::account::AccountState;
use estx::protocol::batch::{BatchOptions, DEFAULT_BATCH_SIZE};
use estx::protocol::{Indices, ProcedureReport, Protocol, ProtocolConfig, Verdict};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const ACCOUNTS: usize = 1_000;
/// Workers of one-at-a-time recovery (`--sequential`'s default); override
/// with `ESTX_BENCH_WORKERS` (e.g. 1, for reference).
const SEQUENTIAL_WORKERS: usize = 4;

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
    common::server::create_shipped_indices(cluster, &ix).await;
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

#[tokio::main]
async fn main() {
    let txns = env_usize("ESTX_BENCH_TXNS", 10_000);
    let batch_size = env_usize("ESTX_BENCH_BATCH", DEFAULT_BATCH_SIZE);
    let concurrency = env_usize("ESTX_BENCH_CONCURRENCY", 1);
    let workers = env_usize("ESTX_BENCH_WORKERS", SEQUENTIAL_WORKERS);
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
    println!("{txns} stuck transactions over {ACCOUNTS} accounts, every non-terminal state");

    // One transaction at a time (skipped by ESTX_BENCH_SKIP_SEQUENTIAL=1,
    // for tuning runs of the batched path only).
    let ix = fresh_indices(&cluster, &prefix, "seq").await;
    let seeded = seed::seed(&cluster, &ix, "s", txns, ACCOUNTS, 1_000_000).await;
    let proto = proto_on(&ix);
    let started = Instant::now();
    if env_usize("ESTX_BENCH_SKIP_SEQUENTIAL", 0) == 0 {
        let reports = proto.recover_all_stuck(workers).await.unwrap().reports;
        check(&cluster, &ix, &seeded, &reports).await;
    }
    let sequential = started.elapsed();
    let writes = seeded.writes;

    // Batched.
    let ix = fresh_indices(&cluster, &prefix, "bat").await;
    let seeded = seed::seed(&cluster, &ix, "b", txns, ACCOUNTS, 1_000_000).await;
    let proto = proto_on(&ix);
    let opts = BatchOptions {
        batch_size,
        concurrency,
        ..BatchOptions::default()
    };
    let started = Instant::now();
    let reports = proto.recover_all_stuck_batched(opts, false).await.unwrap();
    let batched = started.elapsed();
    check(&cluster, &ix, &seeded, &reports).await;

    // The server's own limit: the same number of document writes through
    // `_bulk` (small documents, 1 000 per request), spread over as many
    // documents as the stuck set has (transactions and accounts).
    let ix = fresh_indices(&cluster, &prefix, "raw").await;
    let ids = txns + ACCOUNTS;
    let started = Instant::now();
    let mut written = 0;
    while written < writes {
        let n = (writes - written).min(1_000);
        let docs: Vec<(String, Value)> = (0..n)
            .map(|k| {
                let id = format!("r{}", (written + k) % ids);
                (
                    id,
                    json!({"balance": written + k, "pending_transactions": []}),
                )
            })
            .collect();
        cluster.bulk_index(&ix.accounts, &docs).await.unwrap();
        written += n;
    }
    let raw = started.elapsed();

    let rate = |d: Duration| txns as f64 / d.as_secs_f64();
    let raw_rate = writes as f64 / raw.as_secs_f64();
    let batched_writes = writes as f64 / batched.as_secs_f64();
    println!(
        "one at a time ({workers} workers): {:.1} s, {:.1} transactions/s",
        sequential.as_secs_f64(),
        rate(sequential)
    );
    println!(
        "batched (batches of {batch_size}, {concurrency} at a time): {:.1} s, {:.1} transactions/s ({:.1}x one at a time)",
        batched.as_secs_f64(),
        rate(batched),
        sequential.as_secs_f64() / batched.as_secs_f64()
    );
    println!(
        "raw _bulk: {writes} document writes (what one-at-a-time recovery writes) in {:.1} s, {raw_rate:.0} writes/s",
        raw.as_secs_f64()
    );
    println!(
        "batched recovery did the same work at {batched_writes:.0} writes/s: {:.0} % of the raw rate",
        100.0 * batched_writes / raw_rate
    );
}
