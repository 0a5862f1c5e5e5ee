//! Read-only views for operators: one transaction with its accounts and
//! locks, where exactly the protocol stopped, and what each intervention
//! would do from here — computed with the same pure decisions the
//! procedures execute, so the preview cannot disagree with the action.

use super::account::{AccountState, SettledOutcome};
use super::decide::{Decision, Fencing};
use super::executor::StepOutcome;
use super::locks::LockView;
use super::problem::{Problem, Problems};
use super::steps::{account_step, next_after, plan, Next, Procedure, ProcedureRefusal, Step};
use super::transaction::{Transaction, Transfer, TxnState};
use super::Protocol;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// An account as it concerns one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountView {
    /// Account id.
    pub id: String,
    /// The protocol fields, or `None` when missing (`problems` says which).
    pub state: Option<AccountState>,
    /// Whether the transaction is in its `pending_transactions`.
    pub carries: bool,
    /// How it settled the transaction, if it did.
    pub settled: Option<SettledOutcome>,
    /// Missing or malformed.
    pub problems: Problems,
}

/// What one step of a preview would do.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewStep {
    /// The step.
    pub step: Step,
    /// Would write (with its effect), or no-op (with why).
    pub outcome: StepOutcome,
}

/// What a procedure would do from the current documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The procedure previewed.
    pub procedure: Procedure,
    /// Steps in order with their predicted outcome (empty when refused or terminal).
    pub steps: Vec<PreviewStep>,
    /// Why it would refuse, if it would.
    pub refusal: Option<ProcedureRefusal>,
    /// Predicted balance change of the source and destination accounts.
    pub balance_change: (i64, i64),
    /// Where the run would end if nobody else interferes.
    pub ends_in: Option<TxnState>,
}

/// Which kind of document a [`DocVersion`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    /// A transaction document.
    Transaction,
    /// An account document.
    Account,
}

/// A document a judgement was made on, with the `(_seq_no, _primary_term)`
/// it was read at (`None`: it did not exist): what a plan file binds its
/// approval to, so `apply` can tell a document that changed since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocVersion {
    /// Its kind (the index it lives in).
    pub kind: DocKind,
    /// Its id.
    pub id: String,
    /// `(_seq_no, _primary_term)` as read; `None` when missing.
    pub version: Option<(i64, i64)>,
}

/// A transaction with everything an operator needs to decide.
#[derive(Debug, Clone)]
pub struct TransactionDetail {
    /// The transaction.
    pub txn: Transaction,
    /// Source then destination (absent when the transaction names none).
    pub accounts: Vec<AccountView>,
    /// Locks it owns: on its accounts (read by id) and on any other
    /// resource (found by a search on `owner`), sorted by resource.
    pub locks: Vec<LockView>,
    /// First step that would change something if it were recovered now.
    pub next_step: Option<Step>,
    /// Recovery preview.
    pub recover: Preview,
    /// Rollback preview.
    pub rollback: Preview,
}

impl TransactionDetail {
    /// The preview of `procedure` from these documents.
    pub fn preview(&self, procedure: Procedure) -> &Preview {
        match procedure {
            Procedure::Rollback => &self.rollback,
            Procedure::Recover => &self.recover,
        }
    }

    /// The resources whose locks `procedure` releases after its steps
    /// (sorted): the locks this transaction holds, when the run is not
    /// refused and ends it in a terminal state. The procedures release them
    /// then, so a preview that omits them hides writes.
    pub fn lock_releases(&self, procedure: Procedure) -> Vec<&str> {
        let p = self.preview(procedure);
        if p.refusal.is_some() || !p.ends_in.as_ref().is_some_and(|s| s.is_terminal()) {
            return Vec::new();
        }
        let mut out: Vec<&str> = self
            .locks
            .iter()
            .map(|l| l.info.resource.as_str())
            .collect();
        out.sort();
        out
    }
}

/// Where a preview of `procedure` starts: the state, the transfer, copies
/// of its two accounts and the plan; `None` when the transaction is already
/// terminal; the refusal when it is unknown, malformed or cannot be planned.
#[allow(clippy::type_complexity)]
fn starting_point(
    procedure: Procedure,
    txn: &Transaction,
    src: Option<&AccountState>,
    dest: Option<&AccountState>,
) -> std::result::Result<Option<(TxnState, Transfer, [AccountState; 2], Vec<Step>)>, ProcedureRefusal>
{
    let state = match &txn.state {
        Some(TxnState::Unknown(s)) => return Err(ProcedureRefusal::UnknownState(s.clone())),
        Some(s) if s.is_terminal() => return Ok(None),
        Some(s) => s.clone(),
        None => return Err(ProcedureRefusal::Malformed(txn.problems.clone())),
    };
    let Ok(t) = txn.transfer() else {
        return Err(ProcedureRefusal::Malformed(txn.problems.clone()));
    };
    let (Some(src), Some(dest)) = (src, dest) else {
        return Err(ProcedureRefusal::Malformed(Problems::one(
            Problem::AccountUnusable,
        )));
    };
    let todo = plan(procedure, &state)?;
    Ok(Some((state, t, [src.clone(), dest.clone()], todo)))
}

