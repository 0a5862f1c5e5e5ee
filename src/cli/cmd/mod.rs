//! One module per headless command, each holding the command's options
//! (its clap `Args`), its `run` and its printing; [`CliCommand`] is the
//! subcommand a command line names, one variant per module. Where a command
//! takes one of two targets (`recover ID` / `--all-stuck`, `release-lock
//! RESOURCE` / `--txn ID`), an argument group in its `Args` makes exactly one
//! of them required.

pub mod ack;
pub mod apply;
pub mod audit;
pub mod bundle;
pub mod check;
pub mod completions;
pub mod dashboard;
pub mod demo;
pub mod doctor;
pub mod exporter;
pub mod history;
pub mod init;
pub mod jobs;
pub mod list;
pub mod locks;
pub mod man;
pub mod paths;
pub mod recover;
pub mod release_lock;
pub mod reverse;
pub mod rollback;
pub mod seed;
pub mod show;
pub mod transfer;

use clap::Subcommand;

/// The headless commands.
#[derive(Debug, Clone, Subcommand)]
pub enum CliCommand {
    /// Create the transactions, accounts, locks and audit-trail indices (idempotent).
    Init(init::Args),

    /// Tell what will work on this cluster: product, indices, mappings and
    /// how each field the tool uses resolved, privileges, shard health.
    Doctor(doctor::Args),

    /// Move AMOUNT from account SRC to account DEST with the full protocol.
    Transfer(transfer::Args),

    /// List transactions not finished or rolled back (or --all, --stuck,
    /// --investigate), oldest modification first, printed as they are read.
    List(list::Args),

    /// Show one transaction with its accounts, locks and what each
    /// intervention would do from here.
    Show(show::Args),

    /// Roll a transaction back from wherever it stopped.
    Rollback(rollback::Args),

    /// Move a stuck transaction forward (or every stuck one with --all-stuck).
    Recover(recover::Args),

    /// Run a plan file written by `rollback`/`recover --plan-out`: exactly
    /// its items, each only if its documents are still at the planned
    /// versions (else refused as drifted); refused whole when altered,
    /// from another cluster, or older than --max-age.
    Apply(apply::Args),

    /// List the locks with their owners and whether they are stale.
    Locks(locks::Args),

    /// Release a lock by resource, or every lock of a transaction.
    ReleaseLock(release_lock::Args),

    /// Acknowledge transactions for a while (--for, --reason required):
    /// `check` does not alert on them and bulk acts leave them out.
    Ack(ack::AckArgs),

    /// Take back the acknowledgement of transactions.
    Unack(ack::UnackArgs),

    /// Check that money is conserved and that accounts and transactions agree.
    Audit(audit::Args),

    /// Reverse a finished transaction with the compensating transfer
    /// (destination -> source, same amount, id `ID-reversal`), linked both ways.
    Reverse(reverse::Args),

    /// Monitoring check: counts of stuck transactions, ones needing
    /// investigation, odd documents, stale locks and audit findings; exits
    /// 0 OK, 1 WARNING, 2 CRITICAL by thresholds, 3 UNKNOWN when the cluster
    /// cannot be read (Nagios); `--format prometheus` for a textfile collector.
    Check(check::Args),

    /// Serve the check's counts, per-state counts and oldest ages for
    /// Prometheus at --listen (/metrics, /healthz), polling the cluster
    /// every --poll-interval; runs until SIGTERM or Ctrl-C.
    Exporter(exporter::Args),

    /// Write one archive for the postmortem: doctor, audit, the stuck list
    /// (CSV), each one's history, the interventions since --since, the
    /// tool's log and config, secrets redacted.
    Bundle(bundle::Args),

    /// List the recorded operator interventions on a transaction (audit
    /// trail), unfinished ones marked; with --since, every intervention in
    /// the window, newest first.
    History(history::Args),

    /// List the bulk runs (jobs) still running or left unfinished (or
    /// --all), with progress, life (live, presumed dead, unknown) and the
    /// command that resumes each.
    Jobs(jobs::Args),

    /// Write a realistic mess into the cluster at --url: accounts, transactions
    /// stuck in every state (some for hours), stale locks, a dangling entry.
    Seed(seed::Args),

    /// Start a local in-memory cluster (osmem-server) with that mess and a live
    /// workload of crashing workers, and open the dashboard on it.
    Demo(demo::Args),

    /// Print the shell completion script (bash, zsh, fish, powershell).
    Completions(completions::Args),

    /// Print the man page (roff): `estx-tui man | man -l -`.
    Man,

    /// Print where the config, log and state files are for this invocation.
    Paths,
}

impl CliCommand {
    /// Whether it writes to the cluster (and so is refused read-only).
    pub fn writes(&self) -> bool {
        match self {
            CliCommand::Init(_)
            | CliCommand::Seed(_)
            | CliCommand::Transfer(_)
            | CliCommand::ReleaseLock(_)
            | CliCommand::Ack(_)
            | CliCommand::Unack(_)
            | CliCommand::Reverse(_) => true,
            // A dry run (and a plan written to a file) reads and decides
            // only; a rehearsal writes to its own local copy only.
            CliCommand::Rollback(a) => !a.select.plans_only() && !a.select.rehearse,
            CliCommand::Recover(a) => !a.select.plans_only() && !a.select.rehearse,
            CliCommand::Apply(_) => true,
            CliCommand::Audit(a) => a.repair,
            _ => false,
        }
    }
}
