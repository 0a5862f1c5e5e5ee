//! What an act would do, as previewed from the documents as they are: the
//! typed steps (each worded once, by [`PlanStep`]'s `Display`), the refusal
//! an unforced run would meet, the balance change and the lock releases.

use super::selection::Selected;
use super::{Act, Intervention, Refusal};
use crate::error::Result;
use crate::protocol::audit::AuditReport;
use crate::protocol::executor::StepOutcome;
use crate::protocol::locks::LockView;
use crate::protocol::reverse::{admit, link_of, reversal_id, REVERSED_BY};
use crate::protocol::trail::RecordDraft;
use crate::protocol::transaction::Transaction;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Procedure, Protocol, Step, TxnState};
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
    /// The original names a reversal already.
    AlreadyReversed {
        /// The reversal named.
        by: String,
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
            PlanStep::Protocol { writes, .. } => *writes,
            _ => true,
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
            PlanStep::FinishFirst { txn, step } => write!(f, "finish {txn}: {}", step.label()),
            PlanStep::CreateReversal {
                id,
                src,
                dest,
                amount,
            } => write!(f, "create {id}: {src} -> {dest}, amount {amount}"),
            PlanStep::LinkOriginal { txn, reversal } => {
                write!(f, "link {txn}: reversed_by = {reversal}")
            }
            PlanStep::AlreadyReversed { by } => write!(
                f,
                "already reversed by {by}: finish it if unfinished, else refuse"
            ),
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
    pub refusal: Option<Refusal>,
    /// The predicted balance change per account (non-zero only).
    pub balance_change: Vec<(String, i64)>,
    /// The locks released after the steps.
    pub lock_releases: Vec<String>,
    /// What a bulk act's selection resolved to.
    pub selected: Option<Selected>,
    /// For a plan made from a transaction's documents
    /// ([`Plan::of_transaction`]): one per step, in order, the document it
    /// acts on and what it would do; empty otherwise.
    pub effects: Vec<StepEffect>,
    /// For a plan made from a transaction's documents: the state the run
    /// would end in if nobody else interferes.
    pub ends_in: Option<TxnState>,
    /// The documents it was judged on, when previewed for an operator to
    /// confirm ([`Intervention::preview`]; `None` from [`Intervention::plan`]).
    pub documents: Option<Documents>,
}

/// The documents a preview was judged on, as re-read for it: what a front
/// end shows beside the plan (the transaction with its balances now, the
/// lock with its holder, the audit's findings, the original of a reversal
/// and whatever sits under its reversal's id).
#[derive(Debug, Clone)]
pub enum Documents {
    /// A transaction with its accounts and locks.
    Transaction(Box<TransactionDetail>),
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

    /// The unfinished record of `i` with this plan.
    pub fn draft(&self, i: &Intervention) -> RecordDraft {
        let mut d = RecordDraft::new(i.action(), self.transactions.clone(), i.choices.interface);
        d.targets = self.targets.clone();
        d.reason = i.choices.reason_text().map(str::to_string);
        d.forced = i.choices.force;
        d.bulk = i.is_bulk();
        d.plan = self.labels();
        d
    }
}

impl Intervention {
    /// Previews the act from the documents as they are now. A target that
    /// cannot be read gives a plan without steps (the run then says why it
    /// cannot act); only a bulk act's selection fails here.
    pub async fn plan(&self, p: &Protocol) -> Result<Plan> {
        Ok(match &self.act {
            Act::Rollback(id) => procedure_plan(p, Procedure::Rollback, id).await,
            Act::Recover(id) => procedure_plan(p, Procedure::Recover, id).await,
            Act::ReleaseLock(resource) => {
                let view = p.lock_view(resource).await.ok().flatten();
                lock_plan(resource, view.as_ref())
            }
            Act::ReleaseLocksOf { txn, .. } => Plan {
                transactions: vec![txn.clone()],
                steps: vec![PlanStep::ReleaseLocksOf],
                ..Plan::default()
            },
            Act::AuditRepair { account, .. } => Plan {
                targets: account.iter().cloned().collect(),
                steps: vec![PlanStep::Audit, PlanStep::Repair],
                ..Plan::default()
            },
            Act::Reverse {
                txn,
                finish_committed,
            } => reverse_plan(p, txn, *finish_committed).await,
            Act::Transfer { transfer, .. } => Plan {
                transactions: transfer.id.iter().cloned().collect(),
                targets: vec![transfer.src.clone(), transfer.dest.clone()],
                steps: labels_from(Procedure::Recover, &TxnState::Created),
                ..Plan::default()
            },
            Act::Bulk(b) => b.plan(p).await?,
        })
    }
}

