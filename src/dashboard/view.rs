//! What the screen shows, derived from the dashboard's state once, when the
//! data, filter, sort, selection or size change (by `update`), never while
//! drawing: the visible transaction rows, where the selection is among them,
//! how far each pane is scrolled, which marks the table shows, the alert
//! line's counts, and the selected transaction's detail with its action
//! previews (and whether `V` applies). The renderer only reads this. Here
//! are the derived values and the pure functions they are made of; applying
//! them to the state is the `derive` module's, so
//! neither the state nor these values import anything else of the
//! dashboard.

use crate::protocol::decide::Fencing;
use crate::protocol::locks::LockView;
use crate::protocol::problem::Problem;
use crate::protocol::read::poll::{AccountEntry, Snapshot};
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::views::{preview, Preview, TransactionDetail};
use crate::protocol::Procedure;
use std::collections::{BTreeSet, HashSet};

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
}

/// Whether `V` may reverse `t`, finishing it first (the protocol's rule).
fn reverse_of(t: &Transaction) -> Option<bool> {
    crate::protocol::reverse::admit(t, None, true)
        .ok()
        .map(|a| a.finish_first)
}

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

/// What the alert line counts as needing an operator: the poll's counts
/// over every document (as `check` counts them), or, where the cluster
/// cannot count them (dates it cannot compare), the listed rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attention {
    /// Stuck, those needing investigation included.
    pub stuck: u64,
    /// Untouched past `investigate_after`, or undated.
    pub needs_investigation: u64,
    /// No state, or one this tool does not know (listed rows: any problem).
    pub odd: u64,
}

/// The marked transactions by what the table shows of them (each list by
/// id). A bulk act acts on `shown` only; the others stay marked, are
/// counted in the table's title and named in the bulk dialog as not
/// included, so nothing the operator cannot see is acted on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkedRows {
    /// Marked rows of the table.
    pub shown: Vec<String>,
    /// Marked and listed, but hidden by the filter.
    pub filtered: Vec<String>,
    /// Marked but no longer listed (they left the in-flight list).
    pub unlisted: Vec<String>,
}

impl MarkedRows {
    /// Marks the table does not show.
    pub fn hidden(&self) -> usize {
        self.filtered.len() + self.unlisted.len()
    }
}

/// Splits `marks` by whether `rows` of `snap` show them.
pub fn marked_rows(marks: &BTreeSet<String>, snap: &Snapshot, rows: &[usize]) -> MarkedRows {
    let mut out = MarkedRows::default();
    if marks.is_empty() {
        return out;
    }
    let shown: HashSet<&str> = rows
        .iter()
        .filter_map(|&i| snap.transactions.get(i))
        .map(|t| t.id.as_str())
        .collect();
    let listed: HashSet<&str> = snap.transactions.iter().map(|t| t.id.as_str()).collect();
    for id in marks {
        let list = if shown.contains(id.as_str()) {
            &mut out.shown
        } else if listed.contains(id.as_str()) {
            &mut out.filtered
        } else {
            &mut out.unlisted
        };
        list.push(id.clone());
    }
    out
}

/// Everything derived.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// What needs an operator (the alert line).
    pub attention: Attention,
    /// Indices into `snapshot.transactions`, filtered and sorted.
    pub rows: Vec<usize>,
    /// The page of the filter's matches the rows come from, with their
    /// total (`None` while the poll asked for that filter or page runs).
    pub page: Option<crate::protocol::read::TablePage>,
    /// The marks, by what the table shows of them.
    pub marks: MarkedRows,
    /// Position of the selected transaction among `rows`, if it is one.
    pub cursor: Option<usize>,
    /// First row of the table on screen.
    pub table_offset: usize,
    /// The selected transaction's detail.
    pub detail: Option<DetailView>,
    /// The account drilled into, shown in the detail pane instead.
    pub account: Option<AccountDetail>,
    /// Account ids in the order of the accounts pane.
    pub accounts: Vec<String>,
    /// Position of the selected account among `accounts`.
    pub account_cursor: Option<usize>,
    /// First account row on screen.
    pub account_offset: usize,
    /// Position of the selected lock in `snapshot.locks`.
    pub lock_cursor: Option<usize>,
    /// First lock row on screen.
    pub lock_offset: usize,
    /// First log line on screen.
    pub log_top: usize,
    /// `V` would open its dialog now: the keys' target may be reversed
    /// (the key bar advertises it then).
    pub reverse_applies: bool,
}

