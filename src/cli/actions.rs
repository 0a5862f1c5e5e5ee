//! The commands that move money: `transfer`, `rollback`, `recover ID` and
//! `recover --all-stuck`. Each step is printed as it ends (by the observer
//! installed in [`super::context::printing_observer`]), then the verdict:
//! successes on stdout, refusals and failures as one line on stderr.

use super::args::{RecoverArgs, RollbackArgs, TransferArgs};
use super::context::printing_observer;
use super::intervention::{self, begin, begin_procedure};
use super::output::{err, fail, out, plural};
use crate::protocol::batch::BatchOptions;
use crate::protocol::create::new_transaction_id;
use crate::protocol::trail::{plan_labels, ActionKind, Interface, Intervention, Outcome};
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
    match &report.verdict {
        Verdict::Completed(_) => out(format_args!("{txn}: {}{was}", report.verdict)),
        Verdict::NothingToDo(_) => out(format_args!("{txn}: {}", report.verdict)),
        Verdict::Refused(r) => err(format_args!("{prefix}refused: {r}")),
        Verdict::Stopped(why) => err(format_args!(
            "{txn}: stopped: {why}; the transaction is left as it is (see `estx-tui show {txn}`)"
        )),
        Verdict::Failed(e @ crate::Error::Unreachable(_)) if report.steps.is_empty() => {
            err(format_args!("{prefix}{e} (is --url / ESTX_URL right, and the cluster up?)"))
        }
        Verdict::Failed(e) if report.steps.is_empty() => err(format_args!("{prefix}{e}")),
        Verdict::Failed(e) => err(format_args!(
            "{txn}: failed: {e}; the transaction is left where it stopped for recovery (see `estx-tui show {txn}`)"
        )),
    }
    if let Verdict::Failed(e) = &report.verdict {
        tracing::warn!(txn = %txn, error = %e, "procedure failed");
    }
    report.verdict.exit_code()
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
        Err(code) => return code,
    };
    let locks = if a.locks {
        ", holding locks on both accounts"
    } else {
        ""
    };
    out(format_args!(
        "transfer {id}: {} -> {}, amount {}{locks}",
        a.src, a.dest, a.amount
    ));
    let p = p.with_observer(printing_observer(false));
    let mut report = p.transfer(&req, a.locks, RunLimits::default()).await;
    // A new transfer was not anywhere before: no "(was created)" suffix.
    report.started_in = None;
    let code = print_verdict(&report, false);
    rec.finish_report(&report, code).await
}

/// `rollback ID`.
pub async fn rollback(p: Protocol, a: &RollbackArgs) -> i32 {
    let rec = match begin_procedure(&p, Procedure::Rollback, &a.id, a.force, &a.why).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    out(format_args!("rollback {}", a.id));
    let p = p.with_observer(printing_observer(false));
    let report = p.rollback(&a.id, a.force).await;
    let code = print_verdict(&report, false);
    rec.finish_report(&report, code).await
}

/// `recover ID` or `recover --all-stuck`.
pub async fn recover(p: Protocol, a: &RecoverArgs) -> i32 {
    match (&a.id, a.all_stuck) {
        (Some(id), false) => {
            let rec = match begin_procedure(&p, Procedure::Recover, id, a.force, &a.why).await {
                Ok(r) => r,
                Err(code) => return code,
            };
            out(format_args!("recover {id}"));
            let p = p.with_observer(printing_observer(false));
            let report = p.recover(id, a.force).await;
            let code = print_verdict(&report, false);
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
            recover_all(p, concurrency, batch, a.allow_partial, &a.why).await
        }
    }
}

/// Counts of verdicts over many procedures.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Ran to a terminal state.
    pub completed: usize,
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
            "{} completed, {} nothing to do, {} refused, {} stopped, {} failed",
            self.completed, self.nothing_to_do, self.refused, self.stopped, self.failed
        )
    }
}

/// Exit code over many procedures: the worst one (3 beats 1 beats 0).
pub fn combined_exit_code(reports: &[ProcedureReport]) -> i32 {
    reports
        .iter()
        .map(|r| r.verdict.exit_code())
        .max()
        .unwrap_or(0)
}

/// `recover --all-stuck`: every stuck transaction, in batches (`batch`) or
/// one at a time per worker, `concurrency` at a time.
async fn recover_all(
    p: Protocol,
    concurrency: usize,
    batch: Option<BatchOptions>,
    allow_partial: bool,
    why: &intervention::ReasonArgs,
) -> i32 {
    let stuck = match p.stuck().await.and_then(|l| {
        l.summary
            .coverage
            .require_complete(allow_partial, "recover every stuck transaction")
            .map(|()| l.transactions)
    }) {
        Ok(t) => t,
        Err(e) => return fail(&e),
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
        .collect();
    i.targets = vec!["--all-stuck".into()];
    let rec = match begin(&p, i, why).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let p = p.with_observer(printing_observer(true));
    let window = p.config().recovery_window.as_secs();
    let found = match batch {
        Some(opts) => {
            out(format_args!(
                "recovering every transaction stuck for over {window}s, in batches of {}, {concurrency} at a time",
                opts.batch_size
            ));
            p.recover_all_stuck_batched(opts, allow_partial).await
        }
        None => {
            out(format_args!(
                "recovering every transaction stuck for over {window}s, {concurrency} at a time"
            ));
            p.recover_all_stuck_allowing(concurrency, allow_partial)
                .await
        }
    };
    let mut reports = match found {
        Ok(r) => r,
        Err(e) => {
            let code = fail(&e);
            let summary = format!("failed: {e}");
            return rec.finish(Outcome::Failed, &summary, vec![], code).await;
        }
    };
    if reports.is_empty() {
        out("no stuck transactions: nothing to do");
        return rec.finish_batch(&reports, "no stuck transactions", 0).await;
    }
    reports.sort_by(|a, b| a.txn.cmp(&b.txn));
    out("");
    for r in &reports {
        print_verdict(r, true);
    }
    out("");
    let summary = format!(
        "{}: {}",
        plural(reports.len(), "stuck transaction"),
        Tally::of(&reports)
    );
    out(&summary);
    let code = combined_exit_code(&reports);
    rec.finish_batch(&reports, &summary, code).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::protocol::{Refusal, TxnState};

    fn report(v: Verdict) -> ProcedureReport {
        let mut r = ProcedureReport::new("t");
        r.verdict = v;
        r
    }

    #[test]
    fn worst_exit_code_wins() {
        let done = || report(Verdict::Completed(TxnState::Finished));
        assert_eq!(combined_exit_code(&[]), 0);
        assert_eq!(
            combined_exit_code(&[done(), report(Verdict::NothingToDo(TxnState::Finished))]),
            0
        );
        assert_eq!(
            combined_exit_code(&[done(), report(Verdict::Refused(Refusal::Committed))]),
            1
        );
        let unreachable = report(Verdict::Failed(Error::Unreachable("x".into())));
        assert_eq!(
            combined_exit_code(&[report(Verdict::Stopped("s".into())), unreachable, done()]),
            3
        );
    }

    #[test]
    fn tally_counts_each_verdict() {
        let t = Tally::of(&[
            report(Verdict::Completed(TxnState::Finished)),
            report(Verdict::Completed(TxnState::RolledBack)),
            report(Verdict::Refused(Refusal::Committed)),
        ]);
        assert_eq!(
            t.to_string(),
            "2 completed, 0 nothing to do, 1 refused, 0 stopped, 0 failed"
        );
    }
}
