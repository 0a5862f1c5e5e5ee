//! What the account drill-down shows, derived once (by `derive`, never
//! while drawing) from the snapshot: the account and the in-flight
//! transactions that name it. Pure: it imports nothing of the dashboard.

use crate::protocol::read::poll::{AccountEntry, Snapshot};
use crate::protocol::transaction::TxnState;

/// An account drilled into (`Enter` in the accounts pane): the account and
/// the in-flight transactions that name it.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountDetail {
    /// Account id.
    pub id: String,
    /// The account (`None`: not in the snapshot).
    pub entry: Option<AccountEntry>,
    /// Each pending entry, with the state of that transaction when it is listed.
    pub pending: Vec<(String, Option<TxnState>)>,
    /// Listed transactions naming it as source or destination: id and state.
    pub naming: Vec<(String, Option<TxnState>)>,
}

/// The drill-down of account `id` from the snapshot.
pub fn account_detail(snap: &Snapshot, id: &str) -> AccountDetail {
    let state_of = |t: &str| {
        snap.transactions
            .iter()
            .find(|x| x.id == t)
            .and_then(|x| x.state.clone())
    };
    let entry = snap.accounts.get(id).cloned();
    let pending = match &entry {
        Some(AccountEntry::Ok(s)) => s.pending.iter().map(|p| (p.clone(), state_of(p))).collect(),
        _ => Vec::new(),
    };
    let naming = snap
        .transactions
        .iter()
        .filter(|t| t.src.as_deref() == Some(id) || t.dest.as_deref() == Some(id))
        .map(|t| (t.id.clone(), t.state.clone()))
        .collect();
    AccountDetail {
        id: id.to_string(),
        entry,
        pending,
        naming,
    }
}
