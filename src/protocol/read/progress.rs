//! Where one account stands with one transaction, written once for the
//! dashboard's detail and `show`. Accounts no longer keep settled records
//! (only pending ids and their deltas), so "does not carry it" means
//! different things by the transaction's state: not applied yet (created,
//! pending), applied and its entry already removed (committed, finished),
//! undone or never applied (terminating, rolled-back). A legacy settled
//! record, when an account still has one, says it outright and wins.

use crate::protocol::account::SettledOutcome;
use crate::protocol::transaction::TxnState;
use std::fmt;

/// Where an account stands with a transaction (see [`account_progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountProgress {
    /// A legacy settled record says how it settled.
    Settled(SettledOutcome),
    /// Created or pending, not carried: the account has not applied it yet.
    NotAppliedYet,
    /// Pending and carried: applied here, the transaction not yet committed.
    AppliedPending,
    /// Committed and carried: applied, its pending entry not yet removed.
    AppliedEntryHeld,
    /// Committed or finished, not carried: applied, its entry removed.
    AppliedEntryRemoved,
    /// Finished and not carried: applied, done.
    Done,
    /// Terminating and carried: applied, not yet undone.
    AppliedNotYetUndone,
    /// Terminating or rolled back, not carried: undone, or never applied.
    UndoneOrNeverApplied,
    /// Carried although the transaction is terminal: a dangling entry the
    /// audit reports and repairs.
    Dangling,
    /// Carried although the transaction is still `created` (never pending):
    /// not something the protocol writes.
    CarriedBeforePending,
    /// The transaction's state is unknown or missing: only whether the
    /// account carries it can be said.
    StateUnknown {
        /// Whether the account carries it.
        carries: bool,
    },
}

/// Where an account stands with a transaction in `state`, given whether it
/// `carries` the transaction (in `pending_transactions`) and its legacy
/// settled record of it, if any (which wins).
pub fn account_progress(
    state: Option<&TxnState>,
    carries: bool,
    legacy_settled: Option<SettledOutcome>,
) -> AccountProgress {
    use AccountProgress as P;
    if let Some(s) = legacy_settled {
        return P::Settled(s);
    }
    match (state, carries) {
        (Some(TxnState::Created), false) | (Some(TxnState::Pending), false) => P::NotAppliedYet,
        (Some(TxnState::Created), true) => P::CarriedBeforePending,
        (Some(TxnState::Pending), true) => P::AppliedPending,
        (Some(TxnState::Committed), true) => P::AppliedEntryHeld,
        (Some(TxnState::Committed), false) => P::AppliedEntryRemoved,
        (Some(TxnState::Finished), false) => P::Done,
        (Some(TxnState::Terminating), true) => P::AppliedNotYetUndone,
        (Some(TxnState::Terminating), false) | (Some(TxnState::RolledBack), false) => {
            P::UndoneOrNeverApplied
        }
        (Some(TxnState::Finished), true) | (Some(TxnState::RolledBack), true) => P::Dangling,
        (Some(TxnState::Unknown(_)), carries) | (None, carries) => P::StateUnknown { carries },
    }
}

impl AccountProgress {
    /// Whether the account still carries the transaction's pending entry.
    pub fn carries(self) -> bool {
        matches!(
            self,
            AccountProgress::AppliedPending
                | AccountProgress::AppliedEntryHeld
                | AccountProgress::AppliedNotYetUndone
                | AccountProgress::Dangling
                | AccountProgress::CarriedBeforePending
                | AccountProgress::StateUnknown { carries: true }
        )
    }

    /// Whether this is not a place the protocol leaves an account in (the
    /// audit has something to say about it).
    pub fn is_odd(self) -> bool {
        matches!(
            self,
            AccountProgress::Dangling | AccountProgress::CarriedBeforePending
        )
    }
}

impl fmt::Display for AccountProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AccountProgress as P;
        f.write_str(match self {
            P::Settled(SettledOutcome::Applied) => "settled (applied)",
            P::Settled(SettledOutcome::Undone) => "settled (undone)",
            P::NotAppliedYet => "not applied yet",
            P::AppliedPending => "applied (carries it, not committed yet)",
            P::AppliedEntryHeld => "applied (carries it, entry not yet removed)",
            P::AppliedEntryRemoved => "applied (entry removed)",
            P::Done => "applied (done)",
            P::AppliedNotYetUndone => "applied (carries it, not yet undone)",
            P::UndoneOrNeverApplied => "undone, or never applied",
            P::Dangling => "still carries it (dangling entry: see the audit)",
            P::CarriedBeforePending => "carries it although never pending (see the audit)",
            P::StateUnknown { carries: true } => "carries it (state unknown)",
            P::StateUnknown { carries: false } => "does not carry it (state unknown)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(state: TxnState, carries: bool) -> String {
        account_progress(Some(&state), carries, None).to_string()
    }

    #[test]
    fn not_carrying_means_what_the_state_says() {
        assert_eq!(text(TxnState::Created, false), "not applied yet");
        assert_eq!(text(TxnState::Pending, false), "not applied yet");
        assert_eq!(text(TxnState::Committed, false), "applied (entry removed)");
        assert_eq!(text(TxnState::Finished, false), "applied (done)");
        assert_eq!(
            text(TxnState::Terminating, false),
            "undone, or never applied"
        );
        assert_eq!(
            text(TxnState::RolledBack, false),
            "undone, or never applied"
        );
    }

    #[test]
    fn carrying_means_applied_and_not_yet_cleared() {
        assert_eq!(
            text(TxnState::Committed, true),
            "applied (carries it, entry not yet removed)"
        );
        assert_eq!(
            text(TxnState::Terminating, true),
            "applied (carries it, not yet undone)"
        );
        assert!(account_progress(Some(&TxnState::Pending), true, None).carries());
        assert!(account_progress(Some(&TxnState::Finished), true, None).is_odd());
        assert!(account_progress(Some(&TxnState::Created), true, None).is_odd());
        assert!(!account_progress(Some(&TxnState::Finished), false, None).carries());
    }

    #[test]
    fn a_legacy_settled_record_wins() {
        let p = account_progress(
            Some(&TxnState::Terminating),
            false,
            Some(SettledOutcome::Undone),
        );
        assert_eq!(p, AccountProgress::Settled(SettledOutcome::Undone));
        assert_eq!(p.to_string(), "settled (undone)");
    }

    #[test]
    fn an_unknown_state_only_says_whether_it_carries_it() {
        assert_eq!(
            account_progress(None, false, None).to_string(),
            "does not carry it (state unknown)"
        );
        let odd = TxnState::Unknown("weird".into());
        assert!(account_progress(Some(&odd), true, None).carries());
    }
}
