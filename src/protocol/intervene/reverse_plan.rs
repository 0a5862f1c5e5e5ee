//! The plan of a reversal: what a run of it will write, fresh or resumed
//! after a crash part-way ([`crate::protocol::reverse::decide`], the rule
//! `Protocol::reverse` follows): finishing a committed original first, then
//! creating the compensating transfer unless an earlier attempt left it,
//! linking the original unless it names it already, and the reversal's own
//! recovery from where it stands, each step with the document it acts on
//! and what it would write (or why nothing).

use super::plan::{PlanStep, Planned, StepEffect, StepTarget, TxnPlan};
use super::ActRefusal;
use crate::error::Result;
use crate::protocol::executor::StepOutcome;
use crate::protocol::reverse::{decide, reversal_id, ReverseRefusal, ReverseSteps};
use crate::protocol::transaction::Transaction;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Procedure, Protocol, TxnState};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

/// The reversal of `id` previewed from the documents as they are now (the
/// original with its accounts and locks, whatever sits under the
/// reversal's id); a read that fails is an error.
pub(super) async fn reverse_preview(
    p: &Protocol,
    id: &str,
    finish_committed: bool,
) -> Result<ReversalPlan> {
    let Some(original) = p.transaction_detail(id).await? else {
        return Ok(ReversalPlan::Missing(id.to_string()));
    };
    let existing = p.read_transaction(&reversal_id(id)).await?.map(|(t, _)| t);
    let finishes = finish_committed
        && original.txn.state == Some(TxnState::Committed)
        && original.txn.reversed_by.is_none();
    let checked = finishes
        .then(|| p.check_actionable(&original.txn, false).err())
        .flatten()
        .map(|r| ActRefusal::Reverse(ReverseRefusal::Protocol(r)));
    let now = p.now().await;
    Ok(ReversalPlan::Judged(Box::new(JudgedReversal::on_reversal(
        original,
        existing,
        finish_committed,
        checked,
        now,
    ))))
}

/// A reversal's plan (the plan of [`super::Reverse`]).
#[derive(Debug, Clone)]
pub enum ReversalPlan {
    /// Judged on the original and whatever sits under its reversal's id.
    Judged(Box<JudgedReversal>),
    /// The original does not exist: refused, no step.
    Missing(String),
    /// The documents could not be read when planned for the record (no
    /// step; the run then says why it cannot act). A preview fails instead.
    Unread(String),
}

/// Filed under the original and its reversal.
impl Planned for ReversalPlan {
    fn transactions(&self) -> Vec<String> {
        match self {
            ReversalPlan::Judged(j) => j.transactions(),
            ReversalPlan::Missing(id) | ReversalPlan::Unread(id) => {
                vec![id.clone(), reversal_id(id)]
            }
        }
    }

    fn targets(&self) -> Vec<String> {
        match self {
            ReversalPlan::Judged(j) => j.targets(),
            _ => Vec::new(),
        }
    }

    fn steps(&self) -> Vec<PlanStep> {
        match self {
            ReversalPlan::Judged(j) => j.steps(),
            _ => Vec::new(),
        }
    }

    fn refusal(&self) -> Option<ActRefusal> {
        match self {
            ReversalPlan::Judged(j) => j.refusal(),
            ReversalPlan::Missing(id) => Some(ActRefusal::NoSuchTransaction(id.clone())),
            ReversalPlan::Unread(_) => None,
        }
    }
}

/// The reversal of an original as re-read: every write a run of it makes,
/// each with the document it acts on and what it would write, the balance
/// change over both accounts, and the refusal an unforced run would meet.
#[derive(Debug, Clone)]
pub struct JudgedReversal {
    /// The original with its accounts and locks.
    pub original: TransactionDetail,
    /// An earlier attempt's reversal, if one exists.
    pub existing: Option<Transaction>,
    /// The steps in order (none when refused by the admission rule).
    pub steps: Vec<PlanStep>,
    /// One per step, in order: the document it acts on and what it would
    /// do.
    pub effects: Vec<StepEffect>,
    /// Why an unforced run would be refused, if it would.
    pub refusal: Option<ActRefusal>,
    /// The predicted balance change per account (non-zero only).
    pub balance_change: Vec<(String, i64)>,
    /// The original's two accounts, when admitted.
    pub targets: Vec<String>,
}

impl Planned for JudgedReversal {
    fn transactions(&self) -> Vec<String> {
        vec![self.original.txn.id.clone(), self.reversal()]
    }

    fn targets(&self) -> Vec<String> {
        self.targets.clone()
    }

    fn steps(&self) -> Vec<PlanStep> {
        self.steps.clone()
    }

