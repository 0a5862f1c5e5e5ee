//! `seed` (the demo's mess written into any cluster) and `demo` (a local
//! in-memory cluster with that mess and a live workload, under the dashboard).

use super::args::{Cli, DemoArgs, SeedArgs};
use super::context;
use super::output::{err, fail, out};
use crate::cluster::Cluster;
use crate::dashboard::{self, snapshot, DashboardOptions};
use crate::demo::{self, DemoError, OsmemServer, SeedOptions, SeedReport, WorkloadOptions};
use crate::protocol::Protocol;
use std::time::Duration;

/// Exit code for demo failures that are not the cluster's (server not installed).
const EXIT_SETUP: i32 = 1;

fn demo_failure(e: &DemoError) -> i32 {
    match e {
        DemoError::Cluster(inner) => fail(inner),
        other => {
            err(other);
            EXIT_SETUP
        }
    }
}

fn print_report(report: &SeedReport) {
    out(format_args!(
        "seeded {} accounts ({} units in all) and {} transactions, {} locks",
        report.accounts.len(),
        report.total_balance,
        report.transactions.len(),
        report.locks.len()
    ));
    for (id, state) in &report.transactions {
        out(format_args!("  {state:<12} {id}"));
    }
    for note in &report.notes {
        out(format_args!("  note: {note}"));
    }
}

/// `seed`: refuses indices that already hold documents unless `--force`.
pub async fn seed(p: &Protocol, a: &SeedArgs) -> i32 {
    let opts = SeedOptions {
        accounts: a.accounts,
        balance: a.balance,
        force: a.force,
    };
    match demo::seed(p, &opts).await {
        Ok(report) => {
            print_report(&report);
            0
        }
        Err(e) => demo_failure(&e),
    }
}

/// `demo`: starts osmem-server, seeds it, runs the workload, opens the
/// dashboard (or, with `--no-ui`, runs for `--for` and prints a summary),
/// then stops the workload and the server — nothing is left running.
pub async fn demo(cli: &Cli, a: &DemoArgs) -> i32 {
    let server = match tokio::task::spawn_blocking(OsmemServer::start).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return demo_failure(&e),
        Err(e) => {
            err(format_args!("could not start the demo server: {e}"));
            return EXIT_SETUP;
        }
    };
    let code = run_demo(cli, a, server.url()).await;
    server.stop();
    code
}

async fn run_demo(cli: &Cli, a: &DemoArgs, url: &str) -> i32 {
    let mut global = cli.global.clone();
    global.url = url.to_string();
    let mut config = context::protocol_config(&global);
    // Workers should not sit long behind the seeded stale locks.
    config.lock_wait = Duration::from_secs(2);
    let cluster = match Cluster::connect(&context::connect_options(&global)) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let proto = Protocol::new(cluster, config);
    let opts = SeedOptions {
        accounts: a.accounts,
        balance: a.balance,
        force: false,
    };
    let report = match demo::seed(&proto, &opts).await {
        Ok(r) => r,
        Err(e) => return demo_failure(&e),
    };
    let refresher = spawn_refresher(proto.clone());
    let workload = demo::spawn(
        proto.clone(),
        report.accounts.clone(),
        WorkloadOptions {
            workers: a.workers,
            crash_rate: a.crash_rate.clamp(0.0, 1.0),
            ..WorkloadOptions::default()
        },
    );
    let code = run_workload(cli, a, url, proto, &report, workload).await;
    refresher.abort();
    code
}

async fn run_workload(
    cli: &Cli,
    a: &DemoArgs,
    url: &str,
    proto: Protocol,
    report: &SeedReport,
    workload: demo::WorkloadHandle,
) -> i32 {
    if a.no_ui {
        print_report(report);
        out(format_args!(
            "demo cluster at {url}; running the workload for {}s",
            a.run_for.as_secs()
        ));
        tokio::time::sleep(a.run_for).await;
        let stats = workload.stats();
        workload.stop().await;
        out(format_args!(
            "workload: {} transfers, {} crashed part-way, {} recovered, {} refused or failed (a held lock refuses a locked transfer)",
            stats.transfers, stats.crashed, stats.recovered, stats.failed
        ));
        summary(&proto).await
    } else {
        let opts = DashboardOptions {
            interval: cli.dashboard.interval.max(Duration::from_secs(1)),
            read_only: cli.dashboard.read_only,
            cap: snapshot::DEFAULT_CAP,
        };
        let result = dashboard::run(proto, opts).await;
        out("stopping the demo workload and server...");
        workload.stop().await;
        match result {
            Ok(()) => 0,
            Err(e) => {
                err(format_args!("terminal error: {e}"));
                super::EXIT_TERMINAL
            }
        }
    }
}

/// osmem-server has no refresh interval; Elasticsearch refreshes every
/// second. The demo does that for it, so searches (the dashboard's polls)
/// see the workload move as they would on a real cluster.
fn spawn_refresher(proto: Protocol) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            let ix = &proto.config().indices;
            for index in [&ix.transactions, &ix.accounts, &ix.locks] {
                if let Err(e) = proto.cluster().refresh(index).await {
                    tracing::debug!(error = %e, %index, "demo refresh failed");
                }
            }
        }
    })
}

/// Prints the per-state counts the dashboard would show.
async fn summary(proto: &Protocol) -> i32 {
    for index in [
        &proto.config().indices.transactions,
        &proto.config().indices.accounts,
    ] {
        if let Err(e) = proto.cluster().refresh(index).await {
            return fail(&e);
        }
    }
    match snapshot::load(
        proto.cluster(),
        &proto.config().indices,
        snapshot::DEFAULT_CAP,
        proto.config().recovery_window,
    )
    .await
    {
        Ok(s) => {
            let counts: Vec<String> = s
                .state_counts
                .iter()
                .filter(|c| c.count > 0)
                .map(|c| {
                    let name = c
                        .state
                        .as_ref()
                        .map(|s| s.as_str().to_string())
                        .unwrap_or_else(|| "(missing)".into());
                    format!("{name} {}", c.count)
                })
                .collect();
            out(format_args!("transactions by state: {}", counts.join(", ")));
            out(format_args!("locks: {}", s.locks.len()));
            0
        }
        Err(e) => fail(&e),
    }
}
