//! The command line: argument types ([`args`]), building the protocol handle
//! ([`context`]), one module per command, and [`run`], the single place
//! where a parsed command line is dispatched to what it asks for.
//!
//! Every command returns its process exit code, one of those in [`exit`]
//! (0 done, 1 refused, 2 usage, 3 cluster error, 4 terminal failure,
//! 5 stopped part-way; 128 + the signal's number when the dashboard or the
//! demo stopped on SIGHUP (129), SIGINT (130) or SIGTERM (143), after
//! restoring the terminal). Nothing is printed with a panic:
//! stdout writes ignore closed pipes, errors are one `estx-tui: ...` line.

pub mod actions;
pub mod args;
pub mod audit;
pub mod bulk;
pub mod bulk_rows;
pub mod bundle;
pub mod bundle_archive;
pub mod check;
pub mod check_output;
pub mod cloud;
pub mod commands;
pub mod completions;
pub mod context;
pub mod demo;
pub mod doctor;
pub mod dry_run;
pub mod exit;
pub mod export;
pub mod exporter;
pub mod exporter_metrics;
pub mod history;
pub mod init;
pub mod intervention;
pub mod list;
pub mod man;
pub mod outcome;
pub mod output;
pub mod paths;
pub mod profile;
pub mod redact;
pub mod release;
pub mod render;
pub mod reverse;
pub mod selection;
pub mod show;
pub mod show_json;
pub mod subcommands;
pub mod threshold;
pub mod values;

pub use args::{Cli, Command};

use output::{err, fail};

/// Exit code of a usage error (what clap itself uses).
pub const EXIT_USAGE: i32 = exit::USAGE;

/// Runs what the command line asks for and returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    let Some(command) = &cli.command else {
        return dashboard(&cli).await;
    };
    // What needs no cluster.
    match command {
        Command::Completions(a) => return completions::run(a),
        Command::Man => return man::run(),
        Command::Paths => return paths::run(&cli),
        _ => {}
    }
    let p = match context::protocol(&cli.global) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    tracing::info!(?command, "command");
    if let Some(code) = intervention::refuse_if_read_only(&cli, command) {
        return code;
    }
    let cluster = p.cluster().clone();
    let code = match command {
        Command::Init(a) => init::run(&p, a).await,
        Command::Doctor(a) => doctor::run(&p, a).await,
        Command::Transfer(a) => actions::transfer(p, a).await,
        Command::List(a) => commands::list(&p, a).await,
        Command::Show(a) => commands::show(&p, a).await,
        Command::Rollback(a) => actions::rollback(p, a).await,
        Command::Recover(a) => actions::recover(p, a).await,
        Command::Locks(a) => commands::locks(&p, a).await,
        Command::ReleaseLock(a) => release::run(&p, a).await,
        Command::Audit(a) => audit::run(&p, a).await,
        Command::History(a) => history::run(&p, a).await,
        Command::Reverse(a) => reverse::run(p, a).await,
        Command::Check(a) => check::run(&p, a).await,
        Command::Exporter(a) => exporter::run(&p, a).await,
        Command::Bundle(a) => bundle::run(&cli, &p, a).await,
        Command::Seed(a) => demo::seed(&p, a).await,
        Command::Demo(a) => demo::demo(&cli, a).await,
        Command::Completions(_) | Command::Man | Command::Paths => 0,
    };
    // Times were taken from the cluster's clock anyway; say so when ours is off.
    if let Some(skew) = cluster.clock_skew() {
        err(format_args!("warning: {skew}"));
    }
    code
}

/// No subcommand: the dashboard, with the same connection options. It
/// opens even when the cluster is unreachable (and keeps retrying).
async fn dashboard(cli: &Cli) -> i32 {
    let p = match context::protocol(&cli.global) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let opts = crate::dashboard::DashboardOptions {
        interval: cli.dashboard.interval,
        read_only: cli.dashboard.is_read_only(),
        cap: crate::protocol::read::poll::DEFAULT_CAP,
        profile: cli.global.resolved.name.clone(),
        expect_total: cli.dashboard.expect_total,
    };
    match crate::dashboard::run(p, opts).await {
        Ok(None) => 0,
        Ok(Some(signal)) => signal.exit_code(),
        Err(e) => {
            err(format_args!("terminal error: {e}"));
            EXIT_TERMINAL
        }
    }
}

/// Exit code when the terminal itself fails (not a tty, I/O error).
pub const EXIT_TERMINAL: i32 = exit::TERMINAL;
