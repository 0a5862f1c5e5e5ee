//! `rollback ID`, or `rollback` of a selection (`--all-stuck`, `--state`,
//! `--older-than`, `--ids-from`), or the `--dry-run` of either: each
//! transaction rolled back from wherever it stopped, through the same act
//! as `recover` ([`crate::cli::act::procedure`]), a few at a time.

use crate::cli::act::job::JobArgs;
use crate::cli::act::procedure;
use crate::cli::act::request::Request;
use crate::cli::act::ReasonArgs;
use crate::cli::selection::{SelectionArgs, SELECTORS};
use crate::protocol::intervene::Runner;
use crate::protocol::{Procedure, Protocol};

/// `rollback ID`, or `rollback` of a selection.
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
    /// With a selection: how many transactions to roll back at once.
    #[arg(long, default_value_t = 4, conflicts_with = "id", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
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
    /// Why (recorded in the audit trail; required).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// Rolls back the one transaction or the selection (or prints the plan);
/// returns the exit code.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let req = Request {
        procedure: Procedure::Rollback,
        id: a.id.as_deref(),
        select: &a.select,
        force: a.force,
        json: a.json,
        why: &a.why,
        job: &a.job,
        runner: Runner::OneByOne(usize::from(a.concurrency)),
    };
    procedure::run(p, req).await
}
