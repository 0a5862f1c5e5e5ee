//! `reverse ID`: the compensating transfer of a finished transaction,
//! recorded in the audit trail (`--reason` required), printed step by step
//! or as one JSON object with `--json`. Rerunning it after a crash or a lost
//! answer carries on with the same reversal; once done it is refused.

use crate::cli::act::{recorded, start, ReasonArgs};
use crate::cli::context::printing_observer;
use crate::cli::output::{err, out, print_json};
use crate::protocol::intervene::Reverse;
use crate::protocol::reverse::{reversal_id, ReverseReport, ReverseVerdict};
use crate::protocol::trail::TrailStep;
use crate::protocol::Protocol;

use serde::Serialize;

/// `reverse ID`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The finished transaction to reverse.
    pub id: String,
    /// If the transaction is committed, let recovery finish it first (you
    /// confirm that it should complete before being reversed).
    #[arg(long)]
    pub finish_committed: bool,
    /// With --finish-committed: finish it even within the recovery window.
    #[arg(long, requires = "finish_committed")]
    pub force: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail; required).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// What `reverse --json` prints.
#[derive(Debug, Serialize)]
pub struct ReverseOutput {
    /// The transaction reversed.
    pub original: String,
    /// The reversal's id (derived from the original's).
    pub reversal: String,
    /// `reversed`, `refused`, `stopped` or `failed`.
    pub outcome: &'static str,
    /// The verdict in words.
    pub message: String,
    /// The original's state when read.
    pub original_state: Option<String>,
    /// The reversal's source account (the original's destination).
    pub src: Option<String>,
    /// The reversal's destination account (the original's source).
    pub dest: Option<String>,
    /// Units moved back.
    pub amount: Option<i64>,
    /// Whether an earlier attempt's reversal was carried on.
    pub resumed: bool,
    /// Every step, in order.
    pub steps: Vec<TrailStep>,
    /// The process exit code.
    pub exit_code: i32,
}

impl ReverseOutput {
    /// The JSON view of a report.
    pub fn of(r: &ReverseReport) -> ReverseOutput {
        let outcome = match r.verdict {
            ReverseVerdict::Reversed => "reversed",
            ReverseVerdict::Refused(_) => "refused",
            ReverseVerdict::Stopped(_) => "stopped",
            ReverseVerdict::Failed(_) => "failed",
        };
        ReverseOutput {
            original: r.original.clone(),
            reversal: r.reversal.clone(),
            outcome,
            message: r.verdict.to_string(),
            original_state: r.original_state.as_ref().map(ToString::to_string),
            src: r.transfer.as_ref().map(|t| t.dest.clone()),
            dest: r.transfer.as_ref().map(|t| t.src.clone()),
            amount: r.transfer.as_ref().map(|t| t.amount),
            resumed: r.resumed,
            steps: r.steps.iter().map(TrailStep::from).collect(),
            exit_code: crate::cli::exit::of_reverse(&r.verdict),
        }
    }
}

/// Runs `reverse ID`; returns the exit code.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let act = Reverse {
        txn: a.id.clone(),
        finish_committed: a.finish_committed,
    };
    let started = match start(&p, act, a.force, &a.why).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let p = if a.json {
        p
    } else {
        out(format_args!(
            "reverse {}: compensating transfer {}",
            a.id,
            reversal_id(&a.id)
        ));
        p.with_observer(printing_observer(false))
    };
    let index = started.index().to_string();
    let done = started.run(&p).await;
    let report = &done.value;
    let code = crate::cli::exit::of_reverse(&report.verdict);
    if a.json {
        match serde_json::to_value(ReverseOutput::of(report)) {
            Ok(v) => print_json(&v),
            Err(e) => err(e),
        }
    } else {
        print_verdict(report);
    }
    recorded(&done, &index, code)
}

fn print_verdict(r: &ReverseReport) {
    let id = &r.original;
    match &r.verdict {
        ReverseVerdict::Reversed => out(format_args!("{id}: {}", r.reversed_by())),
        ReverseVerdict::Refused(why) => err(format_args!("{id}: refused: {why}")),
        ReverseVerdict::Stopped(why) => err(format_args!(
            "{id}: stopped: {why}; run `estx-tui reverse {id}` again to carry on"
        )),
        // The id names nothing: nothing to carry on.
        ReverseVerdict::Failed(e @ crate::Error::NotFound { .. }) if r.steps.is_empty() => {
            err(format_args!("{e}"))
        }
        ReverseVerdict::Failed(e) => err(format_args!(
            "{id}: failed: {e}; run `estx-tui reverse {id}` again to carry on"
        )),
    }
}
