//! A rollback or recovery over a selection, as ONE act with one audit
//! record (the run record plus its bounded parts), whichever front end
//! starts it: the selection resolved through the read side, each
//! transaction run through the same procedure as one act (rollbacks a few
//! at a time, recoveries in batches), a [`Stop`] that keeps new ones from
//! starting while the running ones finish, and for `recover --all-stuck`
//! alone the sweep of the locks stale on evidence.

use super::plan::{Plan, PlanStep};
use super::{Done, Started, Value};
use crate::error::{Error, Result};
use crate::protocol::batch::BatchOptions;
use crate::protocol::lock_release::SweptLock;
use super::selection::{BulkOptions, BulkRun, LeftOut, Selected, Selection};
use crate::protocol::trail::{Outcome, TrailStep};
use crate::protocol::{Procedure, ProcedureReport, Protocol, RunLimits, Verdict};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How the selected transactions are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// Each through its procedure, this many at a time.
    OneByOne(usize),
    /// Recovery in batches ([`Protocol::recover_batched`]).
    Batched(BatchOptions),
}

/// A rollback or recovery over a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkAct {
    /// Which procedure.
    pub procedure: Procedure,
    /// What it acts on.
    pub selection: Selection,
    /// Where `--ids-from` read its ids (the record names it).
    pub ids_source: Option<String>,
    /// Act on a partial view of the transactions (some shards failed).
    pub allow_partial: bool,
    /// How to run.
    pub runner: Runner,
}

impl BulkAct {
    /// Whether this is `recover --all-stuck` and nothing else, which also
    /// sweeps the locks stale on evidence.
    pub fn sweeps(&self) -> bool {
        let s = &self.selection;
        self.procedure == Procedure::Recover
            && s.all_stuck
            && s.states.is_empty()
            && s.older_than.is_none()
            && s.ids.is_none()
    }

    /// Resolves the selection: each transaction with its planned steps.
    pub(super) async fn plan(&self, p: &Protocol) -> Result<Plan> {
        let selected = p.select(&self.selection, self.allow_partial).await?;
        let mut steps: Vec<PlanStep> = selected
            .transactions
            .iter()
            .map(|t| PlanStep::Item {
                txn: t.id.clone(),
                steps: t
                    .state
                    .as_ref()
                    .and_then(|s| crate::protocol::steps::plan(self.procedure, s).ok())
                    .unwrap_or_default(),
            })
            .collect();
        if self.sweeps() {
            steps.push(PlanStep::Sweep);
        }
        Ok(Plan {
            transactions: selected.ids(),
            targets: self.selection.describe(self.ids_source.as_deref()),
            steps,
            selected: Some(selected),
            ..Plan::default()
        })
    }
}

/// Keeps new transactions of a bulk act from starting, and says who
/// stopped it (a signal's name, the dashboard's Esc).
#[derive(Debug, Default)]
pub struct Stop {
    flag: AtomicBool,
    by: Mutex<Option<String>>,
}

impl Stop {
    /// Stops the run (the first caller is remembered).
    pub fn stop(&self, by: &str) {
        if let Ok(mut slot) = self.by.lock() {
            slot.get_or_insert_with(|| by.to_string());
        }
        self.flag.store(true, Ordering::SeqCst);
    }

