//! `recover ID`, or `recover` of a selection, or the `--dry-run` of
//! either: each transaction moved forward from where it stopped, through
//! the same act as `rollback` ([`crate::cli::act::procedure`]); a selection
//! in batches unless `--sequential`, whatever the selection.

use crate::cli::act::job::JobArgs;
use crate::cli::act::procedure;
use crate::cli::act::request::Request;
use crate::cli::act::ReasonArgs;
use crate::cli::selection::{SelectionArgs, SELECTORS};
use crate::protocol::batch::BatchOptions;
use crate::protocol::intervene::Runner;
use crate::protocol::{Procedure, Protocol};

/// `recover ID`, or `recover` of a selection (`--all-stuck`: every stuck
/// transaction, then the locks stale on evidence: never an unknown one).
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true)
    .args(["id", "all_stuck", "states", "older_than", "ids_from", "resume"])))]
pub struct Args {
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
    /// (one transaction only); with --resume, resume a job not presumed
    /// dead (its heartbeat recent, or none recorded): with a reason.
    #[arg(long, conflicts_with_all = SELECTORS)]
    pub force: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// --resume, --max-rate, --progress, --left-to.
    #[command(flatten)]
    pub job: JobArgs,
    /// Why (recorded in the audit trail; required with --force or a selection).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// Recovers the one transaction or the selection (or prints the plan);
/// returns the exit code.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let default = if a.sequential { 4 } else { 1 };
    let concurrency = usize::from(a.concurrency.unwrap_or(default));
    let runner = if a.sequential {
        Runner::OneByOne(concurrency)
    } else {
        Runner::Batched(BatchOptions {
            batch_size: usize::from(a.batch_size),
            concurrency,
            ..BatchOptions::default()
        })
    };
    let req = Request {
        procedure: Procedure::Recover,
        id: a.id.as_deref(),
        select: &a.select,
        force: a.force,
        json: a.json,
        why: &a.why,
        job: &a.job,
        runner,
    };
    procedure::run(p, req).await
}
