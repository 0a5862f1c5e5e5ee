//! The options every command shares: the global connection and protocol
//! options ([`GlobalArgs`], with what a profile [`Resolved`] to) and the
//! dashboard's ([`DashboardArgs`]). The command line itself (`Cli`) is in
//! `args`; each command's own options live in its file under `cmd`.
//!
//! Every global option can also come from an `ESTX_*` environment variable.
//! Secrets never come from flags (they would land in shell history): the
//! password is read from `ESTX_PASSWORD`, the API key from `ESTX_API_KEY`,
//! a bearer token from `ESTX_BEARER_TOKEN` and AWS credentials from the
//! standard `AWS_*` variables when the connection is made (`context`).

use super::values;
use crate::dashboard::keymap::Keymap;
use crate::dashboard::look::{Theme, ThemeName};
use crate::local_files::LogOf;
use crate::protocol::locks::LivenessSource;
use crate::protocol::schema::Schema;
use crate::protocol::time::parse_duration;
use clap::builder::FalseyValueParser;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Connection and protocol options, accepted before or after the subcommand
/// (shown under their own heading, apart from a command's own options).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Base URL of the cluster.
    #[arg(
        long,
        global = true,
        env = "ESTX_URL",
        default_value = "http://localhost:9200",
        value_parser = crate::cli::values::cluster_url
    )]
    pub url: String,

    /// Elastic Cloud ID of the deployment (`<name>:<base64>`, from its
    /// page in the Elastic Cloud console), instead of --url.
    #[arg(long, global = true, env = "ESTX_CLOUD_ID", value_name = "ID")]
    pub cloud_id: Option<String>,

    /// Basic-auth user (the password is read from ESTX_PASSWORD). Only one
    /// credential kind at a time: this, ESTX_API_KEY, ESTX_BEARER_TOKEN or
    /// --aws-sigv4.
    #[arg(long, global = true, env = "ESTX_USER")]
    pub user: Option<String>,

    /// Sign every request with AWS SigV4 for Amazon OpenSearch Service (es)
    /// or OpenSearch Serverless (aoss), with AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
    #[arg(
        long,
        global = true,
        env = "ESTX_AWS_SIGV4",
        value_enum,
        value_name = "SERVICE"
    )]
    pub aws_sigv4: Option<crate::cluster::AwsService>,

    /// AWS region of the domain or collection for --aws-sigv4 [default: the
    /// profile's aws_region, else AWS_REGION, else AWS_DEFAULT_REGION].
    #[arg(long, global = true, value_name = "REGION")]
    pub aws_region: Option<String>,

    /// PEM file of the CA that signed the cluster's certificate.
    #[arg(long, global = true, env = "ESTX_CA_CERT", value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,

    /// Skip TLS certificate validation (testing only).
    #[arg(long, global = true, env = "ESTX_INSECURE", value_parser = FalseyValueParser::new())]
    pub insecure: bool,

    /// Index holding the transaction documents.
    #[arg(
        long,
        global = true,
        env = "ESTX_TRANSACTIONS_INDEX",
        default_value = "transactions",
        value_name = "INDEX"
    )]
    pub transactions_index: String,

    /// Index holding the account documents.
    #[arg(
        long,
        global = true,
        env = "ESTX_ACCOUNTS_INDEX",
        default_value = "accounts",
        value_name = "INDEX"
    )]
    pub accounts_index: String,

    /// Index holding the lock documents.
    #[arg(
        long,
        global = true,
        env = "ESTX_LOCKS_INDEX",
        default_value = "locks",
        value_name = "INDEX"
    )]
    pub locks_index: String,

    /// Whether the operator named the locks index (flag, variable or
    /// profile): only then is its absence refused as a mistake
    /// ([`crate::protocol::Indices::locks_named`]).
    #[arg(skip)]
    pub locks_index_named: bool,

    /// Index holding the operator audit trail (created by `init`).
    #[arg(
        long,
        global = true,
        env = "ESTX_AUDIT_INDEX",
        default_value = "estx-audit",
        value_name = "INDEX"
    )]
    pub audit_index: String,

    /// Index holding the operators' acknowledgements (`ack`, `unack`;
    /// created by `init`).
    #[arg(
        long,
        global = true,
        env = "ESTX_ACKS_INDEX",
        default_value = "estx-acks",
        value_name = "INDEX"
    )]
    pub acks_index: String,

    /// Record interventions in a local append-only JSON Lines file instead
    /// of the audit index: `file:PATH` (created 0600, never through a
    /// symlink). For a cluster without the audit index where you may not
    /// create it; every record names the file.
    #[arg(long, global = true, env = "ESTX_AUDIT_TRAIL", value_name = "file:PATH",
          value_parser = crate::protocol::trail::file::parse)]
    pub audit_trail: Option<std::path::PathBuf>,

    /// Named cluster profile from $XDG_CONFIG_HOME/estx-tui/config.toml
    /// (flags and ESTX_* variables override its settings).
    #[arg(long, global = true, env = "ESTX_PROFILE", value_name = "NAME")]
    pub profile: Option<String>,

    /// What the profile resolved to (set by the profile, not a flag).
    #[arg(skip)]
    pub resolved: Resolved,

    /// A transaction modified more recently than this may still have a live
    /// worker: it is not stuck, and rollback/recover refuse it unless forced.
    #[arg(long, global = true, env = "ESTX_RECOVERY_WINDOW", default_value = "2m", value_parser = parse_duration, value_name = "DURATION")]
    pub recovery_window: Duration,

    /// How often a running bulk job rewrites its audit record's heartbeat;
    /// a job silent for four of its periods is presumed dead (the jobs view,
    /// `--resume`).
    #[arg(long, global = true, env = "ESTX_JOB_HEARTBEAT", default_value = "10s", value_parser = values::positive_duration, value_name = "DURATION")]
    pub job_heartbeat: Duration,

    /// Non-terminal transactions older than this need an operator.
    #[arg(long, global = true, env = "ESTX_INVESTIGATE_AFTER", default_value = "1h", value_parser = parse_duration, value_name = "DURATION")]
    pub investigate_after: Duration,

    /// Per-request timeout (a timed-out write has an unknown outcome and is retried).
    #[arg(long, global = true, env = "ESTX_TIMEOUT", default_value = "10s", value_parser = values::positive_duration, value_name = "DURATION")]
    pub timeout: Duration,

    /// How long one read may be retried in all while the cluster answers
    /// busy (429, 502-504) or not at all, waiting longer each time (a scan
    /// page may wait three times this).
    #[arg(long, global = true, env = "ESTX_RETRY_BUDGET", default_value = "30s", value_parser = values::positive_duration, value_name = "DURATION")]
    pub retry_budget: Duration,

    /// Where logs go (never to the terminal), created 0600 and rotated;
    /// /dev/null logs nothing [default: $XDG_STATE_HOME/estx-tui/estx-tui.log,
    /// else ~/.local/state/estx-tui/estx-tui.log].
    #[arg(long, global = true, env = "ESTX_LOG_FILE", value_name = "PATH")]
    pub log_file: Option<PathBuf>,

    /// The least severe level logged [default: ESTX_LOG as a tracing
    /// filter, else info].
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    pub log_level: Option<LogLevel>,
}

