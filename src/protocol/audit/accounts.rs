//! The audit's part on the accounts' pending entries: malformed accounts,
//! entries of transactions that are terminal or missing (a late apply,
//! undone with `--repair` where that is unambiguous),
//! and the correction of the total for transfers in flight ([`view`](super::view)).
//!
//! An entry is reported only after the transaction and then the account
//! were re-read by id (realtime), in that order: a transaction seen terminal
//! stays terminal, so an account still carrying it after that read really
//! is dangling, never a transfer in progress.

use super::documents::transactions_by_id;
use super::report::{finding, FindingKind, Found, RepairEffect};
use crate::cluster::Hit;
use crate::error::Result;
use crate::protocol::account::{AccountState, SettledOutcome};
use crate::protocol::decide;
use crate::protocol::executor::StepOutcome;
use crate::protocol::receipt::Receipt;
use crate::protocol::report::{StepReport, StepResult};
use crate::protocol::steps::{self, Step};
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The transactions the accounts carry, each with its carrying accounts
/// (and their state as scanned).
type Carried = BTreeMap<String, Vec<(String, AccountState)>>;

/// A dangling entry: the transaction, the account carrying it, on which
/// side of the transfer, and whether the account had settled it before.
struct Entry<'a> {
    txn: &'a Transaction,
    acct: &'a str,
    on_source: bool,
    settled_before: bool,
}

/// The entries the scanned `accounts` carry, and the accounts that could
/// not be read.
fn carried_entries(accounts: &[Hit]) -> (Carried, Vec<String>) {
    let mut carried = Carried::new();
    let mut malformed_accounts = Vec::new();
    for hit in accounts {
        match AccountState::from_source(&hit.source) {
            Ok(state) => {
                for txn in &state.pending {
                    carried
                        .entry(txn.clone())
                        .or_default()
                        .push((hit.id.clone(), state.clone()));
                }
            }
            Err(_) => malformed_accounts.push(hit.id.clone()),
        }
    }
    (carried, malformed_accounts)
}

/// What the audit of the pending entries tells the total.
pub(super) struct PendingEntries {
    /// Net change that transfers still in flight contribute to the total
    /// of the view.
    pub in_flight_delta: i64,
    /// Balance change the repairs made (a search may not see them yet).
    pub repaired: i64,
}

/// Judges the pending entries of `accounts` (the scanned accounts that
/// carry entries or are malformed, as of the view opened at `view_at`);
/// with `repair`, undoes the unambiguous dangling applies.
pub(super) async fn audit_pending_entries(
    p: &Protocol,
    accounts: &[Hit],
    view_at: DateTime<Utc>,
    repair: bool,
    found: &mut Found,
) -> Result<PendingEntries> {
    let (mut carried, malformed_accounts) = carried_entries(accounts);
    confirm_malformed(p, &malformed_accounts, found).await?;
    // Transactions by id first, then the accounts again: a transaction
    // seen terminal stays terminal, so an account still carrying it
    // after that read really is dangling.
    let carried_ids: Vec<String> = carried.keys().cloned().collect();
    let carried_txns = transactions_by_id(p, &carried_ids).await?;
    // The correction for transfers in flight, from the same view as the
    // total (see view.rs).
    let in_flight_delta = super::view::one_sided_delta(
        &carried,
        &carried_txns,
        view_at,
        p.config.fencing == crate::protocol::decide::Fencing::On,
    );
    keep_still_carried(p, &mut carried).await?;
    let mut repaired = 0i64;
    for (txn_id, holders) in &carried {
        let txn = carried_txns.get(txn_id);
        for (acct, state) in holders {
            repaired += judge_entry(p, txn_id, txn, acct, state, repair, found).await;
        }
    }

    Ok(PendingEntries {
        in_flight_delta,
        repaired,
    })
}

/// Reports the accounts that are malformed when read again by id.
async fn confirm_malformed(p: &Protocol, ids: &[String], found: &mut Found) -> Result<()> {
    let ix = &p.config.indices;
    for (id, doc) in ids.iter().zip(p.cluster().mget(&ix.accounts, ids).await?) {
        if let Some(Err(p)) = doc.map(|d| AccountState::from_source(&d.source)) {
            found
                .findings
                .push(finding(FindingKind::MalformedAccount, id, p.to_string()));
        }
    }
    Ok(())
}

