//! What procedures report: each step's outcome as it happens (for the
//! dashboard's event log), the verdict at the end, and the state the
//! transaction reached and who reached it.

use super::decide::{Effect, NoopReason};
use super::executor::StepOutcome;
use super::receipt::Receipt;
use super::steps::{ProcedureRefusal, Step};
use super::transaction::TxnState;
use crate::error::Error;
use std::fmt;
use std::sync::Arc;

/// How one step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum StepResult {
    /// The document was written.
    Updated(Effect),
    /// Nothing needed doing.
    Noop(NoopReason),
    /// The step failed; the message says why.
    Error(String),
}

impl From<&StepOutcome> for StepResult {
    fn from(o: &StepOutcome) -> Self {
        match o {
            StepOutcome::Updated(e) => StepResult::Updated(e.clone()),
            StepOutcome::Noop(r) => StepResult::Noop(r.clone()),
        }
    }
}

/// One executed step, for logs and reports.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    /// Transaction id.
    pub txn: String,
    /// Which step (`None` for lock releases and pruning, see `label`).
    pub step: Option<Step>,
    /// Human label of the step.
    pub label: String,
    /// `index/id` of the document the step acted on.
    pub target: String,
    /// How it ended.
    pub result: StepResult,
    /// What a balance write did to its account (an apply or undo that
    /// changed the balance); `None` for every other step.
    pub receipt: Option<Receipt>,
}

impl fmt::Display for StepReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (word, detail) = match &self.result {
            StepResult::Updated(e) => ("updated", e.to_string()),
            StepResult::Noop(r) => ("noop", r.to_string()),
            StepResult::Error(m) => ("error", m.clone()),
        };
        write!(
            f,
            "{:<40} {:<24} {:<7} {}",
            self.label, self.target, word, detail
        )
    }
}

/// Called with each step as soon as it ends.
pub type StepObserver = Arc<dyn Fn(&StepReport) + Send + Sync>;

/// How a procedure ended.
#[derive(Debug)]
pub enum Verdict {
    /// This process ran it to a terminal state.
    Completed(TxnState),
    /// Already terminal when this process looked; nothing done.
    NothingToDo(TxnState),
    /// Another process took it to this terminal state while this one ran
    /// (it was neither cancelled nor left behind).
    EndedElsewhere(TxnState),
    /// Stopped part-way on purpose (another process owns the rest, or a
    /// simulated crash); the transaction is left for recovery.
    Stopped(String),
    /// Refused before changing anything.
    Refused(ProcedureRefusal),
    /// Failed; everything up to the failing step is in the report.
    Failed(Error),
}

impl Verdict {
    /// True when the transaction is terminal, whoever took it there.
    pub fn is_done(&self) -> bool {
        matches!(
            self,
            Verdict::Completed(_) | Verdict::NothingToDo(_) | Verdict::EndedElsewhere(_)
        )
    }
}

/// Who took a transaction to the state a report ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReachedBy {
    /// This process wrote that state.
    ThisProcess,
    /// Another process did (found there by this one).
    AnotherProcess,
}

impl ReachedBy {
    /// `this process` / `another process`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReachedBy::ThisProcess => "this process",
            ReachedBy::AnotherProcess => "another process",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Completed(s) => write!(f, "completed: transaction is {s}"),
            Verdict::NothingToDo(s) => write!(f, "nothing to do: transaction is already {s}"),
            Verdict::EndedElsewhere(s) => write!(f, "done by another process: transaction is {s}"),
            Verdict::Stopped(why) => write!(f, "stopped: {why}"),
            Verdict::Refused(r) => write!(f, "refused: {r}"),
            Verdict::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

/// Label of the step that releases a lock (lock steps name no protocol step).
pub const RELEASE_LOCK: &str = "release lock";

/// The full account of one procedure run.
#[derive(Debug)]
pub struct ProcedureReport {
    /// Transaction id.
    pub txn: String,
    /// The state the transaction was read in at the start.
    pub started_in: Option<TxnState>,
    /// The last state the transaction was seen in and who took it there
    /// (kept by [`ProcedureReport::push`] from the state steps, and set when
    /// a procedure re-reads the transaction).
    pub reached: Option<(TxnState, ReachedBy)>,
    /// Every step executed, in order.
    pub steps: Vec<StepReport>,
    /// How it ended.
    pub verdict: Verdict,
}

impl ProcedureReport {
    /// A report with no steps yet.
    pub fn new(txn: &str) -> ProcedureReport {
        ProcedureReport {
            txn: txn.to_string(),
            started_in: None,
            reached: None,
            steps: Vec::new(),
            verdict: Verdict::Stopped("not started".into()),
        }
    }

