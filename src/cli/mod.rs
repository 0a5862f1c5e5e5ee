//! The command line. Each headless command is one module under [`cmd`]
//! holding its options, its `run` and its printing; [`run`] is the single
//! place where a parsed command line ([`args::Cli`]) is dispatched to it.
//! Below the commands, and importing none of them: the shared plumbing
//! (the global options in [`global`], profiles in [`profile`] and
//! [`cloud`], the connection in [`context`] and [`session`], the bulk
//! selection in [`selection`], the running of acts in [`act`]) and the
//! leaves ([`output`]'s formats, [`exit`]'s codes, [`values`]' parsers).
//!
//! Every command returns its process exit code, one of those in [`exit`]
//! (0 done, 1 refused, 2 usage, 3 cluster error, 4 terminal failure,
//! 5 stopped part-way; 128 + the signal's number when the dashboard or the
//! demo stopped on SIGHUP (129), SIGINT (130) or SIGTERM (143), after
//! restoring the terminal). Nothing is printed with a panic:
//! stdout writes ignore closed pipes, errors are one `estx-tui: ...` line.

pub mod act;
pub mod args;
pub mod cloud;
pub mod cmd;
pub mod context;
pub mod exit;
pub mod global;
pub mod looks;
pub mod missing;
pub mod output;
pub mod profile;
pub mod selection;
pub mod session;
pub mod values;

pub use args::{parse_args, Cli, ParseFailure};
pub use cmd::CliCommand;
pub use exit::{TERMINAL as EXIT_TERMINAL, USAGE as EXIT_USAGE};

use clap::CommandFactory;
use session::Session;

/// Runs what the command line asks for and returns the process exit code:
/// the dashboard without a command; `completions`, `man` and `paths`
/// without the cluster; every other command in a [`Session`].
pub async fn run(cli: Cli) -> i32 {
    let (g, d) = (&cli.global, &cli.dashboard);
    let Some(command) = &cli.command else {
        return cmd::dashboard::run(g, d).await;
    };
    let on_cluster = Session::new(g, d, command, command.writes());
    match command {
        CliCommand::Completions(a) => cmd::completions::run(a, Cli::command()),
        CliCommand::Man => cmd::man::run(Cli::command()),
        CliCommand::Paths => cmd::paths::run(g),
        CliCommand::Init(a) => on_cluster.run(|p| cmd::init::run(p, a)).await,
        CliCommand::Doctor(a) => on_cluster.run(|p| cmd::doctor::run(p, a)).await,
        CliCommand::Transfer(a) => on_cluster.run(|p| cmd::transfer::run(p, a)).await,
        CliCommand::List(a) => on_cluster.run(|p| cmd::list::run(p, a)).await,
        CliCommand::Show(a) => on_cluster.run(|p| cmd::show::run(p, a)).await,
        CliCommand::Rollback(a) => on_cluster.run(|p| cmd::rollback::run(p, a)).await,
        CliCommand::Recover(a) => on_cluster.run(|p| cmd::recover::run(p, a)).await,
        CliCommand::Apply(a) => on_cluster.run(|p| cmd::apply::run(p, a)).await,
        CliCommand::Locks(a) => on_cluster.run(|p| cmd::locks::run(p, a)).await,
        CliCommand::ReleaseLock(a) => on_cluster.run(|p| cmd::release_lock::run(p, a)).await,
        CliCommand::Ack(a) => on_cluster.run(|p| cmd::ack::run_ack(p, a)).await,
        CliCommand::Unack(a) => on_cluster.run(|p| cmd::ack::run_unack(p, a)).await,
        CliCommand::Audit(a) => on_cluster.run(|p| cmd::audit::run(p, a)).await,
        CliCommand::History(a) => on_cluster.run(|p| cmd::history::run(p, a)).await,
        CliCommand::Jobs(a) => on_cluster.run(|p| cmd::jobs::run(p, a)).await,
        CliCommand::Reverse(a) => on_cluster.run(|p| cmd::reverse::run(p, a)).await,
        CliCommand::Check(a) => on_cluster.run(|p| cmd::check::run(p, a)).await,
        CliCommand::Exporter(a) => on_cluster.run(|p| cmd::exporter::run(p, a)).await,
        CliCommand::Bundle(a) => on_cluster.run(|p| cmd::bundle::run(p, g, a)).await,
        CliCommand::Seed(a) => on_cluster.run(|p| cmd::seed::run(p, a)).await,
        // The demo starts its own cluster; the options must still make one.
        CliCommand::Demo(a) => on_cluster.run(|_| cmd::demo::run(g, d, a)).await,
    }
}