/// Reads the carrying accounts again by id and keeps only the entries
/// they still carry, with their state as read now.
async fn keep_still_carried(p: &Protocol, carried: &mut Carried) -> Result<()> {
    let ix = &p.config.indices;
    let holders: Vec<String> = carried
        .values()
        .flatten()
        .map(|(a, _)| a.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let fresh: HashMap<String, AccountState> = holders
        .iter()
        .zip(p.cluster().mget(&ix.accounts, &holders).await?)
        .filter_map(|(id, d)| {
            d.and_then(|d| AccountState::from_source(&d.source).ok())
                .map(|s| (id.clone(), s))
        })
        .collect();
    for (txn_id, list) in carried.iter_mut() {
        list.retain_mut(|(acct, state)| match fresh.get(acct) {
            Some(now) if now.carries(txn_id) => {
                *state = now.clone();
                true
            }
            _ => false,
        });
    }
    Ok(())
}

/// Judges the entry `txn_id` that account `acct` (in `state`) still
/// carries, `txn` being its transaction as read (`None`: missing); with
/// `repair`, undoes it when that is unambiguous. Gives the balance
/// change of the repair.
async fn judge_entry(
    p: &Protocol,
    txn_id: &str,
    txn: Option<&Transaction>,
    acct: &str,
    state: &AccountState,
    repair: bool,
    found: &mut Found,
) -> i64 {
    let role = txn.and_then(|t| {
        if t.src.as_deref() == Some(acct) {
            Some(true)
        } else if t.dest.as_deref() == Some(acct) {
            Some(false)
        } else {
            None
        }
    });
    let Some(t) = txn else {
        found.findings.push(finding(
            FindingKind::DanglingPending,
            acct,
            format!(
            "carries `{txn_id}`, which does not exist; its amount is unknown, so repair by hand"
        ),
        ));
        return 0;
    };
    let Some(on_source) = role else {
        found.findings.push(finding(
            FindingKind::DanglingPending,
            acct,
            format!("carries `{txn_id}`, which names other accounts; repair by hand"),
        ));
        return 0;
    };
    match &t.state {
        // In flight: counted from the view (see view.rs).
        Some(TxnState::Pending | TxnState::Terminating | TxnState::Committed) => 0,
        Some(s @ (TxnState::Finished | TxnState::RolledBack)) => {
            let entry = Entry {
                txn: t,
                acct,
                on_source,
                settled_before: state.settled_of(txn_id).map(|r| r.outcome)
                    == Some(SettledOutcome::Applied),
            };
            judge_terminal_entry(p, &entry, s, repair, found).await
        }
        Some(TxnState::Created) => {
            found.findings.push(finding(
                FindingKind::DanglingPending,
                acct,
                format!(
                    "carries `{txn_id}`, which is still created (never pending); repair by hand"
                ),
            ));
            0
        }
        Some(TxnState::Unknown(_)) | None => 0,
    }
}

/// An entry of a finished or rolled-back (`s`) transaction: dangling.
/// Repaired (with `repair`) when its transaction is rolled back or the
/// account had settled it before; else reported. Gives the balance
/// change of the repair.
async fn judge_terminal_entry(
    p: &Protocol,
    e: &Entry<'_>,
    s: &TxnState,
    repair: bool,
    found: &mut Found,
) -> i64 {
    let (t, acct, txn_id) = (e.txn, e.acct, &e.txn.id);
    let repairable = *s == TxnState::RolledBack || e.settled_before;
    let what = if *s == TxnState::RolledBack {
        "applied after its rollback".to_string()
    } else if e.settled_before {
        "applied again after it was committed and removed".to_string()
    } else {
        "still pending although finished (a second apply, or steps 5-6 skipped): \
         check the balance history and repair by hand"
            .to_string()
    };
    let detail = format!(
        "carries `{txn_id}` ({s}, amount {}): {what}",
        t.amount.unwrap_or(0)
    );
    if repair && repairable {
        match undo_dangling(p, t, acct, e.on_source, *s == TxnState::Finished).await {
            Ok((msg, delta, step)) => {
                found.repairs.push(format!("{acct}: {msg}"));
                found.repair_steps.push(step);
                return delta;
            }
            Err(err) => found.findings.push(finding(
                FindingKind::DanglingPending,
                acct,
                format!("{detail}; repair failed: {err}"),
            )),
        }
    } else {
        let hint = if repairable {
            let amount = t.amount.unwrap_or(0);
            found.repair_effect.push(RepairEffect {
                account: acct.to_string(),
                txn: txn_id.clone(),
                state: s.clone(),
                delta: if e.on_source { amount } else { -amount },
            });
            "; `audit --repair` undoes it"
        } else {
            ""
        };
        found.findings.push(finding(
            FindingKind::DanglingPending,
            acct,
            format!("{detail}{hint}"),
        ));
    }
    0
}

/// Undoes a dangling apply of a terminal transaction on one account with
/// a conditional write: for a rolled-back transaction with the same undo
/// rollback uses; for a finished one (a duplicate apply after the account
/// settled it) keeping the account's `applied` record. Returns what it
/// did, the balance change it made, and its step (the undo on that side,
/// with the receipt of its balance write) for the repair's record.
pub(super) async fn undo_dangling(
    p: &Protocol,
    t: &Transaction,
    acct: &str,
    on_source: bool,
    finished: bool,
) -> Result<(String, i64, StepReport)> {
    let transfer = t.transfer()?;
    let applied = if on_source {
        -transfer.amount
    } else {
        transfer.amount
    };
    let fencing = p.config.fencing;
    let accounts = &p.config.indices.accounts;
    // The balances of the last decision: the one the write that landed
    // was decided on (as a procedure's step keeps them).
    let mut balances = None;
    let ex = p
        .exec
        .run("account", accounts, acct, |src| {
            steps::account_doc(acct, src, |a| {
                let d = if finished {
                    decide::reverse_duplicate(a, &t.id, applied)
                } else {
                    decide::undo(a, &t.id, applied, fencing)
                };
                balances = match &d {
                    Ok(decide::Decision::Write(next, _)) => Some((a.balance, next.balance)),
                    _ => None,
                };
                d
            })
        })
        .await?;
    let receipt = match (&ex.outcome, ex.landing, balances) {
        (StepOutcome::Updated(e), Some(l), Some((before, after))) if e.moves_balance() => {
            Some(Receipt::new(before, after, l.on, l.at))
        }
        _ => None,
    };
    let step = if on_source {
        Step::UndoSource
    } else {
        Step::UndoDestination
    };
    let report = StepReport {
        txn: t.id.clone(),
        step: Some(step),
        label: step.label().to_string(),
        target: format!("{accounts}/{acct}"),
        result: StepResult::from(&ex.outcome),
        receipt,
    };
    Ok(match ex.outcome {
        StepOutcome::Updated(e) => {
            let delta = match e {
                decide::Effect::Undone { delta } => delta,
                _ => 0,
            };
            (format!("`{}`: {e}", t.id), delta, report)
        }
        StepOutcome::Noop(r) => (format!("`{}`: {r}", t.id), 0, report),
    })
}
