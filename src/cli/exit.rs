//! The process exit codes, defined once. Every command returns one of these;
//! docs/src/commands.md (Exit codes) lists them.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | done: the transaction is terminal (by this process or another), or nothing needed doing |
//! | 1 | refused with nothing written (or a fact about the data: not found, malformed, invalid, audit findings; or the local server `demo` and `--rehearse` start could not be found or started) |
//! | 2 | usage error (clap's own, options checked after parsing, unusable credentials in the environment); `apply`: the plan refused whole (altered, another cluster, expired), or a second operator's approval missing |
//! | 3 | cluster error: unreachable, authentication, HTTP errors, or a deployment a reader (`audit`, `check`, `doctor`) cannot read as it is; nothing known to have changed |
//! | 4 | terminal failure (the dashboard could not drive the terminal) |
//! | 5 | stopped part-way: something was written and the transaction is left for recovery (or a lock it held could not be released) |
//! | 128 + N | the dashboard or the demo stopped on signal N ([`crate::signals`]) |

use crate::error::Error;
use crate::protocol::trail::ActOutcome;
use crate::protocol::{ProcedureReport, TxnState, Verdict};

/// Done, by this process or another, or nothing to do.
pub const DONE: i32 = 0;
/// Refused with nothing written; or a fact about the data.
pub const REFUSED: i32 = 1;
/// The local `osmem-server` the demo or a rehearsal needs could not be
/// found, installed or started (nothing was done).
pub const SETUP: i32 = REFUSED;
/// Usage error (what clap itself uses).
pub const USAGE: i32 = 2;
/// A plan refused whole by `apply` (altered, from another cluster or
/// indices, older than `--max-age`), or an act a profile with
/// `approval = "second-operator"` refuses (no plan, or the planner's own):
/// as a usage error, nothing was done.
pub const REFUSED_WHOLE: i32 = USAGE;
/// The cluster could not be talked to, or answered with an error.
pub const CLUSTER: i32 = 3;
/// The terminal itself failed (not a tty, I/O error).
pub const TERMINAL: i32 = 4;
/// Stopped part-way: written up to a point and left for recovery.
pub const STOPPED: i32 = 5;

/// Exit code for a library error: [`REFUSED`] for facts about the data,
/// [`CLUSTER`] for everything that comes from talking to the cluster, and
/// for a deployment a reader cannot read as it is ([`Error::Unreadable`]:
/// `audit` then exits as `check`'s UNKNOWN and `doctor` do, never with the
/// code of findings).
pub fn of_error(e: &Error) -> i32 {
    match e {
        Error::NotFound { .. }
        | Error::Malformed { .. }
        | Error::WritesRefused(_)
        | Error::Invalid(_) => REFUSED,
        // Bad credentials in the environment: like a usage error, nothing was sent.
        Error::Credentials { .. } => USAGE,
        // Error::Unreadable (a deployment a reader cannot read) included.
        _ => CLUSTER,
    }
}

/// Exit code of one procedure: done, refused, stopped part-way (this
/// process wrote something and the transaction is not terminal, or a lock
/// it had to release is left behind), or the error's code when it failed
/// before writing anything.
pub fn of_report(r: &ProcedureReport) -> i32 {
    // A transfer refused for a held lock cancels what it created: terminal,
    // nothing left for recovery.
    let settled = r.final_state().0.is_some_and(TxnState::is_terminal);
    match &r.verdict {
        // Done, but a lock could not be released: left for recovery.
        v if v.is_done() && r.lock_left_behind() => STOPPED,
        v if v.is_done() => DONE,
        Verdict::Refused(_) if settled || !r.wrote() => REFUSED,
        Verdict::Failed(e) if settled || !r.wrote() => of_error(e),
        _ => STOPPED,
    }
}

/// Exit code of `reverse`: done, refused with nothing written, stopped
/// part-way (the reversal exists and is left for recovery), or the error's.
pub fn of_reverse(v: &crate::protocol::reverse::ReverseVerdict) -> i32 {
    use crate::protocol::reverse::ReverseVerdict;
    match v {
        ReverseVerdict::Reversed => DONE,
        ReverseVerdict::Refused(_) => REFUSED,
        ReverseVerdict::Stopped(_) => STOPPED,
        ReverseVerdict::Failed(e) => of_error(e),
    }
}

/// The outcome an exit code stands for, by which codes are ranked
/// (`None`: a code no act ends with, ranked worst).
fn outcome_of(code: i32) -> Option<ActOutcome> {
    match code {
        DONE => Some(ActOutcome::Completed),
        REFUSED | USAGE => Some(ActOutcome::Refused),
        CLUSTER => Some(ActOutcome::Failed),
        STOPPED => Some(ActOutcome::Stopped),
        _ => None,
    }
}

/// Exit code over many: the most severe, in the order of the outcomes they
/// stand for ([`ActOutcome::severity`]: stopped beats cluster error beats
/// refused beats done; a usage error beats a refusal).
pub fn worst(codes: impl IntoIterator<Item = i32>) -> i32 {
    let rank = |c: i32| (outcome_of(c).map_or(u8::MAX, ActOutcome::severity), c);
    codes.into_iter().max_by_key(|c| rank(*c)).unwrap_or(DONE)
}

#[cfg(test)]
mod tests {
    use crate::cli::exit::*;
    use crate::protocol::ProcedureRefusal;

    fn report(v: Verdict) -> ProcedureReport {
        let mut r = ProcedureReport::new("t");
        r.verdict = v;
        r
    }

    #[test]
    fn each_verdict_has_its_code() {
        assert_eq!(
            of_report(&report(Verdict::Completed(TxnState::Finished))),
            0
        );
        assert_eq!(
            of_report(&report(Verdict::EndedElsewhere(TxnState::RolledBack))),
            0
        );
        assert_eq!(
            of_report(&report(Verdict::Refused(ProcedureRefusal::Committed))),
            1
        );
        assert_eq!(
            of_report(&report(Verdict::Failed(Error::Unreachable("x".into())))),
            3
        );
        assert_eq!(of_report(&report(Verdict::Stopped("crash".into()))), 5);
        let mut leaked = report(Verdict::Completed(TxnState::Finished));
        leaked.push(crate::protocol::StepReport {
            txn: "t".into(),
            step: None,
            label: crate::protocol::report::RELEASE_LOCK.into(),
            target: "locks/A".into(),
            result: crate::protocol::StepResult::Error("unreachable".into()),
            receipt: None,
        });
        assert_eq!(of_report(&leaked), 5);
    }

    #[test]
    fn the_worst_code_wins() {
        assert_eq!(worst([]), 0);
        assert_eq!(worst([0, 1, 0]), 1);
        assert_eq!(worst([1, 3, 0]), 3);
        assert_eq!(worst([3, 5, 1]), 5);
        assert_eq!(worst([2, 1]), 2);
        assert_eq!(worst([1, 2]), 2);
        assert_eq!(worst([5, 4]), 4, "a code no act ends with is worst");
    }
}
