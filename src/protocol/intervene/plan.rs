//! What an act would do, as previewed from the documents as they are: the
//! typed steps (each worded once, by [`PlanStep`]'s `Display`), what every
//! act's own plan answers for its record ([`Planned`]: transactions,
//! targets, steps, the refusal an unforced run would meet), and the plans
//! acts share: a rollback's or recovery's on a transaction's documents
//! ([`TxnPlan`], [`ProcedurePlan`]) and the release of a transaction's
//! locks ([`LocksOfPlan`]). Each other act's plan type is in its own file
//! (`acts/`, `bulk.rs`, `reverse_plan.rs`); how a plan is made is in
//! `build.rs`.

use super::{ActRefusal, BalanceEffect};
use crate::protocol::executor::StepOutcome;
use crate::protocol::reverse::{CREATE_STEP, LINK_STEP};
use crate::protocol::transaction::Transaction;
use crate::protocol::views::{Preview, TransactionDetail};
use crate::protocol::{Procedure, Step, TxnState};
use std::fmt;

/// The line of the abandoned-lock sweep `recover --all-stuck` ends with.
pub const SWEEP_STEP: &str =
    "release the locks stale on evidence (owner ended, lease expired, holder dead)";

/// One planned step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanStep {
    /// A step of a transaction's procedure (`writes`: false when it is
    /// predicted to be a no-op).
    Protocol {
        /// The step.
        step: Step,
        /// Whether it is predicted to write.
        writes: bool,
    },
    /// The release of the lock on `resource` (after a procedure ends it, or
    /// on its own).
    ReleaseLock {
        /// The locked resource.
        resource: String,
        /// Its holder and the judgement of it, when it was held.
        held_by: Option<(String, String)>,
    },
    /// Releasing every lock a transaction owns (found when run).
    ReleaseLocksOf,
    /// Running the audit, then repairing what is safe.
    Audit,
    /// Repairing the dangling entries whose repair is unambiguous.
    Repair,
    /// A step of finishing a committed original before reversing it.
    FinishFirst {
        /// The original.
        txn: String,
        /// The recovery step.
        step: Step,
        /// Whether it is predicted to write.
        writes: bool,
    },
    /// Creating the compensating transfer.
    CreateReversal {
        /// Its id.
        id: String,
        /// Its source (the original's destination).
        src: String,
        /// Its destination (the original's source).
        dest: String,
        /// Units moved back.
        amount: i64,
    },
    /// Linking the original to its reversal.
    LinkOriginal {
        /// The original.
        txn: String,
        /// The reversal.
        reversal: String,
    },
    /// One transaction of a bulk act, with its procedure's steps.
    Item {
        /// The transaction.
        txn: String,
        /// Its steps.
        steps: Vec<Step>,
    },
    /// The abandoned-lock sweep of `recover --all-stuck` ([`SWEEP_STEP`]).
    Sweep,
    /// Acknowledging a transaction for a while (`lasts`, in words).
    Ack {
        /// The transaction.
        txn: String,
        /// How long the ack holds.
        lasts: String,
    },
    /// Taking a transaction's acknowledgement back.
    Unack {
        /// The transaction.
        txn: String,
    },
}

impl PlanStep {
    /// Whether it is predicted to write (only a procedure's step can be
    /// predicted a no-op).
    pub fn writes(&self) -> bool {
        match self {
            PlanStep::Protocol { writes, .. } | PlanStep::FinishFirst { writes, .. } => *writes,
            _ => true,
        }
    }

    /// The label the run reports for this step (what the dashboard's log
    /// compares with the plan: "ran as previewed"); the plan's own wording
    /// ([`fmt::Display`]) where the run reports that.
    pub fn reported(&self) -> String {
        match self {
            PlanStep::FinishFirst { step, .. } => step.label().to_string(),
            PlanStep::CreateReversal { .. } => CREATE_STEP.to_string(),
            PlanStep::LinkOriginal { .. } => LINK_STEP.to_string(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for PlanStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanStep::Protocol { step, .. } => f.write_str(step.label()),
            PlanStep::ReleaseLock {
                resource,
                held_by: None,
            } => write!(f, "release lock {resource}"),
            PlanStep::ReleaseLock {
                resource,
                held_by: Some((holder, judged)),
            } => write!(f, "release lock {resource} held by {holder} ({judged})"),
            PlanStep::ReleaseLocksOf => f.write_str("release lock"),
            PlanStep::Audit => f.write_str("audit"),
            PlanStep::Repair => f.write_str("repair what is safe"),
            PlanStep::FinishFirst { txn, step, .. } => {
                write!(f, "finish {txn}: {}", step.label())
            }
            PlanStep::CreateReversal {
                id,
                src,
                dest,
                amount,
            } => write!(f, "create {id}: {src} -> {dest}, amount {amount}"),
            PlanStep::LinkOriginal { txn, reversal } => {
                write!(f, "link {txn}: reversed_by = {reversal}")
            }
            PlanStep::Item { txn, steps } => {
                let labels: Vec<&str> = steps.iter().map(|s| s.label()).collect();
                write!(f, "{txn}: {}", labels.join(", "))
            }
            PlanStep::Sweep => f.write_str(SWEEP_STEP),
            PlanStep::Ack { txn, lasts } => write!(f, "acknowledge {txn} for {lasts}"),
            PlanStep::Unack { txn } => write!(f, "take back the ack on {txn}"),
        }
    }
}

/// The document a planned step acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepTarget {
    /// A transaction document, by id.
    Transaction(String),
    /// An account document, by id.
    Account(String),
    /// A lock document, by its resource.
    Lock(String),
}

