//! How a plan is made: [`Intervention::plan`] (what the audit record
//! uses) and [`Intervention::preview`] (the same plan with the documents
//! it was judged on, for a dialog to confirm or `--dry-run` to print),
//! each asking the act's own type (`acts/`), and the builders the acts
//! share. A rollback's or recovery's plan on a transaction's documents
//! comes from one builder, [`TxnPlan::on_transaction`], which states the
//! order of refusals once.

use super::plan::{
    LocksOfPlan, PlanStep, Previewed, ProcedurePlan, StepEffect, StepTarget, TxnPlan,
};
use super::BalanceEffect;
use super::{Act, ActRefusal, Intervention};
use crate::error::Result;
use crate::protocol::executor::StepOutcome;
use crate::protocol::transaction::Transaction;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Procedure, Protocol, TxnState};

impl<A: Act> Intervention<A> {
    /// Plans the act from the documents as they are now ([`Act::plan`]):
    /// what the audit record stores.
    pub async fn plan(&self, p: &Protocol) -> Result<A::Plan> {
        self.act.plan(p).await
    }

    /// [`Intervention::plan`] for an operator to confirm: the same plan
    /// with the documents it was judged on re-read beside it
    /// ([`Act::preview`]). A read that fails is an error here (nothing can
    /// be confirmed on it). It also asks, writing nothing, whether the
    /// product would let the run write at all
    /// ([`Previewed::writes_refused`]): a preview that promises steps the
    /// run would be refused before taking is no preview.
    pub async fn preview(&self, p: &Protocol) -> Result<Previewed<A::Plan>> {
        let plan = self.act.preview(p).await?;
        let writes_refused = p.writes_refused(self.act.updates_documents()).await;
        Ok(Previewed {
            plan,
            writes_refused,
        })
    }
}

/// The refusal of the checks an unforced run makes before any write
/// (state known, well formed, outside the recovery window), judged on the
/// cluster's clock as last asked.
pub fn unforced_checks(p: &Protocol, txn: &Transaction) -> Option<ActRefusal> {
    p.check_actionable(txn, false)
        .err()
        .map(ActRefusal::Procedure)
}

/// A rollback or recovery of `id` previewed on its documents read fresh
/// ([`Intervention::preview`]); a read that fails is an error.
pub(super) async fn procedure_preview(
    p: &Protocol,
    procedure: Procedure,
    id: &str,
) -> Result<ProcedurePlan> {
    Ok(match p.transaction_detail(id).await? {
        Some(d) => {
            let checked = unforced_checks(p, &d.txn);
            ProcedurePlan::Judged(Box::new(TxnPlan::on_transaction(procedure, d, checked)))
        }
        None => ProcedurePlan::Missing(id.to_string()),
    })
}

/// [`procedure_preview`] for an operator to confirm: when nothing else
/// refuses it, the refusal of another live job holding `id`
/// ([`ActRefusal::HeldByJob`], which the run checks again before its
/// record is written), so the dialog offers the force key and says whose
/// job it is before anything runs. The running jobs unreadable: no such
/// refusal ([`crate::protocol::jobs::live_jobs_for_act`]).
pub(super) async fn confirmable_preview(
    p: &Protocol,
    procedure: Procedure,
    id: &str,
) -> Result<ProcedurePlan> {
    let mut plan = procedure_preview(p, procedure, id).await?;
    if let ProcedurePlan::Judged(t) = &mut plan {
        if t.refusal.is_none() {
            let live = crate::protocol::jobs::live_jobs_for_act(p).await;
            t.refusal = live.holding(id).map(|by| ActRefusal::HeldByJob {
                txn: id.to_string(),
                by: by.clone(),
            });
        }
    }
    Ok(plan)
}

/// A rollback or recovery of `id`, planned from its documents; a read
/// that fails gives a plan without steps ([`Intervention::plan`]).
pub(super) async fn procedure_plan(p: &Protocol, procedure: Procedure, id: &str) -> ProcedurePlan {
    procedure_preview(p, procedure, id)
        .await
        .unwrap_or_else(|_| ProcedurePlan::Unread(id.to_string()))
}

/// The release of the locks `id` owns, previewed on its documents read
/// fresh (`None`: it does not exist).
pub(super) async fn locks_of_preview(p: &Protocol, id: &str) -> Result<Option<LocksOfPlan>> {
    Ok(p.transaction_detail(id).await?.map(|d| LocksOfPlan {
        detail: Box::new(d),
    }))
}

impl TxnPlan {
    /// The one builder of a rollback's or recovery's plan on a
    /// transaction's documents `d` (as re-read). Pure, so a front end is
    /// tested on documents.
    ///
    /// Its steps, each with the document it acts on and its effect, the
    /// lock releases that follow, the balance change and the end state, as
    /// the protocol's preview decides them. The refusals, in this order:
    /// 1. the procedure's own (committed, unknown state, malformed): first,
    ///    because forcing cannot lift it, so it is the one worth showing;
    /// 2. then `checked`, the refusal of the checks an unforced run makes
    ///    before any write ([`unforced_checks`]: the recovery window).
    pub fn on_transaction(
        procedure: Procedure,
        d: TransactionDetail,
        checked: Option<ActRefusal>,
    ) -> TxnPlan {
        let mut plan = TxnPlan::of_detail(procedure, d);
        plan.refusal = plan.refusal.or(checked);
        plan
    }

    /// The steps, effects, lock releases, balance change, end state and
    /// the procedure's own refusal of `procedure` on the documents of `d`
    /// (what `show` prints as "recover would", the dialog confirms and the
    /// dry run lists).
    pub fn of_detail(procedure: Procedure, d: TransactionDetail) -> TxnPlan {
        let preview = d.preview(procedure);
        let txn = &d.txn;
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
                writes: matches!(s.outcome, StepOutcome::Updated(_)),
            })
            .chain(lock_releases.iter().map(|r| PlanStep::ReleaseLock {
                resource: r.clone(),
                held_by: None,
            }))
            .collect();
        let effects = StepEffect::of_preview(preview, txn)
            .into_iter()
            .chain(lock_releases.iter().map(|r| StepEffect {
                target: StepTarget::Lock(r.clone()),
                effect: "lock released".to_string(),
            }))
            .collect();
        let (ds, dd) = preview.balance_change;
        let in_words = match (&txn.src, &txn.dest, txn.amount) {
            (Some(src), Some(dest), Some(amount)) => Some(BalanceEffect::of(
                procedure == Procedure::Recover,
                amount,
                src,
                dest,
                (ds, dd),
            )),
            _ => None,
        };
        let balance_change = [(&txn.src, ds), (&txn.dest, dd)]
            .into_iter()
            .filter(|(_, delta)| *delta != 0)
            .filter_map(|(a, delta)| a.clone().map(|a| (a, delta)))
            .collect();
        let refusal = preview.refusal.clone().map(ActRefusal::Procedure);
        let ends_in = preview.ends_in.clone();
        TxnPlan {
            procedure,
            detail: Box::new(d),
            steps,
            effects,
            refusal,
            balance_change,
            in_words,
            lock_releases,
            ends_in,
        }
    }
}

/// The steps `procedure` takes from `state` as planned (no prediction of
/// no-ops: every step is taken to write).
pub(super) fn labels_from(procedure: Procedure, state: &TxnState) -> Vec<PlanStep> {
    crate::protocol::steps::plan(procedure, state)
        .unwrap_or_default()
        .into_iter()
        .map(|step| PlanStep::Protocol { step, writes: true })
        .collect()
}
