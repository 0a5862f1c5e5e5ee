//! How a [`Plan`] is made: [`Intervention::plan`] (what `--dry-run` and the
//! audit record use) and [`Intervention::preview`] (the same plan with the
//! documents it was judged on, for a dialog to confirm), each asking the
//! act's own type (`acts/`), and the builders the acts share. A rollback's,
//! recovery's or lock release's plan on a transaction's documents comes
//! from one builder, [`Plan::on_transaction`], which states the order of
//! refusals once.

use super::plan::{Documents, Plan, PlanStep, StepEffect, StepTarget};
use super::BalanceEffect;
use super::{Act, ActRefusal, Intervention};
use crate::error::Result;
use crate::protocol::executor::StepOutcome;
use crate::protocol::locks::LockView;
use crate::protocol::transaction::Transaction;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Procedure, Protocol, TxnState};

impl<A: Act> Intervention<A> {
    /// Previews the act from the documents as they are now ([`Act::plan`]):
    /// what `--dry-run` prints and the audit record stores.
    pub async fn plan(&self, p: &Protocol) -> Result<Plan> {
        self.act.plan(p).await
    }

    /// [`Intervention::plan`] for an operator to confirm: the same plan
    /// with the documents it was judged on re-read beside it
    /// ([`Plan::documents`], [`Act::preview`]). A read that fails is an
    /// error here (nothing can be confirmed on it). On a deployment without
    /// a locks index it says so ([`Plan::locks_absent`]): no lock is
    /// released or swept. It also asks, writing nothing, whether the
    /// product would let the run write at all ([`Plan::writes_refused`]):
    /// a preview that promises steps the run would be refused before
    /// taking is no preview.
    pub async fn preview(&self, p: &Protocol) -> Result<Plan> {
        let mut plan = self.act.preview(p).await?;
        plan.locks_absent = p.discovery().await?.locks.is_absent();
        plan.writes_refused = p.writes_refused(self.act.updates_documents()).await;
        Ok(plan)
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

/// The preview of `procedure` on `id` (`None`: the release of the locks
/// it owns), read fresh ([`Intervention::preview`]).
pub(super) async fn detail_preview(
    p: &Protocol,
    procedure: Option<Procedure>,
    id: &str,
) -> Result<Plan> {
    let Some(d) = p.transaction_detail(id).await? else {
        return Ok(Plan::no_such_transaction(procedure, id));
    };
    let checked = procedure.and_then(|_| unforced_checks(p, &d.txn));
    Ok(Plan::on_transaction(procedure, d, checked))
}

/// A rollback or recovery of `id`, planned from its documents; a read
/// that fails gives a plan without steps ([`Intervention::plan`]).
pub(super) async fn procedure_plan(p: &Protocol, procedure: Procedure, id: &str) -> Plan {
    match p.transaction_detail(id).await {
        Ok(Some(d)) => {
            let checked = unforced_checks(p, &d.txn);
            let mut plan = Plan::on_transaction(Some(procedure), d, checked);
            plan.documents = None;
            plan
        }
        Ok(None) => Plan::no_such_transaction(Some(procedure), id),
        Err(_) => Plan {
            transactions: vec![id.to_string()],
            ..Plan::default()
        },
    }
}

impl Plan {
    /// The plan of an act on transaction `id`, which does not exist.
    fn no_such_transaction(procedure: Option<Procedure>, id: &str) -> Plan {
        Plan {
            transactions: vec![id.to_string()],
            steps: match procedure {
                Some(_) => Vec::new(),
                None => vec![PlanStep::ReleaseLocksOf],
            },
            refusal: Some(ActRefusal::NoSuchTransaction(id.to_string())),
            ..Plan::default()
        }
    }

    /// The one builder of a plan on a transaction's documents `d` (as
    /// re-read; kept in [`Plan::documents`]). Pure, so a front end is
    /// tested on documents.
    ///
    /// With a `procedure` (rollback or recovery): its steps, each with the
    /// document it acts on and its effect, the lock releases that follow,
    /// the balance change and the end state, as the protocol's preview
    /// decides them. The refusals, in this order:
    /// 1. the procedure's own (committed, unknown state, malformed): first,
    ///    because forcing cannot lift it, so it is the one worth showing;
    /// 2. then `checked`, the refusal of the checks an unforced run makes
    ///    before any write ([`unforced_checks`]: the recovery window).
    ///
    /// With no procedure: the release of the locks it owns, each lock it
    /// holds, refused while some are not stale (released only when forced).
    pub fn on_transaction(
        procedure: Option<Procedure>,
        d: TransactionDetail,
        checked: Option<ActRefusal>,
    ) -> Plan {
        let (mut plan, documents) = match procedure {
            Some(procedure) => (
                Plan::of_detail(procedure, &d),
                Documents::Procedure(procedure, Box::new(d)),
            ),
            None => (locks_of_plan(&d), Documents::LocksOf(Box::new(d))),
        };
        plan.refusal = plan.refusal.or(checked);
        plan.documents = Some(documents);
        plan
    }

    /// The preview of releasing the lock on `resource` judged on `view`
    /// (as re-read; `None`: not held), with the lock kept.
    pub fn on_lock(resource: &str, view: Option<LockView>) -> Plan {
        let mut plan = lock_plan(resource, view.as_ref());
        plan.documents = Some(Documents::Lock(view.map(Box::new)));
        plan
    }

    /// The steps, effects, lock releases, balance change, end state and
    /// the procedure's own refusal of `procedure` on the documents of `d`
    /// (what `show` prints as "recover would", the dialog confirms and the
    /// dry run lists).
    pub fn of_detail(procedure: Procedure, d: &TransactionDetail) -> Plan {
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
        Plan {
            transactions: vec![txn.id.clone()],
            steps,
            refusal: preview.refusal.clone().map(ActRefusal::Procedure),
            balance_change,
            in_words,
            lock_releases,
            effects,
            ends_in: preview.ends_in.clone(),
            ..Plan::default()
        }
    }
}

/// The release of the locks transaction `d` owns: each lock it holds,
/// refused while some are not stale.
fn locks_of_plan(d: &TransactionDetail) -> Plan {
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
        refusal: (!live.is_empty()).then_some(ActRefusal::LocksNotStale(live)),
        ..Plan::default()
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

/// The release of the lock on `resource` (`view`: as judged now): filed
/// under its owner, its step naming the holder and the judgement, so a
/// forced release of a live or unknown lock says whose lock it took.
pub(super) fn lock_plan(resource: &str, view: Option<&LockView>) -> Plan {
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
        refusal: ActRefusal::of_lock(view),
        lock_releases: view.map(|_| resource.to_string()).into_iter().collect(),
        ..Plan::default()
    }
}
