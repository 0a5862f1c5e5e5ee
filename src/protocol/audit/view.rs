//! The audit's correction of the balance total for transfers in flight,
//! taken from the same point-in-time view of the accounts as the total: a
//! transfer applied on one account and not (or no longer) on the other
//! moves the sum by its amount until it completes or is undone.
//!
//! Which accounts carry a transaction in the view is known; whether an
//! account that does not carry it had applied it (and removed it after the
//! commit) or not (never applied, or undone) follows from the order every
//! procedure keeps — apply, remove and undo each touch the source before
//! the destination — and from the transaction's state read by id after the
//! view (states only move forward):
//! - only the source carries it: the destination has not applied it yet
//!   (pending, or terminating before the source's undo): minus its amount;
//! - only the destination carries it: either the source removed it after
//!   the commit (the transaction is now committed or finished: nothing to
//!   correct) or undid it in a rollback (now terminating or rolled back:
//!   plus its amount).
//!
//! So the correction describes the view's instant however far transfers
//! moved on while the audit ran. (With several shards each shard's view
//! has its own refresh instant, so the total itself is only as consistent
//! as that.)

use crate::protocol::account::AccountState;
use crate::protocol::transaction::{amount_problem, Transaction, TxnState};
use chrono::{DateTime, Duration, Utc};
use std::collections::{BTreeMap, HashMap};

/// A transaction last modified this long before the view was opened was
/// already in that state in the view (room for clock estimates and the
/// refresh lag).
const MARGIN_SECONDS: i64 = 60;

/// The net balance change, in the view, of the transactions `carried` there
/// (by account) and applied on one side only. `txns` are the carried
/// transactions read by id after the view was opened at `view_at`;
/// `fenced` says whether fencing is on.
pub(super) fn one_sided_delta(
    carried: &BTreeMap<String, Vec<(String, AccountState)>>,
    txns: &HashMap<String, Transaction>,
    view_at: DateTime<Utc>,
    fenced: bool,
) -> i64 {
    carried
        .iter()
        .filter_map(|(id, holders)| {
            let t = txns.get(id)?;
            let holds = |acct: &Option<String>| {
                acct.as_ref()
                    .is_some_and(|a| holders.iter().any(|(h, _)| h == a))
            };
            Some(delta_of(t, holds(&t.src), holds(&t.dest), view_at, fenced))
        })
        .sum()
}

/// What `t` adds to the sum of balances in the view, given which of its
/// accounts carry it there.
fn delta_of(
    t: &Transaction,
    on_source: bool,
    on_destination: bool,
    view_at: DateTime<Utc>,
    fenced: bool,
) -> i64 {
    let Some(amount) = t.amount.filter(|a| amount_problem(*a).is_none()) else {
        return 0;
    };
    let before_view = t
        .modification_time
        .is_some_and(|m| m < view_at - Duration::seconds(MARGIN_SECONDS));
    // Finished or rolled back before the view: an account still carrying
    // it is an anomaly for the findings, not a transfer in flight. Without
    // the fence, late applies break the order above: a transaction that
    // has ended is not corrected for.
    if (before_view || !fenced) && t.state.as_ref().is_some_and(TxnState::is_terminal) {
        return 0;
    }
    match (on_source, on_destination) {
        (true, false) => -amount,
        (false, true) => match t.state {
            Some(TxnState::Committed | TxnState::Finished) => 0,
            _ => amount,
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn txn(state: &str, modified: DateTime<Utc>) -> Transaction {
        let src = json!({"src_acct": "A", "dest_acct": "B", "amount": 100,
            "transaction_state": state,
            "modification_time": crate::protocol::time::format_timestamp(modified)});
        Transaction::from_source("t", src.as_object().expect("object"))
    }

    #[test]
    fn one_sided_transfers_are_corrected_by_the_state_after_the_view() {
        let now = Utc::now();
        let d = |state, src, dest| delta_of(&txn(state, now), src, dest, now, true);
        // Applied on the source only, whatever happened next.
        for s in [
            "pending",
            "committed",
            "finished",
            "terminating",
            "rolled-back",
        ] {
            assert_eq!(d(s, true, false), -100, "{s}");
        }
        // Only the destination: removed from the source after the commit...
        assert_eq!(d("committed", false, true), 0);
        assert_eq!(d("finished", false, true), 0);
        // ... or undone there by a rollback.
        assert_eq!(d("terminating", false, true), 100);
        assert_eq!(d("rolled-back", false, true), 100);
        // Both or neither: nothing.
        assert_eq!(d("pending", true, true), 0);
        assert_eq!(d("committed", false, false), 0);
    }

    #[test]
    fn transactions_that_ended_before_the_view_are_findings_not_corrections() {
        let now = Utc::now();
        let old = now - Duration::minutes(30);
        assert_eq!(
            delta_of(&txn("rolled-back", old), false, true, now, true),
            0
        );
        assert_eq!(delta_of(&txn("finished", old), true, false, now, true), 0);
        // Still in flight, however old: corrected.
        assert_eq!(delta_of(&txn("pending", old), true, false, now, true), -100);
        // Without the fence, an ended transaction is never corrected for.
        assert_eq!(delta_of(&txn("finished", now), true, false, now, false), 0);
    }
}
