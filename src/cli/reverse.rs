//! `reverse ID`: the compensating transfer of a finished transaction,
//! recorded in the audit trail (`--reason` required), printed step by step
//! or as one JSON object with `--json`. Rerunning it after a crash or a lost
//! answer carries on with the same reversal; once done it is refused.

use super::context::printing_observer;
use super::intervention::{begin, ReasonArgs};
use super::output::{err, out, print_json};
use crate::protocol::reverse::{
    link_of, reversal_id, ReverseOptions, ReverseReport, ReverseVerdict, REVERSED_BY,
};
use crate::protocol::trail::{
    plan_labels, ActionKind, Interface, Intervention, Outcome, TrailStep,
};
use crate::protocol::{Procedure, Protocol, TxnState};
use clap::Args;
use serde::Serialize;

/// `reverse ID`.
#[derive(Debug, Clone, Args)]
pub struct ReverseArgs {
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
            exit_code: super::exit::of_reverse(&r.verdict),
        }
    }
}

/// The intervention as previewed from the original's current state.
async fn intervention(p: &Protocol, a: &ReverseArgs) -> Intervention {
    let rev = reversal_id(&a.id);
    let mut i = Intervention::new(
        ActionKind::Reverse,
        vec![a.id.clone(), rev.clone()],
        Interface::Cli,
    );
    i.forced = a.force;
    if let Ok(Some((t, doc))) = p.read_transaction(&a.id).await {
        if let Some(by) = link_of(&doc.source, REVERSED_BY) {
            i.plan = vec![format!(
                "already reversed by {by}: finish it if unfinished, else refuse"
            )];
            return i;
        }
        if a.finish_committed && t.state == Some(TxnState::Committed) {
            i.plan.extend(
                plan_labels(Procedure::Recover, t.state.as_ref())
                    .into_iter()
                    .map(|l| format!("finish {}: {l}", a.id)),
            );
        }
        if let (Some(src), Some(dest), Some(amount)) = (&t.src, &t.dest, t.amount) {
            i.targets = vec![src.clone(), dest.clone()];
            i.plan
                .push(format!("create {rev}: {dest} -> {src}, amount {amount}"));
        }
    }
    i.plan.push(format!("link {}: reversed_by = {rev}", a.id));
    i.plan
        .extend(plan_labels(Procedure::Recover, Some(&TxnState::Created)));
    i
}

/// Runs `reverse ID`; returns the exit code.
pub async fn run(p: Protocol, a: &ReverseArgs) -> i32 {
    let i = intervention(&p, a).await;
    let rec = match begin(&p, i, &a.why).await {
        Ok(r) => r,
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
    let opts = ReverseOptions {
        finish_committed: a.finish_committed,
        force: a.force,
        ..ReverseOptions::default()
    };
    let report = p.reverse(&a.id, opts).await;
    let code = super::exit::of_reverse(&report.verdict);
    if a.json {
        match serde_json::to_value(ReverseOutput::of(&report)) {
            Ok(v) => print_json(&v),
            Err(e) => err(e),
        }
    } else {
        print_verdict(&report);
    }
    let outcome = Outcome::from(&report.verdict);
    let steps = report.steps.iter().map(TrailStep::from).collect();
    rec.finish(outcome, &report.verdict.to_string(), steps, code)
        .await
}

fn print_verdict(r: &ReverseReport) {
    let id = &r.original;
    match &r.verdict {
        ReverseVerdict::Reversed => out(format_args!("{id}: {}", r.reversed_by())),
        ReverseVerdict::Refused(why) => err(format_args!("{id}: refused: {why}")),
        ReverseVerdict::Stopped(why) => err(format_args!(
            "{id}: stopped: {why}; run `estx-tui reverse {id}` again to carry on"
        )),
        ReverseVerdict::Failed(e) => err(format_args!(
            "{id}: failed: {e}; run `estx-tui reverse {id}` again to carry on"
        )),
    }
}
