//! The named steps of the protocol, the plans procedures follow, and the
//! JSON-level adapters that run a pure decision on a document read and say
//! which fields its write sets ([`Changes`]: only those are sent).
//!
//! `plan` is pure, so the dashboard can show "what rollback would do from
//! here" with exactly the list the procedure will execute.

use super::account::AccountState;
use super::decide::{self, Decision, Fencing, NoopReason};
use super::executor::{DocDecision, StepOutcome};
use super::problem::{Problem, Problems};
use super::time::human_duration;
use super::transaction::{Transfer, TxnState};
use crate::cluster::Changes;
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::fmt;

/// Limits on a run, to simulate a worker that dies (tests and the demo).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunLimits {
    /// Stop (as if the process died) after this many protocol steps.
    pub max_steps: Option<usize>,
}

/// One step of the reference protocol (numbered as in the article).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Core step 1: created -> pending.
    Begin,
    /// Core step 2: apply to the source account.
    ApplySource,
    /// Core step 3: apply to the destination account.
    ApplyDestination,
    /// Core step 4: pending -> committed.
    Commit,
    /// Core step 5: remove the id from the source account.
    RemoveSource,
    /// Core step 6: remove the id from the destination account.
    RemoveDestination,
    /// Core step 7: committed -> finished.
    Finish,
    /// Rollback of a created transaction: created -> rolled-back.
    CancelCreated,
    /// Rollback step 1: pending -> terminating.
    Terminate,
    /// Rollback step 2: undo on the source account.
    UndoSource,
    /// Rollback step 3: undo on the destination account.
    UndoDestination,
    /// Rollback step 4: terminating -> rolled-back.
    RolledBack,
}

impl Step {
    /// How operators read it, e.g. `core 2: apply to source`.
    pub fn label(self) -> &'static str {
        match self {
            Step::Begin => "core 1: created -> pending",
            Step::ApplySource => "core 2: apply to source",
            Step::ApplyDestination => "core 3: apply to destination",
            Step::Commit => "core 4: pending -> committed",
            Step::RemoveSource => "core 5: remove from source",
            Step::RemoveDestination => "core 6: remove from destination",
            Step::Finish => "core 7: committed -> finished",
            Step::CancelCreated => "rollback: created -> rolled-back",
            Step::Terminate => "rollback 1: pending -> terminating",
            Step::UndoSource => "rollback 2: undo on source",
            Step::UndoDestination => "rollback 3: undo on destination",
            Step::RolledBack => "rollback 4: terminating -> rolled-back",
        }
    }

    /// What it does, in words, for the dashboard's detail (which says what
    /// comes next without the protocol's step numbers).
    pub fn purpose(self) -> &'static str {
        match self {
            Step::Begin => "start the transfer (created → pending)",
            Step::ApplySource => "debit the source and note the transfer on it",
            Step::ApplyDestination => "credit the destination and note the transfer on it",
            Step::Commit => "commit the transfer (pending → committed)",
            Step::RemoveSource => "clear the source's note of the transfer",
            Step::RemoveDestination => "clear the destination's note of the transfer",
            Step::Finish => "mark the transfer finished (committed → finished)",
            Step::CancelCreated => "cancel it before any balance moved (created → rolled-back)",
            Step::Terminate => "start undoing the transfer (pending → terminating)",
            Step::UndoSource => "give the source back its debit and clear its note",
            Step::UndoDestination => "take back the destination's credit and clear its note",
            Step::RolledBack => "mark the transfer rolled back (terminating → rolled-back)",
        }
    }

    /// For account steps, whether it targets the source (`true`) or the
    /// destination (`false`); `None` for transaction-state steps.
    pub fn on_source(self) -> Option<bool> {
        match self {
            Step::ApplySource | Step::RemoveSource | Step::UndoSource => Some(true),
            Step::ApplyDestination | Step::RemoveDestination | Step::UndoDestination => Some(false),
            _ => None,
        }
    }

    /// For state steps, the `(from, to)` transition.
    pub fn transition(self) -> Option<(TxnState, TxnState)> {
        use TxnState::*;
        match self {
            Step::Begin => Some((Created, Pending)),
            Step::Commit => Some((Pending, Committed)),
            Step::Finish => Some((Committed, Finished)),
            Step::CancelCreated => Some((Created, RolledBack)),
            Step::Terminate => Some((Pending, Terminating)),
            Step::RolledBack => Some((Terminating, RolledBack)),
            _ => None,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The two interventions. Serialized by their command's name (`recover`,
/// `rollback`), as the CLI's JSON outputs say them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Procedure {
    /// Move the transaction forward from where it stopped (article's recovery).
    Recover,
    /// Undo the transaction.
    Rollback,
}

impl Procedure {
    /// The command's name: `recover` or `rollback`.
    pub fn name(self) -> &'static str {
        match self {
            Procedure::Recover => "recover",
            Procedure::Rollback => "rollback",
        }
    }

    /// The verb a sentence uses: `recover` or `roll back`.
    pub fn verb(self) -> &'static str {
        match self {
            Procedure::Recover => "recover",
            Procedure::Rollback => "roll back",
        }
    }
}

