//! What the screen shows, derived from the dashboard's state once, when the
//! data, filter, sort, selection or size change (by `update`), never while
//! drawing: each pane's view model (its own, in [`super::panes`]: the
//! table's rows, cursor, scroll and marks; the detail with its action
//! previews and how many rows its text takes; the accounts' order; the
//! locks' and the log's scroll), the alert line's counts, and whether `V`
//! applies. The renderer only reads this. Applying the panes' derive steps
//! to the state is the `derive` module's, so neither the state nor these
//! values import anything else of the dashboard.

pub use super::panes::account_detail::view::AccountDetail;
pub use super::panes::accounts::view::AccountsView;
pub use super::panes::detail::view::{DetailAccount, DetailView, Fate};
pub use super::panes::locks::view::LocksView;
pub use super::panes::log::view::LogView;
pub use super::panes::transactions::view::{MarkedRows, TableView};

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

/// Everything derived.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// What needs an operator (the alert line).
    pub attention: Attention,
    /// The transaction table.
    pub table: TableView,
    /// The selected transaction's detail.
    pub detail: Option<DetailView>,
    /// The account drilled into, shown in the detail pane instead.
    pub account: Option<AccountDetail>,
    /// Rows the detail pane's text (the account's, else the
    /// transaction's) takes at the width the pane has when focused: what
    /// bounds its scroll.
    pub detail_rows: usize,
    /// The accounts pane.
    pub accounts: AccountsView,
    /// The locks pane.
    pub locks: LocksView,
    /// The log pane.
    pub log: LogView,
    /// `V` would open its dialog now: the keys' target may be reversed
    /// (the key bar advertises it then).
    pub reverse_applies: bool,
}
