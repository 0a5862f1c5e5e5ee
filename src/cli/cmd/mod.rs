//! The subcommands and their arguments: one variant per headless command.
//! Where a command takes one of two targets (`recover ID` / `--all-stuck`,
//! `release-lock RESOURCE` / `--txn ID`), an argument group makes exactly
//! one of them required.

use super::intervention::ReasonArgs;
use super::selection::{SelectionArgs, SELECTORS};
use super::values;
use crate::demo::seed::MIN_ACCOUNTS;
use crate::protocol::time::parse_duration;
use clap::{Args, Subcommand};
use std::time::Duration;

/// The headless commands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Create the transactions, accounts, locks and audit-trail indices (idempotent).
    Init(InitArgs),

    /// Tell what will work on this cluster: product, indices, mappings and
    /// how each field the tool uses resolved, privileges, shard health.
    Doctor(DoctorArgs),

    /// Move AMOUNT from account SRC to account DEST with the full protocol.
    Transfer(TransferArgs),

    /// List transactions not finished or rolled back (or --all, --stuck,
    /// --investigate), oldest modification first, printed as they are read.
    List(ListArgs),

    /// Show one transaction with its accounts, locks and what each
    /// intervention would do from here.
    Show(ShowArgs),

    /// Roll a transaction back from wherever it stopped.
    Rollback(RollbackArgs),

    /// Move a stuck transaction forward (or every stuck one with --all-stuck).
    Recover(RecoverArgs),

    /// List the locks with their owners and whether they are stale.
    Locks(LocksArgs),

    /// Release a lock by resource, or every lock of a transaction.
    ReleaseLock(ReleaseLockArgs),

    /// Check that money is conserved and that accounts and transactions agree.
    Audit(AuditArgs),

    /// Reverse a finished transaction with the compensating transfer
    /// (destination -> source, same amount, id `ID-reversal`), linked both ways.
    Reverse(super::reverse::ReverseArgs),

    /// Monitoring check: counts of stuck transactions, ones needing
    /// investigation, odd documents, stale locks and audit findings; exits
    /// 0 OK, 1 WARNING, 2 CRITICAL by thresholds, 3 UNKNOWN when the cluster
    /// cannot be read (Nagios); `--format prometheus` for a textfile collector.
    Check(super::check::CheckArgs),

    /// Serve the check's counts, per-state counts and oldest ages for
    /// Prometheus at --listen (/metrics, /healthz), polling the cluster
    /// every --poll-interval; runs until SIGTERM or Ctrl-C.
    Exporter(super::exporter::ExporterArgs),

    /// Write one archive for the postmortem: doctor, audit, the stuck list
    /// (CSV), each one's history, the interventions since --since, the
    /// tool's log and config, secrets redacted.
    Bundle(super::bundle::BundleArgs),

    /// List the recorded operator interventions on a transaction (audit
    /// trail), unfinished ones marked.
    History(super::history::HistoryArgs),

    /// Write a realistic mess into the cluster at --url: accounts, transactions
    /// stuck in every state (some for hours), stale locks, a dangling entry.
    Seed(SeedArgs),

    /// Start a local in-memory cluster (osmem-server) with that mess and a live
    /// workload of crashing workers, and open the dashboard on it.
    Demo(DemoArgs),

    /// Print the shell completion script (bash, zsh, fish, powershell).
    Completions(super::completions::CompletionsArgs),

    /// Print the man page (roff): `estx-tui man | man -l -`.
    Man,

    /// Print where the config, log and state files are for this invocation.
    Paths,
}

/// `init`.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// Also add to existing indices every field of the shipped mappings
    /// they lack (idempotent; only adds, never changes a field).
    #[arg(long)]
    pub upgrade_mappings: bool,
}

/// `doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `seed`.
#[derive(Debug, Clone, Args)]
pub struct SeedArgs {
    /// Accounts to create (at least 4).
    #[arg(long, default_value_t = 8, value_parser = values::count_at_least(MIN_ACCOUNTS))]
    pub accounts: usize,
    /// Starting balance of each account (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..))]
    pub balance: i64,
    /// Seed even though the indices already hold documents.
    #[arg(long)]
    pub force: bool,
}

/// `demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Accounts to create (at least 4).
    #[arg(long, default_value_t = 8, value_parser = values::count_at_least(MIN_ACCOUNTS))]
    pub accounts: usize,
    /// Starting balance of each account (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..))]
    pub balance: i64,
    /// Workers making transfers in the background (at least 1).
    #[arg(long, default_value_t = 3, value_parser = values::count_at_least(1))]
    pub workers: usize,
    /// Share of transfers whose worker dies part-way (0 to 1).
    #[arg(long, default_value_t = 0.2, value_parser = values::rate)]
    pub crash_rate: f64,
    /// Run without the dashboard (for scripts and tests); prints a summary.
    #[arg(long)]
    pub no_ui: bool,
    /// With --no-ui: how long to run the workload (e.g. 10s, 1m30s).
    #[arg(long = "for", value_name = "DURATION", default_value = "10s", value_parser = values::positive_duration)]
    pub run_for: std::time::Duration,
}

