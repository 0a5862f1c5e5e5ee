//! Incident-scale benchmark (`cargo bench --bench incident`, issue 18 item
//! 9): 10 000 transactions in flight (most of them stuck), 300 locks and
//! 1 000 000 finished ones over 1 000 accounts, seeded with `_bulk` into a
//! fresh osmem-server (or the cluster at `ESTX_TEST_URL`, in unique
//! indices). It reports:
//!
//! 1. the poll: requests, this process's CPU per poll and the median
//!    latency, unfiltered and with the table filtered by an account (the
//!    filter runs over every in-flight document in the same `_msearch`),
//!    the poll in full (issue 30 item 5): the healing verdict's searches
//!    with the application's heartbeat index named (which also judges the
//!    locks held by a worker), and [`ACKED`] live acks; then the fullest
//!    poll: every named search of the `_msearch` answering with as much as
//!    it may (the application's recoveries, operator records, another
//!    operator's live jobs: [`fullest`]);
//! 2. one background audit's cost and the gap its pace sets
//!    (`protocol::audit::pace`), and so the poll plus its audit, per poll;
//! 3. one frame at 160×48 (apply the snapshot, derive, render);
//! 4. the real dashboard binary in tmux at 160×48, watched over a window
//!    through a counting proxy: requests per poll (its audits included),
//!    its CPU per poll and its peak RSS (`VmHWM`).
//!
//! Knobs: `ESTX_BENCH_FINISHED` (1 000 000), `ESTX_BENCH_IN_FLIGHT`
//! (10 000), `ESTX_BENCH_WINDOW` (seconds watched, 240), `ESTX_BENCH_POLLS`
//! (polls measured per filter, 11). Figures go to
//! BENCHMARKS.md; nothing here asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;
mod frames;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use common::{cpu_of, server, FaultProxy};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::audit::pace::{process_cpu, process_minor_faults, REFERENCE_POLL};
use estx::protocol::config::ProtocolConfig;
use estx::protocol::intervene::{self, Acknowledge, Choices, Intervention};
use estx::protocol::locks::LivenessSource;
use estx::protocol::read::poll::{PollMemory, Snapshot, DEFAULT_CAP};
use estx::protocol::read::TableFilter;
use estx::protocol::time::format_timestamp;
use estx::protocol::trail::{ActOutcome, ActionKind, Ending, Interface, RecordDraft, Trail};
use estx::protocol::Indices;
use estx::protocol::Protocol;
use frames::median;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ACCOUNTS: usize = 1_000;
const LOCKS: usize = 300;
const BULK: usize = 5_000;
/// Polls measured per filter (`ESTX_BENCH_POLLS` to change: more for a profile).
const POLLS: usize = 11;
/// Stuck transactions acknowledged (their acks read by every poll).
const ACKED: usize = 100;
/// Transactions the application recovered within the healing lookback
/// (the fullest poll: more than the recovered search reads).
const RECOVERED: usize = 300;
/// Operator records within the lookback (the fullest poll: the records
/// search's cap), each naming [`RECORD_TXNS`] transactions.
const RECORDS: usize = 500;
const RECORD_TXNS: usize = 10;
/// Another operator's live bulk jobs, over [`JOB_TXNS`] transactions each.
const JOBS: usize = 3;
const JOB_TXNS: usize = 5_000;
/// Workers beating in the application's heartbeat index.
const WORKERS: usize = 12;
/// The dashboard's default time between polls (`--interval`).
const DASHBOARD_INTERVAL: Duration = Duration::from_secs(2);
const IN_FLIGHT_STATES: [&str; 4] = ["created", "pending", "committed", "terminating"];

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn acct(i: usize) -> String {
    format!("acct-{:04}", i % ACCOUNTS)
}

async fn send(cluster: &Cluster, index: &str, batch: &mut Vec<(String, Value)>) {
    if !batch.is_empty() {
        cluster.bulk_index(index, batch).await.expect("seed");
        batch.clear();
    }
}

/// The in-flight transaction `i`: states in turn; one in five recent (not
/// stuck), the rest stuck from 5 minutes to 2 days, a band of them in one
/// outage window; every third names the worker that ran it.
fn in_flight(i: usize, now: DateTime<Utc>) -> Value {
    let age = if i.is_multiple_of(5) {
        ChronoDuration::seconds((i % 60) as i64)
    } else if i % 5 == 1 {
        ChronoDuration::minutes(95 + (i % 10) as i64) // the outage window
    } else {
        ChronoDuration::minutes(5 + (i % 2_880) as i64)
    };
    let t = format_timestamp(now - age);
    let mut doc = json!({"src_acct": acct(i * 7), "dest_acct": acct(i * 7 + 1),
        "amount": 1 + i % 50, "transaction_state": IN_FLIGHT_STATES[i % 4],
        "creation_time": t, "modification_time": t});
    if i.is_multiple_of(3) {
        doc["process_id"] = json!(format!("worker-{}", i % 12));
    }
    doc
}