/// Simulates `procedure` on in-memory copies of the documents, step by step,
/// with the same decisions and continuation rules the procedure uses.
pub fn preview(
    procedure: Procedure,
    txn: &Transaction,
    src: Option<&AccountState>,
    dest: Option<&AccountState>,
    fencing: Fencing,
) -> Preview {
    let mut out = Preview {
        procedure,
        steps: Vec::new(),
        refusal: None,
        balance_change: (0, 0),
        ends_in: txn.state.clone(),
    };
    let (mut current, t, mut accts, mut todo) = match starting_point(procedure, txn, src, dest) {
        Ok(Some(start)) => start,
        Ok(None) => return out,
        Err(r) => {
            out.refusal = Some(r);
            return out;
        }
    };
    let mut i = 0;
    while i < todo.len() {
        let step = todo[i];
        i += 1;
        let outcome = if let Some((from, to)) = step.transition() {
            match super::decide::transition(&current, &from, &to) {
                Decision::Write(next, e) => {
                    current = next;
                    StepOutcome::Updated(e)
                }
                Decision::Noop(r) => StepOutcome::Noop(r),
            }
        } else {
            let k = usize::from(step.on_source() != Some(true));
            match account_step(step, &t, &accts[k], fencing) {
                Ok(Decision::Write(next, e)) => {
                    let delta = next.balance - accts[k].balance;
                    if k == 0 {
                        out.balance_change.0 += delta;
                    } else {
                        out.balance_change.1 += delta;
                    }
                    accts[k] = next;
                    StepOutcome::Updated(e)
                }
                Ok(Decision::Noop(r)) => StepOutcome::Noop(r),
                Err(steps_err) => {
                    out.refusal = Some(ProcedureRefusal::Malformed(Problems::one(
                        Problem::Contradiction(steps_err),
                    )));
                    break;
                }
            }
        };
        let next = next_after(procedure, step, &outcome);
        out.steps.push(PreviewStep { step, outcome });
        match next {
            Next::Continue => {}
            Next::Stop(_) => break,
            Next::Replan(s) => match plan(procedure, &s) {
                Ok(v) => {
                    todo = v;
                    i = 0;
                }
                Err(r) => {
                    out.refusal = Some(r);
                    break;
                }
            },
        }
    }
    out.ends_in = Some(current);
    out
}

/// The locks `txn` owns, judged: its accounts' (read by id, so a lock
/// not yet searchable is not missed) and every other one a search on
/// `owner` finds, whatever the resource (an invoice, an order).
pub(crate) async fn locks_of(p: &Protocol, txn: &Transaction) -> Result<Vec<LockView>> {
    let mut resources: BTreeSet<String> = [&txn.src, &txn.dest]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    match p.lock_ids_owned_by(&txn.id).await {
        Ok((found, _)) => resources.extend(found),
        Err(crate::Error::IndexMissing(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    }
    let mut locks = Vec::new();
    for resource in resources {
        match p.lock_view(&resource).await {
            Ok(Some(l)) if l.info.owner.as_deref() == Some(txn.id.as_str()) => locks.push(l),
            Ok(_) | Err(crate::Error::IndexMissing(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(locks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn txn(state: &str) -> Transaction {
        Transaction::from_source(
            "t",
            json!({"src_acct":"A","dest_acct":"B","amount":100,"transaction_state":state,"modification_time":"2020-01-01T00:00:00Z"})
                .as_object()
                .unwrap(),
        )
    }

    #[test]
    fn preview_of_half_applied_pending() {
        let mut a = AccountState::new(400);
        a.pending.push("t".into());
        let b = AccountState::new(500);
        let p = preview(
            Procedure::Recover,
            &txn("pending"),
            Some(&a),
            Some(&b),
            Fencing::On,
        );
        assert_eq!(p.balance_change, (0, 100));
        assert_eq!(p.ends_in, Some(TxnState::Finished));
        assert!(matches!(p.steps[0].outcome, StepOutcome::Noop(_)));
        let r = preview(
            Procedure::Rollback,
            &txn("pending"),
            Some(&a),
            Some(&b),
            Fencing::On,
        );
        assert_eq!(r.balance_change, (100, 0));
        assert_eq!(r.ends_in, Some(TxnState::RolledBack));
    }

    #[test]
    fn preview_refuses_rollback_of_committed() {
        let a = AccountState::new(0);
        let p = preview(
            Procedure::Rollback,
            &txn("committed"),
            Some(&a),
            Some(&a),
            Fencing::On,
        );
        assert_eq!(p.refusal, Some(ProcedureRefusal::Committed));
        assert!(p.steps.is_empty());
    }
}