impl fmt::Display for Procedure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a procedure (rollback, recovery, a transfer's run) will not run on a
/// transaction; an operator's act carries it as `ActRefusal::Procedure`
/// (`intervene`, the layer above).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcedureRefusal {
    /// Rollback of a committed transaction: it must finish, then be reversed
    /// by a new transfer.
    Committed,
    /// The state is not one this tool knows.
    UnknownState(String),
    /// Modified within the recovery window: a worker may still be running.
    Recent {
        /// Time since the last modification (negative when written ahead of
        /// this clock).
        age: chrono::TimeDelta,
        /// The recovery window.
        window: std::time::Duration,
    },
    /// The document (or an account it names) cannot be understood.
    Malformed(Problems),
    /// A transaction with this id already exists; running it again from here
    /// could race its owner, so recovery is left to handle it (as the article says).
    AlreadyExists(String),
    /// Running it would break an invariant, found before any write: a balance
    /// that would overflow, an amount edited after it was applied, an id an
    /// account has already settled.
    Unsafe(String),
    /// A lock a transfer needs is held by someone else.
    LockHeld {
        /// The locked resource.
        resource: String,
        /// Who holds it (transaction id or process id), if known.
        holder: String,
    },
}

impl ProcedureRefusal {
    /// For [`ProcedureRefusal::Recent`], when the transaction was modified, in
    /// words: `1.2s ago` (or `0.3s ahead of this clock`).
    pub fn modified_ago(&self) -> Option<String> {
        let ProcedureRefusal::Recent { age, .. } = self else {
            return None;
        };
        let magnitude = age.abs().to_std().unwrap_or_default();
        Some(if *age < chrono::TimeDelta::zero() {
            format!("{} ahead of this clock", human_duration(magnitude))
        } else {
            format!("{} ago", human_duration(magnitude))
        })
    }

    /// The refusal in words, where forcing can lift it ending with the
    /// caller's way to force (`--force` on the command line, the dialog's
    /// force key in the dashboard): the text is written once, here.
    pub fn explain(&self, force: &str) -> String {
        match self {
            ProcedureRefusal::Recent { window, .. } => format!(
                "transaction was modified {}, within the {} recovery window: \
                 a worker may still be running it (use {force} to act anyway)",
                self.modified_ago().unwrap_or_default(),
                human_duration(*window)
            ),
            other => other.to_string(),
        }
    }
}