/// Seeds the accounts (a pending transaction's source carries it), the
/// in-flight and finished transactions and the locks.
async fn seed(cluster: &Cluster, ix: &Indices, finished: usize, flight: usize) {
    let now = Utc::now();
    let mut carried: Vec<Vec<String>> = vec![vec![]; ACCOUNTS];
    let mut batch = Vec::with_capacity(BULK);
    for i in 0..flight {
        let id = format!("live-{i:06}");
        if IN_FLIGHT_STATES[i % 4] == "pending" {
            carried[(i * 7) % ACCOUNTS].push(id.clone());
        }
        batch.push((id, in_flight(i, now)));
        if batch.len() == BULK {
            send(cluster, &ix.transactions, &mut batch).await;
        }
    }
    send(cluster, &ix.transactions, &mut batch).await;
    for i in 0..finished {
        let t = format_timestamp(now - ChronoDuration::seconds((i % 2_592_000) as i64));
        let state = if i % 33 == 0 {
            "rolled-back"
        } else {
            "finished"
        };
        batch.push((
            format!("done-{i:07}"),
            json!({"src_acct": acct(i), "dest_acct": acct(i + 1), "amount": 1 + i % 50,
                   "transaction_state": state, "creation_time": t, "modification_time": t}),
        ));
        if batch.len() == BULK {
            send(cluster, &ix.transactions, &mut batch).await;
        }
    }
    send(cluster, &ix.transactions, &mut batch).await;
    for (i, pending) in carried.into_iter().enumerate() {
        batch.push((
            acct(i),
            json!({"balance": 1000, "pending_transactions": pending}),
        ));
    }
    send(cluster, &ix.accounts, &mut batch).await;
    for i in 0..LOCKS {
        // Two in three held by a stuck transaction, the rest by a worker.
        let owner = if i % 3 < 2 {
            format!("live-{:06}", (i * 5 + 2) % flight.max(1))
        } else {
            format!("worker-{}", i % 12)
        };
        let taken = now - ChronoDuration::minutes((i % 600) as i64);
        batch.push((
            format!("res-{i:03}"),
            json!({"owner": owner, "process_id": format!("worker-{}", i % 12),
                   "created_at": format_timestamp(taken),
                   "expires_at": format_timestamp(taken + ChronoDuration::minutes(2))}),
        ));
    }
    send(cluster, &ix.locks, &mut batch).await;
    for index in [&ix.transactions, &ix.accounts, &ix.locks] {
        cluster.refresh(index).await.expect("refresh");
    }
}

/// The application's heartbeat index, one fresh beat per worker (the
/// locks' holders), as the poll's liveness source.
async fn heartbeats(cluster: &Cluster, ix: &Indices) -> LivenessSource {
    let index = format!("{}-heartbeats", ix.transactions);
    let body = json!({"mappings": {"properties": {
        "instance": {"type": "keyword"}, "at": {"type": "date"}}}});
    cluster
        .create_index(&index, body)
        .await
        .expect("heartbeats");
    let at = format_timestamp(Utc::now());
    let mut batch: Vec<(String, Value)> = (0..WORKERS)
        .map(|w| {
            (
                format!("worker-{w}"),
                json!({"instance": format!("worker-{w}"), "at": at}),
            )
        })
        .collect();
    send(cluster, &index, &mut batch).await;
    cluster.refresh(&index).await.expect("refresh");
    LivenessSource {
        index,
        instance_field: "instance".into(),
        time_field: "at".into(),
        timeout: Duration::from_secs(3_600),
    }
}

/// [`ACKED`] stuck transactions acknowledged for a day, as an operator would.
async fn acknowledge(p: &Protocol, ix: &Indices, flight: usize) {
    let ids = (0..flight)
        .filter(|i| i % 5 > 1)
        .take(ACKED)
        .map(|i| format!("live-{i:06}"))
        .collect();
    let why = Choices::new(Interface::Cli, Some("finance is on it".into()));
    let act = Acknowledge::ids(ids, Duration::from_secs(86_400), None);
    intervene::run(p, Intervention::new(act, why))
        .await
        .expect("ack");
    p.cluster().refresh(&ix.acks).await.expect("refresh");
}

