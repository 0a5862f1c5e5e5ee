//! The protocol's steps as pure decisions over one document.
//!
//! Each function has the meaning of one of the article's update scripts
//! (`update_transaction_state`, `apply_transaction_to_account`,
//! `remove_transaction_from_account`, `undo_transaction_on_account`) plus the
//! fencing this tool adds, and returns either the new document state to write
//! or a no-op with its reason. Nothing here does I/O: the
//! [executor](super::executor) runs these under optimistic concurrency, and the
//! model checker in `tests/model_check.rs` runs the very same functions.

use super::account::{AccountState, Settled, SettledOutcome};
use super::transaction::TxnState;
use chrono::{DateTime, Utc};
use std::fmt;

/// Whether account steps keep and honour the settled records.
///
/// Always `On` in production; `Off` reproduces the reference protocol exactly
/// and exists so tests can show the holes fencing closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fencing {
    /// Keep and honour settled records (the default).
    #[default]
    On,
    /// The reference protocol as written.
    Off,
}

/// What a write does, in the protocol's words (for reports and the event log).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The transaction state moved `from` -> `to`.
    Transitioned {
        /// Previous state.
        from: TxnState,
        /// New state.
        to: TxnState,
    },
    /// Balance changed by `delta` and the id was added to pending.
    Applied {
        /// Change applied to the balance.
        delta: i64,
    },
    /// Id removed from pending after commit (and recorded as settled).
    Removed,
    /// Balance changed by `delta` to reverse an apply; id removed; recorded.
    Undone {
        /// Change applied to the balance (the opposite of the apply).
        delta: i64,
    },
    /// The transaction was never applied here; only a fence was recorded so a
    /// late apply becomes a no-op.
    Fenced,
    /// Old settled records of terminal transactions were pruned.
    Pruned {
        /// How many records were dropped.
        count: usize,
    },
    /// A lock document was created for the transaction.
    LockAcquired,
    /// A lock document was deleted.
    LockReleased,
    /// A transaction document was created (a reversal).
    Created,
    /// A link field was set on a transaction (`reversed_by`), every other
    /// field kept.
    Linked {
        /// The field written.
        field: &'static str,
        /// The id it now names.
        to: String,
    },
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::Transitioned { from, to } => write!(f, "state {from} -> {to}"),
            Effect::Applied { delta } => write!(f, "applied {delta:+}"),
            Effect::Removed => f.write_str("removed from pending"),
            Effect::Undone { delta } => write!(f, "undone {delta:+}"),
            Effect::Fenced => f.write_str("never applied; fenced against a late apply"),
            Effect::Pruned { count } => write!(f, "pruned {count} settled record(s)"),
            Effect::LockAcquired => f.write_str("lock acquired"),
            Effect::LockReleased => f.write_str("lock released"),
            Effect::Created => f.write_str("created"),
            Effect::Linked { field, to } => write!(f, "{field} = {to}"),
        }
    }
}

/// Why a step changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NoopReason {
    /// The transaction was not in the step's starting state; it is in this one.
    StateIs(TxnState),
    /// The transaction is already in pending on this account.
    AlreadyApplied,
    /// This account already settled the transaction (fencing): it must not be
    /// applied again. Whoever settled it has moved the transaction on.
    Settled(SettledOutcome),
    /// Remove found the id absent (already removed, or never applied).
    NotPending,
    /// Undo found the transaction already undone here.
    AlreadyUndone,
    /// Nothing to prune.
    NothingToPrune,
    /// There was no lock to release.
    LockNotHeld,
    /// The document already existed, written by an earlier attempt.
    AlreadyExists,
    /// The link field already names this id (an earlier attempt wrote it).
    AlreadyLinked(String),
}

impl fmt::Display for NoopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoopReason::StateIs(s) => write!(f, "transaction is {s}"),
            NoopReason::AlreadyApplied => f.write_str("already applied"),
            NoopReason::Settled(o) => write!(f, "already settled here ({})", o.as_str()),
            NoopReason::NotPending => f.write_str("not in pending_transactions"),
            NoopReason::AlreadyUndone => f.write_str("already undone"),
            NoopReason::NothingToPrune => f.write_str("nothing to prune"),
            NoopReason::LockNotHeld => f.write_str("no lock held"),
            NoopReason::AlreadyExists => f.write_str("already exists (an earlier attempt)"),
            NoopReason::AlreadyLinked(to) => write!(f, "already linked to {to}"),
        }
    }
}

/// The result of a decision: the new state to write, or why not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Decision<T> {
    /// Write this new state; it does what `Effect` says.
    Write(T, Effect),
    /// Leave the document as it is.
    Noop(NoopReason),
}

/// A decision that cannot be taken because the document contradicts the
/// protocol (e.g. undo of a transaction the account settled as committed).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Contradiction(pub String);

