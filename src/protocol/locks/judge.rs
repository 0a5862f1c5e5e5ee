//! Whether a lock's holder is gone, judged only on evidence. A lock is
//! stale when its lease expired; when its owner is a transaction of the
//! transactions index that is terminal, or stuck by the one stuck rule
//! ([`urgency`]); or when the configured liveness source says its holder
//! is dead. Everything else is unknown, an owner that names no transaction
//! included: Kestra's owner is a server instance, the guide's holder a
//! process, and neither is ever found among the transactions.
//! Unknown locks are never swept, never counted stale, and released only
//! by force.

use super::liveness::Heartbeat;
use super::LockInfo;
use crate::protocol::read::rules::urgency;
use crate::protocol::time::human_age;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use std::fmt;
use std::time::Duration;

/// What is known of the transaction a lock's `owner` names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Owner<'a> {
    /// No such transaction document (not evidence of anything: the owner
    /// may be a process or an instance). A read by id that missed is
    /// confirmed by a search before it says so, so an owner the
    /// application indexed with custom routing is never missing here.
    Missing,
    /// The document exists but its state cannot be read.
    Unreadable,
    /// The document, with a readable state.
    Is(&'a Transaction),
}

impl<'a> Owner<'a> {
    /// From a lookup by id: `None` = no document.
    pub fn from_lookup(found: Option<&'a Transaction>) -> Owner<'a> {
        match found {
            None => Owner::Missing,
            Some(t) if t.state.is_none() => Owner::Unreadable,
            Some(t) => Owner::Is(t),
        }
    }
}

/// Whether a lock's holder can be presumed gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staleness {
    /// Held by an owner transaction still running, or a holder whose
    /// heartbeat is fresh.
    Live,
    /// Safe to release, on the evidence given.
    Stale(StaleReason),
    /// Cannot tell: an operator must decide (and force).
    Unknown(UnknownReason),
}

/// The evidence that a lock is abandoned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaleReason {
    /// The lease ran out this many seconds ago.
    LeaseExpired {
        /// Seconds since it expired.
        ago: i64,
    },
    /// The owner transaction is finished or rolled back.
    OwnerEnded {
        /// The owner transaction.
        txn: String,
        /// Its terminal state.
        state: TxnState,
    },
    /// The owner transaction is in flight and stuck by the one stuck rule.
    OwnerStuck {
        /// The owner transaction.
        txn: String,
        /// Its state.
        state: TxnState,
        /// Seconds since it was modified, when known.
        untouched: Option<i64>,
        /// The recovery window it exceeds.
        window: Duration,
    },
    /// The liveness source's last heartbeat of the holder is too old.
    HolderDead {
        /// The holder, as labelled ("instance X").
        holder: String,
        /// Seconds since its last heartbeat.
        silent: i64,
        /// The configured timeout.
        timeout: Duration,
    },
}

/// Why a lock cannot be judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownReason {
    /// The lock names no holder at all (the guide's global and tree locks).
    NoHolder {
        /// The lock's shape ("guide tree exclusive").
        what: String,
    },
    /// The owner transaction exists but its state cannot be read.
    OwnerUnreadable {
        /// The owner transaction.
        txn: String,
    },
    /// The holder is not a transaction and no liveness source is configured.
    HolderUnverified {
        /// The holder, as labelled ("instance X", "process 123").
        holder: String,
        /// Seconds since the lock was taken, when known.
        age: Option<i64>,
    },
    /// The liveness source has no heartbeat of the holder.
    NoHeartbeat {
        /// The holder, as labelled.
        holder: String,
        /// Seconds since the lock was taken, when known.
        age: Option<i64>,
    },
}

impl Staleness {
    /// True only for [`Staleness::Stale`].
    pub fn is_stale(&self) -> bool {
        matches!(self, Staleness::Stale(_))
    }
}

impl fmt::Display for Staleness {
    /// `live`, `stale: why`, `unknown: why` (listings, JSON, audit records).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Staleness::Live => write!(f, "live"),
            Staleness::Stale(why) => write!(f, "stale: {why}"),
            Staleness::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}

fn age_text(age: Option<i64>) -> String {
    age.map(human_age).unwrap_or_else(|| "unknown".into())
}