/// The command line's wording: [`ProcedureRefusal::explain`] with `--force`.
impl fmt::Display for ProcedureRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcedureRefusal::Committed => f.write_str(
                "transaction is committed: both accounts are already updated, so it must be allowed to finish \
                 (recover it) and then be reversed by a new transfer",
            ),
            ProcedureRefusal::UnknownState(s) => write!(f, "transaction is in unknown state `{s}`; refusing to guess"),
            ProcedureRefusal::Recent { .. } => f.write_str(&self.explain("--force")),
            ProcedureRefusal::Malformed(p) => write!(f, "transaction is malformed: {p}"),
            ProcedureRefusal::AlreadyExists(id) => write!(
                f,
                "transaction `{id}` already exists; not starting it twice (recovery will pick it up if it is stuck)"
            ),
            ProcedureRefusal::Unsafe(why) => write!(f, "{why}; nothing was written"),
            ProcedureRefusal::LockHeld { resource, holder } => {
                write!(f, "resource `{resource}` is locked by {holder}; the transfer was cancelled")
            }
        }
    }
}

/// What a procedure would do from `state`: the steps in order, nothing
/// (`Ok(vec![])`, terminal state), or a refusal.
pub fn plan(procedure: Procedure, state: &TxnState) -> Result<Vec<Step>, ProcedureRefusal> {
    use Step::*;
    let forward_from_pending = [
        ApplySource,
        ApplyDestination,
        Commit,
        RemoveSource,
        RemoveDestination,
        Finish,
    ];
    let undo = [UndoSource, UndoDestination, RolledBack];
    Ok(match (procedure, state) {
        (_, TxnState::Finished | TxnState::RolledBack) => vec![],
        (_, TxnState::Unknown(s)) => return Err(ProcedureRefusal::UnknownState(s.clone())),
        (_, TxnState::Terminating) => undo.to_vec(),
        (Procedure::Recover, TxnState::Created) => {
            let mut v = vec![Begin];
            v.extend(forward_from_pending);
            v
        }
        (Procedure::Recover, TxnState::Pending) => forward_from_pending.to_vec(),
        (Procedure::Recover, TxnState::Committed) => vec![RemoveSource, RemoveDestination, Finish],
        (Procedure::Rollback, TxnState::Created) => vec![CancelCreated],
        (Procedure::Rollback, TxnState::Pending) => {
            let mut v = vec![Terminate];
            v.extend(undo);
            v
        }
        (Procedure::Rollback, TxnState::Committed) => return Err(ProcedureRefusal::Committed),
    })
}

/// Whether the procedure carries on after `step` ended with `outcome`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Run the next step of the plan.
    Continue,
    /// The transaction is somewhere else than the plan assumed; re-plan from this state.
    Replan(TxnState),
    /// Stop here (another process owns what comes next); the reason in words.
    Stop(String),
}

/// The article's rules for what to do after each step's outcome.
pub fn next_after(procedure: Procedure, step: Step, outcome: &StepOutcome) -> Next {
    match (step, outcome) {
        (_, StepOutcome::Updated(_)) => Next::Continue,
        (
            Step::ApplySource | Step::ApplyDestination,
            StepOutcome::Noop(NoopReason::AlreadyApplied),
        ) => Next::Continue,
        (Step::ApplySource | Step::ApplyDestination, StepOutcome::Noop(r)) => Next::Stop(format!(
            "{step}: {r}; another process has moved the transaction on"
        )),
        (Step::RemoveSource | Step::RemoveDestination, _) => Next::Continue,
        (Step::UndoSource | Step::UndoDestination, _) => Next::Continue,
        (Step::RolledBack, StepOutcome::Noop(NoopReason::StateIs(TxnState::RolledBack))) => {
            Next::Continue
        }
        (Step::Finish, StepOutcome::Noop(NoopReason::StateIs(TxnState::Finished))) => {
            Next::Continue
        }
        (_, StepOutcome::Noop(NoopReason::StateIs(found))) => match procedure {
            Procedure::Rollback => Next::Replan(found.clone()),
            Procedure::Recover => Next::Stop(format!(
                "{step}: transaction is {found}; another process has moved it"
            )),
        },
        (_, StepOutcome::Noop(r)) => Next::Stop(format!("{step}: {r}")),
    }
}

