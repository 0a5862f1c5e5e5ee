//! What an act is, the types every act shares: the [`Act`] trait each act
//! implements (one file each in `acts/`; with its own plan type) and
//! [`Runs`] (its run and its own result), an act with the operator's
//! [`Choices`] (together an [`Intervention`]), an act whose record is begun
//! ([`Started`]: how it runs and finishes its record), and the one rule of
//! when the audit trail wants a reason. The recipe that starts an act is in
//! `run.rs`; this file imports neither it nor the acts, so the acts build
//! on it without an import circle.

use super::done::{receipts_of, Done, Report};
use super::plan::Planned;
use super::refusal::ActRefusal;
use crate::error::Result;
use crate::protocol::jobs::OwnWrites;
use crate::protocol::report::Tally;
use crate::protocol::trail::pages::Listed;
use crate::protocol::trail::receipts::Verification;
use crate::protocol::trail::{ActionKind, Ending, Interface, Operator, RecordId, Trail};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

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
    /// The plan file it runs (`apply`), which its record names.
    pub plan: Option<FromPlan>,
}

/// The plan file an act runs (`estx-tui apply`): what its record names
/// beside the approver, and what a profile with
/// `approval = "second-operator"` checks (the planner is not the approver).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromPlan {
    /// The plan's hash.
    pub hash: String,
    /// Who made it.
    pub planner: Operator,
    /// When (the cluster's time).
    pub planned_at: DateTime<Utc>,
    /// Its items refused as drifted (not run).
    pub drifted: Vec<String>,
    /// Whether the act planned closes with the sweep of stale locks
    /// (`recover --all-stuck`): the run of the plan's items does too.
    pub sweep: bool,
}

impl Choices {
    /// Unforced, from `interface`, with `reason`.
    pub fn new(interface: Interface, reason: Option<String>) -> Choices {
        Choices {
            force: false,
            reason,
            interface,
            confirmed: None,
            plan: None,
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

/// An operator's act on its typed target: what the audit trail calls it,
/// and how it is planned (for the record) and previewed (for an operator
/// to confirm, or `--dry-run` to print), each as its own plan type. How it
/// runs is [`Runs`].
pub trait Act: fmt::Debug + Clone + Send + Sync + Sized + 'static {
    /// What it would do: its own plan, holding only what this act's plan
    /// has (the documents it was judged on, when previewed).
    type Plan: Planned + fmt::Debug + Clone + Send + Sync + 'static;

    /// What the audit trail calls it.
    fn action(&self) -> ActionKind;

    /// How people name it before its [`Subject`] (`Roll back` t-1,
    /// `Release the lock on` A): a front end's title for it.
    fn title(&self) -> &'static str;

    /// What it acts on, by kind: what a front end names, and what it
    /// re-reads before a confirmed run to check it is still as shown.
    fn subject(&self) -> Subject;

    /// Whether it destroys or undoes work (a front end asks for it in red);
    /// only moving a transaction forward does not.
    fn destructive(&self) -> bool {
        true
    }

    /// Whether a step reported for transaction `txn` is one of its own:
    /// its transaction's (a reversal's compensating transfer's too).
    fn reports_on(&self, txn: &str) -> bool {
        matches!(self.subject(), Subject::Transaction(t) if t == txn)
    }

    /// Whether it acts on a selection of many transactions.
    fn is_bulk(&self) -> bool {
        false
    }

    /// Whether its run updates transactions and accounts (and so asks the
    /// product's leave first, [`Protocol::writes_refused`]); a lock
    /// release only deletes lock documents.
    fn updates_documents(&self) -> bool {
        true
    }

    /// Told whether the operator forces it: a bulk act's selection then
    /// takes the transactions other live jobs hold (its record says it
    /// overrode them), else leaves them out, named. Other acts are judged
    /// on their one transaction by the run ([`super::start`]).
    fn forced(&mut self, _forced: bool) {}

    /// Previews it from the documents as they are now. A target that
    /// cannot be read gives a plan without steps (the run then says why it
    /// cannot act); only a bulk act's selection fails here.
    fn plan(&self, p: &Protocol) -> impl Future<Output = Result<Self::Plan>> + Send;

    /// The plan with the documents it was judged on re-read beside it; a
    /// read that fails is an error here.
    fn preview(&self, p: &Protocol) -> impl Future<Output = Result<Self::Plan>> + Send;
}

/// How an act of one type runs once its record is begun, and its own
/// result. Every act's type implements it; [`super::AnyAct`] does not (it
/// runs whichever act it holds through that act's own type, so its plan
/// never has to be matched with its act again).
pub trait Runs: Act {
    /// What it did: its own result.
    type Result: Report;

    /// Runs it on `p` (which may carry an observer) and completes the
    /// record `started` began ([`Started::finish`]).
    fn run(started: Started<Self>, p: &Protocol)
        -> impl Future<Output = Done<Self::Result>> + Send;
}

/// What an act acts on, by kind ([`Act::subject`]): a front end names
/// it (`transaction t-1`, `lock A`) and re-reads it before a confirmed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// One transaction, by id.
    Transaction(String),
    /// The lock on one resource.
    Lock(String),
    /// The accounts the audit's repair covers: the one of the finding
    /// acted on, if any (the repair itself covers every account).
    Account(Option<String>),
    /// A new transfer between two accounts.
    Transfer {
        /// The account debited.
        src: String,
        /// The account credited.
        dest: String,
    },
    /// A selection of many transactions.
    Selection,
}

impl Subject {
    /// Its kind in words, before its name (`transaction `, `lock `).
    pub fn kind(&self) -> &'static str {
        match self {
            Subject::Transaction(_) => "transaction ",
            Subject::Lock(_) => "lock ",
            Subject::Account(_) => "account ",
            Subject::Transfer { .. } => "transfer ",
            Subject::Selection => "",
        }
    }
}