/// `update_transaction_state`: move `from` -> `to` if the transaction is in `from`.
pub fn transition(current: &TxnState, from: &TxnState, to: &TxnState) -> Decision<TxnState> {
    if current == from {
        Decision::Write(
            to.clone(),
            Effect::Transitioned {
                from: from.clone(),
                to: to.clone(),
            },
        )
    } else {
        Decision::Noop(NoopReason::StateIs(current.clone()))
    }
}

/// `apply_transaction_to_account`: add `delta` and push the id, unless the
/// account already carries it, or (fencing) has already settled it.
pub fn apply(
    acct: &AccountState,
    txn: &str,
    delta: i64,
    fencing: Fencing,
) -> Result<Decision<AccountState>, Contradiction> {
    if acct.carries(txn) {
        return Ok(Decision::Noop(NoopReason::AlreadyApplied));
    }
    if fencing == Fencing::On {
        if let Some(s) = acct.settled_of(txn) {
            return Ok(Decision::Noop(NoopReason::Settled(s.outcome)));
        }
    }
    let balance = acct
        .balance
        .checked_add(delta)
        .ok_or_else(|| Contradiction(format!("balance {} {delta:+} overflows", acct.balance)))?;
    let mut next = acct.clone();
    next.balance = balance;
    next.pending.push(txn.to_string());
    Ok(Decision::Write(next, Effect::Applied { delta }))
}

/// `remove_transaction_from_account`: drop the id from pending after commit,
/// recording the account as having settled it.
pub fn remove(
    acct: &AccountState,
    txn: &str,
    fencing: Fencing,
    now: DateTime<Utc>,
) -> Decision<AccountState> {
    if !acct.carries(txn) {
        return Decision::Noop(NoopReason::NotPending);
    }
    let mut next = acct.clone();
    next.pending.retain(|p| p != txn);
    if fencing == Fencing::On {
        record(&mut next, txn, SettledOutcome::Applied, now);
    }
    Decision::Write(next, Effect::Removed)
}

/// `undo_transaction_on_account`: reverse an apply of `applied_delta` (the
/// delta the apply added) and drop the id. With fencing, undo of a transaction
/// the account never applied records it as undone, so a late apply is a no-op.
pub fn undo(
    acct: &AccountState,
    txn: &str,
    applied_delta: i64,
    fencing: Fencing,
    now: DateTime<Utc>,
) -> Result<Decision<AccountState>, Contradiction> {
    if acct.carries(txn) {
        let delta = applied_delta
            .checked_neg()
            .ok_or_else(|| Contradiction(format!("cannot negate {applied_delta}")))?;
        let mut next = acct.clone();
        next.balance = acct.balance.checked_add(delta).ok_or_else(|| {
            Contradiction(format!("balance {} {delta:+} overflows", acct.balance))
        })?;
        next.pending.retain(|p| p != txn);
        if fencing == Fencing::On {
            record(&mut next, txn, SettledOutcome::Undone, now);
        }
        return Ok(Decision::Write(next, Effect::Undone { delta }));
    }
    if fencing == Fencing::Off {
        return Ok(Decision::Noop(NoopReason::NotPending));
    }
    match acct.settled_of(txn).map(|s| s.outcome) {
        Some(SettledOutcome::Undone) => Ok(Decision::Noop(NoopReason::AlreadyUndone)),
        Some(SettledOutcome::Applied) => Err(Contradiction(format!(
            "account settled `{txn}` as committed; a rollback must not undo it"
        ))),
        None => {
            let mut next = acct.clone();
            record(&mut next, txn, SettledOutcome::Undone, now);
            Ok(Decision::Write(next, Effect::Fenced))
        }
    }
}

/// Repair of an apply that came after the account had settled the
/// transaction (a late duplicate by an unfenced writer): reverses it and drops
/// the id, keeping whatever settled record the account has — the account did
/// settle it, once, and the fence must keep saying so.
pub fn reverse_duplicate(
    acct: &AccountState,
    txn: &str,
    applied_delta: i64,
) -> Result<Decision<AccountState>, Contradiction> {
    if !acct.carries(txn) {
        return Ok(Decision::Noop(NoopReason::NotPending));
    }
    let mut next = acct.clone();
    let delta = applied_delta
        .checked_neg()
        .ok_or_else(|| Contradiction(format!("cannot negate {applied_delta}")))?;
    next.balance = acct
        .balance
        .checked_add(delta)
        .ok_or_else(|| Contradiction(format!("balance {} {delta:+} overflows", acct.balance)))?;
    next.pending.retain(|p| p != txn);
    Ok(Decision::Write(next, Effect::Undone { delta }))
}