/// Decides a state transition on a transaction document: the write sets
/// `transaction_state` (its evidence) and stamps `modification_time` with
/// `stamp` (the time, in the field's format) — a stamp an ingest pipeline
/// may overwrite, so it never serves to recognise the write (see
/// [`Changes::landed`]). Nothing else of the document is sent.
pub fn transition_doc(
    id: &str,
    src: &Map<String, Value>,
    from: &TxnState,
    to: &TxnState,
    stamp: &Value,
) -> Result<DocDecision> {
    Ok(match decide::transition(&state_of(id, src)?, from, to) {
        Decision::Noop(r) => DocDecision::Noop(r),
        Decision::Write(next, effect) => {
            let changes = Changes::new()
                .set(
                    "transaction_state",
                    Value::String(next.as_str().to_string()),
                )
                .stamp("modification_time", stamp.clone());
            DocDecision::Write(changes, effect)
        }
    })
}

/// Decides the claim before an apply on a transaction document: while it is
/// pending, a write that sets nothing (`modification_time` untouched) and
/// still advances the version ([`Changes::fence`]), conditional on the
/// version read; see [`decide`].
pub fn claim_doc(id: &str, src: &Map<String, Value>) -> Result<DocDecision> {
    Ok(match decide::claim(&state_of(id, src)?) {
        Decision::Noop(r) => DocDecision::Noop(r),
        Decision::Write(_, effect) => DocDecision::Write(Changes::fence(), effect),
    })
}

fn state_of(id: &str, src: &Map<String, Value>) -> Result<TxnState> {
    match src.get("transaction_state") {
        Some(Value::String(s)) => Ok(TxnState::parse(s)),
        other => Err(Error::Malformed {
            kind: "transaction",
            id: id.to_string(),
            problems: Problems::one(Problem::NoState(format!("{other:?}"))),
        }),
    }
}

/// Runs a pure account decision on an account document; the write sets the
/// protocol's fields the decision changes (`balance`, `pending_transactions`,
/// the recorded deltas) and nothing else. A decision that changes none of
/// them (a fencing undo, which "writes the account it read") is a
/// [`Changes::fence`]: it must still advance the version.
pub fn account_doc<F>(id: &str, src: &Map<String, Value>, decide: F) -> Result<DocDecision>
where
    F: FnOnce(&AccountState) -> Result<Decision<AccountState>, decide::Contradiction>,
{
    let state = AccountState::from_source(src).map_err(|problems| Error::Malformed {
        kind: "account",
        id: id.to_string(),
        problems,
    })?;
    match decide(&state) {
        Err(why) => Err(Error::Malformed {
            kind: "account",
            id: id.to_string(),
            problems: Problems::one(Problem::Contradiction(why)),
        }),
        Ok(Decision::Noop(r)) => Ok(DocDecision::Noop(r)),
        Ok(Decision::Write(next, effect)) => {
            Ok(DocDecision::Write(account_changes(src, &next), effect))
        }
    }
}

/// What writing `next` over the account read as `src` sets: the fields
/// that change, or a fence when none does.
pub fn account_changes(src: &Map<String, Value>, next: &AccountState) -> Changes {
    let mut after = src.clone();
    next.write_into(&mut after);
    let changes = Changes::between(src, &after);
    if changes.is_empty() {
        Changes::fence()
    } else {
        changes
    }
}

/// The pure decision of an account step of `t` (for an apply, the account
/// half; the claim on the transaction is [`decide::claim`]).
pub fn account_step(
    step: Step,
    t: &Transfer,
    acct: &AccountState,
    fencing: Fencing,
) -> Result<Decision<AccountState>, decide::Contradiction> {
    match step {
        Step::ApplySource => decide::apply(acct, &t.id, -t.amount),
        Step::ApplyDestination => decide::apply(acct, &t.id, t.amount),
        Step::RemoveSource | Step::RemoveDestination => Ok(decide::remove(acct, &t.id)),
        Step::UndoSource => decide::undo(acct, &t.id, -t.amount, fencing),
        Step::UndoDestination => decide::undo(acct, &t.id, t.amount, fencing),
        other => Err(decide::Contradiction::NotAnAccountStep(other.label())),
    }
}

