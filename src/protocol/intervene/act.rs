//! What an operator asks for: an act (a type implementing [`Act`]) on its
//! typed target with the operator's [`Choices`], together an
//! [`Intervention`]; and the one rule of when the audit trail wants a
//! reason.

use super::acts::{Act, AnyAct};
use super::refusal::ActRefusal;
use crate::protocol::trail::{ActionKind, Interface};

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

/// An act with the operator's choices: what the front ends build. `A` is
/// the act's own type ([`super::Rollback`], [`super::BulkAct`], ...), so its
/// run gives that act's own result; [`AnyAct`] when a front end holds
/// whichever act the operator chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intervention<A = AnyAct> {
    /// What.
    pub act: A,
    /// How.
    pub choices: Choices,
}

impl<A: Act> Intervention<A> {
    /// `act` with `choices`.
    pub fn new(act: A, choices: Choices) -> Intervention<A> {
        Intervention { act, choices }
    }

    /// The same intervention, its act held as any act.
    pub fn any(self) -> Intervention<AnyAct>
    where
        A: Into<AnyAct>,
    {
        Intervention::new(self.act.into(), self.choices)
    }

    /// What the audit trail calls it.
    pub fn action(&self) -> ActionKind {
        self.act.action()
    }

    /// Whether it acts on a selection of many transactions.
    pub fn is_bulk(&self) -> bool {
        self.act.is_bulk()
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
    use crate::protocol::intervene::{Recover, Rollback};

    #[test]
    fn reasons_are_required_for_rollbacks_reversals_forced_and_bulk_acts() {
        let ui = |reason: Option<&str>| Choices::new(Interface::Cli, reason.map(str::to_string));
        let recover = Intervention::new(Recover::new("t"), ui(None));
        assert_eq!(recover.missing_reason(), None);
        let forced = Intervention::new(Recover::new("t"), ui(None).forced(true));
        assert!(forced.missing_reason().is_some());
        let rollback = Intervention::new(Rollback::new("t"), ui(Some("  ")));
        assert_eq!(
            rollback.missing_reason().map(|r| r.to_string()).as_deref(),
            Some("rollback needs a reason for the audit trail")
        );
        let given = Intervention::new(Rollback::new("t"), ui(Some("INC-1")));
        assert_eq!(given.missing_reason(), None);
    }
}
