//! The commands that move money: `transfer`, `rollback ID`, `recover ID`
//! (a selection goes to [`super::bulk`]). Each step is printed as it ends (by the observer
//! installed in [`super::context::printing_observer`]), then the verdict:
//! successes on stdout, refusals and failures as one line on stderr. With
//! `--json`, only the outcome ([`super::outcome`]) is printed, at the end.

use super::args::{RecoverArgs, RollbackArgs, TransferArgs};
use super::context::printing_observer;
use super::exit;
use super::intervention::ReasonArgs;
use super::intervention::{recorded, start};
use super::outcome::{self, ErrorOutcome, ProcedureOutcome};
use super::output::{err, fail, out};
use super::selection::{OutcomeFormat, SelectionArgs};
use super::{bulk, dry_run};
use crate::protocol::batch::BatchOptions;
use crate::protocol::create::new_transaction_id;
use crate::protocol::intervene::{Act, Runner, Value};
use crate::protocol::trail::bulk::Selection;
use crate::protocol::{NewTransfer, Procedure, ProcedureReport, Protocol, Verdict};

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
    let act = Act::Transfer {
        transfer: req,
        locks: a.locks,
    };
    let started = match start(&p, act, false, &a.why).await {
        Ok(s) => s,
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
    let index = started.index().to_string();
    let mut done = started.run(&observed(p, a.json, false)).await;
    let Value::Procedure(report) = &mut done.value else {
        return exit::DONE;
    };
    // A new transfer was not anywhere before: no "(was created)" suffix.
    report.started_in = None;
    let code = finish(report, a.json);
    recorded(&done, &index, code)
}

/// `rollback ID`, or of a selection ([`super::bulk`]).
pub async fn rollback(p: Protocol, a: &RollbackArgs) -> i32 {
    let Some(id) = a.id.as_ref().filter(|_| !a.select.is_bulk()) else {
        let req = bulk::Request {
            procedure: Procedure::Rollback,
            select: &a.select,
            json: a.json,
            why: &a.why,
            runner: Runner::OneByOne(usize::from(a.concurrency)),
        };
        return bulk::run(p, req).await;
    };
    if a.select.dry_run {
        return dry_run_one(p, Procedure::Rollback, id, &a.select, a.json).await;
    }
    let format = a.select.format(a.json);
    one(p, Act::Rollback(id.clone()), a.force, &a.why, format).await
}

/// `recover ID`, or of a selection ([`super::bulk`]): in batches unless
/// `--sequential`, whatever the selection.
pub async fn recover(p: Protocol, a: &RecoverArgs) -> i32 {
    let Some(id) = a.id.as_ref().filter(|_| !a.select.is_bulk()) else {
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
    one(p, Act::Recover(id.clone()), a.force, &a.why, format).await
}

/// `rollback ID` / `recover ID`: starts the act (its record written), says
/// so, runs it printing each step, prints the verdict.
async fn one(p: Protocol, act: Act, force: bool, why: &ReasonArgs, format: OutcomeFormat) -> i32 {
    let json = format != OutcomeFormat::Text;
    let started = match start(&p, act, force, why).await {
        Ok(s) => s,
        Err(code) => return not_started(code, json),
    };
    if !json {
        let (verb, id) = match &started.intervention().act {
            Act::Rollback(id) => ("rollback", id),
            Act::Recover(id) => ("recover", id),
            _ => ("act on", &String::new()),
        };
        out(format_args!("{verb} {id}"));
    }
    let index = started.index().to_string();
    let done = started.run(&observed(p, json, false)).await;
    let code = match &done.value {
        Value::Procedure(report) => finish_as(report, format),
        _ => exit::DONE,
    };
    recorded(&done, &index, code)
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
