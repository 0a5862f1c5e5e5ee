//! The cost of finding a transaction's locks by owner (`cargo bench --bench
//! owner_search`): every transaction end searches the locks index for the
//! locks its transaction owns, whatever their resource (issue 16), besides
//! reading the locks of its two accounts by id. On a fresh osmem-server (or
//! the cluster at `ESTX_TEST_URL`, in unique indices), with 0, 1 000 and
//! 10 000 other applications' locks in the locks index (Kestra-style, owned
//! by instances), it reports:
//!
//! - the search alone (`Protocol::lock_ids_owned_by`, for an owner holding
//!   none, as a transfer without `--locks` finds): median latency over
//!   [`SEARCHES`] calls, and requests per call;
//! - a whole sequential transfer (without `--locks`): median latency over
//!   [`TRANSFERS`] transfers, and requests per transfer;
//!
//! so the search's share of a transfer. Requests are counted by sending one
//! call of each through the test proxy (`tests/common/proxy.rs`); latencies
//! are measured directly. Numbers are written down in BENCHMARKS.md;
//! nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::{server, FaultProxy};

use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::{Indices, NewTransfer, Protocol, ProtocolConfig, RunLimits};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const ACCOUNTS: [&str; 4] = ["a0", "a1", "a2", "a3"];
const LOCKS: [usize; 3] = [0, 1_000, 10_000];
const SEARCHES: usize = 101;
const TRANSFERS: usize = 101;
const BULK: usize = 2_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn protocol(url: &str, ix: &Indices) -> Protocol {
    let cluster = Cluster::connect(&ConnectOptions::new(url)).expect("client");
    Protocol::new(
        cluster,
        ProtocolConfig {
            indices: ix.clone(),
            ..ProtocolConfig::default()
        },
    )
}

/// Other applications' locks `from..to`: Kestra's shape, 100 instances.
async fn seed_locks(cluster: &Cluster, ix: &Indices, from: usize, to: usize) {
    let mut batch: Vec<(String, Value)> = Vec::with_capacity(BULK);
    for i in from..to {
        batch.push((
            format!("invoice_inv-{i:05}"),
            json!({"category": "invoice", "id": format!("inv-{i:05}"),
                   "owner": format!("instance-{:03}", i % 100),
                   "createdAt": "2026-11-24T00:00:00.000000Z"}),
        ));
        if batch.len() == BULK {
            cluster.bulk_index(&ix.locks, &batch).await.expect("seed");
            batch.clear();
        }
    }
    cluster.bulk_index(&ix.locks, &batch).await.expect("seed");
    cluster.refresh(&ix.locks).await.expect("refresh");
}

fn transfer(i: usize) -> NewTransfer {
    NewTransfer {
        id: None,
        src: ACCOUNTS[i % 4].into(),
        dest: ACCOUNTS[(i + 1) % 4].into(),
        amount: 1,
    }
}

#[tokio::main]
async fn main() {
    let server = server::TestServer::start();
    let ix = server::TestIndices::unique().indices();
    let cluster = Cluster::connect(&ConnectOptions::new(server.url())).expect("client");
    common::server::create_shipped_indices(&cluster, &ix).await;
    for id in ACCOUNTS {
        let doc = json!({"balance": 5_000_000, "pending_transactions": []});
        cluster.put(&ix.accounts, id, &doc).await.expect("account");
    }
    let proxy = FaultProxy::start(server.url());
    let direct = protocol(server.url(), &ix);
    let counted = protocol(&proxy.url(), &ix);
    let mut seeded = 0;
    let mut n = 0;
    for locks in LOCKS {
        seed_locks(&cluster, &ix, seeded, locks).await;
        seeded = locks;
        // Discovery and the paging dialect are learnt once per handle:
        // warm both before counting.
        direct.lock_ids_owned_by("none").await.expect("search");
        counted.lock_ids_owned_by("none").await.expect("search");
        counted
            .transfer(&transfer(n), false, RunLimits::default())
            .await;
        n += 1;

        let before = proxy.forwarded();
        let (found, _) = counted.lock_ids_owned_by("none").await.expect("search");
        assert!(found.is_empty());
        let search_requests = proxy.forwarded() - before;
        if locks == 0 {
            let log = proxy.log();
            println!(
                "owner search requests: {}",
                log[log.len() - search_requests..].join("; ")
            );
        }
        let before = proxy.forwarded();
        let r = counted
            .transfer(&transfer(n), false, RunLimits::default())
            .await;
        assert!(r.verdict.is_done(), "{:?}", r.verdict);
        n += 1;
        let transfer_requests = proxy.forwarded() - before;

        let mut searches = Vec::with_capacity(SEARCHES);
        for _ in 0..SEARCHES {
            let started = Instant::now();
            direct.lock_ids_owned_by("none").await.expect("search");
            searches.push(started.elapsed());
        }
        let mut transfers = Vec::with_capacity(TRANSFERS);
        for _ in 0..TRANSFERS {
            let started = Instant::now();
            let r = direct
                .transfer(&transfer(n), false, RunLimits::default())
                .await;
            transfers.push(started.elapsed());
            assert!(r.verdict.is_done(), "{:?}", r.verdict);
            n += 1;
        }
        let (s, t) = (median(searches), median(transfers));
        println!(
            "{locks} other locks: owner search {search_requests} requests, median {s:.1?}; \
             transfer {transfer_requests} requests, median {t:.1?}; the search is {:.1} % of a transfer",
            100.0 * s.as_secs_f64() / t.as_secs_f64()
        );
    }
}
