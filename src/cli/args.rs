//! The command line: [`Cli`], the global and dashboard options with at most
//! one [`CliCommand`], and [`parse_args`], which parses it and applies the
//! chosen profile underneath it.

use super::cmd::CliCommand;
use super::global::{DashboardArgs, GlobalArgs, LogTarget};
use super::profile::{self, ProfileError};
use crate::local_files::LogOf;
use clap::{CommandFactory, FromArgMatches, Parser};
use std::ffi::OsString;

/// The version with the commit it was built from: [`crate::VERSION`].
pub const VERSION: &str = crate::VERSION;

/// Inspect and repair two-phase-commit transactions stored in
/// Elasticsearch/OpenSearch.
///
/// Without a subcommand, opens the dashboard. The subcommands are headless:
/// they print to stdout, explain refusals on stderr, and exit with 0 (done, by
/// this process or another), 1 (refused with nothing written, findings, not
/// found or malformed), 2 (usage), 3 (cluster unreachable or cluster error),
/// 4 (terminal failure) or 5 (stopped part-way, left for recovery). The
/// dashboard and `demo` stop cleanly on SIGTERM, SIGHUP and SIGINT (terminal
/// restored, demo workload and server stopped) and exit with 128 + the signal
/// number (143, 129, 130).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "estx-tui",
    version = VERSION,
    about,
    long_about,
    after_help = "Durations are written 500ms, 90s, 2m, 1h30m, 1d (a bare number is seconds). \
                  Secrets are read from the environment only, one kind at a time: ESTX_PASSWORD \
                  (with --user), ESTX_API_KEY, ESTX_BEARER_TOKEN, or AWS_ACCESS_KEY_ID / \
                  AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN (with --aws-sigv4). \
                  Logs go to --log-file, never to the terminal."
)]
pub struct Cli {
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Options of the dashboard.
    #[command(flatten)]
    pub dashboard: DashboardArgs,

    /// The headless command to run; none opens the dashboard.
    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

/// Parses the command line and applies the chosen profile underneath it.
/// Errors: clap's own (usage, `--help`, `--version`) or a profile problem.
pub fn parse_args<I, T>(args: I) -> Result<Cli, ParseFailure>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = Cli::command()
        .try_get_matches_from(args)
        .map_err(ParseFailure::Usage)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(ParseFailure::Usage)?;
    // The demo runs its own throw-away cluster: a default profile (maybe a
    // read-only production one) is not for it; only an explicit one is.
    let is_demo = matches!(cli.command, Some(CliCommand::Demo(_)));
    cli.global.locks_index_named = !profile::unset(&matches, "locks_index");
    profile::apply_chosen(&mut cli.global, &mut cli.dashboard, &matches, is_demo)
        .map_err(ParseFailure::Profile)?;
    super::cloud::resolve_cloud_id(&mut cli.global, &matches).map_err(ParseFailure::Profile)?;
    Ok(cli)
}

impl Cli {
    /// Where this run logs: [`GlobalArgs::log_target`], except that the
    /// demo's default is its own file ([`LogOf::Demo`]): its workload logs
    /// every step, kept out of the operator's log that `bundle` archives.
    pub fn log_target(&self) -> LogTarget {
        let whose = match self.command {
            Some(CliCommand::Demo(_)) => LogOf::Demo,
            _ => LogOf::Operator,
        };
        self.global.log_target_of(whose)
    }
}

/// Why [`parse_args`] failed.
#[derive(Debug)]
pub enum ParseFailure {
    /// clap's error (print it with `exit()`).
    Usage(clap::Error),
    /// The configuration file or profile.
    Profile(ProfileError),
}

#[cfg(test)]
mod tests {
    use crate::cli::args::*;
    use std::time::Duration;

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn recover_needs_exactly_one_target() {
        assert!(Cli::try_parse_from(["estx-tui", "recover"]).is_err());
        assert!(Cli::try_parse_from(["estx-tui", "recover", "t1", "--all-stuck"]).is_err());
        assert!(
            Cli::try_parse_from(["estx-tui", "recover", "--all-stuck", "--concurrency", "8"])
                .is_ok()
        );
        assert!(Cli::try_parse_from(["estx-tui", "recover", "t1", "--concurrency", "8"]).is_err());
        assert!(Cli::try_parse_from(["estx-tui", "recover", "t1", "--force"]).is_ok());
        assert!(Cli::try_parse_from(["estx-tui", "recover", "--all-stuck", "--force"]).is_err());
    }

