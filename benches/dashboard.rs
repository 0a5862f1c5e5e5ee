//! Dashboard benchmark (`cargo bench --bench dashboard`): seeds 100 000
//! transactions (95 % finished) into a fresh osmem-server (or the cluster at
//! `ESTX_TEST_URL`, in unique indices), then reports requests per poll, the
//! median poll latency, and the median time to build and render one frame.
//! Numbers are written down in BENCHMARKS.md; nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;
mod frames;

use common::server;
use frames::median;

use chrono::{Duration as ChronoDuration, Utc};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::read::poll;
use estx::protocol::time::format_timestamp;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TRANSACTIONS: usize = 100_000;
const ACCOUNTS: usize = 1_000;
const POLLS: usize = 21;

#[tokio::main]
async fn main() {
    let server = server::TestServer::start();
    let ix = server::TestIndices::unique().indices();
    // Seeding sends 5 000 documents per request: allow a busy machine time.
    let mut options = ConnectOptions::new(server.url());
    options.timeout = Duration::from_secs(120);
    let cluster = Cluster::connect(&options).expect("client");
    common::server::create_shipped_indices(&cluster, &ix).await;

    let seed_start = Instant::now();
    let now = Utc::now();
    let accounts: Vec<(String, Value)> = (0..ACCOUNTS)
        .map(|i| {
            (
                format!("acct-{i:04}"),
                json!({"balance": 1000, "pending_transactions": []}),
            )
        })
        .collect();
    cluster
        .bulk_index(&ix.accounts, &accounts)
        .await
        .expect("seed accounts");
    let states = [
        "created",
        "pending",
        "committed",
        "terminating",
        "rolled-back",
    ];
    let mut batch = Vec::with_capacity(5_000);
    for i in 0..TRANSACTIONS {
        // 95 % finished; the rest spread over the other states.
        let state = if i % 20 == 0 {
            states[(i / 20) % states.len()]
        } else {
            "finished"
        };
        let t = format_timestamp(now - ChronoDuration::seconds((i % 86_400) as i64));
        batch.push((
            format!("txn-{i:06}"),
            json!({"src_acct": format!("acct-{:04}", i % ACCOUNTS), "dest_acct": format!("acct-{:04}", (i + 1) % ACCOUNTS),
                   "amount": 1 + i % 50, "transaction_state": state, "creation_time": t, "modification_time": t}),
        ));
        if batch.len() == 5_000 {
            cluster
                .bulk_index(&ix.transactions, &batch)
                .await
                .expect("seed transactions");
            batch.clear();
        }
    }
    cluster
        .bulk_index(&ix.transactions, &batch)
        .await
        .expect("seed transactions");
    for index in [&ix.transactions, &ix.accounts, &ix.locks] {
        cluster.refresh(index).await.expect("refresh");
    }
    println!(
        "seeded {TRANSACTIONS} transactions and {ACCOUNTS} accounts in {:.1?}",
        seed_start.elapsed()
    );

    let mut latencies = Vec::new();
    let mut requests = 0;
    let mut last = None;
    for _ in 0..POLLS {
        let started = Instant::now();
        let snap = poll::load(&cluster, &ix, poll::DEFAULT_CAP)
            .await
            .expect("poll");
        latencies.push(started.elapsed());
        requests = snap.requests;
        last = Some(snap);
    }
    let snap = last.expect("at least one poll");
    println!(
        "poll: {requests} requests, median {:.1?} over {POLLS} polls ({} in flight, {} listed)",
        median(latencies),
        snap.in_flight_total,
        snap.transactions.len()
    );

    frames::measure(&snap, server.url(), &ix.transactions);
}