    /// Appends a step, following the transaction's state: a transition this
    /// process wrote was reached by it; a transition that found the
    /// transaction elsewhere shows where another process took it.
    pub fn push(&mut self, step: StepReport) {
        if let Some((_, to)) = step.step.and_then(Step::transition) {
            match &step.result {
                StepResult::Updated(_) => self.reached = Some((to, ReachedBy::ThisProcess)),
                StepResult::Noop(NoopReason::StateIs(found)) => {
                    let known = self.reached.as_ref().map(|(s, _)| s);
                    if known != Some(found) {
                        self.reached = Some((found.clone(), ReachedBy::AnotherProcess));
                    }
                }
                _ => {}
            }
        }
        self.steps.push(step);
    }

    /// The state the transaction is known to be in at the end, and who took
    /// it there (`None` for "nobody in this run": it was already there).
    pub fn final_state(&self) -> (Option<&TxnState>, Option<ReachedBy>) {
        match &self.verdict {
            Verdict::Completed(s) => (Some(s), Some(ReachedBy::ThisProcess)),
            Verdict::EndedElsewhere(s) => (Some(s), Some(ReachedBy::AnotherProcess)),
            Verdict::NothingToDo(s) => (Some(s), None),
            _ => match &self.reached {
                Some((s, by)) => (Some(s), Some(*by)),
                None => (self.started_in.as_ref(), None),
            },
        }
    }

    /// Whether a lock this procedure had to release could not be: it is left
    /// for the next recovery (whose sweep releases locks of ended owners).
    pub fn lock_left_behind(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.label == RELEASE_LOCK && matches!(s.result, StepResult::Error(_)))
    }

    /// Whether this process wrote anything to a transaction or account
    /// document (lock documents aside).
    pub fn wrote(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.step.is_some() && matches!(s.result, StepResult::Updated(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(step: Step, result: StepResult) -> StepReport {
        StepReport {
            txn: "t".into(),
            step: Some(step),
            label: step.label().into(),
            target: "x/t".into(),
            result,
            receipt: None,
        }
    }

    #[test]
    fn final_state_follows_who_wrote_the_transitions() {
        let mut r = ProcedureReport::new("t");
        r.started_in = Some(TxnState::Created);
        let begun = Effect::Transitioned {
            from: TxnState::Created,
            to: TxnState::Pending,
        };
        r.push(step(Step::Begin, StepResult::Updated(begun)));
        assert_eq!(r.reached, Some((TxnState::Pending, ReachedBy::ThisProcess)));
        r.push(step(
            Step::Commit,
            StepResult::Noop(NoopReason::StateIs(TxnState::Finished)),
        ));
        r.verdict = Verdict::Stopped("moved".into());
        assert_eq!(
            r.final_state(),
            (Some(&TxnState::Finished), Some(ReachedBy::AnotherProcess))
        );
        assert!(r.wrote());
        let mut fresh = ProcedureReport::new("t");
        fresh.started_in = Some(TxnState::Pending);
        fresh.verdict = Verdict::Refused(ProcedureRefusal::Committed);
        assert_eq!(fresh.final_state(), (Some(&TxnState::Pending), None));
        assert!(!fresh.wrote());
    }
}

/// Counts of verdicts over many procedures: what a bulk run's summary, its
/// JSON and its finished record say ("2 completed, 1 refused"), so a mostly
/// successful run is never headlined by its worst outcome alone.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Not started because the run was stopped (counted by the run, not by
    /// [`Tally::of`], which sees only the procedures that ran).
    #[serde(default)]
    pub not_started: usize,
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

    /// Adds `other`'s counts to these (a resumed job: its earlier runs'
    /// and this one's).
    pub fn add(&mut self, other: &Tally) {
        self.completed += other.completed;
        self.done_elsewhere += other.done_elsewhere;
        self.nothing_to_do += other.nothing_to_do;
        self.refused += other.refused;
        self.stopped += other.stopped;
        self.failed += other.failed;
        self.not_started += other.not_started;
    }

    /// Ended done: completed, done by another process, or nothing to do.
    pub fn done(&self) -> usize {
        self.completed + self.done_elsewhere + self.nothing_to_do
    }

    /// Every transaction counted, whatever its verdict (the timeline's
    /// size of a bulk run).
    pub fn total(&self) -> usize {
        self.completed
            + self.done_elsewhere
            + self.nothing_to_do
            + self.refused
            + self.stopped
            + self.failed
            + self.not_started
    }

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
            (self.not_started, "not started"),
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
