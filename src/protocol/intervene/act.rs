//! What an operator asks for: an [`Act`] on its typed target with the
//! operator's [`Choices`], together an [`Intervention`]; and the one rule
//! of when the audit trail wants a reason.

use super::bulk::BulkAct;
use super::refusal::ActRefusal;
use crate::protocol::trail::{ActionKind, Interface};
use crate::protocol::{NewTransfer, Procedure};

/// The operator's choices an act is made with (the record keeps them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choices {
    /// Override the recovery window / lock staleness check.
    pub force: bool,
    /// Why, in the operator's words (required for rollbacks, reversals,
    /// forced and bulk acts).
    pub reason: Option<String>,
    /// Where the act was started from.
    pub interface: Interface,
    /// What the operator typed to confirm it (a production profile's
    /// [`super::Guard`]: the count or the profile's name).
    pub confirmed: Option<String>,
}

impl Choices {
    /// Unforced, from `interface`, with `reason`.
    pub fn new(interface: Interface, reason: Option<String>) -> Choices {
        Choices {
            force: false,
            reason,
            interface,
            confirmed: None,
        }
    }

    /// The same, confirmed by typing `typed` (`--confirm`, the dashboard's
    /// typed confirmation).
    pub fn confirmed(self, typed: Option<String>) -> Choices {
        Choices {
            confirmed: typed,
            ..self
        }
    }

    /// The same, forced or not.
    pub fn forced(self, force: bool) -> Choices {
        Choices { force, ..self }
    }

    /// The reason, trimmed, if one was given.
    pub fn reason_text(&self) -> Option<&str> {
        self.reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
    }
}

/// Every act an operator can make, each on its typed target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Roll back transaction `0`.
    Rollback(String),
    /// Recover transaction `0` (move it forward from where it stopped).
    Recover(String),
    /// Release the lock on resource `0`.
    ReleaseLock(String),
    /// Release every lock transaction `txn` owns.
    ReleaseLocksOf {
        /// The owner transaction.
        txn: String,
        /// Act even when the search for its locks saw only some shards.
        allow_partial: bool,
    },
    /// The audit's repair of dangling entries (`account`: the finding the
    /// operator started from, if any; the repair covers every account).
    AuditRepair {
        /// The account of the finding acted on.
        account: Option<String>,
        /// The total of all balances the audit is to expect, if known.
        expect_total: Option<i64>,
        /// Audit a partial view (some shards failed).
        allow_partial: bool,
    },
    /// Reverse finished transaction `txn` by a compensating transfer.
    Reverse {
        /// The original.
        txn: String,
        /// Let recovery finish a committed original first.
        finish_committed: bool,
    },
    /// A new transfer started by an operator.
    Transfer {
        /// What to move (its id set).
        transfer: NewTransfer,
        /// Hold locks on both accounts while it runs.
        locks: bool,
    },
    /// A rollback or recovery over a selection, as one act.
    Bulk(BulkAct),
}

/// An act with the operator's choices: what the front ends build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intervention {
    /// What.
    pub act: Act,
    /// How.
    pub choices: Choices,
}

impl Intervention {
    /// `act` with `choices`.
    pub fn new(act: Act, choices: Choices) -> Intervention {
        Intervention { act, choices }
    }

    /// The rollback or recovery of `txn`.
    pub fn procedure(procedure: Procedure, txn: &str, choices: Choices) -> Intervention {
        let act = match procedure {
            Procedure::Rollback => Act::Rollback(txn.to_string()),
            Procedure::Recover => Act::Recover(txn.to_string()),
        };
        Intervention::new(act, choices)
    }

    /// What the audit trail calls it.
    pub fn action(&self) -> ActionKind {
        match &self.act {
            Act::Rollback(_) => ActionKind::Rollback,
            Act::Recover(_) => ActionKind::Recover,
            Act::ReleaseLock(_) | Act::ReleaseLocksOf { .. } => ActionKind::ReleaseLock,
            Act::AuditRepair { .. } => ActionKind::AuditRepair,
            Act::Reverse { .. } => ActionKind::Reverse,
            Act::Transfer { .. } => ActionKind::Transfer,
            Act::Bulk(b) => match b.procedure {
                Procedure::Rollback => ActionKind::Rollback,
                Procedure::Recover => ActionKind::Recover,
            },
        }
    }

    /// Whether it acts on a selection of many transactions.
    pub fn is_bulk(&self) -> bool {
        matches!(self.act, Act::Bulk(_))
    }

    /// Why it may not run as chosen: the reason the audit trail wants is
    /// missing ([`reason_missing`]).
    pub fn missing_reason(&self) -> Option<ActRefusal> {
        reason_missing(
            self.action(),
            self.choices.force,
            self.is_bulk(),
            self.choices.reason_text(),
        )
    }
}

/// Whether `action` (forced or not, in bulk or not) may not run with
/// `reason`: rollbacks and reversals always want one, any act forced or in
/// bulk does too. The rule, written once (the dashboard asks it before it
/// has built the act, to keep its reason field open).
pub fn reason_missing(
    action: ActionKind,
    forced: bool,
    bulk: bool,
    reason: Option<&str>,
) -> Option<ActRefusal> {
    if reason.is_some_and(|r| !r.trim().is_empty()) {
        return None;
    }
    let always = matches!(action, ActionKind::Rollback | ActionKind::Reverse);
    (always || forced || bulk).then_some(ActRefusal::ReasonMissing {
        action,
        because_forced_or_bulk: !always,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_required_for_rollbacks_reversals_forced_and_bulk_acts() {
        let ui = |reason: Option<&str>| Choices::new(Interface::Cli, reason.map(str::to_string));
        let recover = Intervention::new(Act::Recover("t".into()), ui(None));
        assert_eq!(recover.missing_reason(), None);
        let forced = Intervention::new(Act::Recover("t".into()), ui(None).forced(true));
        assert!(forced.missing_reason().is_some());
        let rollback = Intervention::new(Act::Rollback("t".into()), ui(Some("  ")));
        assert_eq!(
            rollback.missing_reason().map(|r| r.to_string()).as_deref(),
            Some("rollback needs a reason for the audit trail")
        );
        let given = Intervention::new(Act::Rollback("t".into()), ui(Some("INC-1")));
        assert_eq!(given.missing_reason(), None);
    }
}
