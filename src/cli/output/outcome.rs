//! What `transfer`, `rollback`, `recover` and `release-lock` print with
//! `--json`: typed rows, serialised as they are (never built by hand), so a
//! script reads the transaction id, the state it reached, who reached it,
//! each step with its outcome, the verdict and the exit code.

use crate::cli::exit;
use crate::error::Error;
use crate::protocol::locks::{ReleaseOutcome, SweptLock};
use crate::protocol::{ProcedureReport, StepReport, StepResult, Verdict};
use serde::Serialize;

/// One procedure's outcome (`transfer`, `rollback`, `recover ID`, and each
/// item of `recover --all-stuck`).
#[derive(Debug, Serialize)]
pub struct ProcedureOutcome {
    /// Transaction id.
    pub txn: String,
    /// The state it was in when this process started (`null` for a new
    /// transfer or when it could not be read).
    pub started_in: Option<String>,
    /// The state it is known to be in at the end.
    pub final_state: Option<String>,
    /// Who took it to `final_state`: `this process`, `another process`, or
    /// `null` when nobody did in this run (it was already there).
    pub reached_by: Option<&'static str>,
    /// Every step, in order, lock acquisitions and releases included.
    pub steps: Vec<StepOutcome>,
    /// How it ended.
    pub verdict: VerdictOutcome,
    /// The process exit code this outcome alone gives.
    pub exit_code: i32,
}

/// One step.
#[derive(Debug, Serialize)]
pub struct StepOutcome {
    /// What the step is (`core 2: apply to source`, `release lock`, ...).
    pub label: String,
    /// `index/id` of the document it acted on.
    pub target: String,
    /// `updated`, `noop` or `failed`.
    pub result: &'static str,
    /// What was written, why nothing was, or the error.
    pub detail: String,
}

/// The verdict, as a kind a script can switch on and the sentence a human reads.
#[derive(Debug, Serialize)]
pub struct VerdictOutcome {
    /// `completed`, `done_elsewhere`, `nothing_to_do`, `refused`, `stopped`,
    /// `failed`, `released`.
    pub kind: &'static str,
    /// The verdict in words.
    pub message: String,
}

impl From<&StepReport> for StepOutcome {
    fn from(s: &StepReport) -> Self {
        let (result, detail) = match &s.result {
            StepResult::Updated(e) => ("updated", e.to_string()),
            StepResult::Noop(r) => ("noop", r.to_string()),
            StepResult::Error(m) => ("failed", m.clone()),
        };
        StepOutcome {
            label: s.label.clone(),
            target: s.target.clone(),
            result,
            detail,
        }
    }
}

impl From<&Verdict> for VerdictOutcome {
    fn from(v: &Verdict) -> Self {
        let kind = match v {
            Verdict::Completed(_) => "completed",
            Verdict::EndedElsewhere(_) => "done_elsewhere",
            Verdict::NothingToDo(_) => "nothing_to_do",
            Verdict::Refused(_) => "refused",
            Verdict::Stopped(_) => "stopped",
            Verdict::Failed(_) => "failed",
        };
        VerdictOutcome {
            kind,
            message: v.to_string(),
        }
    }
}

impl From<&ProcedureReport> for ProcedureOutcome {
    fn from(r: &ProcedureReport) -> Self {
        let (state, by) = r.final_state();
        ProcedureOutcome {
            txn: r.txn.clone(),
            started_in: r.started_in.as_ref().map(|s| s.as_str().to_string()),
            final_state: state.map(|s| s.as_str().to_string()),
            reached_by: by.map(|b| b.as_str()),
            steps: r.steps.iter().map(StepOutcome::from).collect(),
            verdict: VerdictOutcome::from(&r.verdict),
            exit_code: exit::of_report(r),
        }
    }
}

/// One lock released (or not) by `release-lock` or the sweep of
/// `recover --all-stuck`.
#[derive(Debug, Serialize)]
pub struct LockOutcome {
    /// The locked resource.
    pub resource: String,
    /// Its owner transaction, when the lock names one.
    pub owner: Option<String>,
    /// The owner's state when judged (`null`: missing or not named).
    pub owner_state: Option<String>,
    /// `released`, `not_held` or `refused`.
    pub result: &'static str,
    /// Why it was refused.
    pub reason: Option<String>,
}

