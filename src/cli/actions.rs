//! The commands that move money: `transfer`, `rollback ID`, `recover ID`
//! (a selection goes to [`super::bulk`]). Each step is printed as it ends (by the observer
//! installed in [`super::context::printing_observer`]), then the verdict:
//! successes on stdout, refusals and failures as one line on stderr. With
//! `--json`, only the outcome ([`super::outcome`]) is printed, at the end.

use super::args::{RecoverArgs, RollbackArgs, TransferArgs};
use super::context::printing_observer;
use super::exit;
use super::intervention::{begin, begin_procedure};
use super::outcome::{self, ErrorOutcome, ProcedureOutcome};
use super::output::{err, fail, out};
use super::selection::{OutcomeFormat, SelectionArgs};
use super::{bulk, dry_run};
use crate::protocol::batch::BatchOptions;
use crate::protocol::create::new_transaction_id;
use crate::protocol::trail::bulk::Selection;
use crate::protocol::trail::{plan_labels, ActionKind, Interface, Intervention};
use crate::protocol::{
    NewTransfer, Procedure, ProcedureReport, Protocol, RunLimits, TxnState, Verdict,
};

/// Prints the verdict of one procedure and returns its exit code. With
/// `batch`, every line names the transaction (many are reported together).
pub fn print_verdict(report: &ProcedureReport, batch: bool) -> i32 {
    let was = report
        .started_in
        .as_ref()
        .map(|s| format!(" (was {s})"))
        .unwrap_or_default();
    let txn = &report.txn;
    let prefix = if batch {
        format!("{txn}: ")
    } else {
        String::new()
    };
    let code = exit::of_report(report);
    match &report.verdict {
        Verdict::Completed(_) | Verdict::EndedElsewhere(_) => {
            out(format_args!("{txn}: {}{was}", report.verdict))
        }
        Verdict::NothingToDo(_) => out(format_args!("{txn}: {}", report.verdict)),
        Verdict::Refused(r) => err(format_args!("{prefix}refused: {r}")),
        Verdict::Stopped(why) => err(format_args!(
            "{txn}: stopped: {why}; the transaction is left for recovery (see `estx-tui show {txn}`)"
        )),
        Verdict::Failed(e @ crate::Error::Unreachable(_)) if code != exit::STOPPED => {
            err(format_args!("{prefix}{e} (is --url / ESTX_URL right, and the cluster up?)"))
        }
        Verdict::Failed(e) if code != exit::STOPPED => err(format_args!("{prefix}{e}")),
        Verdict::Failed(e) => err(format_args!(
            "{txn}: failed: {e}; the transaction is left where it stopped for recovery (see `estx-tui show {txn}`)"
        )),
    }
    if report.verdict.is_done() && report.lock_left_behind() {
        err(format_args!(
            "{txn}: a lock could not be released; the next `estx-tui recover --all-stuck` releases it"
        ));
    }
    if let Verdict::Failed(e) = &report.verdict {
        tracing::warn!(txn = %txn, error = %e, "procedure failed");
    }
    code
}

/// Prints one procedure's outcome, as JSON or as text; returns its exit code.
fn finish(report: &ProcedureReport, json: bool) -> i32 {
    if json {
        let row = ProcedureOutcome::from(report);
        outcome::print(&row);
        row.exit_code
    } else {
        print_verdict(report, false)
    }
}

/// [`finish`] in `format`: `ndjson` prints the outcome as one line.
fn finish_as(report: &ProcedureReport, format: OutcomeFormat) -> i32 {
    match format {
        OutcomeFormat::Ndjson => {
            let row = ProcedureOutcome::from(report);
            super::bulk_rows::Line::Transaction(&row).print();
            row.exit_code
        }
        OutcomeFormat::Json => finish(report, true),
        OutcomeFormat::Text => finish(report, false),
    }
}

/// The intervention could not start (its audit record could not be
/// written, or it was refused): the reason is on stderr; with `--json`,
/// stdout still says so.
pub(super) fn not_started(code: i32, json: bool) -> i32 {
    if json {
        outcome::print(&ErrorOutcome {
            error: "the intervention did not start (the reason is on stderr); nothing was written"
                .into(),
            exit_code: code,
        });
    }
    code
}

/// The protocol handle a command runs with: printing each step as it ends,
/// unless the outcome is printed as JSON at the end.
pub(super) fn observed(p: Protocol, json: bool, batch: bool) -> Protocol {
    if json {
        p
    } else {
        p.with_observer(printing_observer(batch))
    }
}

/// `transfer SRC DEST AMOUNT`.
pub async fn transfer(p: Protocol, a: &TransferArgs) -> i32 {
    let id = a.id.clone().unwrap_or_else(new_transaction_id);
    let req = NewTransfer {
        id: Some(id.clone()),
        src: a.src.clone(),
        dest: a.dest.clone(),
        amount: a.amount,
    };
    let mut i = Intervention::new(ActionKind::Transfer, vec![id.clone()], Interface::Cli);
    i.targets = vec![a.src.clone(), a.dest.clone()];
    i.plan = plan_labels(Procedure::Recover, Some(&TxnState::Created));
    let rec = match begin(&p, i, &a.why).await {
        Ok(r) => r,
        Err(code) => return not_started(code, a.json),
    };
    let locks = if a.locks {
        ", holding locks on both accounts"
    } else {
        ""
    };
    if !a.json {
        out(format_args!(
            "transfer {id}: {} -> {}, amount {}{locks}",
            a.src, a.dest, a.amount
        ));
    }
    let p = observed(p, a.json, false);
    let mut report = p.transfer(&req, a.locks, RunLimits::default()).await;
    // A new transfer was not anywhere before: no "(was created)" suffix.
    report.started_in = None;
    let code = finish(&report, a.json);
    rec.finish_report(&report, code).await
}