/// What one planned step of a transaction's procedure would do: the
/// document it acts on and, in words, what it would write or why it would
/// write nothing (what `--dry-run` prints beside the step).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepEffect {
    /// The document it acts on.
    pub target: StepTarget,
    /// What it would write, or why nothing.
    pub effect: String,
}

impl StepEffect {
    /// Each step of `preview` (of a procedure on `txn`) with the document
    /// it acts on and what it would write, or why nothing.
    pub fn of_preview(preview: &Preview, txn: &Transaction) -> Vec<StepEffect> {
        let account = |a: &Option<String>| StepTarget::Account(a.clone().unwrap_or_default());
        preview
            .steps
            .iter()
            .map(|s| StepEffect {
                target: match s.step.on_source() {
                    Some(true) => account(&txn.src),
                    Some(false) => account(&txn.dest),
                    None => StepTarget::Transaction(txn.id.clone()),
                },
                effect: match &s.outcome {
                    StepOutcome::Updated(e) => e.to_string(),
                    StepOutcome::Noop(n) => n.to_string(),
                },
            })
            .collect()
    }
}

/// What the audit record keeps of any act's plan, and the refusal an
/// unforced run would meet: what every act's own plan type answers (each
/// act's `Act::Plan`; [`super::AnyPlan`] when a front end holds any act).
pub trait Planned {
    /// The transactions concerned (what the record is filed under).
    fn transactions(&self) -> Vec<String>;

    /// Other targets: lock resources, accounts, the selection's options.
    fn targets(&self) -> Vec<String> {
        Vec::new()
    }

    /// The steps in order.
    fn steps(&self) -> Vec<PlanStep>;

    /// Why an unforced run would be refused, if it would (the acts that
    /// are never refused when planned say `None`).
    fn refusal(&self) -> Option<ActRefusal> {
        None
    }

    /// The step labels, as the audit record stores them.
    fn labels(&self) -> Vec<String> {
        self.steps().iter().map(ToString::to_string).collect()
    }
}

/// An act's own plan previewed for an operator to confirm (or `--dry-run`
/// to print): the plan with the documents it was judged on, and the
/// pre-flight every act's run makes before its first write, whatever the
/// documents.
#[derive(Debug, Clone)]
pub struct Previewed<P> {
    /// The act's own plan, judged on the documents re-read for it.
    pub plan: P,
    /// The run would be refused before its first write, whatever the
    /// documents, because the product refuses the act's writes (field or
    /// document level security, an index block, a mapping that rejects the
    /// fields, no write privilege) or cannot take its audit record; in the
    /// words the run itself would refuse with
    /// ([`Protocol::writes_refused`]). No force lifts it.
    ///
    /// [`Protocol::writes_refused`]: crate::protocol::Protocol::writes_refused
    pub writes_refused: Option<crate::error::Error>,
}

/// A rollback's or recovery's plan on its transaction's documents as
/// re-read ([`TxnPlan::on_transaction`], [`TxnPlan::of_detail`]): each
/// step with the document it acts on and what it would write, the lock
/// releases that follow, the balance change, the end state, and the
/// refusal an unforced run would meet.
#[derive(Debug, Clone)]
pub struct TxnPlan {
    /// Which procedure.
    pub procedure: Procedure,
    /// The transaction with its accounts and locks, as judged.
    pub detail: Box<TransactionDetail>,
    /// The steps in order (the procedure's, then the lock releases).
    pub steps: Vec<PlanStep>,
    /// One per step, in order: the document it acts on and what it would
    /// do.
    pub effects: Vec<StepEffect>,
    /// Why an unforced run would be refused, if it would.
    pub refusal: Option<ActRefusal>,
    /// The predicted balance change per account (non-zero only).
    pub balance_change: Vec<(String, i64)>,
    /// The balance change in words, when the transaction names its
    /// accounts and amount.
    pub in_words: Option<BalanceEffect>,
    /// The locks released after the steps.
    pub lock_releases: Vec<String>,
    /// The state the run would end in if nobody else interferes.
    pub ends_in: Option<TxnState>,
}

impl TxnPlan {
    /// The transaction's id.
    pub fn txn(&self) -> &str {
        &self.detail.txn.id
    }