impl fmt::Display for Subject {
    /// Its name: the transaction's id, the lock's resource, the account.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Transaction(id) | Subject::Lock(id) => f.write_str(id),
            Subject::Account(a) => f.write_str(a.as_deref().unwrap_or("every account")),
            Subject::Transfer { src, dest } => write!(f, "{src} → {dest}"),
            Subject::Selection => f.write_str("a selection"),
        }
    }
}

/// An act with the operator's choices: what the front ends build. `A` is
/// the act's own type ([`super::Rollback`], [`super::BulkAct`], ...), so its
/// run gives that act's own result; [`super::AnyAct`] when a front end
/// holds whichever act the operator chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intervention<A> {
    /// What.
    pub act: A,
    /// How.
    pub choices: Choices,
}

impl<A: Act> Intervention<A> {
    /// `act` with `choices`.
    pub fn new(mut act: A, choices: Choices) -> Intervention<A> {
        act.forced(choices.force);
        Intervention { act, choices }
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

/// An act whose unfinished record is written: run it with [`Started::run`].
#[derive(Debug)]
pub struct Started<A: Act> {
    pub(super) trail: Trail,
    pub(super) record: RecordId,
    pub(super) intervention: Intervention<A>,
    pub(super) plan: A::Plan,
    /// The record's parts so far (the plan's, and a resumed run's
    /// checkpoints): a job's checkpoints are numbered after them.
    pub(super) parts: u32,
    /// When this continues an unfinished run: what it found.
    pub(super) resumed: Option<Resumed>,
    /// On a job's way back: the transactions the job last wrote itself,
    /// which the run does not refuse as recent ([`Protocol::with_own_writes`]).
    pub(super) own: Option<Arc<OwnWrites>>,
}

/// What a resumed run found in its unfinished record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumed {
    /// Transactions the checkpoints say ended (skipped).
    pub ended: usize,
    /// Checkpoint parts found (the plan's parts not counted).
    pub checkpoints: u32,
    /// How the transactions those checkpoints list ended, counted.
    pub earlier: Tally,
    /// When the operator forced it over a job not presumed dead: what its
    /// record said then (the record's summary notes it, with the reason).
    pub forced: Option<String>,
}

impl<A: Act> Started<A> {
    /// The transactions the record (and its plan's parts) lists, indexed
    /// there: the parts written after them store these unindexed
    /// ([`Listed`]). A resumed run's are among its record's. A set of the
    /// plan's ids (a bulk run's thousands): built once per run and passed
    /// on, to its checkpoints and to its completion ([`Started::finish_after`]).
    pub(super) fn listed(&self) -> Listed {
        Listed::of(&self.plan.transactions())
    }

    /// The record written.
    pub fn record(&self) -> &RecordId {
        &self.record
    }

    /// The audit index it is in.
    pub fn index(&self) -> &str {
        self.trail.index()
    }

    /// The plan recorded.
    pub fn plan(&self) -> &A::Plan {
        &self.plan
    }

    /// The intervention.
    pub fn intervention(&self) -> &Intervention<A> {
        &self.intervention
    }

    /// Runs the act on `p` (which may carry an observer), then completes
    /// its record with the outcome, the summary and every step
    /// ([`Runs::run`]). The result is the act's own.
    pub async fn run(self, p: &Protocol) -> Done<A::Result>
    where
        A: Runs,
    {
        A::run(self, p).await
    }

    /// Takes the job `run`'s own last writes, as its record says, as this
    /// run's to not refuse as recent: `--ids-from` the file of the
    /// transactions a run of that job left when it was stopped. Returns how
    /// many transactions the record says the job wrote.
    pub async fn own_writes_of(&mut self, run: &str) -> crate::error::Result<usize> {
        let own = self.trail.own_writes(run).await?;
        let n = own.len();
        self.own = Some(Arc::new(own));
        Ok(n)
    }

    /// The resumption this run is, if it is one.
    pub fn resumed(&self) -> Option<&Resumed> {
        self.resumed.as_ref()
    }

    /// Completes the record with what the act did (its ending as its
    /// result says, [`Report::ending`]); the act's result with it.
    pub(super) async fn finish<R: Report>(self, p: &Protocol, value: R) -> Done<R> {
        let ending = value.ending(p, &self.plan);
        let receipts = receipts_of(&self.record, &ending.steps);
        let listed = self.listed();
        self.finish_after(0, value, ending, receipts, &listed).await
    }

    /// [`Started::finish`] after `checkpoints` parts this run wrote as it
    /// went (the parts of a resumed run's earlier checkpoints counted too),
    /// `receipts` the verification of every step this run made (a bulk
    /// run's `ending` holds only those no checkpoint wrote), `listed` the
    /// plan's transactions ([`Started::listed`], as the run built it).
    pub(super) async fn finish_after<R: Report>(
        self,
        checkpoints: u32,
        value: R,
        ending: Ending,
        receipts: Verification,
        listed: &Listed,
    ) -> Done<R> {
        let earlier = self.resumed.as_ref().map_or(0, |r| r.checkpoints);
        let (outcome, summary) = (ending.outcome, ending.summary.clone());
        let record_error = self
            .trail
            .finish_after(&self.record, earlier + checkpoints, ending, listed)
            .await
            .err();
        Done {
            action: self.intervention.action(),
            outcome,
            summary,
            record: self.record,
            record_error,
            receipts,
            value,
        }
    }
}

/// Whether `action` (forced or not, in bulk or not) may not run with
/// `reason`: rollbacks, reversals and acks always want one, any act forced or in
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
    let always = matches!(
        action,
        ActionKind::Rollback | ActionKind::Reverse | ActionKind::Ack
    );
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
