//! Which transaction `R`, `F` and `L` act on — the one rule, used by the
//! key handler (which refuses, saying why) and by the detail pane (which
//! says whether the transaction it shows is the keys' target).
//!
//! An action key applies only to a transaction the operator can see
//! selected: a row of the table (focus on the table, the detail or the
//! log), or a transaction looked up by id with `#` while the detail shows
//! it. A selection that left the list or is hidden by the filter is not a
//! target (the key says why and does nothing); nor is anything while the
//! accounts or locks pane has the focus (their rows are accounts and
//! locks), nor the detail while it shows an account.

use super::app::{App, Pane};
use super::ui;
use super::view::Fate;

/// The id `R`/`F`/`L` would act on now, or why none (for the log).
pub fn transaction_target(app: &App) -> Result<String, String> {
    match app.focus {
        Pane::Accounts => {
            return Err(
                "select a lock or a transaction: the accounts pane's rows are \
                 accounts (Tab to the transactions or the locks pane)"
                    .into(),
            )
        }
        Pane::Locks => {
            return Err(
                "the locks pane's rows are locks: L releases the selected lock; \
                 Enter opens its owner transaction"
                    .into(),
            )
        }
        Pane::Detail if app.view.account.is_some() => {
            return Err("the detail shows an account, not a transaction: select a \
                 transaction first"
                .into())
        }
        _ => {}
    }
    let Some(id) = app.selected.clone() else {
        return Err("no transaction selected".into());
    };
    if app.view.cursor.is_some() || looked_up_target(app) {
        return Ok(id);
    }
    let why = match app.view.detail.as_ref().map(|d| &d.fate) {
        Some(Fate::Filtered) => {
            format!("{id} is hidden by the filter: clear it (Esc, s, x, X) or look it up with #")
        }
        _ => format!("{id} left the list: look it up with # to act on it"),
    };
    Err(format!("{why}; nothing done"))
}

/// Whether the selection is a transaction looked up with `#`, shown in the
/// detail pane as the keys' target (so acting on it is explicit).
pub fn looked_up_target(app: &App) -> bool {
    let Some(d) = &app.view.detail else {
        return false;
    };
    app.pinned.as_ref() == Some(&d.txn.id)
        && app.selected.as_ref() == Some(&d.txn.id)
        && app.view.account.is_none()
        && !ui::areas(app).detail.is_empty()
        && matches!(d.fate, Fate::ReadById | Fate::Listed | Fate::Filtered)
}