/// The fullest poll's evidence: [`RECOVERED`] transactions the application
/// recovered within the healing lookback (in flight for an hour, finished
/// half a minute ago), [`RECORDS`] operator records completed within it
/// (each naming [`RECORD_TXNS`] transactions) and [`JOBS`] live bulk jobs
/// of another operator over [`JOB_TXNS`] transactions each: every named
/// search of the poll's `_msearch` then answers with as much as it may.
async fn fullest(p: &Protocol, ix: &Indices, flight: usize) {
    let now = Utc::now();
    let created = format_timestamp(now - ChronoDuration::hours(1));
    let modified = format_timestamp(now - ChronoDuration::seconds(30));
    let mut batch: Vec<(String, Value)> = (0..RECOVERED)
        .map(|i| {
            (
                format!("app-rec-{i:04}"),
                json!({"src_acct": acct(i), "dest_acct": acct(i + 1), "amount": 1 + i % 50,
                       "transaction_state": "finished", "creation_time": created,
                       "modification_time": modified}),
            )
        })
        .collect();
    send(p.cluster(), &ix.transactions, &mut batch).await;
    let trail = Trail::open(p).await.expect("trail");
    let live = |from: usize, n: usize| -> Vec<String> {
        (from..from + n)
            .map(|i| format!("live-{:06}", i % flight.max(1)))
            .collect()
    };
    for r in 0..RECORDS {
        let mut d = RecordDraft::new(
            ActionKind::Rollback,
            live(r * RECORD_TXNS, RECORD_TXNS),
            Interface::Cli,
        );
        d.reason = Some("the outage's rollbacks".into());
        let id = trail.begin(&d).await.expect("record");
        let ending = Ending::of(ActOutcome::Completed, "completed", Vec::new());
        trail.finish(&id, ending).await.expect("finish");
    }
    for j in 0..JOBS {
        let mut d = RecordDraft::new(
            ActionKind::Recover,
            live(j * JOB_TXNS, JOB_TXNS),
            Interface::Cli,
        );
        d.reason = Some("another operator's recovery".into());
        d.bulk = true;
        trail.begin_run(&d).await.expect("job");
    }
    for index in [&ix.transactions, &ix.audit] {
        p.cluster().refresh(index).await.expect("refresh");
    }
}

/// Polls `POLLS` times listing `table` after a first poll measured apart
/// (the first reads what a poller then keeps: the running jobs' and
/// finished records' lists, the acts); prints and returns the last.
async fn polls(p: &Protocol, table: &TableFilter, what: &str) -> Snapshot {
    let mut latencies = Vec::new();
    let memory = PollMemory::default();
    let (cpu, faults) = (process_cpu(), process_minor_faults());
    p.poll_snapshot_listing(DEFAULT_CAP, table, &memory)
        .await
        .expect("poll");
    let first = process_cpu() - cpu;
    let first_faults = process_minor_faults() - faults;
    let (cpu, faults) = (process_cpu(), process_minor_faults());
    let mut last = None;
    let polls = knob("ESTX_BENCH_POLLS", POLLS);
    for _ in 0..polls {
        let started = Instant::now();
        last = Some(
            p.poll_snapshot_listing(DEFAULT_CAP, table, &memory)
                .await
                .expect("poll"),
        );
        latencies.push(started.elapsed());
    }
    let cpu = (process_cpu() - cpu) / polls as u32;
    let faults = (process_minor_faults() - faults) / polls as u64;
    let snap = last.expect("polls");
    println!(
        "poll ({what}): {} requests, client CPU {cpu:.1?} per poll (the first {first:.1?}), \
         page faults {faults} per poll (the first {first_faults}), median {:.0?} over {polls}; {} in flight, {} listed of {} matching; {} acked, healing {:?}",
        snap.requests,
        median(latencies),
        snap.in_flight_total,
        snap.transactions.len(),
        snap.table.total,
        snap.acks.total,
        snap.healing,
    );
    snap
}

/// `field` of `/proc/<pid>/status` in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("field")
}

