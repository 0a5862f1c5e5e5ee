//! What the detail pane shows of the selected transaction, derived once
//! (by `derive`, never while drawing): the transaction (from the snapshot,
//! or read by id), what became of it, its accounts, its locks, and what
//! each action key would do (the previews, by the data on screen; the
//! dialog re-reads). Pure: it imports nothing of the dashboard.

use crate::protocol::decide::Fencing;
use crate::protocol::locks::LockView;
use crate::protocol::problem::Problem;
use crate::protocol::read::poll::{AccountEntry, Snapshot};
use crate::protocol::read::verdict::Cause;
use crate::protocol::transaction::Transaction;
use crate::protocol::views::{preview, Preview, TransactionDetail};
use crate::protocol::Procedure;

/// What became of the transaction the detail shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// It is a row of the table.
    Listed,
    /// In the snapshot, but hidden by the filters.
    Filtered,
    /// Not in the snapshot (it left the in-flight list, or was looked up):
    /// being read by id.
    Reading,
    /// Not in the snapshot; read by id (its state says what it became).
    ReadById,
    /// No such transaction any more.
    Vanished,
    /// Reading it by id failed.
    ReadFailed(String),
}

/// One account line of the detail: role, id, and what is known of it.
#[derive(Debug, Clone, PartialEq)]
pub struct DetailAccount {
    /// `src` or `dst`.
    pub role: &'static str,
    /// Account id.
    pub id: String,
    /// The account (`None`: not loaded).
    pub entry: Option<AccountEntry>,
}

/// The selected transaction and everything the detail pane says of it.
#[derive(Debug, Clone)]
pub struct DetailView {
    /// The transaction (from the snapshot, or read by id).
    pub txn: Transaction,
    /// Whether it is still listed, and if not what became of it.
    pub fate: Fate,
    /// Its source and destination.
    pub accounts: Vec<DetailAccount>,
    /// Locks it owns.
    pub locks: Vec<LockView>,
    /// What `F` would do (by the data on screen; the dialog re-reads).
    pub recover: Preview,
    /// What `R` would do.
    pub rollback: Preview,
    /// Whether `V` may reverse it (`Some`), finishing it first
    /// (`Some(true)`: committed), by the protocol's admission rule.
    pub reverse: Option<bool>,
    /// Why it is stuck and the act that is safe, judged on the snapshot
    /// (`None`: not stuck, or no snapshot yet).
    pub cause: Option<Cause>,
}

/// Whether `V` may reverse `t`, finishing it first (the protocol's rule).
fn reverse_of(t: &Transaction) -> Option<bool> {
    crate::protocol::reverse::admit(t, None, true)
        .ok()
        .map(|a| a.finish_first)
}

/// The detail of a transaction in the snapshot.
pub fn from_snapshot(snap: &Snapshot, t: &Transaction, fate: Fate) -> DetailView {
    let accounts: Vec<DetailAccount> = [("src", &t.src), ("dst", &t.dest)]
        .into_iter()
        .filter_map(|(role, id)| {
            id.as_ref().map(|id| DetailAccount {
                role,
                id: id.clone(),
                entry: snap.accounts.get(id).cloned(),
            })
        })
        .collect();
    let state = |id: &Option<String>| match id.as_ref().and_then(|i| snap.accounts.get(i)) {
        Some(AccountEntry::Ok(s)) => Some(s),
        _ => None,
    };
    let run = |p| preview(p, t, state(&t.src), state(&t.dest), Fencing::On);
    DetailView {
        txn: t.clone(),
        fate,
        accounts,
        locks: snap
            .locks
            .iter()
            .filter(|l| l.info.owner.as_deref() == Some(t.id.as_str()))
            .cloned()
            .collect(),
        recover: run(Procedure::Recover),
        rollback: run(Procedure::Rollback),
        reverse: reverse_of(t),
        cause: None,
    }
}

/// The detail of a transaction read by id.
pub fn from_detail(d: &TransactionDetail) -> DetailView {
    let roles = ["src", "dst"];
    let accounts = d
        .accounts
        .iter()
        .zip(roles)
        .map(|(a, role)| DetailAccount {
            role,
            id: a.id.clone(),
            entry: Some(match &a.state {
                Some(s) => AccountEntry::Ok(s.clone()),
                None if a
                    .problems
                    .iter()
                    .any(|p| matches!(p, Problem::AccountMissing)) =>
                {
                    AccountEntry::Missing
                }
                None => AccountEntry::Malformed(a.problems.clone()),
            }),
        })
        .collect();
    DetailView {
        txn: d.txn.clone(),
        fate: Fate::ReadById,
        accounts,
        locks: d.locks.clone(),
        recover: d.recover.clone(),
        rollback: d.rollback.clone(),
        reverse: reverse_of(&d.txn),
        cause: None,
    }
}