impl Intervention {
    /// [`Intervention::plan`] for an operator to confirm: the same plan
    /// with the documents it was judged on re-read beside it
    /// ([`Plan::documents`]), and the refusals an unforced run would meet
    /// that only the run itself decides otherwise: a rollback's or
    /// recovery's own refusal first (forcing cannot lift it), then the
    /// checks before any write (the recovery window); for the release of a
    /// transaction's locks, the locks it would release and those not stale.
    /// A read that fails is an error here (nothing can be confirmed on it).
    pub async fn preview(&self, p: &Protocol) -> Result<Plan> {
        let mut plan = match &self.act {
            Act::Rollback(id) => return detail_preview(p, Procedure::Rollback, id).await,
            Act::Recover(id) => return detail_preview(p, Procedure::Recover, id).await,
            Act::ReleaseLock(resource) => {
                return Ok(Plan::on_lock(resource, p.lock_view(resource).await?))
            }
            Act::ReleaseLocksOf { txn, .. } => return locks_of_preview(p, txn).await,
            _ => self.plan(p).await?,
        };
        plan.documents = match &self.act {
            Act::AuditRepair { .. } => {
                Some(Documents::Audit(Box::new(p.audit(None, false).await?)))
            }
            Act::Reverse { txn, .. } => {
                let Some(original) = p.transaction_detail(txn).await? else {
                    plan.refusal = Some(Refusal::NoSuchTransaction(txn.clone()));
                    return Ok(plan);
                };
                let existing = p.read_transaction(&reversal_id(txn)).await?;
                Some(Documents::Reversal {
                    original: Box::new(original),
                    existing: existing.map(|(t, _)| Box::new(t)),
                })
            }
            _ => None,
        };
        Ok(plan)
    }
}

/// The preview of a rollback or recovery of `id` ([`Intervention::preview`]).
async fn detail_preview(p: &Protocol, procedure: Procedure, id: &str) -> Result<Plan> {
    let Some(d) = p.transaction_detail(id).await? else {
        return Ok(Plan {
            transactions: vec![id.to_string()],
            refusal: Some(Refusal::NoSuchTransaction(id.to_string())),
            ..Plan::default()
        });
    };
    let checked = p
        .check_actionable(&d.txn, false)
        .err()
        .map(Refusal::Protocol);
    Ok(Plan::on_transaction(Some(procedure), d, checked))
}

/// The preview of releasing the locks transaction `txn` owns.
async fn locks_of_preview(p: &Protocol, txn: &str) -> Result<Plan> {
    let Some(d) = p.transaction_detail(txn).await? else {
        return Ok(Plan {
            transactions: vec![txn.to_string()],
            steps: vec![PlanStep::ReleaseLocksOf],
            refusal: Some(Refusal::NoSuchTransaction(txn.to_string())),
            ..Plan::default()
        });
    };
    Ok(Plan::on_transaction(None, d, None))
}

