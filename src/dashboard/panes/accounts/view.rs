//! What the accounts pane shows, derived once (by `derive`, never while
//! drawing): the accounts in the pane's order, where the selected one is
//! among them, and the first one on screen. Pure: it imports nothing of the
//! dashboard but `layout`.

use crate::dashboard::layout::keep_visible;
use crate::protocol::read::poll::{AccountEntry, Snapshot};

/// The accounts pane's derived rows, cursor and scroll.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountsView {
    /// Account ids in the order of the pane ([`account_order`]).
    pub ids: Vec<String>,
    /// Position of the selected account among `ids`.
    pub cursor: Option<usize>,
    /// First account row on screen.
    pub offset: usize,
}

/// The pane's view of `snap`'s accounts, the account `selected` kept on
/// screen in `fit` rows, scrolled as little as possible from `prev` (whose
/// order is reused when it still holds).
pub fn derive(
    snap: &Snapshot,
    selected: Option<&String>,
    prev: AccountsView,
    fit: usize,
) -> AccountsView {
    let ids = account_order(snap, prev.ids);
    let cursor = selected.and_then(|id| ids.iter().position(|a| a == id));
    let offset = keep_visible(prev.offset, cursor, ids.len(), fit);
    AccountsView {
        ids,
        cursor,
        offset,
    }
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

#[cfg(test)]
mod tests {
    use super::account_order;
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
}
