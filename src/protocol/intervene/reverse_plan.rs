//! The plan of a reversal: what a run of it will write, fresh or resumed
//! after a crash part-way ([`crate::protocol::reverse::decide`], the rule
//! `Protocol::reverse` follows): finishing a committed original first, then
//! creating the compensating transfer unless an earlier attempt left it,
//! linking the original unless it names it already, and the reversal's own
//! recovery from where it stands, each step with the document it acts on
//! and what it would write (or why nothing).

use super::plan::{Documents, Plan, PlanStep, StepEffect, StepTarget};
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
/// reversal's id), kept in [`Plan::documents`].
pub(super) async fn reverse_preview(
    p: &Protocol,
    id: &str,
    finish_committed: bool,
) -> Result<Plan> {
    let Some(original) = p.transaction_detail(id).await? else {
        return Ok(Plan {
            transactions: vec![id.to_string(), reversal_id(id)],
            refusal: Some(ActRefusal::NoSuchTransaction(id.to_string())),
            ..Plan::default()
        });
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
    Ok(Plan::on_reversal(
        original,
        existing,
        finish_committed,
        checked,
        now,
    ))
}

impl Plan {
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
    ) -> Plan {
        let id = original.txn.id.clone();
        let mut plan = Plan {
            transactions: vec![id.clone(), reversal_id(&id)],
            ..Plan::default()
        };
        match decide(&original, existing.as_ref(), finish_committed, now) {
            Err(r) => plan.refusal = Some(ActRefusal::Reverse(r)),
            Ok(s) => {
                let mut balance = BTreeMap::new();
                if s.admitted.finish_first {
                    plan.finish_first(&original, checked, &mut balance);
                }
                plan.reverse(&id, &s, &mut balance);
            }
        }
        plan.documents = Some(Documents::Reversal {
            original: Box::new(original),
            existing: existing.map(Box::new),
        });
        plan
    }

    /// Adds the recovery that finishes committed `original` first: its
    /// steps, the locks it releases, its refusal (the procedure's own, else
    /// `checked`), its balance change into `balance`.
    fn finish_first(
        &mut self,
        original: &TransactionDetail,
        checked: Option<ActRefusal>,
        balance: &mut BTreeMap<String, i64>,
    ) {
        let finish = Plan::of_detail(Procedure::Recover, original);
        let txn = &original.txn.id;
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
        self.lock_releases = finish.lock_releases;
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