impl Plan {
    /// The preview judged on transaction documents `d` as re-read, with
    /// the documents kept: a rollback's or recovery's [`Plan::of_detail`]
    /// (`procedure`), whose own refusal comes first (forcing cannot lift
    /// it), then `checked`, the refusal of the checks before any write;
    /// with no procedure, the release of the locks it owns: each lock it
    /// holds, and those not stale (released only when forced). Pure, so a
    /// front end is tested on documents.
    pub fn on_transaction(
        procedure: Option<Procedure>,
        d: TransactionDetail,
        checked: Option<Refusal>,
    ) -> Plan {
        let mut plan = match procedure {
            Some(procedure) => Plan::of_detail(procedure, &d),
            None => {
                let live: Vec<String> = d
                    .locks
                    .iter()
                    .filter(|l| !l.staleness.is_stale())
                    .map(|l| l.info.resource.clone())
                    .collect();
                Plan {
                    transactions: vec![d.txn.id.clone()],
                    steps: vec![PlanStep::ReleaseLocksOf],
                    lock_releases: d.locks.iter().map(|l| l.info.resource.clone()).collect(),
                    refusal: (!live.is_empty()).then_some(Refusal::LocksNotStale(live)),
                    ..Plan::default()
                }
            }
        };
        if plan.refusal.is_none() {
            plan.refusal = checked;
        }
        plan.documents = Some(Documents::Transaction(Box::new(d)));
        plan
    }

    /// The preview of releasing the lock on `resource` judged on `view`
    /// (as re-read; `None`: not held), with the lock kept.
    pub fn on_lock(resource: &str, view: Option<LockView>) -> Plan {
        let mut plan = lock_plan(resource, view.as_ref());
        plan.documents = Some(Documents::Lock(view.map(Box::new)));
        plan
    }
}

/// The steps `procedure` takes from `state` as planned (no prediction of
/// no-ops: every step is taken to write).
fn labels_from(procedure: Procedure, state: &TxnState) -> Vec<PlanStep> {
    crate::protocol::steps::plan(procedure, state)
        .unwrap_or_default()
        .into_iter()
        .map(|step| PlanStep::Protocol { step, writes: true })
        .collect()
}

/// A rollback or recovery of `id`, previewed from its documents.
async fn procedure_plan(p: &Protocol, procedure: Procedure, id: &str) -> Plan {
    let mut plan = Plan {
        transactions: vec![id.to_string()],
        ..Plan::default()
    };
    match p.transaction_detail(id).await {
        Ok(Some(d)) => plan = Plan::of_transaction(p, procedure, &d),
        Ok(None) => plan.refusal = Some(Refusal::NoSuchTransaction(id.to_string())),
        Err(_) => {}
    }
    plan
}

impl Plan {
    /// The steps, lock releases, balance change and refusal of `procedure`
    /// on the documents of `d`, as the protocol's preview decides them (a
    /// pure function: the dashboard's dialog shows it as re-read).
    pub fn of_detail(procedure: Procedure, d: &TransactionDetail) -> Plan {
        let preview = d.preview(procedure);
        let lock_releases: Vec<String> = d
            .lock_releases(procedure)
            .into_iter()
            .map(str::to_string)
            .collect();
        let steps = preview
            .steps
            .iter()
            .map(|s| PlanStep::Protocol {
                step: s.step,
                writes: matches!(
                    s.outcome,
                    crate::protocol::executor::StepOutcome::Updated(_)
                ),
            })
            .chain(lock_releases.iter().map(|r| PlanStep::ReleaseLock {
                resource: r.clone(),
                held_by: None,
            }))
            .collect();
        let (ds, dd) = preview.balance_change;
        let balance_change = [(&d.txn.src, ds), (&d.txn.dest, dd)]
            .into_iter()
            .filter(|(_, delta)| *delta != 0)
            .filter_map(|(a, delta)| a.clone().map(|a| (a, delta)))
            .collect();
        Plan {
            transactions: vec![d.txn.id.clone()],
            steps,
            refusal: preview.refusal.clone().map(Refusal::Protocol),
            balance_change,
            lock_releases,
            ..Plan::default()
        }
    }
}

