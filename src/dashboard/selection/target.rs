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
//! locks), nor the detail while it shows an account. Space marks only a
//! row of the table ([`visible_row`]), so a bulk act names only rows.

use crate::dashboard::app::{App, Pane};
use crate::dashboard::keymap::Op;
use crate::dashboard::view::Fate;

/// The id `R`/`F`/`L` would act on now, or why none (for the log).
pub fn transaction_target(app: &App) -> Result<String, String> {
    let id = selection_in_focus(app)?;
    if app.view.table.cursor.is_some() || looked_up_target(app) {
        return Ok(id);
    }
    Err(format!("{}; nothing done", not_a_row(app, &id)))
}

/// The id of the table row the operator sees selected (what Space marks),
/// or why there is none: a transaction looked up with `#` that is not a
/// row of the table is not marked, so a bulk act only ever names rows.
pub fn visible_row(app: &App) -> Result<String, String> {
    let id = selection_in_focus(app)?;
    if app.view.table.cursor.is_some() {
        return Ok(id);
    }
    Err(format!("{}; nothing marked", not_a_row(app, &id)))
}

/// The selected transaction's id, unless the focused pane's rows are not
/// transactions (then why).
fn selection_in_focus(app: &App) -> Result<String, String> {
    match app.focus {
        Pane::Accounts => {
            return Err(
                "select a lock or a transaction: the accounts pane's rows are \
                 accounts (Tab to the transactions or the locks pane)"
                    .into(),
            )
        }
        Pane::Locks => {
            return Err(format!(
                "the locks pane's rows are locks: {} releases the selected lock; \
                 {} opens its owner transaction",
                app.keys.label(Op::Release),
                app.keys.label(Op::Open)
            ))
        }
        Pane::Detail if app.view.account.is_some() => {
            return Err("the detail shows an account, not a transaction: select a \
                 transaction first"
                .into())
        }
        _ => {}
    }
    app.selection
        .txn
        .clone()
        .ok_or_else(|| "no transaction selected".to_string())
}

/// Why the selection `id` is not a row of the table.
fn not_a_row(app: &App, id: &str) -> String {
    match app.view.detail.as_ref().map(|d| &d.fate) {
        Some(Fate::Filtered) => {
            format!("{id} is hidden by the filter: clear it (Esc, s, x, X) or look it up with #")
        }
        _ => format!("{id} left the list: look it up with # to act on it"),
    }
}

/// Whether the selection is a transaction looked up with `#`, shown in the
/// detail pane as the keys' target (so acting on it is explicit).
pub fn looked_up_target(app: &App) -> bool {
    let Some(d) = &app.view.detail else {
        return false;
    };
    app.selection.pinned.as_ref() == Some(&d.txn.id)
        && app.selection.txn.as_ref() == Some(&d.txn.id)
        && app.view.account.is_none()
        && !app.areas().detail.is_empty()
        && matches!(d.fate, Fate::ReadById | Fate::Listed | Fate::Filtered)
}
