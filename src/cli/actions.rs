//! The commands that move money: `transfer`, `rollback`, `recover ID` and
//! `recover --all-stuck`. Each step is printed as it ends (by the observer
//! installed in [`super::context::printing_observer`]), then the verdict:
//! successes on stdout, refusals and failures as one line on stderr. With
//! `--json`, only the outcome ([`super::outcome`]) is printed, at the end.

use super::args::{RecoverArgs, RollbackArgs, TransferArgs};
use super::context::printing_observer;
use super::exit;
use super::intervention::{self, begin, begin_procedure};
use super::outcome::{self, ErrorOutcome, LockOutcome, ProcedureOutcome, RecoverAllOutcome};
use super::output::{err, fail, out, plural};
use crate::protocol::batch::BatchOptions;
use crate::protocol::create::new_transaction_id;
use crate::protocol::lock_release::SweptLock;
use crate::protocol::stuck::Pace;
use crate::protocol::trail::{
    plan_labels, ActionKind, Interface, Intervention, Outcome, TrailStep,
};
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

/// The intervention could not start (its audit record could not be
/// written, or it was refused): the reason is on stderr; with `--json`,
/// stdout still says so.
fn not_started(code: i32, json: bool) -> i32 {
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
fn observed(p: Protocol, json: bool, batch: bool) -> Protocol {
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

/// `rollback ID`.
pub async fn rollback(p: Protocol, a: &RollbackArgs) -> i32 {
    let rec = match begin_procedure(&p, Procedure::Rollback, &a.id, a.force, &a.why).await {
        Ok(r) => r,
        Err(code) => return not_started(code, a.json),
    };
    if !a.json {
        out(format_args!("rollback {}", a.id));
    }
    let report = observed(p, a.json, false).rollback(&a.id, a.force).await;
    let code = finish(&report, a.json);
    rec.finish_report(&report, code).await
}

/// `recover ID` or `recover --all-stuck`.
pub async fn recover(p: Protocol, a: &RecoverArgs) -> i32 {
    match (&a.id, a.all_stuck) {
        (Some(id), false) => {
            let rec = match begin_procedure(&p, Procedure::Recover, id, a.force, &a.why).await {
                Ok(r) => r,
                Err(code) => return not_started(code, a.json),
            };
            if !a.json {
                out(format_args!("recover {id}"));
            }
            let report = observed(p, a.json, false).recover(id, a.force).await;
            let code = finish(&report, a.json);
            rec.finish_report(&report, code).await
        }
        _ => {
            let default = if a.sequential { 4 } else { 1 };
            let concurrency = usize::from(a.concurrency.unwrap_or(default));
            let batch = (!a.sequential).then(|| BatchOptions {
                batch_size: usize::from(a.batch_size),
                concurrency,
                ..BatchOptions::default()
            });
            recover_all(p, concurrency, batch, a.allow_partial, a.json, &a.why).await
        }
    }
}

/// Counts of verdicts over many procedures.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
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

/// `recover --all-stuck`: every stuck transaction, in batches (`batch`) or
/// one at a time per worker, `concurrency` at a time, then every lock whose
/// owner is terminal or missing; recorded in the audit trail as one bulk
/// intervention.
async fn recover_all(
    p: Protocol,
    concurrency: usize,
    batch: Option<BatchOptions>,
    allow_partial: bool,
    json: bool,
    why: &intervention::ReasonArgs,
) -> i32 {
    let failed = |e: &crate::Error| {
        if json {
            outcome::print(&ErrorOutcome::from(e));
        }
        fail(e)
    };
    let stuck = match p.stuck().await.and_then(|l| {
        l.summary
            .coverage
            .require_complete(allow_partial, "recover every stuck transaction")
            .map(|()| l.transactions)
    }) {
        Ok(t) => t,
        Err(e) => return failed(&e),
    };
    let ids = stuck.iter().map(|t| t.id.clone()).collect();
    let mut i = Intervention::new(ActionKind::Recover, ids, Interface::Cli);
    i.bulk = true;
    i.plan = stuck
        .iter()
        .map(|t| {
            let steps = plan_labels(Procedure::Recover, t.state.as_ref()).join(", ");
            format!("{}: {steps}", t.id)
        })
        .chain(["release the locks of terminal or missing owners".to_string()])
        .collect();
    i.targets = vec!["--all-stuck".into()];
    let rec = match begin(&p, i, why).await {
        Ok(r) => r,
        Err(code) => return not_started(code, json),
    };
    let p = observed(p, json, true);
    let window = p.config().recovery_window;
    let window_text = crate::protocol::time::human_age(window.as_secs() as i64);
    let pace = match batch {
        Some(opts) => {
            if !json {
                out(format_args!(
                    "recovering every transaction stuck for over {window_text}, in batches of {}, {concurrency} at a time",
                    opts.batch_size
                ));
            }
            Pace::Batched(opts)
        }
        None => {
            if !json {
                out(format_args!(
                    "recovering every transaction stuck for over {window_text}, {concurrency} at a time"
                ));
            }
            Pace::OneAtATime { concurrency }
        }
    };
    let (mut reports, locks) = match p.recover_all_stuck_with(pace, allow_partial).await {
        Ok(r) => (r.reports, r.locks),
        Err(e) => {
            let code = failed(&e);
            let summary = format!("failed: {e}");
            return rec.finish(Outcome::Failed, &summary, vec![], code).await;
        }
    };
    reports.sort_by(|a, b| a.txn.cmp(&b.txn));
    let (swept, locks_partial) = match locks {
        Ok(s) => (s.swept, s.coverage.describe()),
        Err(e) => {
            let code = failed(&e);
            let summary = format!("recovered {}, then failed: {e}", reports.len());
            let steps = trail_steps(&p, &reports, &[]);
            return rec.finish(Outcome::Failed, &summary, steps, code).await;
        }
    };
    let locks: Vec<LockOutcome> = swept.iter().map(LockOutcome::from).collect();
    let code = exit::worst(
        reports
            .iter()
            .map(exit::of_report)
            .chain(locks.iter().map(LockOutcome::exit_code)),
    );
    let partial_note = locks_partial
        .as_ref()
        .map(|d| format!(" (locks listing {d})"))
        .unwrap_or_default();
    let summary = format!(
        "{}: {}; {} whose owner is terminal or missing released{partial_note}",
        plural(reports.len(), "stuck transaction"),
        Tally::of(&reports),
        plural(
            swept
                .iter()
                .filter(|s| s.outcome == crate::protocol::locks::ReleaseOutcome::Released)
                .count(),
            "lock"
        )
    );
    let steps = trail_steps(&p, &reports, &swept);
    let outcome = match intervention::worst(reports.iter().map(|r| &r.verdict)) {
        Outcome::NothingToDo if !swept.is_empty() => Outcome::Completed,
        o => o,
    };
    if json {
        outcome::print(&RecoverAllOutcome {
            recovery_window_seconds: window.as_secs_f64(),
            transactions: reports.iter().map(ProcedureOutcome::from).collect(),
            released_locks: locks,
            locks_listing_partial: locks_partial.clone(),
            exit_code: code,
        });
        return rec.finish(outcome, &summary, steps, code).await;
    }
    if reports.is_empty() {
        out("no stuck transactions: nothing to do");
    } else {
        out("");
        for r in &reports {
            print_verdict(r, true);
        }
        out("");
        out(format_args!(
            "{}: {}",
            plural(reports.len(), "stuck transaction"),
            Tally::of(&reports)
        ));
    }
    print_swept(&swept);
    if let Some(d) = &locks_partial {
        err(format_args!(
            "the locks listing was {d}: some abandoned locks may remain"
        ));
    }
    rec.finish(outcome, &summary, steps, code).await
}

/// The audit-trail steps of `recover --all-stuck`: every procedure's steps,
/// then each lock the sweep released (or was refused).
fn trail_steps(p: &Protocol, reports: &[ProcedureReport], swept: &[SweptLock]) -> Vec<TrailStep> {
    let locks = &p.config().indices.locks;
    reports
        .iter()
        .flat_map(|r| r.steps.iter().map(TrailStep::from))
        .chain(swept.iter().map(|s| {
            let owner = s.view.info.owner.clone().unwrap_or_default();
            TrailStep::release(locks, &owner, &s.view.info.resource, &s.outcome)
        }))
        .collect()
}

/// The text lines of the abandoned-lock sweep.
fn print_swept(swept: &[SweptLock]) {
    if swept.is_empty() {
        return;
    }
    for s in swept {
        let owner = match (&s.view.info.owner, &s.view.owner_state) {
            (Some(o), Some(st)) => format!("owner `{o}` is {st}"),
            (Some(o), None) => format!("owner `{o}` does not exist"),
            _ => "no owner".into(),
        };
        match &s.outcome {
            crate::protocol::locks::ReleaseOutcome::Refused(why) => err(format_args!(
                "lock `{}` ({owner}) not released: {why}",
                s.view.info.resource
            )),
            o => out(format_args!(
                "lock `{}` ({owner}): {}",
                s.view.info.resource,
                if *o == crate::protocol::locks::ReleaseOutcome::Released {
                    "released"
                } else {
                    "not held"
                }
            )),
        }
    }
    let released = swept
        .iter()
        .filter(|s| s.outcome == crate::protocol::locks::ReleaseOutcome::Released)
        .count();
    out(format_args!(
        "{} whose owner is terminal or missing: {released} released",
        plural(swept.len(), "lock")
    ));
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