impl Plan {
    /// The plan of `procedure` on the documents of `d` as an unforced run
    /// would meet it: [`Plan::of_detail`], refused first by the checks
    /// before any write (state known, well formed, outside the recovery
    /// window), with each step's document and effect and the end state.
    pub fn of_transaction(p: &Protocol, procedure: Procedure, d: &TransactionDetail) -> Plan {
        let mut plan = Plan::of_detail(procedure, d);
        if let Err(r) = p.check_actionable(&d.txn, false) {
            plan.refusal = Some(Refusal::Protocol(r));
        }
        let preview = d.preview(procedure);
        let txn = &d.txn;
        let account = |a: &Option<String>| StepTarget::Account(a.clone().unwrap_or_default());
        plan.effects = preview
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
            .chain(plan.lock_releases.iter().map(|r| StepEffect {
                target: StepTarget::Lock(r.clone()),
                effect: "lock released".to_string(),
            }))
            .collect();
        plan.ends_in = preview.ends_in.clone();
        plan
    }

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

/// The release of the lock on `resource` (`view`: as judged now): filed
/// under its owner, its step naming the holder and the judgement, so a
/// forced release of a live or unknown lock says whose lock it took.
fn lock_plan(resource: &str, view: Option<&LockView>) -> Plan {
    let held_by = view.map(|v| (v.info.holder_label(), v.staleness.to_string()));
    Plan {
        transactions: view
            .and_then(|v| v.info.owner.clone())
            .into_iter()
            .collect(),
        targets: vec![resource.to_string()],
        steps: vec![PlanStep::ReleaseLock {
            resource: resource.to_string(),
            held_by,
        }],
        refusal: Refusal::of_lock(view),
        lock_releases: view.map(|_| resource.to_string()).into_iter().collect(),
        ..Plan::default()
    }
}

/// The reversal of `id`, previewed from the original as it is.
async fn reverse_plan(p: &Protocol, id: &str, finish_committed: bool) -> Plan {
    let rev = reversal_id(id);
    let mut plan = Plan {
        transactions: vec![id.to_string(), rev.clone()],
        ..Plan::default()
    };
    if let Ok(Some((t, doc))) = p.read_transaction(id).await {
        if let Some(by) = link_of(&doc.source, REVERSED_BY) {
            plan.steps.push(PlanStep::AlreadyReversed { by });
            return plan;
        }
        let existing = p
            .read_transaction(&rev)
            .await
            .ok()
            .flatten()
            .map(|(t, _)| t);
        if let Err(r) = admit(&t, existing.as_ref(), finish_committed) {
            plan.refusal = Some(Refusal::Reverse(r));
        }
        if finish_committed && t.state == Some(TxnState::Committed) {
            if let Err(r) = p.check_actionable(&t, false) {
                plan.refusal = Some(Refusal::Reverse(
                    crate::protocol::reverse::ReverseRefusal::Protocol(r),
                ));
            }
            let steps = crate::protocol::steps::plan(Procedure::Recover, &TxnState::Committed);
            plan.steps
                .extend(
                    steps
                        .unwrap_or_default()
                        .into_iter()
                        .map(|step| PlanStep::FinishFirst {
                            txn: id.to_string(),
                            step,
                        }),
                );
        }
        if let (Some(src), Some(dest), Some(amount)) = (&t.src, &t.dest, t.amount) {
            plan.targets = vec![src.clone(), dest.clone()];
            plan.steps.push(PlanStep::CreateReversal {
                id: rev.clone(),
                src: dest.clone(),
                dest: src.clone(),
                amount,
            });
            plan.balance_change = vec![(src.clone(), amount), (dest.clone(), -amount)];
        }
    }
    plan.steps.push(PlanStep::LinkOriginal {
        txn: id.to_string(),
        reversal: rev,
    });
    plan.steps
        .extend(labels_from(Procedure::Recover, &TxnState::Created));
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::intervene::Choices;
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
            Act::Recover("t1".into()),
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