    /// Whether it was stopped.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Who stopped it, if anyone did.
    pub fn by(&self) -> Option<String> {
        self.by.lock().ok().and_then(|s| s.clone())
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

impl Tally {
    /// The counts that are not zero, in a few words (`3 completed, 1
    /// refused`; `none ran`).
    pub fn brief(&self) -> String {
        let parts: Vec<String> = [
            (self.completed, "completed"),
            (self.done_elsewhere, "done by another process"),
            (self.nothing_to_do, "nothing to do"),
            (self.refused, "refused"),
            (self.stopped, "stopped"),
            (self.failed, "failed"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if parts.is_empty() {
            "none ran".into()
        } else {
            parts.join(", ")
        }
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} completed, {} done by another process, {} nothing to do, {} refused, {} stopped, {} failed",
            self.completed, self.done_elsewhere, self.nothing_to_do, self.refused, self.stopped, self.failed
        )
    }
}

/// What a bulk act did.
#[derive(Debug, Default)]
pub struct BulkDone {
    /// One report per transaction that ran, sorted by id.
    pub reports: Vec<ProcedureReport>,
    /// The transactions not started because the run was stopped.
    pub not_started: Vec<String>,
    /// Ids the selection named that were not acted on.
    pub left_out: Vec<LeftOut>,
    /// The locks the sweep released (or was refused).
    pub swept: Vec<SweptLock>,
    /// How the sweep's listing of locks was partial, if it was.
    pub locks_partial: Option<String>,
    /// Whether it swept abandoned locks (`recover --all-stuck`).
    pub sweep: bool,
    /// Who stopped it.
    pub stopped_by: Option<String>,
    /// Why it failed part-way (nothing ran, or the sweep failed).
    pub failed: Option<Error>,
}

fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

impl BulkDone {
    /// The record's summary.
    pub(super) fn summary(&self) -> String {
        let n = self.reports.len() + self.not_started.len();
        let mut s = format!(
            "{}: {}",
            plural(n, "selected transaction"),
            Tally::of(&self.reports)
        );
        if !self.left_out.is_empty() {
            s.push_str(&format!("; {} refused before reading", self.left_out.len()));
        }
        if let Some(by) = &self.stopped_by {
            s.push_str(&format!(
                "; stopped by {by}: {} not started",
                self.not_started.len()
            ));
        }
        if self.sweep {
            let partial = self
                .locks_partial
                .as_ref()
                .map(|d| format!(" (locks listing {d})"))
                .unwrap_or_default();
            s.push_str(&format!(
                "; {} stale on evidence released{partial}",
                plural(self.released(), "lock")
            ));
        }
        match &self.failed {
            Some(e) if self.reports.is_empty() => format!("failed: {e}"),
            Some(e) => format!("ran {}, then failed: {e}", self.reports.len()),
            None => s,
        }
    }

    /// Locks the sweep released.
    pub fn released(&self) -> usize {
        self.swept.iter().filter(|s| s.outcome.released()).count()
    }

    /// The record's outcome: the worst verdict, stopped when some never
    /// started, refused when ids were left out.
    pub(super) fn outcome(&self) -> Outcome {
        if self.failed.is_some() {
            return Outcome::Failed;
        }
        match Outcome::worst(self.reports.iter().map(|r| &r.verdict)) {
            _ if !self.not_started.is_empty() => Outcome::Stopped,
            Outcome::NothingToDo if self.released() > 0 => Outcome::Completed,
            Outcome::NothingToDo | Outcome::Completed if !self.left_out.is_empty() => {
                Outcome::Refused
            }
            o => o,
        }
    }

    /// The record's steps: every procedure's, then each lock swept.
    pub(super) fn steps(&self, p: &Protocol) -> Vec<TrailStep> {
        let locks = &p.config().indices.locks;
        self.reports
            .iter()
            .flat_map(|r| r.steps.iter().map(TrailStep::from))
            .chain(self.swept.iter().map(|s| {
                let owner = s.view.info.owner.clone().unwrap_or_default();
                TrailStep::release(locks, &owner, &s.view.info.resource, &s.outcome)
            }))
            .collect()
    }
}

impl Started {
    /// Runs a bulk act on `p`, calling `on_done` as each transaction ends;
    /// once `stop` is set no new transaction (or batch) starts. Completes
    /// the one record with every transaction's steps.
    pub async fn run_bulk<F>(self, p: &Protocol, stop: &Stop, on_done: F) -> Done
    where
        F: FnMut(&ProcedureReport),
    {
        let b = match &self.intervention().act {
            super::Act::Bulk(b) => b.clone(),
            _ => return self.run_single(p).await,
        };
        let selected = self.plan().selected.clone().unwrap_or_else(|| {
            Selected {
                transactions: Vec::new(),
                left_out: Vec::new(),
            }
        });
        let ids = selected.ids();
        let ran = match b.runner {
            Runner::OneByOne(concurrency) => {
                let opts = BulkOptions {
                    concurrency,
                    limits: RunLimits::default(),
                };
                Ok(p.run_many(&ids, b.procedure, opts, &stop.flag, on_done)
                    .await)
            }
            Runner::Batched(opts) => {
                p.recover_many_batched(&ids, opts, &stop.flag, on_done)
                    .await
            }
        };
        let mut done = BulkDone {
            left_out: selected.left_out,
            sweep: b.sweeps(),
            stopped_by: stop.by(),
            ..BulkDone::default()
        };
        match ran {
            Ok(BulkRun {
                mut reports,
                not_started,
            }) => {
                reports.sort_by(|a, b| a.txn.cmp(&b.txn));
                done.reports = reports;
                done.not_started = not_started;
            }
            Err(e) => done.failed = Some(e),
        }
        // The sweep is a new start: not after a stop or a failure.
        if done.sweep && done.stopped_by.is_none() && done.failed.is_none() {
            match p.release_abandoned_locks_allowing(b.allow_partial).await {
                Ok(s) => {
                    done.locks_partial = s.coverage.describe();
                    done.swept = s.swept;
                }
                Err(e) => done.failed = Some(e),
            }
        }
        let value = Value::Bulk(done);
        let (outcome, summary, steps) = super::run::fold(p, self.plan(), &value);
        self.finish(value, outcome, summary, steps).await
    }
}

impl Outcome {
    /// The worst outcome of many verdicts: failed, stopped, refused,
    /// completed, nothing to do (none at all is nothing to do).
    pub fn worst<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> Outcome {
        let rank = |o: Outcome| match o {
            Outcome::NothingToDo => 0,
            Outcome::Completed => 1,
            Outcome::Refused => 2,
            Outcome::Stopped => 3,
            Outcome::Failed => 4,
        };
        verdicts
            .map(Outcome::from)
            .max_by_key(|o| rank(*o))
            .unwrap_or(Outcome::NothingToDo)
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
    fn tally_counts_each_verdict_and_the_worst_outcome_wins() {
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
        let v = [
            Verdict::Completed(TxnState::Finished),
            Verdict::Stopped("x".into()),
            Verdict::NothingToDo(TxnState::Finished),
        ];
        assert_eq!(Outcome::worst(v.iter()), Outcome::Stopped);
        assert_eq!(Outcome::worst([].iter()), Outcome::NothingToDo);
    }
}
