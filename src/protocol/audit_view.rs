//! The audit's correction of the balance total for transfers in flight,
//! taken from the same point-in-time view of the accounts as the total: a
//! transfer applied on one account and not (or no longer) on the other
//! moves the sum by its amount until it completes or is undone. Whether an
//! account has applied a transaction is read from that account's document
//! in the view (it carries the transaction, or its fencing record says
//! `applied`), so the correction and the total describe the same instant
//! however far the transfers moved on while the audit ran.

use super::account::{AccountState, SettledOutcome};
use super::read::scan::View;
use super::read::{Coverage, Scan};
use super::transaction::{Transaction, TxnState};
use crate::cluster::Cluster;
use crate::error::Result;
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use std::collections::{BTreeSet, HashMap};

/// A transaction last modified this long before the view was opened was
/// already in that state in the view (room for clock estimates).
const MARGIN_SECONDS: i64 = 60;

/// The net balance change, in `view`, of the carried transactions `txns`
/// (read by id: their accounts and amount never change) that are applied on
/// one side only. `in_view` holds the accounts already read from the view;
/// the other accounts those transactions name are read from it here.
/// `records` says whether accounts keep fencing records (fencing on).
pub(super) async fn one_sided_delta(
    cluster: &Cluster,
    records: bool,
    view: &mut View,
    mut in_view: HashMap<String, AccountState>,
    txns: &HashMap<String, Transaction>,
    view_at: DateTime<Utc>,
) -> Result<(i64, Coverage)> {
    let others: Vec<String> = txns
        .values()
        .flat_map(|t| [t.src.clone(), t.dest.clone()])
        .flatten()
        .filter(|a| !in_view.contains_key(a))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut coverage = Coverage::default();
    for chunk in others.chunks(1000) {
        let scanned = view
            .scan(
                cluster,
                Scan::new(json!({"ids": {"values": chunk}}), vec![]),
                |page| {
                    for h in page {
                        if let Ok(s) = AccountState::from_source(&h.source) {
                            in_view.insert(h.id, s);
                        }
                    }
                    true
                },
            )
            .await?;
        coverage.add(scanned.coverage);
    }
    let delta = txns
        .values()
        .map(|t| delta_of(t, &in_view, view_at, records))
        .sum();
    Ok((delta, coverage))
}

/// What `t` adds to the sum of balances in the view: minus its amount if
/// only the source applied it, plus if only the destination did.
fn delta_of(
    t: &Transaction,
    in_view: &HashMap<String, AccountState>,
    view_at: DateTime<Utc>,
    records: bool,
) -> i64 {
    let (Some(amount), Some(src), Some(dest)) = (t.amount, &t.src, &t.dest) else {
        return 0;
    };
    let before_view = t
        .modification_time
        .is_some_and(|m| m < view_at - Duration::seconds(MARGIN_SECONDS));
    // Finished or rolled back before the view: an account still carrying
    // it is an anomaly for the findings, not a transfer in flight. Without
    // fencing records the view cannot tell which accounts had applied a
    // transfer that has since ended: it is not corrected for.
    if (before_view || !records) && t.state.as_ref().is_some_and(TxnState::is_terminal) {
        return 0;
    }
    let applied = |acct: &String| {
        in_view.get(acct).is_some_and(|a| {
            a.carries(&t.id)
                || match a.settled_of(&t.id) {
                    Some(r) => r.outcome == SettledOutcome::Applied,
                    // No record left (pruned): committed before the view
                    // means both accounts had applied it.
                    None => before_view && t.state == Some(TxnState::Committed),
                }
        })
    };
    match (applied(src), applied(dest)) {
        (true, false) => -amount,
        (false, true) => amount,
        _ => 0,
    }
}
