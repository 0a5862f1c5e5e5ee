//! The selection, in one place: what is selected is [`Selection`] (on
//! `App`); here is how it moves and what it means — selecting a row or an
//! id ([`App::select`]), how the selection follows what is shown
//! ([`follow`]), moving it with the keys and the mouse ([`navigation`]), and
//! what the action keys act on ([`target`]).

pub mod follow;
pub mod navigation;
pub mod target;

use crate::dashboard::app::App;
pub use crate::dashboard::app::Selection;
use crate::protocol::transaction::Transaction;

impl App {
    /// Position of the selection among the visible rows (`None` when it is
    /// not one of them: nothing selected, filtered out, or left the list).
    pub fn selected_index(&self) -> Option<usize> {
        self.view.table.cursor
    }

    /// The selected transaction as the detail shows it (listed or not).
    pub fn selected_transaction(&self) -> Option<&Transaction> {
        self.view.detail.as_ref().map(|d| &d.txn)
    }

    /// Selects the visible row at `i` (clamped).
    pub fn select_index(&mut self, i: usize) {
        let id = {
            let rows = self.visible();
            if rows.is_empty() {
                return;
            }
            rows[i.min(rows.len() - 1)].id.clone()
        };
        self.select(id);
    }

    /// Selects a transaction by id (listed or not); the detail starts at its top.
    pub fn select(&mut self, id: String) {
        if self.selection.txn.as_ref() != Some(&id) {
            self.selection.detail_scroll = 0;
            self.selection.pinned = None;
        }
        self.selection.drill = None;
        self.selection.txn = Some(id);
        self.refresh_view();
    }
}
