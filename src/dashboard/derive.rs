//! The view derived from the state: once the data, filter, sort,
//! selection or size change (`update` calls [`App::refresh_view`] after
//! every event), never while drawing. The derived values and the pure
//! functions they are made with are [`super::view`]'s; this file applies
//! them to the state.

use super::app::App;
use super::layout;
use super::sort::SortKey;
use super::view::{
    account_detail, account_order, from_detail, from_snapshot, keep_visible, marked_rows,
    matches_text, Attention, DetailView, Fate, View,
};
use crate::protocol::read::poll::Snapshot;
use crate::protocol::transaction::{Transaction, TxnState};

/// Deriving the view: the only place the rows, the scroll offsets and the
/// detail are computed.
impl App {
    /// Re-derives what the screen shows from the state: call after the data,
    /// filter, sort, selection or size changed (`update` does).
    pub fn refresh_view(&mut self) {
        let fit = layout::pane_rows_in(self.screen());
        let prev = std::mem::take(&mut self.view);
        let mut v = View::default();
        if let Some(snap) = &self.snapshot {
            v.rows = self.filtered_rows(snap);
            v.page = self.table_page().cloned();
            v.marks = marked_rows(&self.selection.marks, snap, &v.rows);
            v.attention = self.attention(snap);
            v.cursor = self.selection.txn.as_ref().and_then(|id| {
                v.rows
                    .iter()
                    .position(|&i| snap.transactions.get(i).is_some_and(|t| &t.id == id))
            });
            v.accounts = account_order(snap, prev.accounts);
            v.account_cursor = self
                .selection
                .account
                .as_ref()
                .and_then(|id| v.accounts.iter().position(|a| a == id));
            v.lock_cursor = self
                .selection
                .lock
                .as_ref()
                .and_then(|r| snap.locks.iter().position(|l| &l.info.resource == r));
            v.account_offset = keep_visible(
                prev.account_offset,
                v.account_cursor,
                v.accounts.len(),
                fit.accounts,
            );
            v.lock_offset =
                keep_visible(prev.lock_offset, v.lock_cursor, snap.locks.len(), fit.locks);
            v.account = self
                .selection
                .drill
                .as_ref()
                .map(|id| account_detail(snap, id));
        }
        v.table_offset = keep_visible(prev.table_offset, v.cursor, v.rows.len(), fit.table);
        let last_top = self.log_last_top();
        v.log_top = match self.selection.log_top {
            None => last_top,
            Some(top) => top.min(last_top),
        };
        v.detail = self.detail_of_selection(v.cursor.is_some(), prev.detail);
        let reversible = v.detail.as_ref().is_some_and(|d| d.reverse.is_some());
        self.view = v;
        self.view.reverse_applies = reversible
            && !self.settings.read_only
            && super::selection::target::transaction_target(self).is_ok();
    }

    /// The first log entry shown when following the newest: as many of the
    /// newest entries as fit the pane whole (at least the newest). Only
    /// those are measured (wrapped to the pane's width: long lines wrap
    /// rather than being cut at the edge), not the whole log.
    pub fn log_last_top(&self) -> usize {
        let room = layout::pane_rows_in(self.screen()).log;
        let width = usize::from(self.areas().log.width.saturating_sub(2)).max(1);
        let mut used = 0;
        let mut top = self.log.len();
        while let Some(e) = top.checked_sub(1).and_then(|i| self.log.get(i)) {
            let rows = layout::log_entry_rows(&e.text, width);
            if used + rows > room {
                break;
            }
            used += rows;
            top -= 1;
        }
        top.min(self.log.len().saturating_sub(1))
    }

    /// What needs an operator in `snap`, as the header counts it.
    pub fn attention(&self, snap: &Snapshot) -> Attention {
        let rows = |f: &dyn Fn(&Transaction) -> bool| {
            snap.transactions.iter().filter(|t| f(t)).count() as u64
        };
        let counted = snap.read.attention;
        Attention {
            stuck: counted
                .and_then(|c| c.stuck)
                .unwrap_or_else(|| rows(&|t| self.is_stuck(t))),
            needs_investigation: counted
                .and_then(|c| c.needs_investigation)
                .unwrap_or_else(|| rows(&|t| self.needs_investigation(t))),
            odd: counted.map_or_else(|| rows(&|t| !t.problems.is_empty()), |c| c.odd),
        }
    }

    /// The loaded rows the filter keeps, sorted: the cluster already ran
    /// the filter for the page it answers (the same conditions: a row it
    /// returns passes here); until the page asked for arrives, the rows
    /// loaded before are narrowed on screen.
    fn filtered_rows(&self, snap: &Snapshot) -> Vec<usize> {
        let needle = self.query.text.to_lowercase();
        let txns = &snap.transactions;
        let (filter, s) = (self.table_filter(), &self.settings);
        let mut rows: Vec<usize> = (0..txns.len())
            .filter(|&i| {
                let t = &txns[i];
                filter.keeps_with(t, self.now, s.recovery_window, s.investigate_after)
                    && matches_text(t, &needle)
            })
            .collect();
        match self.query.sort {
            SortKey::Age => rows.sort_by_key(|&i| txns[i].modification_time),
            SortKey::State => rows.sort_by(|&a, &b| {
                let key = |i: usize| {
                    (
                        TxnState::order_key(txns[i].state.as_ref()),
                        txns[i].modification_time,
                    )
                };
                key(a).cmp(&key(b))
            }),
            SortKey::Amount => rows.sort_by_key(|&i| (txns[i].amount, txns[i].modification_time)),
            SortKey::Id => rows.sort_by(|&a, &b| txns[a].id.cmp(&txns[b].id)),
        }
        if self.query.sort_desc {
            rows.reverse();
        }
        rows
    }

    /// The detail of the selected transaction: from the snapshot when it is
    /// there, else from its read by id (the previous detail, marked as being
    /// re-read, until that read answers).
    fn detail_of_selection(&self, listed: bool, prev: Option<DetailView>) -> Option<DetailView> {
        let id = self.selection.txn.as_ref()?;
        if let Some(snap) = &self.snapshot {
            if let Some(t) = snap.transactions.iter().find(|t| &t.id == id) {
                let fate = if listed { Fate::Listed } else { Fate::Filtered };
                return Some(from_snapshot(snap, t, fate));
            }
        }
        let prev = prev.filter(|d| &d.txn.id == id);
        let with = |fate: Fate| {
            prev.map(|mut d| {
                d.fate = fate;
                d
            })
        };
        match &self.reads.looked_up {
            Some((looked, found)) if looked == id => match found {
                Ok(Some(d)) => Some(from_detail(d)),
                Ok(None) => with(Fate::Vanished),
                Err(e) => with(Fate::ReadFailed(e.clone())),
            },
            _ => with(Fate::Reading),
        }
    }

    /// The id to read by id now, if the selection needs it and it was not
    /// asked for yet (recorded as asked).
    pub fn take_lookup(&mut self) -> Option<String> {
        let id = self.selection.txn.clone()?;
        let listed = self
            .snapshot
            .as_ref()
            .is_some_and(|s| s.transactions.iter().any(|t| t.id == id));
        if listed {
            // Read again by id if it leaves the list again.
            self.reads.lookup_asked = None;
            self.reads.looked_up = None;
            return None;
        }
        if self.reads.lookup_asked.as_ref() == Some(&id) {
            return None;
        }
        if self.reads.looked_up.as_ref().is_some_and(|(l, _)| l != &id) {
            self.reads.looked_up = None;
        }
        self.reads.lookup_asked = Some(id.clone());
        Some(id)
    }
}
