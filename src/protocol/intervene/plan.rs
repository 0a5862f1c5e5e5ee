//! What an act would do, as previewed from the documents as they are: the
//! typed steps (each worded once, by [`PlanStep`]'s `Display`), the refusal
//! an unforced run would meet, the balance change and the lock releases.
//! How a plan is made is in `build.rs`.

use super::selection::Selected;
use super::{ActRefusal, BalanceEffect};
use crate::protocol::audit::AuditReport;
use crate::protocol::executor::StepOutcome;
use crate::protocol::locks::LockView;
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

/// What an act would do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The transactions concerned (what the record is filed under).
    pub transactions: Vec<String>,
    /// Other targets: lock resources, accounts, the selection's options.
    pub targets: Vec<String>,
    /// The steps in order.
    pub steps: Vec<PlanStep>,
    /// Why an unforced run would be refused, if it would.
    pub refusal: Option<ActRefusal>,
    /// The predicted balance change per account (non-zero only).
    pub balance_change: Vec<(String, i64)>,
    /// The balance change in words ([`BalanceEffect`]), for a rollback's
    /// or recovery's plan on a transaction's documents.
    pub in_words: Option<BalanceEffect>,
    /// The locks released after the steps (for a bulk act previewed: by
    /// every transaction that runs, and by the closing sweep).
    pub lock_releases: Vec<String>,
    /// For `recover --all-stuck` previewed ([`Intervention::preview`]):
    /// the locks its closing sweep ([`PlanStep::Sweep`]) would release, as
    /// judged now (stale on evidence, owner not in flight).
    pub sweep: Vec<LockView>,
    /// Previewed on a deployment without a locks index
    /// ([`crate::protocol::read::Target::Absent`]): no lock is released
    /// and the sweep has nothing to do, which the preview says.
    pub locks_absent: bool,
    /// What a bulk act's selection resolved to.
    pub selected: Option<Selected>,
    /// For a plan made from a transaction's documents
    /// ([`Plan::on_transaction`]): one per step, in order, the document it
    /// acts on and what it would do; empty otherwise.
    pub effects: Vec<StepEffect>,
    /// For a plan made from a transaction's documents: the state the run
    /// would end in if nobody else interferes.
    pub ends_in: Option<TxnState>,
    /// The documents it was judged on, when previewed for an operator to
    /// confirm ([`Intervention::preview`]; `None` from [`Intervention::plan`]).
    pub documents: Option<Documents>,
    /// A bulk act previewed ([`Intervention::preview`]): each selected
    /// transaction's own plan on its documents, in selection order; empty
    /// otherwise.
    pub items: Vec<Plan>,
    /// Previewed ([`Intervention::preview`]): the run would be refused
    /// before its first write, whatever the documents, because the product
    /// refuses the act's writes (field or document level security, an
    /// index block, a mapping that rejects the fields, no write privilege)
    /// or cannot take its audit record; in the words the run itself would
    /// refuse with ([`Protocol::writes_refused`]). No force lifts it.
    ///
    /// [`Protocol::writes_refused`]: crate::protocol::Protocol::writes_refused
    pub writes_refused: Option<crate::error::Error>,
}

/// The documents a preview was judged on, as re-read for it: what a front
/// end shows beside the plan (the transaction with its balances now, the
/// lock with its holder, the audit's findings, the original of a reversal
/// and whatever sits under its reversal's id).
#[derive(Debug, Clone)]
pub enum Documents {
    /// A rollback's or recovery's transaction with its accounts and locks.
    Procedure(Procedure, Box<TransactionDetail>),
    /// The transaction whose locks a release of them deletes, with its
    /// accounts and locks.
    LocksOf(Box<TransactionDetail>),
    /// A lock as judged now (`None`: not held any more).
    Lock(Option<Box<LockView>>),
    /// A fresh audit (what its repair would address).
    Audit(Box<AuditReport>),
    /// The original of a reversal, and what sits under the reversal's id.
    Reversal {
        /// The original with its accounts and locks.
        original: Box<TransactionDetail>,
        /// An earlier attempt's reversal, if one exists.
        existing: Option<Box<Transaction>>,
    },
}

impl Plan {
    /// The step labels, as the audit record stores them.
    pub fn labels(&self) -> Vec<String> {
        self.steps.iter().map(ToString::to_string).collect()
    }
}

impl Plan {
    /// Whether it runs any step of a transaction's procedure (lock releases
    /// alone are not a run: a terminal transaction has nothing to do).
    pub fn runs_a_procedure(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, PlanStep::Protocol { .. }))
    }

    /// Each step with its document and effect (`None` for a plan not made
    /// from a transaction's documents).
    pub fn steps_in_full(&self) -> impl Iterator<Item = (&PlanStep, Option<&StepEffect>)> {
        let mut effects = self.effects.iter();
        self.steps.iter().map(move |s| (s, effects.next()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::intervene::{Choices, Intervention, Recover};
    use crate::protocol::trail::{ActionKind, Interface};

    #[test]
    fn each_step_is_worded_once_and_the_record_keeps_the_words() {
        let plan = Plan {
            transactions: vec!["t1".into()],
            targets: vec!["--all-stuck".into()],
            steps: vec![
                PlanStep::Item {
                    txn: "t1".into(),
                    steps: vec![Step::Terminate, Step::UndoSource],
                },
                PlanStep::ReleaseLock {
                    resource: "A".into(),
                    held_by: Some(("txn t1".into(), "stale: owner ended".into())),
                },
                PlanStep::Sweep,
            ],
            ..Plan::default()
        };
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
        let d = plan.draft(&i);
        assert_eq!(
            (d.action, d.forced, d.bulk),
            (ActionKind::Recover, true, false)
        );
        assert_eq!(d.reason.as_deref(), Some("INC-1"));
        assert_eq!(d.plan, plan.labels());
        assert_eq!(d.targets, plan.targets);
    }
}
