//! The article's application (`tests/common/app/`) running live beside the
//! tool's interventions (`operator.rs`), crashes injected before every
//! write. The invariants: no live lock released, no two holders of one lock
//! at once, no live worker's transaction moved under it, money conserved
//! with each balance equal to its initial one plus its finished transfers,
//! nothing pending at the end (after a final recovery), `audit` clean,
//! and `audit --receipts` verifies every record the operator left.
//! A variant runs a Java-style application (camelCase fields, upper-case
//! states) with the tool told its names by a schema map, and checks too that
//! the tool wrote no field under the article's names into its documents.
//! `-- --nocapture` prints the figures.

mod binary;
mod operator;

use crate::common::app::names::{Names, ARTICLE, JAVA};
use crate::common::app::{instance, recovery, AppConfig, AppIndices, World};
use crate::common::{TestIndices, TestServer};
use binary::Binary;
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::locks::LivenessSource;
use estx::protocol::schema::Schema;
use estx::protocol::{Protocol, ProtocolConfig};
use operator::{Figures, Operator};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the application runs beside the operator.
const RUN: Duration = Duration::from_secs(8);

fn app_config(recovery_window: Duration) -> AppConfig {
    AppConfig {
        accounts: 12,
        initial_balance: 1000,
        invoices: 4,
        budget: Duration::from_secs(1),
        crash_rate: 0.03,
        lock_wait: Duration::from_millis(200),
        heartbeat_every: Duration::from_millis(100),
        heartbeat_timeout: Duration::from_secs(2),
        recovery_window,
        recovery_every: Duration::from_millis(250),
    }
}

/// The tool's schema map for an application's names, as a profile gives it.
pub(crate) fn schema_of(names: &Names) -> Schema {
    let table: toml::Table = toml::from_str(&names.schema_toml("app")).unwrap();
    Schema::from_table(table["profiles"]["app"]["schema"].as_table().unwrap()).unwrap()
}

/// The application's world and the operator's tool over the same indices,
/// the tool told where the application's heartbeats are (and, for other
/// names than the article's, the application's names by a schema map).
async fn world(cfg: AppConfig, tool_window: Duration, names: &'static Names) -> Operator {
    let server = TestServer::shared();
    let ix = TestIndices::unique();
    let app_ix = AppIndices::of(&ix);
    let timeout = cfg.heartbeat_timeout;
    let w = Arc::new(World::setup(server.url(), app_ix.clone(), names, cfg).await);
    let schema = (*names != ARTICLE).then(|| schema_of(names));
    let config = ProtocolConfig {
        indices: ix.indices(),
        recovery_window: tool_window,
        liveness: Some(LivenessSource {
            index: app_ix.heartbeats.clone(),
            instance_field: format!("{}.keyword", names.instance),
            time_field: names.heartbeat.into(),
            timeout,
        }),
        schema: schema.clone().unwrap_or_default(),
        ..ProtocolConfig::default()
    };
    let cluster = Cluster::connect(&ConnectOptions::new(server.url())).unwrap();
    let profile = binary::Profile {
        url: server.url(),
        ix: &app_ix,
        audit: &ix.audit,
        window: tool_window,
        timeout,
        names,
        schema: schema.is_some(),
    };
    let bin = Binary::new(&profile).await;
    Operator {
        proto: Protocol::new(cluster, config),
        rec: Arc::default(),
        bin,
        w,
        figures: Figures::default(),
    }
}