    fn refusal(&self) -> Option<ActRefusal> {
        self.refusal.clone()
    }
}

impl JudgedReversal {
    /// The reversal's id.
    pub fn reversal(&self) -> String {
        reversal_id(&self.original.txn.id)
    }

    /// Each step with its document and effect.
    pub fn steps_in_full(&self) -> impl Iterator<Item = (&PlanStep, &StepEffect)> {
        self.steps.iter().zip(&self.effects)
    }

    /// The plan of reversing `original` (as re-read), `existing` being what
    /// sits under the reversal's id; `checked`: the refusal of the checks
    /// an unforced finish of a committed original makes (the recovery
    /// window); `now`: the creation time a new reversal is previewed with.
    /// Refused by the admission rule: no steps (nothing will run). Pure, so
    /// a front end is tested on documents.
    pub fn on_reversal(
        original: TransactionDetail,
        existing: Option<Transaction>,
        finish_committed: bool,
        checked: Option<ActRefusal>,
        now: DateTime<Utc>,
    ) -> JudgedReversal {
        let id = original.txn.id.clone();
        let decided = decide(&original, existing.as_ref(), finish_committed, now);
        let mut plan = JudgedReversal {
            original,
            existing,
            steps: Vec::new(),
            effects: Vec::new(),
            refusal: None,
            balance_change: Vec::new(),
            targets: Vec::new(),
        };
        match decided {
            Err(r) => plan.refusal = Some(ActRefusal::Reverse(r)),
            Ok(s) => {
                let mut balance = BTreeMap::new();
                if s.admitted.finish_first {
                    plan.finish_first(checked, &mut balance);
                }
                plan.reverse(&id, &s, &mut balance);
            }
        }
        plan
    }

    /// Adds the recovery that finishes the committed original first: its
    /// steps, the locks it releases, its refusal (the procedure's own, else
    /// `checked`), its balance change into `balance`.
    fn finish_first(&mut self, checked: Option<ActRefusal>, balance: &mut BTreeMap<String, i64>) {
        let finish = TxnPlan::of_detail(Procedure::Recover, self.original.clone());
        let txn = self.original.txn.id.clone();
        self.steps
            .extend(finish.steps.into_iter().map(|step| match step {
                PlanStep::Protocol { step, writes } => PlanStep::FinishFirst {
                    txn: txn.clone(),
                    step,
                    writes,
                },
                other => other,
            }));
        self.effects.extend(finish.effects);
        let own = finish.refusal.map(|r| match r {
            ActRefusal::Procedure(r) => ActRefusal::Reverse(ReverseRefusal::Protocol(r)),
            other => other,
        });
        self.refusal = own.or(checked);
        for (acct, delta) in finish.balance_change {
            *balance.entry(acct).or_default() += delta;
        }
    }

    /// Adds the reversal's writes `s` of original `id` (create, link, its
    /// own recovery) and the balance change over both (`balance`: the
    /// finish's so far).
    fn reverse(&mut self, id: &str, s: &ReverseSteps, balance: &mut BTreeMap<String, i64>) {
        let t = &s.admitted.transfer;
        let rev = &s.reversal.id;
        if s.create {
            self.steps.push(PlanStep::CreateReversal {
                id: rev.clone(),
                src: t.dest.clone(),
                dest: t.src.clone(),
                amount: t.amount,
            });
            self.effects.push(StepEffect {
                target: StepTarget::Transaction(rev.clone()),
                effect: format!(
                    "creates {rev} ({} → {}, {}, reverses {id})",
                    t.dest, t.src, t.amount
                ),
            });
        }
        if s.link {
            self.steps.push(PlanStep::LinkOriginal {
                txn: id.to_string(),
                reversal: rev.clone(),
            });
            self.effects.push(StepEffect {
                target: StepTarget::Transaction(id.to_string()),
                effect: format!("sets {id}.reversed_by = {rev}"),
            });
        }
        self.steps
            .extend(s.run.steps.iter().map(|st| PlanStep::Protocol {
                step: st.step,
                writes: matches!(st.outcome, StepOutcome::Updated(_)),
            }));
        self.effects
            .extend(StepEffect::of_preview(&s.run, &s.reversal));
        // The reversal moves the amount from the original's destination.
        let (rev_src, rev_dest) = s.run.balance_change;
        *balance.entry(t.dest.clone()).or_default() += rev_src;
        *balance.entry(t.src.clone()).or_default() += rev_dest;
        self.balance_change = [&t.src, &t.dest]
            .into_iter()
            .filter_map(|a| balance.get(a).map(|d| (a.clone(), *d)))
            .filter(|(_, d)| *d != 0)
            .collect();
        self.targets = vec![t.src.clone(), t.dest.clone()];
    }
}
