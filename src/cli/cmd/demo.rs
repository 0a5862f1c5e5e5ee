//! `demo`: a local in-memory cluster with the mess of [`super::seed`] and a
//! live workload, under the dashboard.

use super::seed::{demo_failure, print_report, EXIT_SETUP};
use crate::cli::context;
use crate::cli::global::{DashboardArgs, GlobalArgs};
use crate::cli::output::{err, fail, out};
use crate::cli::values;
use crate::cluster::Cluster;
use crate::dashboard::{self, DashboardOptions};
use crate::demo::{self, OsmemServer, SeedReport, WorkloadOptions};
use crate::protocol::read::poll;
use crate::protocol::Protocol;
use crate::signals::{StopSignal, StopSignals};
use std::time::Duration;

/// `demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// How many accounts, with what balance.
    #[command(flatten)]
    pub size: super::seed::Size,
    /// Workers making transfers in the background (at least 1).
    #[arg(long, default_value_t = 3, value_parser = values::count_at_least(1))]
    pub workers: usize,
    /// Share of transfers whose worker dies part-way (0 to 1).
    #[arg(long, default_value_t = 0.2, value_parser = values::rate)]
    pub crash_rate: f64,
    /// Run without the dashboard (for scripts and tests); prints a summary.
    #[arg(long)]
    pub no_ui: bool,
    /// Keep the demo's cluster and workload up without the dashboard until
    /// stopped (Ctrl-C or SIGTERM), printing the URL to point the other
    /// commands at; exits 0 when stopped.
    #[arg(long, conflicts_with_all = ["no_ui", "run_for"])]
    pub serve: bool,
    /// With --no-ui: how long to run the workload (e.g. 10s, 1m30s).
    #[arg(long = "for", value_name = "DURATION", default_value = "10s", value_parser = values::positive_duration)]
    pub run_for: std::time::Duration,
}

/// One line of the demo's progress on stderr (stdout is for its results).
fn progress(step: impl std::fmt::Display) {
    err(format_args!("demo: {step}"));
}

/// `demo`: finds (or installs) and starts osmem-server, seeds it, runs the
/// workload, opens the dashboard (or, with `--no-ui`, runs for `--for` and
/// prints a summary; with `--serve`, runs until a stop signal, exit 0),
/// then stops the workload and the server — nothing is left running, also
/// when SIGTERM, SIGHUP or SIGINT stops it (exit code 128 + the signal's
/// number). Every step is announced on stderr as it starts; the log goes to
/// the demo's own file, never the operator's (`Cli::log_target`).
pub async fn run(g: &GlobalArgs, d: &DashboardArgs, a: &Args) -> i32 {
    let mut signals = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            err(format_args!("cannot catch stop signals: {e}"));
            return EXIT_SETUP;
        }
    };
    progress("looking for osmem-server...");
    let starting = tokio::task::spawn_blocking(|| {
        OsmemServer::start_reporting(&mut |step: &str| progress(step))
    });
    // A signal while the server starts: the blocking start cannot be
    // interrupted; its server is killed when the finished start is dropped
    // (and it was started with -parent-pid, so it dies with us anyway).
    let server = tokio::select! {
        started = starting => match started {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return demo_failure(&e),
            Err(e) => {
                err(format_args!("could not start the demo server: {e}"));
                return EXIT_SETUP;
            }
        },
        signal = signals.recv() => return stopped_early(signal),
    };
    let code = run_demo(g, d, a, server.url(), &mut signals).await;
    progress("stopping the demo server...");
    server.stop();
    code
}

/// Stopped by `signal` before the workload ran: nothing to summarise.
fn stopped_early(signal: StopSignal) -> i32 {
    progress(format_args!("stopped by {} while starting", signal.name()));
    signal.exit_code()
}