/// `rollback ID`, or of a selection ([`super::bulk`]).
pub async fn rollback(p: Protocol, a: &RollbackArgs) -> i32 {
    let Some(id) = a.id.as_ref().filter(|_| !a.select.is_bulk()) else {
        let req = bulk::Request {
            procedure: Procedure::Rollback,
            select: &a.select,
            json: a.json,
            why: &a.why,
            runner: bulk::Runner::OneByOne(usize::from(a.concurrency)),
        };
        return bulk::run(p, req).await;
    };
    if a.select.dry_run {
        return dry_run_one(p, Procedure::Rollback, id, &a.select, a.json).await;
    }
    let format = a.select.format(a.json);
    let json = format != OutcomeFormat::Text;
    let rec = match begin_procedure(&p, Procedure::Rollback, id, a.force, &a.why).await {
        Ok(r) => r,
        Err(code) => return not_started(code, json),
    };
    if !json {
        out(format_args!("rollback {id}"));
    }
    let report = observed(p, json, false).rollback(id, a.force).await;
    let code = finish_as(&report, format);
    rec.finish_report(&report, code).await
}

/// `recover ID`, or of a selection ([`super::bulk`]): in batches unless
/// `--sequential`, whatever the selection.
pub async fn recover(p: Protocol, a: &RecoverArgs) -> i32 {
    let Some(id) = a.id.as_ref().filter(|_| !a.select.is_bulk()) else {
        let default = if a.sequential { 4 } else { 1 };
        let concurrency = usize::from(a.concurrency.unwrap_or(default));
        let runner = if a.sequential {
            bulk::Runner::OneByOne(concurrency)
        } else {
            bulk::Runner::Batched(BatchOptions {
                batch_size: usize::from(a.batch_size),
                concurrency,
                ..BatchOptions::default()
            })
        };
        let req = bulk::Request {
            procedure: Procedure::Recover,
            select: &a.select,
            json: a.json,
            why: &a.why,
            runner,
        };
        return bulk::run(p, req).await;
    };
    if a.select.dry_run {
        return dry_run_one(p, Procedure::Recover, id, &a.select, a.json).await;
    }
    let format = a.select.format(a.json);
    let json = format != OutcomeFormat::Text;
    let rec = match begin_procedure(&p, Procedure::Recover, id, a.force, &a.why).await {
        Ok(r) => r,
        Err(code) => return not_started(code, json),
    };
    if !json {
        out(format_args!("recover {id}"));
    }
    let report = observed(p, json, false).recover(id, a.force).await;
    let code = finish_as(&report, format);
    rec.finish_report(&report, code).await
}

/// `rollback ID --dry-run` / `recover ID --dry-run`: the plan of one.
async fn dry_run_one(
    p: Protocol,
    procedure: Procedure,
    id: &str,
    select: &SelectionArgs,
    json: bool,
) -> i32 {
    let selection = Selection {
        ids: Some(vec![id.to_string()]),
        ..Selection::default()
    };
    match p.select(&selection, false).await {
        Ok(selected) => dry_run::run(&p, procedure, &selected, select.format(json), id).await,
        Err(e) => fail(&e),
    }
}

/// Counts of verdicts over many procedures.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Ran to a terminal state.
    pub completed: usize,
    /// Taken to a terminal state by another process meanwhile.
    pub done_elsewhere: usize,
    /// Already terminal.
    pub nothing_to_do: usize,
    /// Refused before changing anything.
    pub refused: usize,
    /// Stopped on purpose.
    pub stopped: usize,
    /// Failed.
    pub failed: usize,
}

impl Tally {
    /// Counts the verdicts of `reports`.
    pub fn of(reports: &[ProcedureReport]) -> Tally {
        let mut t = Tally::default();
        for r in reports {
            match r.verdict {
                Verdict::Completed(_) => t.completed += 1,
                Verdict::EndedElsewhere(_) => t.done_elsewhere += 1,
                Verdict::NothingToDo(_) => t.nothing_to_do += 1,
                Verdict::Refused(_) => t.refused += 1,
                Verdict::Stopped(_) => t.stopped += 1,
                Verdict::Failed(_) => t.failed += 1,
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} completed, {} done by another process, {} nothing to do, {} refused, {} stopped, {} failed",
            self.completed, self.done_elsewhere, self.nothing_to_do, self.refused, self.stopped, self.failed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Refusal, TxnState};

    fn report(v: Verdict) -> ProcedureReport {
        let mut r = ProcedureReport::new("t");
        r.verdict = v;
        r
    }

    #[test]
    fn tally_counts_each_verdict() {
        let t = Tally::of(&[
            report(Verdict::Completed(TxnState::Finished)),
            report(Verdict::Completed(TxnState::RolledBack)),
            report(Verdict::EndedElsewhere(TxnState::Finished)),
            report(Verdict::Refused(Refusal::Committed)),
        ]);
        assert_eq!(
            t.to_string(),
            "2 completed, 1 done by another process, 0 nothing to do, 1 refused, 0 stopped, 0 failed"
        );
    }
}