/// Runs `slots` instances (and the application's recovery loop if asked)
/// for [`RUN`] beside the operator, then stops the application, recovers
/// what is left, and checks every invariant.
async fn live_run(mut op: Operator, slots: u64, app_recovery: bool) {
    let w = op.w.clone();
    let mut tasks: Vec<_> = (0..slots)
        .map(|s| tokio::spawn(instance::run_slot(w.clone(), s)))
        .collect();
    if app_recovery {
        tasks.push(tokio::spawn(recovery::run(w.clone())));
    }
    // The operator's pace: an intervention every 50 ms at most.
    let mut pace = tokio::time::interval(Duration::from_millis(50));
    let start = Instant::now();
    while start.elapsed() < RUN {
        pace.tick().await;
        op.round().await;
    }
    w.stop();
    for t in tasks {
        t.await.unwrap();
    }
    let drained = drain(&mut op).await;
    let final_findings = op.audit().await;
    let audit = op.bin.run(&["audit"]).await;
    // Every record the operator left (one per act: the library's and the
    // binary's): its receipts verify, the application's own writes between
    // them breaking no chain.
    op.w.refresh().await;
    let verified = op.rec.verify_records(&op.proto, op.figures.cli_runs).await;
    let receipts = op.bin.run(&["audit", "--receipts", "--json"]).await;
    let end = w.end_state().await;
    println!("{}", w.stats);
    println!("{}", op.figures);
    println!("{end}");
    println!("final audit: {final_findings} findings; drained in {drained:?}");
    println!(
        "receipts: {} records ({} acts of the library, {} runs of the binary), {} writes verified",
        verified.records,
        op.rec.acts(),
        op.figures.cli_runs,
        verified.writes
    );
    println!(
        "estx-tui audit (exit {}):\n{}",
        audit.code,
        audit.stdout.trim_end()
    );
    println!(
        "estx-tui audit --receipts (exit {}):\n{}",
        receipts.code,
        receipts.stdout.trim_end()
    );
    let violations = w.ledger.violations();
    println!("violations: {}", violations.len());
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(end.problems.is_empty(), "{:#?}", end.problems);
    assert!(end.article_fields.is_empty(), "{:#?}", end.article_fields);
    assert!(end.foreign_times.is_empty(), "{:#?}", end.foreign_times);
    assert_eq!(final_findings, 0, "the final audit is clean");
    assert_eq!(audit.code, 0, "{audit:?}");
    assert_eq!(receipts.code, 0, "{receipts:?}");
    let out = receipts.json();
    let all = serde_json::Value::from(verified.records);
    assert_eq!((&out["records"], &out["verified"]), (&all, &all), "{out:#}");
    assert!(w.stats.crashes() > 0, "crashes were injected");
    // Something was repaired: by the tool, or (the variant) by the
    // application's recovery loop, which gets to them first.
    let f = &op.figures;
    let tool = f.recovered + f.rolled_back + f.cli_recovered;
    let app = w
        .stats
        .recovered_finished
        .load(std::sync::atomic::Ordering::SeqCst)
        + w.stats
            .recovered_rolled_back
            .load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        tool > 0 || (app_recovery && app > 0),
        "nothing was repaired"
    );
}

/// After the application stopped: `recover --all-stuck` until nothing is
/// in flight and no lock is left (the dead instances' locks are swept once
/// their heartbeats are older than the timeout). Polls with a deadline.
async fn drain(op: &mut Operator) -> Duration {
    let start = Instant::now();
    let deadline = op.proto.config().recovery_window + Duration::from_secs(15);
    loop {
        op.w.refresh().await;
        op.recover_all_stuck().await;
        op.w.refresh().await;
        let in_flight = op.proto.stuck_transactions().await.unwrap().len()
            + op.proto
                .list_transactions(
                    &["created", "pending", "committed", "terminating"].map(String::from),
                    None,
                )
                .await
                .unwrap()
                .len();
        let locks = op.proto.list_locks().await.unwrap().len();
        if in_flight == 0 && locks == 0 {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < deadline,
            "after {deadline:?}: {in_flight} in flight, {locks} locks left"
        );
        tokio::time::sleep(crate::common::POLL_INTERVAL * 10).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_articles_application_beside_the_tool_keeps_every_invariant() {
    let op = world(
        app_config(Duration::from_secs(3)),
        Duration::from_secs(3),
        &ARTICLE,
    )
    .await;
    live_run(op, 4, false).await;
}

/// With the application's own recovery loop too. Its window is shorter
/// than the tool's so that the two recoverers do not resume the same
/// transaction at once: the article's recovery acts on search hits and
/// writes unfenced, so a transaction another recoverer finished in the
/// meantime would be applied again (the protocol's own hole, which no
/// fencing on the tool's side can close). Its window also covers the
/// budget plus a second: the cluster reads the scripts' `.SSSSSS` as
/// microseconds, so its range query sees every time up to 999 ms early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_application_with_its_own_recovery_loop_beside_the_tool() {
    let op = world(
        app_config(Duration::from_secs(3)),
        Duration::from_secs(5),
        &ARTICLE,
    )
    .await;
    live_run(op, 3, true).await;
}

/// A Java-style deployment: `transactionState`, `srcAcct`, `dstAcct`,
/// `modificationTime`, `pendingTransactions`, states `PENDING`..., Kestra's
/// `owner`/`createdAt` locks; the tool (library and binary) runs with the
/// schema map `[profiles.app.schema]` naming them, through the same
/// interventions, and must leave every document in the application's names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_camel_case_application_with_a_schema_map_beside_the_tool() {
    let op = world(
        app_config(Duration::from_secs(3)),
        Duration::from_secs(3),
        &JAVA,
    )
    .await;
    live_run(op, 4, false).await;
}