/// The offset that keeps `cursor` on screen, moving as little as possible
/// from `offset`, and never scrolled past the end.
pub fn keep_visible(offset: usize, cursor: Option<usize>, len: usize, height: usize) -> usize {
    let height = height.max(1);
    let mut off = offset.min(len.saturating_sub(height));
    if let Some(c) = cursor {
        if c < off {
            off = c;
        } else if c >= off + height {
            off = c + 1 - height;
        }
    }
    off
}

/// Order of the accounts pane: carrying pending entries, then malformed or
/// missing, then the rest; by id within each (the map is already by id, so
/// one pass per rank, no sort). `prev` (the order derived before) is
/// returned as it is when it still holds, so a key or a poll that left the
/// accounts' order alone clones no id.
pub fn account_order(snap: &Snapshot, prev: Vec<String>) -> Vec<String> {
    let rank = |e: &AccountEntry| match e {
        AccountEntry::Ok(s) if !s.pending.is_empty() => 0,
        AccountEntry::Malformed(_) | AccountEntry::Missing => 1,
        AccountEntry::Ok(_) => 2,
    };
    let ordered = || {
        (0..3u8).flat_map(move |r| {
            snap.accounts
                .iter()
                .filter(move |(_, e)| rank(e) == r)
                .map(|(k, _)| k)
        })
    };
    if prev.len() == snap.accounts.len() && ordered().eq(prev.iter()) {
        return prev;
    }
    ordered().cloned().collect()
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
    }
}

/// Text filter: id, state, source or destination contains `needle` (lowercase).
pub fn matches_text(t: &Transaction, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    let has = |s: &str| s.to_lowercase().contains(needle);
    has(&t.id)
        || t.state.as_ref().is_some_and(|s| has(s.as_str()))
        || t.src.as_deref().is_some_and(has)
        || t.dest.as_deref().is_some_and(has)
}

#[cfg(test)]
mod tests {
    use crate::dashboard::view::{account_order, keep_visible};
    use crate::protocol::account::AccountState;
    use crate::protocol::read::poll::{AccountEntry, Snapshot};

    #[test]
    fn account_order_ranks_then_ids_and_keeps_a_previous_order_that_holds() {
        let mut snap = Snapshot::default();
        let mut carrying = AccountState::new(10);
        carrying.pending.push("t1".into());
        snap.accounts.insert("c".into(), AccountEntry::Ok(carrying));
        snap.accounts.insert("b".into(), AccountEntry::Missing);
        snap.accounts
            .insert("a".into(), AccountEntry::Ok(AccountState::new(5)));
        snap.accounts
            .insert("d".into(), AccountEntry::Ok(AccountState::new(5)));
        let order = account_order(&snap, vec![]);
        assert_eq!(order, ["c", "b", "a", "d"]);
        let ids = order.as_ptr();
        let again = account_order(&snap, order);
        assert_eq!(again.as_ptr(), ids, "the order that holds is reused");
        let stale = vec!["a".into(), "b".into(), "c".into(), "d".into()];
        assert_eq!(account_order(&snap, stale), ["c", "b", "a", "d"]);
    }

    #[test]
    fn offsets_follow_the_cursor_and_stop_at_the_end() {
        assert_eq!(keep_visible(0, Some(12), 20, 5), 8);
        assert_eq!(keep_visible(8, Some(3), 20, 5), 3);
        assert_eq!(keep_visible(30, None, 20, 5), 15);
        assert_eq!(keep_visible(3, None, 2, 5), 0);
    }
}