impl fmt::Display for StaleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaleReason::LeaseExpired { ago } => write!(f, "lease expired {} ago", human_age(*ago)),
            StaleReason::OwnerEnded { txn, state } => {
                write!(f, "owner transaction `{txn}` is {state}")
            }
            StaleReason::OwnerStuck {
                txn,
                state,
                untouched,
                window,
            } => {
                let untouched = match untouched {
                    Some(age) => format!("untouched for {}", human_age(*age)),
                    None => "with no usable modification time".into(),
                };
                write!(
                    f,
                    "owner transaction `{txn}` is {state} and stuck: {untouched}, longer than the {} recovery window",
                    human_age(window.as_secs() as i64)
                )
            }
            StaleReason::HolderDead {
                holder,
                silent,
                timeout,
            } => write!(
                f,
                "{holder} is dead: no heartbeat for {}, longer than the {} timeout",
                human_age(*silent),
                human_age(timeout.as_secs() as i64)
            ),
        }
    }
}

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownReason::NoHolder { what } => {
                write!(
                    f,
                    "the {what} lock names no holder; cannot tell whether it is in use"
                )
            }
            UnknownReason::OwnerUnreadable { txn } => {
                write!(f, "owner transaction `{txn}` has no readable state")
            }
            UnknownReason::HolderUnverified { holder, age } => write!(
                f,
                "held by {holder}, age {}; cannot tell whether it is alive",
                age_text(*age)
            ),
            UnknownReason::NoHeartbeat { holder, age } => write!(
                f,
                "held by {holder}, age {}; it has no heartbeat: cannot tell whether it is alive",
                age_text(*age)
            ),
        }
    }
}

impl LockInfo {
    /// Judges the lock on evidence: its lease, what is known of the
    /// transaction its `owner` names, and what the liveness source says of
    /// its holder (see the module doc for the rule).
    pub fn staleness(
        &self,
        owner: Owner<'_>,
        beat: Heartbeat,
        now: DateTime<Utc>,
        config: &ProtocolConfig,
    ) -> Staleness {
        if let Some(exp) = self.expires_at.filter(|exp| *exp <= now) {
            let ago = (now - exp).num_seconds();
            return Staleness::Stale(StaleReason::LeaseExpired { ago });
        }
        if let Some(judged) = self
            .owner
            .as_deref()
            .and_then(|t| by_owner(t, owner, now, config))
        {
            return judged;
        }
        if self.holder_id().is_none() {
            let what = self.shape.label().to_string();
            return Staleness::Unknown(UnknownReason::NoHolder { what });
        }
        let holder = self.holder_label();
        let age = self.age_seconds(now);
        match (beat, &config.liveness) {
            (Heartbeat::Seen(at), Some(source)) => {
                let silent = (now - at).num_milliseconds();
                let timeout = chrono::Duration::from_std(source.timeout)
                    .unwrap_or(chrono::Duration::MAX)
                    .num_milliseconds();
                if silent > timeout {
                    Staleness::Stale(StaleReason::HolderDead {
                        holder,
                        silent: silent / 1000,
                        timeout: source.timeout,
                    })
                } else {
                    Staleness::Live
                }
            }
            (Heartbeat::Missing, Some(_)) => {
                Staleness::Unknown(UnknownReason::NoHeartbeat { holder, age })
            }
            _ => Staleness::Unknown(UnknownReason::HolderUnverified { holder, age }),
        }
    }
}

/// The judgement the transaction `txn` a lock's `owner` names gives;
/// `None` when there is no such transaction (no evidence either way).
fn by_owner(
    txn: &str,
    owner: Owner<'_>,
    now: DateTime<Utc>,
    config: &ProtocolConfig,
) -> Option<Staleness> {
    let txn = txn.to_string();
    let t = match owner {
        Owner::Missing => return None,
        Owner::Unreadable => {
            return Some(Staleness::Unknown(UnknownReason::OwnerUnreadable { txn }))
        }
        Owner::Is(t) => t,
    };
    Some(match &t.state {
        Some(s) if s.is_terminal() => Staleness::Stale(StaleReason::OwnerEnded {
            txn,
            state: s.clone(),
        }),
        Some(s) if urgency(t, now, config).is_stuck() => {
            Staleness::Stale(StaleReason::OwnerStuck {
                txn,
                state: s.clone(),
                untouched: t.age_seconds(now),
                window: config.recovery_window,
            })
        }
        _ => Staleness::Live,
    })
}