/// Whether the account steps of `todo` can all run on the accounts as they
/// are now, checked before the first write: every balance change must fit,
/// every recorded delta must agree with the transaction's amount. Runs the
/// steps' own decisions on copies, in plan order.
pub fn preflight(
    t: &Transfer,
    todo: &[Step],
    (src, dest): (&AccountState, &AccountState),
    fencing: Fencing,
) -> std::result::Result<(), ProcedureRefusal> {
    let mut accts = [src.clone(), dest.clone()];
    for &step in todo {
        let Some(on_source) = step.on_source() else {
            continue;
        };
        let (k, id) = if on_source { (0, &t.src) } else { (1, &t.dest) };
        match account_step(step, t, &accts[k], fencing) {
            Ok(Decision::Write(next, _)) => accts[k] = next,
            Ok(Decision::Noop(_)) => {}
            Err(why) => {
                return Err(ProcedureRefusal::Unsafe(format!(
                    "`{}` on account `{id}`: {why}",
                    t.id
                )))
            }
        }
    }
    Ok(())
}

/// A new transfer may not reuse the id of a transaction an account has a
/// legacy settled record of: its applies would be no-ops there and the
/// transaction would wedge.
pub fn check_fresh_id(
    t: &Transfer,
    (src, dest): (&AccountState, &AccountState),
) -> std::result::Result<(), ProcedureRefusal> {
    for (acct, state) in [(&t.src, src), (&t.dest, dest)] {
        if let Some(rec) = state.settled_of(&t.id) {
            return Err(ProcedureRefusal::Unsafe(format!(
                "transaction id `{}` was used before: account `{acct}` has settled it ({}); \
                 choose another id",
                t.id,
                rec.outcome.as_str()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recent_refusal_reads_its_durations_exactly_enough() {
        let r = ProcedureRefusal::Recent {
            age: chrono::TimeDelta::milliseconds(1_234),
            window: std::time::Duration::from_millis(1_500),
        };
        assert!(
            r.to_string().starts_with(
                "transaction was modified 1.23s ago, within the 1.5s recovery window: "
            ),
            "{r}"
        );
        let late = ProcedureRefusal::Recent {
            age: chrono::TimeDelta::milliseconds(-300),
            window: std::time::Duration::from_secs(3_600),
        };
        assert!(
            late.explain("!")
                .contains("modified 0.3s ahead of this clock, within the 1h recovery window"),
            "{late}"
        );
    }

    #[test]
    fn plans_follow_the_article() {
        assert_eq!(
            plan(Procedure::Recover, &TxnState::Created).unwrap().len(),
            7
        );
        assert_eq!(
            plan(Procedure::Recover, &TxnState::Committed).unwrap()[0],
            Step::RemoveSource
        );
        assert_eq!(
            plan(Procedure::Recover, &TxnState::Terminating).unwrap()[0],
            Step::UndoSource
        );
        assert_eq!(
            plan(Procedure::Rollback, &TxnState::Created).unwrap(),
            vec![Step::CancelCreated]
        );
        assert_eq!(
            plan(Procedure::Rollback, &TxnState::Committed),
            Err(ProcedureRefusal::Committed)
        );
        assert!(plan(Procedure::Rollback, &TxnState::Finished)
            .unwrap()
            .is_empty());
        assert!(plan(Procedure::Recover, &TxnState::Unknown("x".into())).is_err());
    }

    #[test]
    fn rollback_replans_when_the_state_moved() {
        let noop = StepOutcome::Noop(NoopReason::StateIs(TxnState::Committed));
        assert_eq!(
            next_after(Procedure::Rollback, Step::Terminate, &noop),
            Next::Replan(TxnState::Committed)
        );
        assert!(matches!(
            next_after(Procedure::Recover, Step::Commit, &noop),
            Next::Stop(_)
        ));
    }
}
