//! `rollback`/`recover --dry-run`: prints the bulk act's preview from the
//! protocol (its selection resolved, each selected transaction re-read with
//! its accounts and planned by the same pure decisions the procedures
//! execute, [`TxnPlan::on_transaction`]; the plan the dashboard's bulk dialog
//! shows), per transaction and counted, writing nothing (not even an audit
//! record).

use super::dry_summary::{counts_line, sweep_lines};
use crate::cli::exit;
use crate::cli::output::bulk::{
    BalanceChange, DryRunOutcome, LeftOutRow, Line, PlanRow, PlanSummary, PlannedStep, SweepPlan,
    SweptRow,
};
use crate::cli::output::{err, out, plural};
use crate::cli::selection::OutcomeFormat;
use crate::protocol::intervene::{
    self, BulkAct, Intervention, ItemPlan, PlanStep, Previewed, SelectionPlan, StepEffect,
    StepTarget, TxnPlan, Verdicts, Would, SWEEP_STEP,
};
use crate::protocol::report::RELEASE_LOCK;
use crate::protocol::time::human_age;
use crate::protocol::{Procedure, Protocol};
use std::path::{Path, PathBuf};

/// Plans the bulk act `i` as previewed ([`Intervention::preview`]: its
/// selection resolved, each selected transaction re-read and planned, the
/// same plan the dashboard's bulk dialog shows) and prints the plan of each
/// selected transaction; `Err` when the selection or a transaction could
/// not be read (nothing printed).
pub async fn plan_and_print(
    p: &Protocol,
    i: &Intervention<BulkAct>,
    format: OutcomeFormat,
    what: &str,
    summary: Option<Option<PathBuf>>,
    plan_out: Option<&Path>,
) -> crate::error::Result<i32> {
    let preview = i.preview(p).await?;
    if let Some(path) = plan_out {
        write_plan(p, &preview.plan, path).await?;
    }
    Ok(print_plans(p, &preview, format, what, summary))
}

/// Writes the plan file of the previewed `plan` to `path`
/// ([`intervene::plan_file`]) and says so on stderr.
async fn write_plan(p: &Protocol, plan: &SelectionPlan, path: &Path) -> crate::error::Result<()> {
    let file = intervene::plan_file(p, plan).await?;
    std::fs::write(path, file.to_text()).map_err(|e| {
        crate::error::Error::Invalid(format!("cannot write the plan to {}: {e}", path.display()))
    })?;
    err(format_args!(
        "plan written to {} ({}, {} to run); apply it with `estx-tui apply {} --reason TEXT`",
        path.display(),
        file.hash,
        plural(file.body.runs().count(), "transaction"),
        path.display()
    ));
    Ok(())
}

/// Prints the previewed plan of its procedure over its selection; returns
/// 0, or 1 when any item would be refused.
fn print_plans(
    p: &Protocol,
    Previewed {
        plan,
        writes_refused,
    }: &Previewed<SelectionPlan>,
    format: OutcomeFormat,
    what: &str,
    summary_to: Option<Option<PathBuf>>,
) -> i32 {
    let procedure = plan.procedure;
    let action = procedure;
    let verdicts = plan.verdicts();
    let left_out: Vec<LeftOutRow> = verdicts.left_out.iter().map(LeftOutRow::of).collect();
    let rows: Vec<PlanRow> = plan.items.iter().map(|item| plan_row(p, item)).collect();
    let mut summary = summarise(action, &verdicts, &rows, &left_out);
    summary.no_locks_index = plan.locks_absent.then(|| p.config().indices.locks.clone());
    if let Some(e) = writes_refused {
        summary.writes_refused = Some(e.to_string());
        summary.exit_code = exit::worst([summary.exit_code, exit::REFUSED]);
    }
    summary.sweep = plan.sweeps.then(|| SweepPlan {
        step: SWEEP_STEP,
        locks: plan
            .sweep
            .iter()
            .map(|l| SweptRow {
                resource: l.info.resource.clone(),
                holder: l.info.holder_label(),
                judged: l.staleness.to_string(),
            })
            .collect(),
    });
    match format {
        OutcomeFormat::Json => crate::cli::output::outcome::print(&DryRunOutcome {
            plan: rows,
            left_out,
            summary: summary.clone(),
        }),
        OutcomeFormat::Ndjson => {
            for l in &left_out {
                Line::LeftOut(l).print();
            }
            for r in &rows {
                Line::Plan(r).print();
            }
            Line::PlanSummary(&summary).print();
        }
        OutcomeFormat::Text => match summary_to {
            Some(to) => super::dry_summary::print(&rows, &left_out, &summary, what, to.as_deref()),
            None => print_text(&rows, &left_out, &summary, what),
        },
    }
    summary.exit_code
}

