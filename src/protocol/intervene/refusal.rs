//! Why an operator's act will not run (or, previewed, would not run
//! unforced): one typed refusal with one wording ([`fmt::Display`]), which
//! the command line prints after `refused: ` and the dashboard's dialog and
//! log show, instead of sentences passed around and guessed back.

use crate::protocol::locks::LockView;
use crate::protocol::reverse::ReverseRefusal;
use crate::protocol::steps;
use crate::protocol::trail::ActionKind;
use std::fmt;

/// Why an act will not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
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
    /// The tool runs read-only (the words say by which setting).
    ReadOnly(String),
    /// The transaction named does not exist.
    NoSuchTransaction(String),
    /// The protocol refuses the procedure: within the recovery window,
    /// committed, unknown state, malformed, ...
    Protocol(steps::Refusal),
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
}

impl Refusal {
    /// The lock refusal of `view` when it is not stale (`None`: stale or
    /// not held, so a release may run).
    pub fn of_lock(view: Option<&LockView>) -> Option<Refusal> {
        let v = view?;
        (!v.staleness.is_stale()).then(|| Refusal::LockNotStale {
            resource: v.info.resource.clone(),
            holder: v.info.holder_label(),
        })
    }

    /// Whether it is the recovery window's (which the screen's clock may
    /// have lifted since it was judged).
    pub fn recent(&self) -> Option<&steps::Refusal> {
        match self {
            Refusal::Protocol(r @ steps::Refusal::Recent { .. }) => Some(r),
            _ => None,
        }
    }

    /// Its kind in a few words, for counts (`3 refused: committed`); the
    /// whole wording where it has no shorter kind.
    pub fn kind(&self) -> String {
        match self {
            Refusal::Protocol(steps::Refusal::Committed) => "committed",
            Refusal::Protocol(steps::Refusal::Recent { .. }) => {
                "modified within the recovery window"
            }
            Refusal::Protocol(steps::Refusal::UnknownState(_)) => "unknown state",
            Refusal::Protocol(steps::Refusal::Malformed(_)) => "malformed",
            other => return other.to_string(),
        }
        .to_string()
    }

    /// The wording with `force` as the way past it where forcing can lift
    /// it (`--force` on the command line, the dialog's force key in the
    /// dashboard); [`fmt::Display`] is this with `--force`.
    pub fn explain(&self, force: &str) -> String {
        match self {
            Refusal::Protocol(r) => r.explain(force),
            Refusal::Reverse(ReverseRefusal::Protocol(r)) => {
                format!("finishing it first: {}", r.explain(force))
            }
            Refusal::LockNotStale { resource, holder } => {
                format!("lock on `{resource}` held by {holder} is not stale")
            }
            Refusal::LocksNotStale(live) => format!("not stale: {}", live.join(", ")),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::ReasonMissing {
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
            Refusal::AuditIndexMissing(index) => write!(
                f,
                "the audit index `{index}` does not exist, so the intervention cannot be \
                 recorded: run `estx-tui init` first (it needs the create_index privilege), \
                 or record to a local file with `--audit-trail file:PATH`"
            ),
            Refusal::ReadOnly(why) => f.write_str(why),
            Refusal::NoSuchTransaction(id) => write!(f, "transaction `{id}` no longer exists"),
            Refusal::Reverse(ReverseRefusal::Protocol(_)) => f.write_str(&self.explain("--force")),
            Refusal::Reverse(r) => write!(f, "{r}"),
            other => f.write_str(&other.explain("--force")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_refusal_is_typed_and_worded_for_each_front_end() {
        let recent = Refusal::Protocol(steps::Refusal::Recent {
            age: chrono::TimeDelta::seconds(3),
            window: std::time::Duration::from_secs(60),
        });
        assert!(recent.recent().is_some());
        assert!(recent.to_string().contains("within the 1m recovery window"));
        assert!(recent
            .explain("the force key !")
            .contains("use the force key !"));
        let committed = Refusal::Protocol(steps::Refusal::Committed);
        assert!(committed.recent().is_none());
        let reason = Refusal::ReasonMissing {
            action: ActionKind::Recover,
            because_forced_or_bulk: true,
        };
        assert_eq!(
            reason.to_string(),
            "recover when forced or bulk needs a reason for the audit trail"
        );
    }
}
