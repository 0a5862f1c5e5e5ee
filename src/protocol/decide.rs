//! The protocol's steps as pure decisions over one document.
//!
//! Each function has the meaning of one of the article's update scripts
//! (`update_transaction_state`, `apply_transaction_to_account`,
//! `remove_transaction_from_account`, `undo_transaction_on_account`) plus the
//! fencing this tool adds, and returns either the new document state to write
//! or a no-op with its reason. Nothing here does I/O: the
//! executor (`protocol::executor`) runs these under optimistic concurrency, and the
//! model checker in `tests/model_check.rs` runs the very same functions.
//!
//! # The fence
//!
//! The reference protocol lets a late worker (one that read the transaction
//! as `pending` long ago, or whose write is still travelling) apply a
//! transaction to an account after a commit removed it there (a double debit)
//! or after a rollback undid nothing there (units from nowhere). The fence
//! closes both holes with the versions Elasticsearch already keeps on every
//! document, and no per-account history:
//!
//! - **Apply** reads the account (at `_seq_no` `a`, instant T1) and decides;
//!   if it must write, it then reads the transaction and, only if it is still
//!   `pending`, **claims** it: a partial update that sets no field and still
//!   advances the version (`"doc": {}` with `"detect_noop": false`; with
//!   no-op detection the products would answer `noop` and keep the
//!   `_seq_no`), conditional on the `_seq_no` it read ([`claim`]). A claim that succeeds
//!   proves, at the primary, that the transaction was `pending` at an instant
//!   T2 after T1. Only then is the account written, conditional on `a`; it
//!   lands, if at all, at T3 > T2.
//! - **Remove** needs no claim: `committed` is permanent.
//! - **Undo** always writes the account, conditional on the version it read,
//!   even when the account never carried the transaction (then the write
//!   sets no field and is forced past no-op detection: a pure version bump).
//!
//! Why no account is ever applied twice, and nothing is applied after its
//! rollback: states only move forward, so the transaction was never
//! `committed` or `terminating` before T2, hence never removed or undone
//! anywhere before T2. The account not carrying the id at T1 thus means it
//! was never applied there before T1. Any apply, remove or undo of anybody
//! that lands between T1 and T3 changes the account's `_seq_no` and makes our
//! write fail. So if ours lands, it is the only apply, and every later remove
//! or undo (which can only begin after the commit or termination, after T2)
//! reads the account after it and sees it. An undo that found nothing to undo
//! still bumped the version, so an apply read before it cannot land after it;
//! an apply read after it cannot claim (the transaction is `terminating`).
//! Late delivery is covered because the conditions are checked by the primary
//! when the write arrives, not when it was decided.
//!
//! The argument needs of the claim only that it is a conditional write of
//! the transaction, decided on a read made after the account read (T1), that
//! leaves it `pending`: the begin `created -> pending` decided on such a
//! read is one as well, and one claim covers every apply whose account read
//! came before it (the batched executor, `protocol::batch`, reads both accounts,
//! then claims once). Nor does it need the account write to be conditional
//! on the read itself: a process may chain it on the version of its own
//! earlier write to that account (as the `_bulk` answer gives it), when that
//! write was conditional on the T1 read; nobody else can have written the
//! account between T1 and T3 either way.
//!
//! Legacy `settled_transactions` records left by earlier versions are still
//! honoured (an apply of a transaction the account has a record of is a
//! no-op; an undo of one recorded as applied is a contradiction) but never
//! written.

use super::account::{AccountState, PendingDelta, SettledOutcome};
use super::transaction::TxnState;
use std::fmt;

/// Whether apply claims the transaction and undo always writes (see the
/// module docs).
///
/// Always `On` in production; `Off` reproduces the reference protocol exactly
/// and exists so tests and the model check can show the holes fencing closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fencing {
    /// Claim before apply; undo always writes (the default).
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
    /// The transaction got a forced write that changes nothing (a version
    /// bump) to prove it is still pending.
    Claimed,
    /// Balance changed by `delta` and the id was added to pending.
    Applied {
        /// Change applied to the balance.
        delta: i64,
    },
    /// Id removed from pending after commit.
    Removed,
    /// Balance changed by `delta` to reverse an apply; id removed.
    Undone {
        /// Change applied to the balance (the opposite of the apply).
        delta: i64,
    },
    /// The transaction was never applied here; the account got a forced
    /// write that changes nothing (a version bump) so an apply still in
    /// flight can no longer land.
    Fenced,
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
    /// An operator's audit record was completed.
    Recorded,
}

impl Effect {
    /// Whether this write changed an account's balance (an apply or an
    /// undo: what a [`Receipt`](super::receipt::Receipt) is kept for).
    pub fn moves_balance(&self) -> bool {
        matches!(self, Effect::Applied { .. } | Effect::Undone { .. })
    }