/// Drops the settled records of `prunable` transactions written before
/// `cutoff`. The caller decides which transactions are prunable (terminal and
/// older than the retention); this only never prunes a record younger than
/// `cutoff`.
pub fn prune(
    acct: &AccountState,
    prunable: &[String],
    cutoff: DateTime<Utc>,
) -> Decision<AccountState> {
    let mut next = acct.clone();
    next.settled
        .retain(|s| !(s.at < cutoff && prunable.iter().any(|p| p == &s.txn)));
    let count = acct.settled.len() - next.settled.len();
    if count == 0 {
        Decision::Noop(NoopReason::NothingToPrune)
    } else {
        Decision::Write(next, Effect::Pruned { count })
    }
}

fn record(acct: &mut AccountState, txn: &str, outcome: SettledOutcome, at: DateTime<Utc>) {
    acct.settled.retain(|s| s.txn != txn);
    acct.settled.push(Settled {
        txn: txn.to_string(),
        outcome,
        at,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000, 0).unwrap()
    }

    fn written(d: Decision<AccountState>) -> AccountState {
        match d {
            Decision::Write(a, _) => a,
            Decision::Noop(r) => panic!("expected a write, got noop: {r}"),
        }
    }

    #[test]
    fn transition_only_from_the_expected_state() {
        assert!(matches!(
            transition(&TxnState::Created, &TxnState::Created, &TxnState::Pending),
            Decision::Write(TxnState::Pending, _)
        ));
        assert_eq!(
            transition(
                &TxnState::Committed,
                &TxnState::Pending,
                &TxnState::Terminating
            ),
            Decision::Noop(NoopReason::StateIs(TxnState::Committed))
        );
    }

    #[test]
    fn apply_is_idempotent() {
        let a = written(apply(&AccountState::new(500), "t", -100, Fencing::On).unwrap());
        assert_eq!(a.balance, 400);
        assert_eq!(
            apply(&a, "t", -100, Fencing::On).unwrap(),
            Decision::Noop(NoopReason::AlreadyApplied)
        );
    }

    #[test]
    fn hole_one_late_apply_after_remove_is_fenced() {
        let a = written(apply(&AccountState::new(500), "t", -100, Fencing::On).unwrap());
        let a = written(remove(&a, "t", Fencing::On, now()));
        assert_eq!(
            apply(&a, "t", -100, Fencing::On).unwrap(),
            Decision::Noop(NoopReason::Settled(SettledOutcome::Applied))
        );
        // Without fencing the reference protocol debits twice.
        let b = written(apply(&AccountState::new(500), "t", -100, Fencing::Off).unwrap());
        let b = written(remove(&b, "t", Fencing::Off, now()));
        assert_eq!(
            written(apply(&b, "t", -100, Fencing::Off).unwrap()).balance,
            300
        );
    }

    #[test]
    fn hole_two_late_apply_after_undo_of_nothing_is_fenced() {
        let a = written(undo(&AccountState::new(500), "t", -100, Fencing::On, now()).unwrap());
        assert_eq!(a.balance, 500);
        assert_eq!(
            apply(&a, "t", -100, Fencing::On).unwrap(),
            Decision::Noop(NoopReason::Settled(SettledOutcome::Undone))
        );
        assert_eq!(
            undo(&AccountState::new(500), "t", -100, Fencing::Off, now()).unwrap(),
            Decision::Noop(NoopReason::NotPending)
        );
    }

    #[test]
    fn undo_reverses_and_is_idempotent() {
        let a = written(apply(&AccountState::new(500), "t", 100, Fencing::On).unwrap());
        let a = written(undo(&a, "t", 100, Fencing::On, now()).unwrap());
        assert_eq!(a.balance, 500);
        assert!(a.pending.is_empty());
        assert_eq!(
            undo(&a, "t", 100, Fencing::On, now()).unwrap(),
            Decision::Noop(NoopReason::AlreadyUndone)
        );
    }

    #[test]
    fn undo_after_commit_is_a_contradiction() {
        let a = written(apply(&AccountState::new(500), "t", 100, Fencing::On).unwrap());
        let a = written(remove(&a, "t", Fencing::On, now()));
        assert!(undo(&a, "t", 100, Fencing::On, now()).is_err());
    }

    #[test]
    fn overflow_is_refused() {
        assert!(apply(&AccountState::new(i64::MAX), "t", 1, Fencing::On).is_err());
    }

    #[test]
    fn prune_only_old_records_of_prunable_transactions() {
        let a = written(undo(&AccountState::new(5), "old", 1, Fencing::On, now()).unwrap());
        let later = now() + chrono::Duration::hours(25);
        let a = written(undo(&a, "young", 1, Fencing::On, later).unwrap());
        let cutoff = now() + chrono::Duration::hours(1);
        let names = vec!["old".to_string(), "young".to_string()];
        let pruned = written(prune(&a, &names, cutoff));
        assert_eq!(pruned.settled.len(), 1);
        assert_eq!(pruned.settled[0].txn, "young");
        assert_eq!(
            prune(&pruned, &names, cutoff),
            Decision::Noop(NoopReason::NothingToPrune)
        );
    }
}
