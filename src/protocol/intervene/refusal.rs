//! Why an operator's act will not run (or, previewed, would not run
//! unforced): one typed [`ActRefusal`] with one wording ([`fmt::Display`]).
//! A procedure's own refusal ([`ProcedureRefusal`], what a rollback or
//! recovery decides on the transaction) is one of its variants,
//! [`ActRefusal::Procedure`]; the others are the act's (reason, audit
//! index, read-only, locks, reversal). The wording is the one
//! the command line prints after `refused: ` and the dashboard's dialog and
//! log show, instead of sentences passed around and guessed back.

use crate::protocol::jobs::{HeldBy, JobLife};
use crate::protocol::locks::LockView;
use crate::protocol::reverse::ReverseRefusal;
use crate::protocol::steps::ProcedureRefusal;
use crate::protocol::trail::{ActionKind, Operator};
use std::fmt;

/// Why an act will not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActRefusal {
    /// The audit trail wants a reason for this act and none was given
    /// (rollbacks and reversals always; forced and bulk acts too).
    ReasonMissing {
        /// The act.
        action: ActionKind,
        /// Whether it is only forcing or acting in bulk that makes it needed.
        because_forced_or_bulk: bool,
    },
    /// The audit index does not exist, so the act cannot be recorded.
    AuditIndexMissing(String),
    /// The tool runs read-only, and why.
    ReadOnly(ReadOnlyBy),
    /// The transaction named does not exist.
    NoSuchTransaction(String),
    /// The procedure (rollback, recovery) refuses the transaction: within
    /// the recovery window, committed, unknown state, malformed, ...
    Procedure(ProcedureRefusal),
    /// The lock is not (known to be) stale.
    LockNotStale {
        /// The locked resource.
        resource: String,
        /// Who holds it, in words.
        holder: String,
    },
    /// Some of the transaction's locks are not stale.
    LocksNotStale(Vec<String>),
    /// The reversal's rule refuses the original.
    Reverse(ReverseRefusal),
    /// A production profile's bulk or forced act was not confirmed by
    /// typing what its guard asks.
    Unconfirmed(super::Guard),
    /// The profile wants a second operator's approval and the act runs
    /// without a plan file (`estx-tui apply`).
    NeedsPlan(String),
    /// The profile wants a second operator's approval and the plan's
    /// planner is the operator applying it.
    OwnPlan {
        /// The profile.
        profile: String,
        /// Who planned (and now applies) it.
        planner: Operator,
    },
    /// The profile wants a second operator's approval and the job to
    /// resume was not begun from an applied plan: its resume would move
    /// money no second operator approved.
    ResumeNeedsPlan {
        /// The profile.
        profile: String,
        /// The run's id.
        run: String,
    },
    /// The job to resume is not presumed dead: its heartbeat is recent, or
    /// its record carries none (`jobs::job_life`).
    JobNotDead {
        /// The run's id.
        run: String,
        /// What its record says of its process.
        life: JobLife,
    },
    /// The transaction is held by another live job (another operator's,
    /// or another process's): acting on it unforced would collide with
    /// that job's writes and confuse the records.
    HeldByJob {
        /// The transaction.
        txn: String,
        /// The job holding it: whose, which, how fresh.
        by: HeldBy,
    },
}

/// What kind of refusal an [`ActRefusal`] is, for counts (`3 refused:
/// committed`): the procedure's refusals many transactions share, by kind,
/// and any other by itself. Shown in a few words ([`fmt::Display`]; the
/// whole wording where it has no shorter kind), and ordered by those words,
/// the order counts are printed in.
#[derive(Debug, Clone)]
pub enum RefusalKind {
    /// The transaction is committed.
    Committed,
    /// Modified within the recovery window.
    Recent,
    /// In a state the tool does not know.
    UnknownState,
    /// The transaction (or an account it names) is malformed.
    Malformed,
    /// Any other refusal.
    Other(Box<ActRefusal>),
}