/// The row of one transaction, from its plan in the bulk preview (decided
/// as the one builder orders them, [`ItemPlan::would`]): its steps with the
/// document each acts on, its end state and its balance change.
fn plan_row(p: &Protocol, plan: &TxnPlan) -> PlanRow {
    let txn = &plan.detail.txn;
    let mut row = PlanRow {
        txn: txn.id.clone(),
        state: txn.state.as_ref().map(|s| s.as_str().to_string()),
        age_seconds: txn.age_seconds(p.cluster().now()),
        would: "nothing_to_do",
        refusal: None,
        refusal_kind: None,
        steps: Vec::new(),
        ends_in: txn.state.as_ref().map(|s| s.as_str().to_string()),
        balance_changes: Vec::new(),
        balance_in_words: None,
        exit_code: exit::DONE,
    };
    match plan.would() {
        Would::Refused(r) => {
            row.would = "refused";
            row.refusal = Some(r.to_string());
            row.refusal_kind = Some(r.kind().to_string());
            row.exit_code = exit::REFUSED;
            return row;
        }
        Would::NothingToDo => return row,
        Would::Run => {}
    }
    row.would = match plan.procedure {
        Procedure::Rollback => "roll_back",
        Procedure::Recover => "recover",
    };
    row.ends_in = plan.ends_in.as_ref().map(|s| s.as_str().to_string());
    row.steps = plan
        .steps_in_full()
        .map(|(step, effect)| planned_step(p, step, effect))
        .collect();
    row.balance_changes = plan
        .balance_change
        .iter()
        .map(|(account, delta)| BalanceChange {
            account: account.clone(),
            delta: *delta,
        })
        .collect();
    row.balance_in_words = plan.in_words.as_ref().map(ToString::to_string);
    row
}

/// One step as the dry run prints it: its label, `index/id` of the document
/// it acts on, `write` or `noop`, and what it would write or why not.
fn planned_step(p: &Protocol, step: &PlanStep, e: &StepEffect) -> PlannedStep {
    let ix = &p.config().indices;
    let target = match &e.target {
        StepTarget::Transaction(id) => format!("{}/{id}", ix.transactions),
        StepTarget::Account(id) => format!("{}/{id}", ix.accounts),
        StepTarget::Lock(resource) => format!("{}/{resource}", ix.locks),
    };
    let label = match step {
        PlanStep::Protocol { step, .. } => step.label(),
        _ => RELEASE_LOCK,
    };
    PlannedStep {
        label: label.to_string(),
        target,
        result: if step.writes() { "write" } else { "noop" },
        detail: e.effect.clone(),
    }
}

/// The counts, from the plan's [`Verdicts`] (what the dashboard's bulk
/// dialog counts too).
fn summarise(
    action: Procedure,
    v: &Verdicts,
    rows: &[PlanRow],
    left_out: &[LeftOutRow],
) -> PlanSummary {
    let net_balance_effect = v.balance_effect.values().sum();
    PlanSummary {
        action,
        selected: rows.len(),
        would_run: v.run.len(),
        nothing_to_do: v.nothing_to_do.len(),
        refused: v
            .refused
            .iter()
            .map(|(k, ids)| (k.to_string(), ids.len()))
            .collect(),
        left_out: left_out.len(),
        net_balance_effect,
        balance_effect: v.balance_effect.clone(),
        lock_releases: v.lock_releases.clone(),
        sweep: None,
        no_locks_index: None,
        writes_refused: None,
        exit_code: exit::worst(
            rows.iter()
                .map(|r| r.exit_code)
                .chain(left_out.iter().map(|l| l.exit_code)),
        ),
    }
}

fn print_text(rows: &[PlanRow], left_out: &[LeftOutRow], s: &PlanSummary, what: &str) {
    out(format_args!(
        "dry run: {} of {} selected by {what}; nothing is written",
        s.action,
        plural(rows.len(), "transaction")
    ));
    for r in rows {
        let state = r.state.as_deref().unwrap_or("no state");
        let age = r
            .age_seconds
            .map_or("undated".to_string(), |a| format!("{} ago", human_age(a)));
        let head = format!("{}  {state}, modified {age}", r.txn);
        match r.would {
            "refused" => out(format_args!(
                "{head}: refused: {}",
                r.refusal.as_deref().unwrap_or_default()
            )),
            "nothing_to_do" => out(format_args!("{head}: nothing to do")),
            would => {
                let effect = r
                    .balance_changes
                    .iter()
                    .map(|c| format!("{} {:+}", c.account, c.delta))
                    .collect::<Vec<_>>()
                    .join(", ");
                let effect = if effect.is_empty() {
                    "no balance change".to_string()
                } else {
                    effect
                };
                out(format_args!(
                    "{head}: {} in {}, ends {} ({effect})",
                    would.replace('_', " "),
                    plural(r.steps.len(), "step"),
                    r.ends_in.as_deref().unwrap_or("?")
                ));
                for (n, step) in r.steps.iter().enumerate() {
                    out(format_args!(
                        "    {}. {} on {}: {} ({})",
                        n + 1,
                        step.label,
                        step.target,
                        step.result,
                        step.detail
                    ));
                }
                if let Some(words) = &r.balance_in_words {
                    out(format_args!("    balance: {words}"));
                }
            }
        }
    }
    sweep_lines(s);
    for l in left_out {
        err(format_args!("{}: refused: {}", l.txn, l.verdict.message));
    }
    counts_line(s);
}