async fn run_demo(
    g: &GlobalArgs,
    d: &DashboardArgs,
    a: &Args,
    url: &str,
    signals: &mut StopSignals,
) -> i32 {
    let mut global = g.clone();
    global.url = url.to_string();
    let mut config = context::protocol_config(&global);
    // Workers should not sit long behind the seeded stale locks.
    config.lock_wait = Duration::from_secs(2);
    let cluster = match context::connect_options(&global).and_then(|o| Cluster::connect(&o)) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let proto = Protocol::new(cluster, config);
    let opts = a.size.options(false);
    progress(format_args!(
        "osmem-server is up at {url}; seeding {} accounts and stuck transactions...",
        a.size.accounts
    ));
    let seeded = tokio::select! {
        seeded = demo::seed(&proto, &opts) => seeded,
        signal = signals.recv() => return stopped_early(signal),
    };
    let report = match seeded {
        Ok(r) => r,
        Err(e) => return demo_failure(&e),
    };
    progress(format_args!(
        "starting {} workers and the recovery loop...",
        a.workers
    ));
    let refresher = spawn_refresher(proto.clone());
    let workload = demo::spawn(
        proto.clone(),
        demo::workload::worker_accounts(&report.accounts, &report.locks),
        WorkloadOptions {
            workers: a.workers,
            crash_rate: a.crash_rate,
            ..WorkloadOptions::default()
        },
    );
    let code = run_workload(d, a, url, proto, &report, workload, signals).await;
    refresher.abort();
    code
}

async fn run_workload(
    d: &DashboardArgs,
    a: &Args,
    url: &str,
    proto: Protocol,
    report: &SeedReport,
    workload: demo::WorkloadHandle,
    signals: &mut StopSignals,
) -> i32 {
    if a.no_ui || a.serve {
        print_report(report);
        let stopped_by = if a.serve {
            out(format_args!(
                "demo cluster at {url}; serving until stopped (Ctrl-C)"
            ));
            out(format_args!(
                "point the other commands at it: estx-tui --url {url} list --stuck"
            ));
            Some(signals.recv().await)
        } else {
            out(format_args!(
                "demo cluster at {url}; running the workload for {}",
                human_duration(a.run_for)
            ));
            tokio::select! {
                () = tokio::time::sleep(a.run_for) => None,
                signal = signals.recv() => Some(signal),
            }
        };
        if let Some(signal) = stopped_by {
            progress(format_args!(
                "stopped by {}; stopping the workload...",
                signal.name()
            ));
        }
        let stats = workload.stats();
        stop_workload(workload, signals).await;
        out(format_args!(
            "workload: {} transfers, {} crashed part-way, {} recovered, {} refused or failed (a held lock refuses a locked transfer)",
            stats.transfers, stats.crashed, stats.recovered, stats.failed
        ));
        let code = summary(&proto).await;
        match stopped_by {
            // A signal is how `--serve` is meant to end.
            Some(signal) if code == 0 && !a.serve => signal.exit_code(),
            _ => code,
        }
    } else {
        let opts = DashboardOptions {
            interval: d.interval,
            read_only: d.is_read_only(),
            cap: poll::DEFAULT_CAP,
            profile: None,
            mark: None,
            expect_total: d.expect_total.or(Some(report.total_balance)),
            theme: d.theme(),
            keys: d.keys.clone(),
        };
        progress("opening the dashboard (q quits and stops the demo)...");
        let result = dashboard::run(proto, opts).await;
        if let Ok(dashboard::Ended::Signal(signal)) = &result {
            progress(format_args!("stopped by {}", signal.name()));
        }
        progress("stopping the workload...");
        // The signal that stopped the dashboard reached these too: it is
        // not a second one.
        signals.discard_pending();
        stop_workload(workload, signals).await;
        match result {
            Ok(dashboard::Ended::Quit) => 0,
            Ok(dashboard::Ended::RunStopped) => crate::cli::exit::STOPPED,
            Ok(dashboard::Ended::Signal(signal)) => signal.exit_code(),
            Err(e) => {
                err(format_args!("terminal error: {e}"));
                crate::cli::exit::TERMINAL
            }
        }
    }
}

/// Stops the workload, waiting for the transfers in progress (up to the
/// workload's grace period) unless another stop signal says not to wait.
async fn stop_workload(workload: demo::WorkloadHandle, signals: &mut StopSignals) {
    tokio::select! {
        () = workload.stop() => {}
        signal = signals.recv() => {
            progress(format_args!(
                "{} again: not waiting for the transfers in progress",
                signal.name()
            ));
        }
    }
}

/// `1s`, `1.5s`, `2m30s`: a `--for` value as the user would write it.
fn human_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        crate::protocol::time::human_age(d.as_secs() as i64)
    } else {
        format!("{:.3}s", d.as_secs_f64())
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
    match poll::load(proto.cluster(), &proto.config().indices, poll::DEFAULT_CAP).await {
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