impl LockOutcome {
    /// A release outcome of `resource`.
    pub fn new(resource: &str, owner: Option<String>, outcome: &ReleaseOutcome) -> LockOutcome {
        let (result, reason) = match outcome {
            ReleaseOutcome::Released => ("released", None),
            ReleaseOutcome::Decremented { .. } => ("decremented", None),
            ReleaseOutcome::NotHeld => ("not_held", None),
            ReleaseOutcome::Refused(why) => ("refused", Some(why.to_string())),
        };
        LockOutcome {
            resource: resource.to_string(),
            owner,
            owner_state: None,
            result,
            reason,
        }
    }

    /// Exit code of this release: refused is 1, the rest 0.
    pub fn exit_code(&self) -> i32 {
        if self.result == "refused" {
            exit::REFUSED
        } else {
            exit::DONE
        }
    }
}

impl From<&SweptLock> for LockOutcome {
    fn from(s: &SweptLock) -> Self {
        let mut l = LockOutcome::new(&s.view.info.resource, s.view.info.owner.clone(), &s.outcome);
        l.owner_state = s.view.owner_state.as_ref().map(|s| s.as_str().to_string());
        l
    }
}

/// `release-lock --json`.
#[derive(Debug, Serialize)]
pub struct ReleaseLockOutcome {
    /// The transaction whose locks were asked for (`--txn`), if any.
    pub txn: Option<String>,
    /// Each lock and what its release did.
    pub locks: Vec<LockOutcome>,
    /// With `--txn --allow-partial`: how the search for its locks was
    /// partial (some may be left), else null.
    pub locks_listing_partial: Option<String>,
    /// `released` when nothing was refused, else `refused`.
    pub verdict: VerdictOutcome,
    /// 0 when nothing was refused, 1 otherwise.
    pub exit_code: i32,
}

/// A command that failed before it had anything to report.
#[derive(Debug, Serialize)]
pub struct ErrorOutcome {
    /// The error in words.
    pub error: String,
    /// Its exit code (1 data, 3 cluster).
    pub exit_code: i32,
}

impl From<&Error> for ErrorOutcome {
    fn from(e: &Error) -> Self {
        ErrorOutcome {
            error: e.to_string(),
            exit_code: exit::of_error(e),
        }
    }
}

/// Prints a row as pretty JSON on stdout.
pub fn print<T: Serialize>(row: &T) {
    match serde_json::to_string_pretty(row) {
        Ok(s) => super::print::out(s),
        // These rows hold only strings and numbers: serialising cannot fail.
        Err(e) => super::print::err(format_args!("cannot print JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::output::outcome::*;
    use crate::protocol::decide::Effect;
    use crate::protocol::{ProcedureRefusal, ReachedBy, Step, TxnState};

    #[test]
    fn a_report_serialises_with_state_who_steps_and_verdict() {
        let mut r = ProcedureReport::new("t1");
        r.started_in = Some(TxnState::Pending);
        r.push(StepReport {
            txn: "t1".into(),
            step: Some(Step::Terminate),
            label: Step::Terminate.label().into(),
            target: "transactions/t1".into(),
            result: StepResult::Updated(Effect::Transitioned {
                from: TxnState::Pending,
                to: TxnState::Terminating,
            }),
            receipt: None,
        });
        r.verdict = Verdict::Stopped("simulated crash".into());
        let v = serde_json::to_value(ProcedureOutcome::from(&r)).unwrap();
        assert_eq!(v["txn"], "t1");
        assert_eq!(v["started_in"], "pending");
        assert_eq!(v["final_state"], "terminating");
        assert_eq!(v["reached_by"], ReachedBy::ThisProcess.as_str());
        assert_eq!(v["steps"][0]["result"], "updated");
        assert_eq!(v["steps"][0]["target"], "transactions/t1");
        assert_eq!(v["verdict"]["kind"], "stopped");
        assert_eq!(v["exit_code"], exit::STOPPED);

        let mut refused = ProcedureReport::new("t2");
        refused.verdict = Verdict::Refused(ProcedureRefusal::Committed);
        let v = serde_json::to_value(ProcedureOutcome::from(&refused)).unwrap();
        assert_eq!(v["verdict"]["kind"], "refused");
        assert_eq!(v["reached_by"], serde_json::Value::Null);
        assert_eq!(v["exit_code"], exit::REFUSED);
    }
}