impl RefusalKind {
    fn words(&self) -> std::borrow::Cow<'static, str> {
        match self {
            RefusalKind::Committed => "committed".into(),
            RefusalKind::Recent => "modified within the recovery window".into(),
            RefusalKind::UnknownState => "unknown state".into(),
            RefusalKind::Malformed => "malformed".into(),
            RefusalKind::Other(r) => r.to_string().into(),
        }
    }
}

impl fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words())
    }
}

/// Kinds are equal when their words are: two refusals worded alike count
/// together.
impl PartialEq for RefusalKind {
    fn eq(&self, other: &Self) -> bool {
        self.words() == other.words()
    }
}

impl Eq for RefusalKind {}

impl PartialOrd for RefusalKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RefusalKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.words().cmp(&other.words())
    }
}

/// What makes the tool read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyBy {
    /// The profile of this name is marked production.
    ProductionProfile(String),
    /// The profile of this name, or `--read-only`, says so.
    Profile(String),
    /// `--read-only` or `ESTX_READ_ONLY`, with no profile.
    Setting,
}

impl ActRefusal {
    /// The lock refusal of `view` when it is not stale (`None`: stale or
    /// not held, so a release may run).
    pub fn of_lock(view: Option<&LockView>) -> Option<ActRefusal> {
        let v = view?;
        (!v.staleness.is_stale()).then(|| ActRefusal::LockNotStale {
            resource: v.info.resource.clone(),
            holder: v.info.holder_label(),
        })
    }

    /// Whether it is the recovery window's (which the screen's clock may
    /// have lifted since it was judged).
    pub fn recent(&self) -> Option<&ProcedureRefusal> {
        match self {
            ActRefusal::Procedure(r @ ProcedureRefusal::Recent { .. }) => Some(r),
            _ => None,
        }
    }

    /// Its kind, for counts (`3 refused: committed`).
    pub fn kind(&self) -> RefusalKind {
        match self {
            ActRefusal::Procedure(ProcedureRefusal::Committed) => RefusalKind::Committed,
            ActRefusal::Procedure(ProcedureRefusal::Recent { .. }) => RefusalKind::Recent,
            ActRefusal::Procedure(ProcedureRefusal::UnknownState(_)) => RefusalKind::UnknownState,
            ActRefusal::Procedure(ProcedureRefusal::Malformed(_)) => RefusalKind::Malformed,
            other => RefusalKind::Other(Box::new(other.clone())),
        }
    }

