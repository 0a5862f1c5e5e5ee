//! The panes under the layers (after oxker's `draw_blocks/` and gitui's
//! components): the transaction table, the detail (of the selected
//! transaction, or of an account drilled into), the accounts, the locks and
//! the log. Each is a module owning what belongs to it:
//! - `view.rs`, its view model and the pure functions that make it (it
//!   imports nothing of the dashboard but `layout`, so the state can hold
//!   it without an import circle);
//! - `mod.rs`, its derive step over the state (called by
//!   [`super::app::App::refresh_view`], never while drawing) and the keys
//!   only it handles (dispatched by focus from `selection::navigation` and
//!   `key_ops`; the one key table stays `keymap/table.rs`);
//! - `draw.rs`, its drawing: the state, its own view, `layout` and `ui`'s
//!   theme and row helpers, never another pane (called by [`super::ui`]);
//! - `text.rs` for a pane whose text is measured as well as drawn (the
//!   detail's scroll is bounded by its rows, derived, not asked of the
//!   drawing);
//! - its unit tests beside what they test.
//!
//! The header, the alert line, the overview, the trends and the key bar
//! are the screen's frame, not panes: they take no focus and no keys, and
//! stay in `ui/`.

pub mod account_detail;
pub mod accounts;
pub mod detail;
pub mod locks;
pub mod log;
pub mod transactions;
