//! What a reversal reports: its options, refusals (the texts, written
//! once), verdict with its exit code, and the full report.

use crate::error::Error;
use crate::protocol::report::StepReport;
use crate::protocol::steps::ProcedureRefusal;
use crate::protocol::trail::ActOutcome;
use crate::protocol::transaction::{Transfer, TxnState};
use crate::protocol::RunLimits;
use std::fmt;

/// What `reverse` may do beyond the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReverseOptions {
    /// A committed original is first finished by recovery (the operator
    /// confirmed it); otherwise it is refused.
    pub finish_committed: bool,
    /// Finish a committed original even within the recovery window.
    pub force: bool,
    /// Stop after this many writes of the reversal (create, link, then the
    /// reversal's own steps), as if the process died: tests and the demo.
    pub limits: RunLimits,
}

/// Why a transaction is not reversed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReverseRefusal {
    /// It already has a finished reversal (or names another one).
    AlreadyReversed {
        /// The reversal's id.
        by: String,
    },
    /// Committed: it must be finished first (`--finish-committed`).
    Committed,
    /// It never completed; recovery or rollback come first.
    InFlight(TxnState),
    /// Rolled back: no money moved.
    RolledBack,
    /// Its reversal exists but was rolled back; the id cannot be reused.
    ReversalRolledBack(String),
    /// The reversal's id is taken by a document that is not this reversal.
    IdTaken(String),
    /// The protocol's own refusal (unknown state, malformed, recent).
    Protocol(ProcedureRefusal),
}

impl fmt::Display for ReverseRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReverseRefusal::AlreadyReversed { by } => {
                write!(
                    f,
                    "transaction is already reversed by `{by}`; not reversing it twice"
                )
            }
            ReverseRefusal::Committed => f.write_str(
                "transaction is committed, not finished: pass --finish-committed to let recovery \
                 finish it first, then reverse it",
            ),
            ReverseRefusal::InFlight(s) => write!(
                f,
                "transaction is {s}: it never completed, so there is nothing to reverse yet; \
                 recover it or roll it back first"
            ),
            ReverseRefusal::RolledBack => {
                f.write_str("transaction was rolled back: no money moved, nothing to reverse")
            }
            ReverseRefusal::ReversalRolledBack(id) => write!(
                f,
                "its reversal `{id}` was rolled back and its id cannot be reused; \
                 make the compensating transfer by hand with `transfer`"
            ),
            ReverseRefusal::IdTaken(id) => write!(
                f,
                "the reversal's id `{id}` is taken by a document that is not a reversal of \
                 this transaction"
            ),
            ReverseRefusal::Protocol(r) => r.fmt(f),
        }
    }
}

/// How a reversal ended.
#[derive(Debug)]
pub enum ReverseVerdict {
    /// The reversal is finished and linked both ways.
    Reversed,
    /// Refused; nothing was left half done.
    Refused(ReverseRefusal),
    /// Stopped part-way (simulated crash, or another process moved a
    /// document); rerunning `reverse` carries on.
    Stopped(String),
    /// Failed part-way; rerunning `reverse` carries on.
    Failed(Error),
}

impl fmt::Display for ReverseVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReverseVerdict::Reversed => f.write_str("reversed"),
            ReverseVerdict::Refused(r) => write!(f, "refused: {r}"),
            ReverseVerdict::Stopped(why) => write!(f, "stopped: {why}"),
            ReverseVerdict::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

/// The full account of one `reverse`.
#[derive(Debug)]
pub struct ReverseReport {
    /// The transaction reversed.
    pub original: String,
    /// The reversal's (deterministic) id.
    pub reversal: String,
    /// The original's state when first read.
    pub original_state: Option<TxnState>,
    /// The original as a transfer, once it was readable.
    pub transfer: Option<Transfer>,
    /// Whether an earlier attempt's reversal was found and carried on.
    pub resumed: bool,
    /// Every step, in order: finishing the original, create, link, the
    /// reversal's own steps.
    pub steps: Vec<StepReport>,
    /// How it ended.
    pub verdict: ReverseVerdict,
}

impl ReverseReport {
    /// What a successful reversal did, in the words both front ends print:
    /// "reversed by ID (dest -> src, amount N)".
    pub fn reversed_by(&self) -> String {
        let how = self
            .transfer
            .as_ref()
            .map(|t| format!(" ({} -> {}, amount {})", t.dest, t.src, t.amount))
            .unwrap_or_default();
        format!("reversed by {}{how}", self.reversal)
    }
}

impl From<&ReverseVerdict> for ActOutcome {
    fn from(v: &ReverseVerdict) -> Self {
        match v {
            ReverseVerdict::Reversed => ActOutcome::Completed,
            ReverseVerdict::Refused(_) => ActOutcome::Refused,
            ReverseVerdict::Stopped(_) => ActOutcome::Stopped,
            ReverseVerdict::Failed(_) => ActOutcome::Failed,
        }
    }
}