    #[test]
    fn bulk_selectors_compose_and_exclude_an_id() {
        let ok = |args: &[&str]| {
            let mut v = vec!["estx-tui"];
            v.extend_from_slice(args);
            Cli::try_parse_from(v)
        };
        for cmd in ["rollback", "recover"] {
            let cli = ok(&[cmd, "--state", "pending,created", "--state", "committed"]).unwrap();
            let select = match cli.command {
                Some(CliCommand::Rollback(a)) => a.select,
                Some(CliCommand::Recover(a)) => a.select,
                _ => unreachable!(),
            };
            assert_eq!(select.selectors.states, ["pending", "created", "committed"]);
            assert!(select.is_bulk());
            assert!(ok(&[
                cmd,
                "--all-stuck",
                "--older-than",
                "1h30m",
                "--ids-from",
                "-"
            ])
            .is_ok());
            assert!(ok(&[cmd, "t1", "--dry-run", "--format", "ndjson"]).is_ok());
            assert!(ok(&[cmd, "t1", "--state", "pending"]).is_err());
            assert!(ok(&[cmd, "--ids-from", "f", "--force"]).is_err());
            assert!(ok(&[cmd, "--dry-run"]).is_err());
            assert!(ok(&[cmd, "t1", "--allow-partial"]).is_err());
            assert!(ok(&[cmd, "--all-stuck", "--json", "--format", "ndjson"]).is_err());
            assert!(ok(&[cmd, "--state", "pendng"]).is_err());
            assert!(ok(&[cmd, "--older-than", "soon"]).is_err());
            // A rehearsal writes to its own copy only: allowed read-only.
            let rehearsal = ok(&[cmd, "--all-stuck", "--rehearse", "--json"]).unwrap();
            assert!(!rehearsal.command.is_some_and(|c| c.writes()));
            assert!(ok(&[cmd, "t1", "--rehearse"]).is_ok());
            assert!(ok(&[cmd, "--rehearse"]).is_err());
            assert!(ok(&[cmd, "--all-stuck", "--rehearse", "--dry-run"]).is_err());
            assert!(ok(&[cmd, "--resume", "r1", "--rehearse"]).is_err());
        }
        assert!(ok(&["rollback", "t1", "--concurrency", "2"]).is_err());
        assert!(ok(&["rollback", "--all-stuck", "--concurrency", "0"]).is_err());
    }

    #[test]
    fn release_lock_needs_exactly_one_target() {
        assert!(Cli::try_parse_from(["estx-tui", "release-lock"]).is_err());
        assert!(Cli::try_parse_from(["estx-tui", "release-lock", "A", "--txn", "t"]).is_err());
        assert!(Cli::try_parse_from(["estx-tui", "release-lock", "--txn", "t", "--force"]).is_ok());
    }

    #[test]
    fn global_options_after_the_subcommand() {
        let cli = Cli::try_parse_from([
            "estx-tui",
            "list",
            "--recovery-window",
            "90s",
            "--url",
            "http://x:1",
        ])
        .unwrap();
        assert_eq!(cli.global.recovery_window, Duration::from_secs(90));
        assert_eq!(cli.global.url, "http://x:1");
        assert!(Cli::try_parse_from(["estx-tui", "list", "--timeout", "soon"]).is_err());
        let cli =
            Cli::try_parse_from(["estx-tui", "list", "--investigate-after", "1h30m"]).unwrap();
        assert_eq!(cli.global.investigate_after, Duration::from_secs(5400));
        assert!(Cli::try_parse_from(["estx-tui", "transfer", "A", "B", "0"]).is_err());
    }

    /// The message of a refused command line.
    fn refusal(args: &[&str]) -> String {
        let e = Cli::try_parse_from(args).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    }

    #[test]
    fn values_out_of_range_are_usage_errors() {
        let e = refusal(&["estx-tui", "list", "--state", "pendng"]);
        assert!(
            e.contains("--state") && e.contains("valid states: created, pending"),
            "{e}"
        );
        let e = refusal(&["estx-tui", "demo", "--crash-rate", "2"]);
        assert!(e.contains("--crash-rate") && e.contains("0 to 1"), "{e}");
        let e = refusal(&["estx-tui", "demo", "--accounts", "3"]);
        assert!(e.contains("at least 4"), "{e}");
        let e = refusal(&["estx-tui", "demo", "--workers", "0"]);
        assert!(e.contains("at least 1"), "{e}");
        let e = refusal(&["estx-tui", "seed", "--balance", "0"]);
        assert!(e.contains("--balance"), "{e}");
        let e = refusal(&["estx-tui", "demo", "--for", "0s"]);
        assert!(e.contains("--for"), "{e}");
        let e = refusal(&["estx-tui", "--interval", "100ms"]);
        assert!(e.contains("at least 1s"), "{e}");
        let e = refusal(&["estx-tui", "list", "--timeout", "0"]);
        assert!(e.contains("--timeout"), "{e}");
        let ok = Cli::try_parse_from(["estx-tui", "demo", "--for", "1m30s", "--crash-rate", "1"]);
        assert!(ok.is_ok());
        let ok = Cli::try_parse_from(["estx-tui", "list", "--state", "rolled-back"]);
        assert!(ok.is_ok());
    }
}