    /// Whether it runs any step of the procedure (lock releases alone are
    /// not a run: a terminal transaction has nothing to do).
    pub fn runs_a_procedure(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, PlanStep::Protocol { .. }))
    }

    /// Each step with its document and effect.
    pub fn steps_in_full(&self) -> impl Iterator<Item = (&PlanStep, &StepEffect)> {
        self.steps.iter().zip(&self.effects)
    }
}

impl Planned for TxnPlan {
    fn transactions(&self) -> Vec<String> {
        vec![self.txn().to_string()]
    }

    fn steps(&self) -> Vec<PlanStep> {
        self.steps.clone()
    }

    fn refusal(&self) -> Option<ActRefusal> {
        self.refusal.clone()
    }
}

/// A rollback's or recovery's plan (the plan of [`super::Rollback`] and
/// [`super::Recover`]).
#[derive(Debug, Clone)]
pub enum ProcedurePlan {
    /// Judged on the transaction's documents.
    Judged(Box<TxnPlan>),
    /// The transaction does not exist: refused, no step.
    Missing(String),
    /// Its documents could not be read when planned for the record (no
    /// step; the run then says why it cannot act). A preview fails instead.
    Unread(String),
}

impl Planned for ProcedurePlan {
    fn transactions(&self) -> Vec<String> {
        match self {
            ProcedurePlan::Judged(p) => p.transactions(),
            ProcedurePlan::Missing(id) | ProcedurePlan::Unread(id) => vec![id.clone()],
        }
    }

    fn steps(&self) -> Vec<PlanStep> {
        match self {
            ProcedurePlan::Judged(p) => p.steps(),
            _ => Vec::new(),
        }
    }

    fn refusal(&self) -> Option<ActRefusal> {
        match self {
            ProcedurePlan::Judged(p) => p.refusal(),
            ProcedurePlan::Missing(id) => Some(ActRefusal::NoSuchTransaction(id.clone())),
            ProcedurePlan::Unread(_) => None,
        }
    }
}

/// The release of every lock a transaction owns, judged on its documents
/// as re-read: each lock it holds, refused while some are not stale.
#[derive(Debug, Clone)]
pub struct LocksOfPlan {
    /// The transaction with its accounts and locks, as judged.
    pub detail: Box<TransactionDetail>,
}

impl LocksOfPlan {
    /// The transaction's id.
    pub fn txn(&self) -> &str {
        &self.detail.txn.id
    }

    /// The locks it would release (every lock the transaction holds).
    pub fn lock_releases(&self) -> Vec<String> {
        let locks = &self.detail.locks;
        locks.iter().map(|l| l.info.resource.clone()).collect()
    }
}

impl Planned for LocksOfPlan {
    fn transactions(&self) -> Vec<String> {
        vec![self.txn().to_string()]
    }

    fn steps(&self) -> Vec<PlanStep> {
        vec![PlanStep::ReleaseLocksOf]
    }

    fn refusal(&self) -> Option<ActRefusal> {
        let live: Vec<String> = self
            .detail
            .locks
            .iter()
            .filter(|l| !l.staleness.is_stale())
            .map(|l| l.info.resource.clone())
            .collect();
        (!live.is_empty()).then_some(ActRefusal::LocksNotStale(live))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::intervene::{draft, Choices, Intervention, Recover};
    use crate::protocol::trail::{ActionKind, Interface};

    /// A plan of fixed steps, as any act's own plan answers for its record.
    struct Fixed(Vec<PlanStep>);

    impl Planned for Fixed {
        fn transactions(&self) -> Vec<String> {
            vec!["t1".into()]
        }

        fn targets(&self) -> Vec<String> {
            vec!["--all-stuck".into()]
        }

        fn steps(&self) -> Vec<PlanStep> {
            self.0.clone()
        }
    }

    #[test]
    fn each_step_is_worded_once_and_the_record_keeps_the_words() {
        let plan = Fixed(vec![
            PlanStep::Item {
                txn: "t1".into(),
                steps: vec![Step::Terminate, Step::UndoSource],
            },
            PlanStep::ReleaseLock {
                resource: "A".into(),
                held_by: Some(("txn t1".into(), "stale: owner ended".into())),
            },
            PlanStep::Sweep,
        ]);
        assert_eq!(
            plan.labels(),
            vec![
                format!(
                    "t1: {}, {}",
                    Step::Terminate.label(),
                    Step::UndoSource.label()
                ),
                "release lock A held by txn t1 (stale: owner ended)".to_string(),
                SWEEP_STEP.to_string(),
            ]
        );
        let i = Intervention::new(
            Recover::new("t1"),
            Choices::new(Interface::Dashboard, Some(" INC-1 ".into())).forced(true),
        );
        let d = draft(&plan, &i);
        assert_eq!(
            (d.action, d.forced, d.bulk),
            (ActionKind::Recover, true, false)
        );
        assert_eq!(d.reason.as_deref(), Some("INC-1"));
        assert_eq!(d.plan, plan.labels());
        assert_eq!(d.targets, plan.targets());
    }
}