fn tmux(socket: &Path, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(["-f", "/dev/null"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("tmux (apt-get install tmux)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The real dashboard at 160×48 through a counting proxy for `window`.
fn watch(url: &str, ix: &Indices, window: Duration) {
    let proxy = FaultProxy::start(url);
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("sock");
    let log = dir.path().join("estx.log");
    let mut line = format!("exec {}", env!("CARGO_BIN_EXE_estx-tui"));
    let mut args = common::server::binary_args(&proxy.url(), ix, &log);
    // osmem walks every document for a count: at 1 000 000 a poll takes
    // tens of seconds there (Elasticsearch answers from its index).
    args.extend(["--read-only", "--timeout", "300s"].map(String::from));
    for a in &args {
        line.push_str(&format!(" '{a}'"));
    }
    let none = dir.path().join("none");
    let none = none.display().to_string();
    Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args([
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "160",
            "-y",
            "48",
            &line,
        ])
        .env("XDG_CONFIG_HOME", &none)
        .env("XDG_STATE_HOME", &none)
        .status()
        .expect("tmux new-session");
    let pid: u32 = tmux(
        &socket,
        &["display-message", "-p", "-t", "b", "#{pane_pid}"],
    )
    .trim()
    .parse()
    .expect("pane pid");
    // Steady state: the first snapshot and the first audit are in.
    let deadline = Instant::now() + Duration::from_secs(600);
    let audited = |screen: &str| {
        screen
            .split("audit ")
            .skip(1)
            .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    while !audited(&tmux(&socket, &["capture-pane", "-p", "-t", "b"])) {
        assert!(Instant::now() < deadline, "no audit on screen");
        std::thread::sleep(Duration::from_millis(200));
    }
    let msearch = |p: &FaultProxy| p.log().iter().filter(|l| l.contains("_msearch")).count();
    let (requests, polls, cpu) = (proxy.forwarded(), msearch(&proxy), cpu_of(pid));
    let logged = proxy.log().len();
    std::thread::sleep(window); // the window measured, not a synchronisation
    let requests = proxy.forwarded() - requests;
    let polls = (msearch(&proxy) - polls).max(1);
    let cpu = cpu_of(pid) - cpu;
    let audits = audits_in(&log);
    println!(
        "dashboard over {window:?}: {polls} polls, {requests} requests ({:.2} per poll), \
         CPU {cpu:?} ({:.1?} per poll), audits run {audits}, peak RSS {} KiB",
        requests as f64 / polls as f64,
        cpu / polls as u32,
        status_kib(pid, "VmHWM:")
    );
    println!("requests in the window: {}", proxy.kinds_since(logged));
    println!("{}", tmux(&socket, &["capture-pane", "-p", "-t", "b"]));
    tmux(&socket, &["kill-server"]);
}

/// How many audits the dashboard's log says it paced.
fn audits_in(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .rfind(|l| l.contains("background audit paced"))
        .map_or("(none paced)".into(), |l| l.to_string())
}

/// Holds freed memory as the binary does (before the runtime's threads
/// start), then runs the bench.
fn main() {
    estx::allocator::set_up(DASHBOARD_INTERVAL);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(bench());
}

async fn bench() {
    let finished = knob("ESTX_BENCH_FINISHED", 1_000_000);
    let flight = knob("ESTX_BENCH_IN_FLIGHT", 10_000);
    let window = Duration::from_secs(knob("ESTX_BENCH_WINDOW", 240) as u64);
    let server = server::TestServer::start();
    let ix = server::TestIndices::unique().indices();
    let mut options = ConnectOptions::new(server.url());
    options.timeout = Duration::from_secs(300);
    let cluster = Cluster::connect(&options).expect("client");
    common::server::create_shipped_indices(&cluster, &ix).await;
    let started = Instant::now();
    seed(&cluster, &ix, finished, flight).await;
    println!(
        "seeded {finished} finished, {flight} in flight, {LOCKS} locks, {ACCOUNTS} accounts in {:.0?}",
        started.elapsed()
    );
    let config = ProtocolConfig {
        indices: ix.clone(),
        liveness: Some(heartbeats(&cluster, &ix).await),
        ..Default::default()
    };
    let p = Protocol::new(cluster.clone(), config);
    acknowledge(&p, &ix, flight).await;
    let snap = polls(&p, &TableFilter::default(), "unfiltered").await;
    let by_account = TableFilter {
        text: acct(7 * 42),
        ..Default::default()
    };
    polls(&p, &by_account, "filter by account").await;
    let started = Instant::now();
    fullest(&p, &ix, flight).await;
    println!(
        "seeded the fullest poll's evidence ({RECOVERED} recovered by the application, {RECORDS} operator records, {JOBS} live jobs of {JOB_TXNS}) in {:.0?}",
        started.elapsed()
    );
    polls(
        &p,
        &TableFilter::default(),
        "fullest: recoveries, records, live jobs",
    )
    .await;
    let (report, cost) = p.audit_measured(None).await;
    let report = report.expect("audit");
    let gap = cost.next_gap(REFERENCE_POLL);
    let per_poll = REFERENCE_POLL.as_secs_f64() / gap.as_secs_f64();
    println!(
        "audit: {cost} ({} findings); next after {gap:?}: adds {:.2} requests and {:.1} ms CPU per 2 s poll",
        report.findings.len(),
        cost.requests as f64 * per_poll,
        cost.cpu.as_secs_f64() * 1000.0 * per_poll,
    );
    frames::measure(&snap, server.url(), &ix.transactions);
    watch(server.url(), &ix, window);
}
