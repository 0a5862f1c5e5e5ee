//! What procedures report: each step's outcome as it happens (for the
//! dashboard's event log) and the verdict at the end (for exit codes).

use super::decide::{Effect, NoopReason};
use super::executor::Outcome;
use super::steps::{Refusal, Step};
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

impl From<&Outcome> for StepResult {
    fn from(o: &Outcome) -> Self {
        match o {
            Outcome::Updated(e) => StepResult::Updated(e.clone()),
            Outcome::Noop(r) => StepResult::Noop(r.clone()),
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
    /// Ran to a terminal state.
    Completed(TxnState),
    /// Already terminal; nothing done.
    NothingToDo(TxnState),
    /// Stopped on purpose (another process owns the rest, or a simulated crash).
    Stopped(String),
    /// Refused before changing anything.
    Refused(Refusal),
    /// Failed; everything up to the failing step is in the report.
    Failed(Error),
}

impl Verdict {
    /// Process exit code the headless commands use for this verdict:
    /// 0 done or nothing to do, 1 refused / stopped / data problem, 3 cluster trouble.
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Completed(_) | Verdict::NothingToDo(_) => 0,
            Verdict::Stopped(_) | Verdict::Refused(_) => 1,
            Verdict::Failed(e) => exit_code_of(e),
        }
    }
}

/// Exit code for a library error: 1 for facts about the data, 3 for the cluster.
pub fn exit_code_of(e: &Error) -> i32 {
    match e {
        Error::NotFound { .. } | Error::Malformed { .. } | Error::Invalid(_) => 1,
        // Bad credentials in the environment: like a usage error, nothing was sent.
        Error::Credentials { .. } => 2,
        _ => 3,
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Completed(s) => write!(f, "completed: transaction is {s}"),
            Verdict::NothingToDo(s) => write!(f, "nothing to do: transaction is already {s}"),
            Verdict::Stopped(why) => write!(f, "stopped: {why}"),
            Verdict::Refused(r) => write!(f, "refused: {r}"),
            Verdict::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

/// The full account of one procedure run.
#[derive(Debug)]
pub struct ProcedureReport {
    /// Transaction id.
    pub txn: String,
    /// The state the transaction was read in at the start.
    pub started_in: Option<TxnState>,
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
            steps: Vec::new(),
            verdict: Verdict::Stopped("not started".into()),
        }
    }
}