/// What the chosen profile contributed beyond plain option values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// The profile's name, if one was used (the dashboard header shows it).
    pub name: Option<String>,
    /// Whether it is marked `production = true`.
    pub production: bool,
    /// Who approves its interventions (`approval`).
    pub approval: crate::protocol::ApprovalRule,
    /// The frame the dashboard draws for it (`label`, `colour`,
    /// `production`), if any.
    pub mark: Option<crate::dashboard::app::ProfileMark>,
    /// The variable holding the password, if the profile names one.
    pub password_env: Option<String>,
    /// The variable holding the API key, if the profile names one.
    pub api_key_env: Option<String>,
    /// The variable holding the bearer token, if the profile names one.
    pub bearer_token_env: Option<String>,
    /// The AWS region the profile names.
    pub aws_region: Option<String>,
    /// The heartbeat index the profile names, if any.
    pub liveness: Option<LivenessSource>,
    /// The schema map the profile names (the article's when it names none).
    pub schema: Schema,
    /// The runbook URL per cause the profile names (`[profiles.NAME.runbooks]`).
    pub runbooks: crate::protocol::read::verdict::Runbooks,
}

/// `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// What was done (the default).
    Info,
    /// Requests and decisions.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// The tracing filter directive.
    pub fn directive(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// Where this invocation logs: what `main` opens, `paths` shows and
/// `bundle` archives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    /// A file of ours: `--log-file`, else the per-user default.
    File(PathBuf),
    /// `--log-file /dev/null`: the usual way to say "no log", honoured as
    /// such (the device is not a file of ours to open privately).
    Off,
    /// No `--log-file` and neither `XDG_STATE_HOME` nor `HOME` to put the
    /// default under.
    NoHome,
}