    /// The balance change of an apply or undo.
    pub fn delta(&self) -> Option<i64> {
        match self {
            Effect::Applied { delta } | Effect::Undone { delta } => Some(*delta),
            _ => None,
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::Transitioned { from, to } => write!(f, "state {from} -> {to}"),
            Effect::Claimed => f.write_str("claimed while pending"),
            Effect::Applied { delta } => write!(f, "applied {delta:+}"),
            Effect::Removed => f.write_str("removed from pending"),
            Effect::Undone { delta } => write!(f, "undone {delta:+}"),
            Effect::Fenced => f.write_str("never applied; fenced against a late apply"),
            Effect::LockAcquired => f.write_str("lock acquired"),
            Effect::LockReleased => f.write_str("lock released"),
            Effect::Created => f.write_str("created"),
            Effect::Linked { field, to } => write!(f, "{field} = {to}"),
            Effect::Recorded => f.write_str("audit record completed"),
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
    /// This account has a legacy settled record of the transaction: it must
    /// not be applied again. Whoever settled it has moved the transaction on.
    Settled(SettledOutcome),
    /// Remove found the id absent (already removed, or never applied).
    NotPending,
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

pub use super::problem::Contradiction;

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

/// The claim before an apply: bump the transaction's version (a forced write
/// that changes nothing) if it is still
/// `pending` (the write itself is the proof, see the module docs).
pub fn claim(current: &TxnState) -> Decision<TxnState> {
    if *current == TxnState::Pending {
        Decision::Write(current.clone(), Effect::Claimed)
    } else {
        Decision::Noop(NoopReason::StateIs(current.clone()))
    }
}

/// `apply_transaction_to_account`: add `delta`, push the id and record the
/// delta, unless the account already carries it (or has a legacy settled
/// record of it). An account that carries it with a different recorded delta
/// means the transaction's amount was edited after it was applied.
pub fn apply(
    acct: &AccountState,
    txn: &str,
    delta: i64,
) -> Result<Decision<AccountState>, Contradiction> {
    if acct.carries(txn) {
        check_recorded(acct, txn, delta)?;
        return Ok(Decision::Noop(NoopReason::AlreadyApplied));
    }
    if let Some(s) = acct.settled_of(txn) {
        return Ok(Decision::Noop(NoopReason::Settled(s.outcome)));
    }
    let mut next = acct.clone();
    next.balance = add(acct.balance, delta)?;
    next.pending.push(txn.to_string());
    next.deltas.push(PendingDelta {
        txn: txn.to_string(),
        delta,
    });
    Ok(Decision::Write(next, Effect::Applied { delta }))
}

/// `remove_transaction_from_account`: drop the id (and its delta) from
/// pending after commit.
pub fn remove(acct: &AccountState, txn: &str) -> Decision<AccountState> {
    if !acct.carries(txn) {
        return Decision::Noop(NoopReason::NotPending);
    }
    Decision::Write(drop_pending(acct, txn), Effect::Removed)
}

/// `undo_transaction_on_account`: reverse the apply of `applied_delta` (the
/// delta an apply adds, from the transaction's amount) and drop the id. The
/// delta the account recorded is what is reversed; it must agree with the
/// transaction. With fencing, an account that does not carry the transaction
/// gets a forced write that changes nothing (a version bump, so no apply in flight can land
/// after this undo); without, that is a no-op as in the reference protocol.
pub fn undo(
    acct: &AccountState,
    txn: &str,
    applied_delta: i64,
    fencing: Fencing,
) -> Result<Decision<AccountState>, Contradiction> {
    if acct.carries(txn) {
        let applied = check_recorded(acct, txn, applied_delta)?;
        let delta = negate(applied)?;
        let mut next = drop_pending(acct, txn);
        next.balance = add(acct.balance, delta)?;
        return Ok(Decision::Write(next, Effect::Undone { delta }));
    }
    if acct.settled_of(txn).map(|s| s.outcome) == Some(SettledOutcome::Applied) {
        return Err(Contradiction::SettledAsCommitted {
            txn: txn.to_string(),
        });
    }
    Ok(match fencing {
        Fencing::On => Decision::Write(acct.clone(), Effect::Fenced),
        Fencing::Off => Decision::Noop(NoopReason::NotPending),
    })
}

/// Repair of an apply that came after the account had settled the
/// transaction (a late duplicate by an unfenced writer, seen through a legacy
/// settled record): reverses it and drops the id.
pub fn reverse_duplicate(
    acct: &AccountState,
    txn: &str,
    applied_delta: i64,
) -> Result<Decision<AccountState>, Contradiction> {
    if !acct.carries(txn) {
        return Ok(Decision::Noop(NoopReason::NotPending));
    }
    let applied = check_recorded(acct, txn, applied_delta)?;
    let delta = negate(applied)?;
    let mut next = drop_pending(acct, txn);
    next.balance = add(acct.balance, delta)?;
    Ok(Decision::Write(next, Effect::Undone { delta }))
}

/// The delta the account recorded for `txn` (or `expected` when it recorded
/// none: entries written by the application's scripts or an older estx-tui),
/// refusing when it differs from what the transaction says now.
fn check_recorded(acct: &AccountState, txn: &str, expected: i64) -> Result<i64, Contradiction> {
    match acct.delta_of(txn) {
        Some(recorded) if recorded != expected => Err(Contradiction::AmountChanged {
            applied: recorded,
            document: expected.unsigned_abs(),
        }),
        _ => Ok(expected),
    }
}

fn drop_pending(acct: &AccountState, txn: &str) -> AccountState {
    let mut next = acct.clone();
    next.pending.retain(|p| p != txn);
    next.deltas.retain(|d| d.txn != txn);
    next
}

fn add(balance: i64, delta: i64) -> Result<i64, Contradiction> {
    balance
        .checked_add(delta)
        .ok_or(Contradiction::Overflow { balance, delta })
}

fn negate(delta: i64) -> Result<i64, Contradiction> {
    delta
        .checked_neg()
        .ok_or(Contradiction::CannotNegate(delta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::account::Settled;
    use chrono::{TimeZone, Utc};

    fn written(d: Decision<AccountState>) -> AccountState {
        match d {
            Decision::Write(a, _) => a,
            Decision::Noop(r) => panic!("expected a write, got noop: {r}"),
        }
    }

    fn legacy(outcome: SettledOutcome) -> AccountState {
        let mut a = AccountState::new(500);
        a.settled.push(Settled {
            txn: "t".into(),
            outcome,
            at: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
        });
        a
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
    fn claim_only_while_pending_and_unchanged() {
        assert_eq!(
            claim(&TxnState::Pending),
            Decision::Write(TxnState::Pending, Effect::Claimed)
        );
        for s in [
            TxnState::Committed,
            TxnState::Terminating,
            TxnState::Created,
        ] {
            assert_eq!(claim(&s), Decision::Noop(NoopReason::StateIs(s.clone())));
        }
    }

    #[test]
    fn apply_is_idempotent_and_records_its_delta() {
        let a = written(apply(&AccountState::new(500), "t", -100).unwrap());
        assert_eq!(a.balance, 400);
        assert_eq!(a.delta_of("t"), Some(-100));
        assert_eq!(
            apply(&a, "t", -100).unwrap(),
            Decision::Noop(NoopReason::AlreadyApplied)
        );
    }

    #[test]
    fn remove_drops_the_id_and_its_delta() {
        let a = written(apply(&AccountState::new(500), "t", -100).unwrap());
        let a = written(remove(&a, "t"));
        assert_eq!(a, AccountState::new(400));
        assert_eq!(remove(&a, "t"), Decision::Noop(NoopReason::NotPending));
    }

    #[test]
    fn legacy_settled_records_are_still_honoured() {
        assert_eq!(
            apply(&legacy(SettledOutcome::Applied), "t", -100).unwrap(),
            Decision::Noop(NoopReason::Settled(SettledOutcome::Applied))
        );
        assert!(undo(&legacy(SettledOutcome::Applied), "t", -100, Fencing::On).is_err());
        assert!(matches!(
            undo(&legacy(SettledOutcome::Undone), "t", -100, Fencing::On).unwrap(),
            Decision::Write(_, Effect::Fenced)
        ));
    }

    #[test]
    fn undo_of_nothing_still_writes_with_fencing() {
        let a = AccountState::new(500);
        assert_eq!(
            undo(&a, "t", -100, Fencing::On).unwrap(),
            Decision::Write(a.clone(), Effect::Fenced)
        );
        assert_eq!(
            undo(&a, "t", -100, Fencing::Off).unwrap(),
            Decision::Noop(NoopReason::NotPending)
        );
    }

    #[test]
    fn undo_reverses_the_recorded_delta() {
        let a = written(apply(&AccountState::new(500), "t", 100).unwrap());
        let a = written(undo(&a, "t", 100, Fencing::On).unwrap());
        assert_eq!(a, AccountState::new(500));
    }

    #[test]
    fn an_amount_edited_after_apply_is_refused() {
        let a = written(apply(&AccountState::new(500), "t", -90).unwrap());
        let why = undo(&a, "t", -100, Fencing::On).unwrap_err().to_string();
        assert_eq!(
            why,
            "amount changed after it was applied: applied -90, document says 100"
        );
        assert!(apply(&a, "t", -100).is_err());
        // Without a recorded delta (the application's scripts), the
        // transaction's amount is what is undone.
        let mut b = AccountState::new(400);
        b.pending.push("t".into());
        assert_eq!(
            written(undo(&b, "t", -100, Fencing::On).unwrap()).balance,
            500
        );
    }

    #[test]
    fn overflow_is_refused() {
        assert!(apply(&AccountState::new(i64::MAX), "t", 1).is_err());
        assert!(apply(&AccountState::new(i64::MIN), "t", -1).is_err());
    }
}