    /// The wording with `force` as the way past it where forcing can lift
    /// it (`--force` on the command line, the dialog's force key in the
    /// dashboard); [`fmt::Display`] is this with `--force`.
    pub fn explain(&self, force: &str) -> String {
        match self {
            ActRefusal::Procedure(r) => r.explain(force),
            ActRefusal::Reverse(ReverseRefusal::Protocol(r)) => {
                format!("finishing it first: {}", r.explain(force))
            }
            ActRefusal::LockNotStale { resource, holder } => {
                format!("lock on `{resource}` held by {holder} is not stale")
            }
            ActRefusal::LocksNotStale(live) => format!("not stale: {}", live.join(", ")),
            ActRefusal::JobNotDead { run, life } => {
                let why = match life {
                    JobLife::Unknown => "nothing says whether its process is gone",
                    _ => "its process still runs it: a second run would go over the same transactions",
                };
                format!(
                    "job `{run}` is {life}: {why}; resume it once it is presumed dead, or \
                     {force} with a reason if you know its process is gone"
                )
            }
            ActRefusal::HeldByJob { txn, by } => format!(
                "`{txn}` is held by {by}: wait for it to end, or {force} with a reason to act \
                 over it (the record says so)"
            ),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for ActRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActRefusal::ReasonMissing {
                action,
                because_forced_or_bulk,
            } => {
                let when = if *because_forced_or_bulk {
                    " when forced or bulk"
                } else {
                    ""
                };
                write!(f, "{action}{when} needs a reason for the audit trail")
            }
            ActRefusal::AuditIndexMissing(index) => write!(
                f,
                "the audit index `{index}` does not exist, so the intervention cannot be \
                 recorded: run `estx-tui init` first (it needs the create_index privilege), \
                 or record to a local file with `--audit-trail file:PATH`"
            ),
            ActRefusal::ReadOnly(ReadOnlyBy::ProductionProfile(name)) => {
                write!(f, "profile `{name}` is production, so read-only")
            }
            ActRefusal::ReadOnly(ReadOnlyBy::Profile(name)) => {
                write!(f, "read-only (profile `{name}` or --read-only)")
            }
            ActRefusal::ReadOnly(ReadOnlyBy::Setting) => {
                f.write_str("read-only (--read-only / ESTX_READ_ONLY)")
            }
            ActRefusal::NoSuchTransaction(id) => write!(f, "transaction `{id}` no longer exists"),
            ActRefusal::Unconfirmed(g) => write!(f, "{g}"),
            ActRefusal::NeedsPlan(profile) => write!(
                f,
                "profile `{profile}` wants a second operator's approval: write the plan with \
                 --plan-out FILE, and have another operator run `estx-tui apply FILE`"
            ),
            ActRefusal::ResumeNeedsPlan { profile, run } => write!(
                f,
                "profile `{profile}` wants a second operator's approval: job `{run}` was not \
                 begun from an applied plan, so its resume needs one too: plan what it has left \
                 (e.g. `recover --all-stuck --plan-out FILE`) and have another operator run \
                 `estx-tui apply FILE`"
            ),
            ActRefusal::OwnPlan { profile, planner } => write!(
                f,
                "profile `{profile}` wants a second operator's approval: this plan was made by \
                 {planner}, who may not apply it"
            ),
            ActRefusal::Reverse(ReverseRefusal::Protocol(_)) => {
                f.write_str(&self.explain("--force"))
            }
            ActRefusal::Reverse(r) => write!(f, "{r}"),
            other => f.write_str(&other.explain("--force")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_kinds_count_by_their_words_in_the_order_of_their_words() {
        let gone = |id: &str| ActRefusal::NoSuchTransaction(id.into()).kind();
        let kinds = [
            ActRefusal::Procedure(ProcedureRefusal::UnknownState("x".into())).kind(),
            gone("a"),
            ActRefusal::Procedure(ProcedureRefusal::Committed).kind(),
            gone("a"),
            ActRefusal::Procedure(ProcedureRefusal::Malformed(Default::default())).kind(),
        ];
        let mut counts = std::collections::BTreeMap::new();
        for k in kinds {
            *counts.entry(k).or_insert(0) += 1;
        }
        let shown: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        assert_eq!(
            shown,
            [
                "1 committed",
                "1 malformed",
                "2 transaction `a` no longer exists",
                "1 unknown state"
            ]
        );
    }

    #[test]
    fn the_window_refusal_is_typed_and_worded_for_each_front_end() {
        let recent = ActRefusal::Procedure(ProcedureRefusal::Recent {
            age: chrono::TimeDelta::seconds(3),
            window: std::time::Duration::from_secs(60),
        });
        assert!(recent.recent().is_some());
        assert!(recent.to_string().contains("within the 1m recovery window"));
        assert!(recent
            .explain("the force key !")
            .contains("use the force key !"));
        let committed = ActRefusal::Procedure(ProcedureRefusal::Committed);
        assert!(committed.recent().is_none());
        let reason = ActRefusal::ReasonMissing {
            action: ActionKind::Recover,
            because_forced_or_bulk: true,
        };
        assert_eq!(
            reason.to_string(),
            "recover when forced or bulk needs a reason for the audit trail"
        );
    }
}
