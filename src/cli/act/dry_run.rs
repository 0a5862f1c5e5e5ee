//! `rollback`/`recover --dry-run`: reads each selected transaction with its
//! accounts, decides with the same pure decisions the procedures execute
//! (the act's [`Plan`], [`Protocol::check_actionable`]),
//! and prints the plan per transaction and the counts, writing nothing
//! (not even an audit record).

use crate::cli::exit;
use crate::cli::output::bulk::{
    BalanceChange, DryRunOutcome, LeftOutRow, Line, PlanRow, PlanSummary, PlannedStep,
};
use crate::cli::output::{err, fail, out, plural};
use crate::cli::selection::OutcomeFormat;
use crate::protocol::executor::Outcome;
use crate::protocol::intervene::{Act, Intervention, Plan, Refusal};
use crate::protocol::report::RELEASE_LOCK;
use crate::protocol::time::human_age;
use crate::protocol::trail::bulk::Selected;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Procedure, Protocol};
use futures::StreamExt;

/// Transactions read at once for the plan.
const READ_CONCURRENCY: usize = 8;

/// Plans the bulk act `i` (its selection resolved by the protocol's
/// [`Plan`]) and prints the plan of each selected transaction; `Err` when
/// the selection could not be read (nothing printed).
pub async fn plan_and_print(
    p: &Protocol,
    i: &Intervention,
    format: OutcomeFormat,
    what: &str,
) -> crate::error::Result<i32> {
    let Act::Bulk(act) = &i.act else {
        return Ok(exit::DONE);
    };
    Ok(match i.plan(p).await? {
        Plan {
            selected: Some(selected),
            ..
        } => run(p, act.procedure, &selected, format, what).await,
        _ => exit::DONE,
    })
}

/// Prints the plan of `procedure` over `selected`; returns 0, 1 when any
/// item would be refused, or the error's code when reading failed.
pub async fn run(
    p: &Protocol,
    procedure: Procedure,
    selected: &Selected,
    format: OutcomeFormat,
    what: &str,
) -> i32 {
    let action = action_name(procedure);
    p.sync_clock().await;
    let details: Vec<_> = futures::stream::iter(selected.ids())
        .map(|id| async move { (id.clone(), p.transaction_detail(&id).await) })
        .buffered(READ_CONCURRENCY)
        .collect()
        .await;
    let mut left_out: Vec<LeftOutRow> = selected
        .left_out
        .iter()
        .map(|l| LeftOutRow::new(&l.txn, &l.why))
        .collect();
    let mut rows = Vec::new();
    for (id, d) in details {
        match d {
            Ok(Some(d)) => rows.push(plan_row(p, procedure, &d)),
            // Gone since the selection read it.
            Ok(None) => left_out.push(LeftOutRow::new(&id, "no longer exists")),
            Err(e) => return fail(&e),
        }
    }
    let summary = summarise(action, &rows, &left_out);
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
        OutcomeFormat::Text => print_text(&rows, &left_out, &summary, what),
    }
    summary.exit_code
}

/// `rollback` or `recover`.
pub fn action_name(procedure: Procedure) -> &'static str {
    match procedure {
        Procedure::Rollback => "rollback",
        Procedure::Recover => "recover",
    }
}

/// The plan of one transaction, decided as the procedure would: terminal
/// is nothing to do, then the checks before any write (state known, well
/// formed, outside the recovery window), then the act's own [`Plan`].
fn plan_row(p: &Protocol, procedure: Procedure, d: &TransactionDetail) -> PlanRow {
    let preview = d.preview(procedure);
    let plan = Plan::of_detail(procedure, d);
    let ix = &p.config().indices;
    let txn = &d.txn;
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
        exit_code: exit::DONE,
    };
    let refusal = match p.check_actionable(txn, false) {
        Ok(None) => return row,
        Err(r) => Some(Refusal::Protocol(r)),
        Ok(Some(_)) => plan.refusal.clone(),
    };
    if let Some(r) = refusal {
        row.would = "refused";
        row.refusal = Some(r.to_string());
        row.refusal_kind = Some(r.kind());
        row.exit_code = exit::REFUSED;
        return row;
    }
    if preview.steps.is_empty() {
        return row;
    }
    row.would = match procedure {
        Procedure::Rollback => "roll_back",
        Procedure::Recover => "recover",
    };
    row.ends_in = preview.ends_in.as_ref().map(|s| s.as_str().to_string());
    let src = txn.src.clone().unwrap_or_default();
    let dest = txn.dest.clone().unwrap_or_default();
    row.steps = preview
        .steps
        .iter()
        .map(|s| {
            let target = match s.step.on_source() {
                Some(true) => format!("{}/{src}", ix.accounts),
                Some(false) => format!("{}/{dest}", ix.accounts),
                None => format!("{}/{}", ix.transactions, txn.id),
            };
            let (result, detail) = match &s.outcome {
                Outcome::Updated(e) => ("write", e.to_string()),
                Outcome::Noop(n) => ("noop", n.to_string()),
            };
            PlannedStep {
                label: s.step.label().to_string(),
                target,
                result,
                detail,
            }
        })
        .collect();
    row.steps
        .extend(plan.lock_releases.iter().map(|r| PlannedStep {
            label: RELEASE_LOCK.to_string(),
            target: format!("{}/{r}", ix.locks),
            result: "write",
            detail: "lock released".to_string(),
        }));
    row.balance_changes = plan
        .balance_change
        .into_iter()
        .map(|(account, delta)| BalanceChange { account, delta })
        .collect();
    row
}

fn summarise(action: &'static str, rows: &[PlanRow], left_out: &[LeftOutRow]) -> PlanSummary {
    let mut s = PlanSummary {
        action,
        selected: rows.len(),
        left_out: left_out.len(),
        ..PlanSummary::default()
    };
    for r in rows {
        match r.would {
            "refused" => {
                let kind = r.refusal_kind.clone().unwrap_or_default();
                *s.refused.entry(kind).or_default() += 1;
            }
            "nothing_to_do" => s.nothing_to_do += 1,
            _ => s.would_run += 1,
        }
        for c in &r.balance_changes {
            *s.balance_effect.entry(c.account.clone()).or_default() += c.delta;
            s.net_balance_effect += c.delta;
        }
    }
    s.balance_effect.retain(|_, d| *d != 0);
    s.exit_code = exit::worst(
        rows.iter()
            .map(|r| r.exit_code)
            .chain(left_out.iter().map(|l| l.exit_code)),
    );
    s
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
            }
        }
    }
    for l in left_out {
        err(format_args!("{}: refused: {}", l.txn, l.verdict.message));
    }
    let verb = if s.action == "rollback" {
        "roll back"
    } else {
        "recover"
    };
    let mut parts = vec![format!("{} {verb}", s.would_run)];
    if s.nothing_to_do > 0 {
        parts.push(format!("{} nothing to do", s.nothing_to_do));
    }
    for (kind, n) in &s.refused {
        parts.push(format!("{n} refused: {kind}"));
    }
    if s.left_out > 0 {
        parts.push(format!("{} not selected or unknown", s.left_out));
    }
    out(format_args!(
        "{}; net balance effect {:+} over {}",
        parts.join(", "),
        s.net_balance_effect,
        plural(s.balance_effect.len(), "account")
    ));
}
