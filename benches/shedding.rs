//! Recovery under load shedding (`cargo bench --bench shedding`, issue 18):
//! on one fresh osmem-server (or the cluster at `ESTX_TEST_URL`, in unique
//! indices), for each admitted rate in `ESTX_BENCH_RATES` (default
//! `200,1000` writes a second) a fresh stuck set of `ESTX_BENCH_TXNS`
//! (default 3 000) transactions over `ESTX_BENCH_ACCOUNTS` (default 1 000)
//! accounts, cycling through every non-terminal state, is recovered in
//! batches (`recover --all-stuck --max-rate N`: the library's batched
//! recovery under a job's [`Pace`]) through the test proxy, which rejects
//! every `ESTX_BENCH_SHED_EVERY`-th `_bulk` item (default 5: 20 %) with 429
//! `es_rejected_execution_exception`, as a loaded cluster does.
//!
//! Each run is checked: every transaction completed (none failed), every
//! balance as expected and nothing pending (each transfer applied exactly
//! once), the total kept. It prints the admitted rate, the rate achieved
//! (writes the cluster accepted a second, [`PaceStats::achieved`]) and its
//! share of the admitted one, the throttles retried and the rate of
//! attempts. Figures go to BENCHMARKS.md; nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/protocol/batch/seed.rs"]
mod seed;

use common::{server, FaultProxy};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::account::AccountState;
use estx::protocol::batch::{BatchOptions, DEFAULT_BATCH_SIZE};
use estx::protocol::jobs::{Pace, PaceStats};
use estx::protocol::transaction::TxnState;
use estx::protocol::{Indices, ProcedureReport, Protocol, ProtocolConfig, Verdict};
use std::sync::Arc;
use std::time::Instant;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rates() -> Vec<f64> {
    std::env::var("ESTX_BENCH_RATES")
        .unwrap_or_else(|_| "200,1000".into())
        .split(',')
        .filter_map(|r| r.trim().parse().ok())
        .collect()
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

/// Every transaction completed and terminal, every account as expected and
/// carrying nothing, the total kept: each transfer applied exactly once.
async fn check(
    cluster: &Cluster,
    ix: &Indices,
    seeded: &seed::Seeded,
    reports: &[ProcedureReport],
) {
    assert_eq!(reports.len(), seeded.txns.len(), "one report a transaction");
    for r in reports {
        assert!(
            matches!(r.verdict, Verdict::Completed(_)),
            "{}: {}",
            r.txn,
            r.verdict
        );
    }
    for doc in cluster.mget(&ix.transactions, &seeded.txns).await.unwrap() {
        let doc = doc.expect("transaction kept");
        let state = doc.source["transaction_state"].as_str().unwrap_or("");
        assert!(TxnState::parse(state).is_terminal(), "{}: {state}", doc.id);
    }
    let docs = cluster.mget(&ix.accounts, &seeded.accounts).await.unwrap();
    let mut total = 0;
    for (id, doc) in seeded.accounts.iter().zip(docs) {
        let st = AccountState::from_source(&doc.unwrap().source).unwrap();
        assert!(st.pending.is_empty(), "{id} carries {:?}", st.pending);
        assert_eq!(st.balance, seeded.expected[id], "balance of {id}");
        total += st.balance;
    }
    assert_eq!(total, seeded.total, "money conserved");
}

fn print_run(rate: f64, txns: usize, secs: f64, s: &PaceStats, shed: usize) {
    let achieved = s.achieved();
    let attempts = (s.written + s.throttled) as f64 / s.elapsed.as_secs_f64().max(1e-9);
    println!(
        "--max-rate {rate:.0}: {txns} transactions completed, 0 failed, in {secs:.1} s \
         ({:.1} transactions/s); {} writes accepted, {} throttled and retried \
         ({shed} items shed by the proxy); achieved {achieved:.1} writes/s = {:.1} % \
         of admitted; attempts {attempts:.1}/s ({:.1} %); rate at the end {}",
        txns as f64 / secs,
        s.written,
        s.throttled,
        100.0 * achieved / rate,
        100.0 * attempts / rate,
        s.rate.map_or("unlimited".into(), |r| format!("{r:.0}/s")),
    );
}

#[tokio::main]
async fn main() {
    let txns = env_usize("ESTX_BENCH_TXNS", 3_000);
    let accounts = env_usize("ESTX_BENCH_ACCOUNTS", 1_000);
    let every = env_usize("ESTX_BENCH_SHED_EVERY", 5);
    let batch_size = env_usize("ESTX_BENCH_BATCH", DEFAULT_BATCH_SIZE);
    let server = server::TestServer::start();
    let prefix = server::unique_prefix();
    let direct = Cluster::connect(&ConnectOptions::new(server.url())).expect("client");
    println!(
        "{txns} stuck transactions over {accounts} accounts, every non-terminal state; \
         the proxy sheds one _bulk item in {every}; batches of {batch_size}"
    );
    for (k, rate) in rates().into_iter().enumerate() {
        let ix = fresh_indices(&direct, &prefix, &format!("r{k}")).await;
        let seeded = seed::seed(&direct, &ix, &format!("r{k}"), txns, accounts, 1_000_000).await;
        let proxy = FaultProxy::start(server.url());
        proxy.shed_bulk_items(every);
        let via = Cluster::connect(&ConnectOptions::new(proxy.url())).expect("client");
        let pace = Arc::new(Pace::new(Some(rate)));
        let proto = Protocol::new(
            via,
            ProtocolConfig {
                indices: ix.clone(),
                ..ProtocolConfig::default()
            },
        )
        .with_pace(pace.clone());
        let opts = BatchOptions {
            batch_size,
            ..BatchOptions::default()
        };
        let started = Instant::now();
        let reports = proto.recover_batched(&seeded.txns, opts).await;
        let secs = started.elapsed().as_secs_f64();
        check(&direct, &ix, &seeded, &reports).await;
        print_run(rate, txns, secs, &pace.stats(), proxy.shed_items());
    }
}
