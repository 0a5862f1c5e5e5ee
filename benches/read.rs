//! Read side at scale (`cargo bench --bench read`): seeds 10 000, then
//! 100 000, then 500 000 transactions (95 % finished) over 1 000 accounts
//! with `_bulk` into a fresh osmem-server (or the cluster at `ESTX_TEST_URL`,
//! in unique indices) and reports at each size:
//! - the poll's requests and client CPU per poll (user + system time of this
//!   process, from `getrusage`: the library's `audit::pace::process_cpu`) and its median latency;
//! - at 10 000 and 100 000: the peak RSS (`/usr/bin/time -v`) and wall time
//!   of the real binary running `list --all`, `list --all --json` and
//!   `audit`, output thrown away.
//!
//! Figures go to BENCHMARKS.md; nothing here asserts on time or memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::server;

use chrono::{Duration as ChronoDuration, Utc};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::audit::pace::process_cpu;
use estx::protocol::read::poll;
use estx::protocol::time::format_timestamp;
use estx::protocol::Indices;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ACCOUNTS: usize = 1_000;
const SIZES: [usize; 3] = [10_000, 100_000, 500_000];
/// Sizes at which the binary's peak memory is measured.
const RSS_SIZES: [usize; 2] = [10_000, 100_000];
const POLLS: usize = 11;
const BULK: usize = 2_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn seed(cluster: &Cluster, ix: &Indices, from: usize, to: usize) {
    let now = Utc::now();
    let states = [
        "created",
        "pending",
        "committed",
        "terminating",
        "rolled-back",
    ];
    let mut batch = Vec::with_capacity(BULK);
    for i in from..to {
        // 95 % finished; the rest spread over the other states.
        let state = if i % 20 == 0 {
            states[(i / 20) % states.len()]
        } else {
            "finished"
        };
        let t = format_timestamp(now - ChronoDuration::seconds((i % 86_400) as i64));
        batch.push((
            format!("txn-{i:07}"),
            json!({"src_acct": format!("acct-{:04}", i % ACCOUNTS), "dest_acct": format!("acct-{:04}", (i + 1) % ACCOUNTS),
                   "amount": 1 + i % 50, "transaction_state": state, "creation_time": t, "modification_time": t}),
        ));
        if batch.len() == BULK {
            cluster
                .bulk_index(&ix.transactions, &batch)
                .await
                .expect("seed transactions");
            batch.clear();
        }
    }
    if !batch.is_empty() {
        cluster
            .bulk_index(&ix.transactions, &batch)
            .await
            .expect("seed transactions");
    }
    cluster.refresh(&ix.transactions).await.expect("refresh");
}

/// Runs the binary under `/usr/bin/time -v`; returns (peak RSS in KiB, wall
/// time, exit code).
fn measure(url: &str, ix: &Indices, args: &[&str]) -> (u64, Duration, i32) {
    let log = std::env::temp_dir().join("estx-bench-read.log");
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(env!("CARGO_BIN_EXE_estx-tui"))
        .args(common::server::binary_args(url, ix, &log))
        .args(args)
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("estx-bench-none"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .expect("run /usr/bin/time (install the `time` package)");
    let wall = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in: {stderr}"));
    let code = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Exit status: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(-1);
    (rss, wall, code)
}

#[tokio::main]
async fn main() {
    let server = server::TestServer::start();
    let ix = server::TestIndices::unique().indices();
    // osmem slows down as it grows: seeding must not time out.
    let cluster = Cluster::connect(&ConnectOptions {
        timeout: Duration::from_secs(300),
        ..ConnectOptions::new(server.url())
    })
    .expect("client");
    common::server::create_shipped_indices(&cluster, &ix).await;
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
    for index in [&ix.accounts, &ix.locks] {
        cluster.refresh(index).await.expect("refresh");
    }

    let mut seeded = 0;
    for size in SIZES {
        let started = Instant::now();
        seed(&cluster, &ix, seeded, size).await;
        println!(
            "seeded {} more transactions ({size} in all) in {:.1?}",
            size - seeded,
            started.elapsed()
        );
        seeded = size;

        let mut latencies = Vec::new();
        let mut requests = 0;
        let mut in_flight = 0;
        let cpu_before = process_cpu();
        for _ in 0..POLLS {
            let started = Instant::now();
            let snap = poll::load(&cluster, &ix, poll::DEFAULT_CAP)
                .await
                .expect("poll");
            latencies.push(started.elapsed());
            requests = snap.requests;
            in_flight = snap.in_flight_total;
        }
        let cpu = (process_cpu() - cpu_before) / POLLS as u32;
        println!(
            "{size}: poll {requests} requests, client CPU {cpu:.1?} per poll, median {:.1?} over {POLLS} polls ({in_flight} in flight)",
            median(latencies)
        );

        if RSS_SIZES.contains(&size) {
            for args in [
                &["list", "--all"][..],
                &["list", "--all", "--json"][..],
                &["audit"][..],
            ] {
                let (rss, wall, code) = measure(server.url(), &ix, args);
                println!(
                    "{size}: estx-tui {}: peak RSS {:.1} MiB, {wall:.1?}, exit {code}",
                    args.join(" "),
                    rss as f64 / 1024.0
                );
            }
        }
    }
}
