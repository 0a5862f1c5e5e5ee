//! The view derived from the state: once the data, filter, sort,
//! selection or size change (`update` calls [`App::refresh_view`] after
//! every event), never while drawing. The derived values are
//! [`super::view`]'s, each pane's made by its own derive step
//! ([`super::panes`]); this file applies them to the state, in order.

use super::app::App;
use super::layout;
use super::panes;
use super::panes::account_detail::view::account_detail;
use super::view::{Attention, View};
use crate::protocol::read::poll::Snapshot;
use crate::protocol::transaction::Transaction;

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
            // A snapshot set without a poll (tests, a replay) is judged here.
            self.poll.causes.follow(snap, self.settings.recovery_window);
            v.table = panes::transactions::derive(self, snap, prev.table.offset, fit.table);
            v.attention = self.attention(snap);
            v.accounts = panes::accounts::view::derive(
                snap,
                self.selection.account.as_ref(),
                prev.accounts,
                fit.accounts,
            );
            v.locks = panes::locks::view::derive(
                &snap.locks,
                self.selection.lock.as_ref(),
                prev.locks,
                fit.locks,
            );
            v.account = self
                .selection
                .drill
                .as_ref()
                .map(|id| account_detail(snap, id));
        }
        v.log = panes::log::derive(self);
        v.detail = panes::detail::derive(self, v.table.cursor.is_some(), prev.detail);
        v.detail_rows = panes::detail::rows(self, v.detail.as_ref(), v.account.as_ref());
        let reversible = v.detail.as_ref().is_some_and(|d| d.reverse.is_some());
        self.view = v;
        self.view.reverse_applies = reversible
            && !self.settings.read_only
            && super::selection::target::transaction_target(self).is_ok();
    }

    /// Derives again what the clock changes in the detail's text (a row
    /// turning stuck adds a line), so its scroll stays bounded by what is
    /// drawn: a tick derives nothing else.
    pub fn refresh_detail_rows(&mut self) {
        let v = &self.view;
        self.view.detail_rows = panes::detail::rows(self, v.detail.as_ref(), v.account.as_ref());
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
}