impl LogTarget {
    /// The file, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LogTarget::File(p) => Some(p),
            LogTarget::Off | LogTarget::NoHome => None,
        }
    }
}

/// The path that means "no log file".
pub const NO_LOG: &str = "/dev/null";

impl GlobalArgs {
    /// The operator's log target (what `paths` shows and `bundle`
    /// archives): `--log-file` (`/dev/null` is [`LogTarget::Off`]), else the
    /// per-user default of [`crate::local_files::default_path`]. The demo
    /// logs apart (`Cli::log_target`).
    pub fn log_target(&self) -> LogTarget {
        self.log_target_of(LogOf::Operator)
    }

    /// [`GlobalArgs::log_target`] for `whose` run: its own default file when
    /// no `--log-file` is given.
    pub fn log_target_of(&self, whose: LogOf) -> LogTarget {
        match &self.log_file {
            Some(p) if p == Path::new(NO_LOG) => LogTarget::Off,
            Some(p) => LogTarget::File(p.clone()),
            None => crate::local_files::default_path_of_from_env(whose)
                .map_or(LogTarget::NoHome, LogTarget::File),
        }
    }
}

/// Options of the dashboard (ignored by the headless commands).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Dashboard options")]
pub struct DashboardArgs {
    /// How often the dashboard refreshes (at least 1s).
    #[arg(long, global = true, env = "ESTX_INTERVAL", default_value = "2s", value_parser = values::interval, value_name = "DURATION")]
    pub interval: Duration,

    /// Show only; every action that writes is disabled or refused, the
    /// audit trail included (`--read-only=false` lifts a profile's default).
    #[arg(long, global = true, env = "ESTX_READ_ONLY", value_parser = FalseyValueParser::new(), num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub read_only: Option<bool>,

    /// The sum of all balances the background audit checks against; a
    /// difference shows as a `total_mismatch` finding in the audit pane
    /// (the demo passes its seeded total unless this is given).
    #[arg(long, global = true, value_parser = clap::value_parser!(i64).range(0..), value_name = "N")]
    pub expect_total: Option<i64>,

    /// The dashboard's colours: dark, light, high-contrast or colour-blind
    /// (Okabe-Ito) [default: the profile's theme, else the config file's,
    /// else dark]. NO_COLOR drops every colour whatever the theme.
    #[arg(
        long,
        global = true,
        env = "ESTX_THEME",
        value_enum,
        value_name = "NAME"
    )]
    pub theme: Option<ThemeName>,

    /// Draw with ASCII only (borders, marks, arrows), for terminals without
    /// Unicode [default: the config file's `ascii`, else off].
    #[arg(long, global = true, env = "ESTX_ASCII", value_parser = FalseyValueParser::new())]
    pub ascii: bool,

    /// The key table with the config file's `[keys]` and `[dialog_keys]`
    /// applied (set by the config file, not a flag).
    #[arg(skip)]
    pub keys: Keymap,
}

impl DashboardArgs {
    /// The look chosen: the theme, ASCII or not, and `NO_COLOR`.
    pub fn theme(&self) -> Theme {
        Theme::from_env(self.theme.unwrap_or_default(), self.ascii)
    }

    /// Whether writes are disabled (`--read-only`, else the profile's default).
    pub fn is_read_only(&self) -> bool {
        self.read_only.unwrap_or(false)
    }
}

/// The shared options alone, as a command line: what the tests of the
/// plumbing parse (without any command).
#[cfg(test)]
#[derive(Debug, clap::Parser)]
pub(crate) struct SharedOptions {
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Options of the dashboard.
    #[command(flatten)]
    pub dashboard: DashboardArgs,
}
