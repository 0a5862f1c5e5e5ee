//! Transfer throughput benchmark (`cargo bench --bench transfers`): 1 500
//! sequential transfers over 4 accounts on a fresh osmem-server (or the
//! cluster at `ESTX_TEST_URL`, in unique indices). Reports transfers per
//! second over the first and the last 150, and the largest account document
//! at the start and the end: with a fence that keeps no per-account history
//! the end must stay within 1.5x of the start. Numbers are written down in
//! BENCHMARKS.md; nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::server;

use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::{
    Indices, NewTransfer, Protocol, ProtocolConfig, RunLimits, TxnState, Verdict,
};
use serde_json::json;
use std::time::{Duration, Instant};

const ACCOUNTS: [&str; 4] = ["a0", "a1", "a2", "a3"];
const TRANSFERS: usize = 1_500;
const WINDOW: usize = 150;

async fn largest_account(cluster: &Cluster, ix: &Indices) -> usize {
    let mut largest = 0;
    for id in ACCOUNTS {
        let doc = cluster.get(&ix.accounts, id).await.unwrap().unwrap();
        largest = largest.max(serde_json::to_string(&doc.source).unwrap().len());
    }
    largest
}

#[tokio::main]
async fn main() {
    let server = server::TestServer::start();
    let ix = server::TestIndices::unique().indices();
    let cluster = Cluster::connect(&ConnectOptions::new(server.url())).expect("client");
    common::server::create_shipped_indices(&cluster, &ix).await;
    for id in ACCOUNTS {
        cluster
            .put(
                &ix.accounts,
                id,
                &json!({"balance": 5_000_000, "pending_transactions": []}),
            )
            .await
            .expect("seed account");
    }
    let proto = Protocol::new(
        cluster.clone(),
        ProtocolConfig {
            indices: ix.clone(),
            ..ProtocolConfig::default()
        },
    );
    let mut times: Vec<Duration> = Vec::with_capacity(TRANSFERS);
    let mut size_after_first_window = 0;
    for i in 0..TRANSFERS {
        let req = NewTransfer {
            id: None,
            src: ACCOUNTS[i % 4].into(),
            dest: ACCOUNTS[(i + 1 + i / 4 % 3) % 4].into(),
            amount: 1 + (i % 9) as i64,
        };
        let started = Instant::now();
        let report = proto.transfer(&req, false, RunLimits::default()).await;
        times.push(started.elapsed());
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "{:?}",
            report.verdict
        );
        if i + 1 == WINDOW {
            size_after_first_window = largest_account(&cluster, &ix).await;
        }
    }
    let rate = |w: &[Duration]| w.len() as f64 / w.iter().sum::<Duration>().as_secs_f64();
    let first = rate(&times[..WINDOW]);
    let last = rate(&times[TRANSFERS - WINDOW..]);
    println!(
        "sequential transfers over {} accounts: {TRANSFERS}",
        ACCOUNTS.len()
    );
    println!("first {WINDOW}: {first:.1} transfers/s");
    println!(
        "last {WINDOW}:  {last:.1} transfers/s (start/end {:.2}x)",
        first / last
    );
    println!(
        "largest account document: {size_after_first_window} B after {WINDOW}, {} B at the end",
        largest_account(&cluster, &ix).await
    );
}