/// `transfer SRC DEST AMOUNT`.
#[derive(Debug, Clone, Args)]
pub struct TransferArgs {
    /// Source account id.
    pub src: String,
    /// Destination account id.
    pub dest: String,
    /// Units to move (a positive integer).
    #[arg(value_parser = clap::value_parser!(i64).range(1..), allow_negative_numbers = true)]
    pub amount: i64,
    /// Transaction id [default: generated].
    #[arg(long)]
    pub id: Option<String>,
    /// Hold locks on both accounts for the duration of the transfer.
    #[arg(long)]
    pub locks: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Only transactions in this state (repeatable): created, pending,
    /// committed, terminating, finished, rolled-back.
    #[arg(long = "state", value_name = "STATE", value_parser = values::state)]
    pub states: Vec<String>,
    /// Only transactions last modified longer ago than this.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub older_than: Option<Duration>,
    /// The whole history, finished and rolled back included (default:
    /// everything not finished or rolled back).
    #[arg(long, conflicts_with_all = ["states", "stuck", "investigate"])]
    pub all: bool,
    /// Only stuck transactions (in flight, untouched for the recovery window).
    #[arg(long, conflicts_with_all = ["states", "investigate"])]
    pub stuck: bool,
    /// Only transactions needing investigation (stuck for over --investigate-after).
    #[arg(long, conflicts_with = "states")]
    pub investigate: bool,
    /// List even when some shards failed to answer (rows may be missing).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print JSON instead of a table (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format: every column, full ids and the as-of time.
    #[arg(long, value_enum, default_value_t = super::export::ListFormat::Table)]
    pub format: super::export::ListFormat,
}

impl ListArgs {
    /// The format asked for (`--json` is `--format json`).
    pub fn format(&self) -> super::export::ListFormat {
        if self.json {
            super::export::ListFormat::Json
        } else {
            self.format
        }
    }
}

/// `show ID`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Transaction id.
    pub id: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `rollback ID`, or `rollback` of a selection.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true)
    .args(["id", "all_stuck", "states", "older_than", "ids_from"])))]
pub struct RollbackArgs {
    /// Transaction id (or select many with --all-stuck, --state,
    /// --older-than, --ids-from).
    #[arg(conflicts_with_all = SELECTORS)]
    pub id: Option<String>,
    /// The selection, --dry-run and --format.
    #[command(flatten)]
    pub select: SelectionArgs,
    /// With a selection: how many transactions to roll back at once.
    #[arg(long, default_value_t = 4, conflicts_with = "id", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Act even if the transaction was modified within the recovery window
    /// (one transaction only).
    #[arg(long, conflicts_with_all = SELECTORS)]
    pub force: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail; required).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `recover ID`, or `recover` of a selection (`--all-stuck`: every stuck
/// transaction, then the locks stale on evidence: never an unknown one).
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true)
    .args(["id", "all_stuck", "states", "older_than", "ids_from"])))]
pub struct RecoverArgs {
    /// Transaction id (or select many with --all-stuck, --state,
    /// --older-than, --ids-from).
    #[arg(conflicts_with_all = SELECTORS)]
    pub id: Option<String>,
    /// The selection, --dry-run and --format.
    #[command(flatten)]
    pub select: SelectionArgs,
    /// With a selection: how many batches to recover at once (default 1:
    /// batches that share accounts only slow each other down), or with
    /// --sequential how many transactions (default 4).
    #[arg(long, conflicts_with = "id", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,
    /// With a selection: transactions read and written together (one
    /// `_mget` and one `_bulk` per step for the whole batch).
    #[arg(long, default_value_t = 5000, conflicts_with_all = ["id", "sequential"], value_parser = clap::value_parser!(u16).range(1..))]
    pub batch_size: u16,
    /// With a selection: recover one transaction at a time per worker (one
    /// read and one write per step), instead of in batches.
    #[arg(long, conflicts_with = "id")]
    pub sequential: bool,
    /// Act even if the transaction was modified within the recovery window
    /// (one transaction only).
    #[arg(long, conflicts_with_all = SELECTORS)]
    pub force: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail; required with --force or a selection).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `locks`.
#[derive(Debug, Clone, Args)]
pub struct LocksArgs {
    /// List even when some shards failed to answer (locks may be missing).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `release-lock RESOURCE` or `release-lock --txn ID`.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["resource", "txn"])))]
pub struct ReleaseLockArgs {
    /// The locked resource (the lock document's id).
    pub resource: Option<String>,
    /// Release every lock owned by this transaction instead.
    #[arg(long, value_name = "ID")]
    pub txn: Option<String>,
    /// Release even a lock whose holder may still be running.
    #[arg(long)]
    pub force: bool,
    /// With --txn: act even when some shards failed to answer the search
    /// for its locks (locks on them are left; its accounts' are read by id).
    #[arg(long, requires = "txn")]
    pub allow_partial: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail; required with --force).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `audit`.
#[derive(Debug, Clone, Args)]
pub struct AuditArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The total balance all accounts should add up to.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub expect_total: Option<i64>,
    /// Repair what can be repaired safely.
    #[arg(long)]
    pub repair: bool,
    /// Audit (and repair) even when some shards failed to answer.
    #[arg(long)]
    pub allow_partial: bool,
    /// Why (recorded in the audit trail with --repair).
    #[command(flatten)]
    pub why: ReasonArgs,
}
