//! A bulk act previewed for an operator to confirm, or printed by
//! `--dry-run`: its selection resolved, then each selected transaction
//! re-read with its accounts and locks and planned by the one builder
//! ([`TxnPlan::on_transaction`], with the checks an unforced run makes), so
//! the dashboard's bulk dialog and `rollback`/`recover --ids-from …
//! --dry-run` show the same plan: the same refusals, the same counts
//! ([`Verdicts`]).

use super::build::unforced_checks;
use super::bulk::{BulkAct, SelectionPlan};
use super::plan::{LocksOfPlan, Planned, TxnPlan};
use super::refusal::{ActRefusal, RefusalKind};
use super::selection::LeftOut;
use super::{BalanceEffect, EffectKind};
use crate::error::Result;
use crate::protocol::locks::LockView;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Protocol, TxnState};
use futures::StreamExt;
use std::collections::BTreeMap;

/// Transactions re-read at once for a bulk preview.
const READ_CONCURRENCY: usize = 8;

impl BulkAct {
    /// The plan ([`BulkAct::selection_plan`]) with each selected
    /// transaction's own plan on its documents as re-read
    /// ([`SelectionPlan::items`], in selection order); a transaction gone
    /// since the selection read it is left out ("no longer exists"). A read
    /// that fails is an error (nothing can be confirmed on it).
    pub(super) async fn preview_items(&self, p: &Protocol) -> Result<SelectionPlan> {
        let mut plan = self.selection_plan(p).await?;
        p.sync_clock().await;
        let ids = plan.transactions();
        let details: Vec<_> = futures::stream::iter(ids)
            .map(|id| async move { (id.clone(), p.transaction_detail_versioned(&id).await) })
            .buffered(READ_CONCURRENCY)
            .collect()
            .await;
        let mut gone = Vec::new();
        for (id, detail) in details {
            match detail? {
                Some((d, versions)) => {
                    let checked = unforced_checks(p, &d.txn);
                    plan.items
                        .push(TxnPlan::on_transaction(self.procedure, d, checked));
                    plan.versions.insert(id, versions);
                }
                None => gone.push(id),
            }
        }
        if self.sweeps() {
            plan.sweep = p.sweepable_locks(self.allow_partial).await?;
        }
        plan.locks_absent = p.discovery().await?.locks.is_absent();
        if !gone.is_empty() {
            let s = &mut plan.selected;
            s.transactions.retain(|t| !gone.contains(&t.id));
            s.left_out.extend(
                gone.into_iter()
                    .map(|txn| LeftOut::refused(txn, "no longer exists")),
            );
        }
        Ok(plan)
    }
}

impl SelectionPlan {
    /// A previewed bulk plan by what each transaction would do: what the
    /// dialog lists and `--dry-run` counts.
    pub fn verdicts(&self) -> Verdicts {
        Verdicts::of(&self.items, &self.selected.left_out, &self.sweep)
    }
}

/// What one transaction's plan would do if run unforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Would {
    /// Run: it writes something.
    Run,
    /// Nothing: already terminal, or no lock to release.
    NothingToDo,
    /// Be refused, and why (a bulk act never forces).
    Refused(ActRefusal),
}

/// The plan of one transaction of a set acted on as one (a bulk act's
/// item, or the release of each marked transaction's locks): what the
/// counts ([`Verdicts`]) ask of it.
pub trait ItemPlan: Planned {
    /// The transaction with its accounts and locks, as judged.
    fn detail(&self) -> &TransactionDetail;

    /// What it would do run unforced: refused first (its refusal), else
    /// run when it writes anything: a procedure's step, or a lock release
    /// (the locks a terminal transaction still holds are released by its
    /// rollback or recovery too), else nothing to do.
    fn would(&self) -> Would {
        if let Some(r) = self.refusal() {
            return Would::Refused(r);
        }
        if self.writes() {
            Would::Run
        } else {
            Would::NothingToDo
        }
    }

    /// Whether a run writes anything.
    fn writes(&self) -> bool;

    /// The locks it releases.
    fn lock_releases(&self) -> Vec<String>;

    /// The predicted balance change per account (non-zero only).
    fn balance_change(&self) -> &[(String, i64)] {
        &[]
    }

    /// The balance change in words, if it has one.
    fn in_words(&self) -> Option<&BalanceEffect> {
        None
    }
}

impl ItemPlan for TxnPlan {
    fn detail(&self) -> &TransactionDetail {
        &self.detail
    }

    fn writes(&self) -> bool {
        self.runs_a_procedure() || !self.lock_releases.is_empty()
    }

    fn lock_releases(&self) -> Vec<String> {
        self.lock_releases.clone()
    }

    fn balance_change(&self) -> &[(String, i64)] {
        &self.balance_change
    }

    fn in_words(&self) -> Option<&BalanceEffect> {
        self.in_words.as_ref()
    }
}

impl ItemPlan for LocksOfPlan {
    fn detail(&self) -> &TransactionDetail {
        &self.detail
    }

    fn writes(&self) -> bool {
        !self.detail.locks.is_empty()
    }

    fn lock_releases(&self) -> Vec<String> {
        LocksOfPlan::lock_releases(self)
    }
}

/// Every lock the run of `items` releases, sorted: those of each that
/// would run, then those of the closing `sweep`.
fn released_locks<I: ItemPlan>(items: &[I], sweep: &[LockView]) -> Vec<String> {
    let mut out: Vec<String> = items
        .iter()
        .filter(|i| i.would() == Would::Run)
        .flat_map(|i| i.lock_releases())
        .chain(sweep.iter().map(|l| l.info.resource.clone()))
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Verdicts {
    /// `items` (with the ids the selection `left_out`, and the locks a
    /// closing `sweep` releases) by what each transaction would do.
    pub fn of<I: ItemPlan>(items: &[I], left_out: &[LeftOut], sweep: &[LockView]) -> Verdicts {
        let mut v = Verdicts {
            left_out: left_out.to_vec(),
            ..Verdicts::default()
        };
        for item in items {
            let id = item.detail().txn.id.clone();
            match item.would() {
                Would::Refused(r) => v.refused.entry(r.kind()).or_default().push(id),
                Would::NothingToDo => v.nothing_to_do.push(id),
                Would::Run => {
                    *v.by_state
                        .entry(item.detail().txn.state.clone())
                        .or_default() += 1;
                    for (acct, delta) in item.balance_change() {
                        *v.balance_effect.entry(acct.clone()).or_default() += delta;
                    }
                    if let Some(w) = item.in_words().filter(|w| w.kind != EffectKind::None) {
                        v.in_words.push((id.clone(), w.clone()));
                    }
                    v.run.push(id);
                }
            }
        }
        v.balance_effect.retain(|_, d| *d != 0);
        v.lock_releases = released_locks(items, sweep);
        v
    }
}

/// A previewed bulk plan's transactions by what each would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// The ids that would run, in selection order.
    pub run: Vec<String>,
    /// The ids with nothing to do.
    pub nothing_to_do: Vec<String>,
    /// The ids that would be refused, by the refusal's kind
    /// ([`ActRefusal::kind`]).
    pub refused: BTreeMap<RefusalKind, Vec<String>>,
    /// The ids the selection named but leaves out, with why.
    pub left_out: Vec<LeftOut>,
    /// The runs by the state they were re-read in.
    pub by_state: BTreeMap<Option<TxnState>, usize>,
    /// The balance change of the runs per account (non-zero only).
    pub balance_effect: BTreeMap<String, i64>,
    /// Each run's balance change in words, where it changes any balance
    /// (what completes or undoes a debit already made), in selection order.
    pub in_words: Vec<(String, BalanceEffect)>,
    /// Every lock the run would release (the runs' own, then the closing
    /// sweep's), sorted.
    pub lock_releases: Vec<String>,
}
