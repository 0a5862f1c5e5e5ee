//! The JSON of `show --json` and of one transaction: presentation, kept in
//! the CLI (the protocol module returns read models, not JSON). The
//! transaction is the protocol's [`TransactionRow`], the row `list` prints.

use crate::cli::output::list::JsonRow;
use crate::error::Error;
use crate::protocol::account::SettledOutcome;
use crate::protocol::intervene::TxnPlan;
use crate::protocol::read::verdict::Runbooks;
use crate::protocol::rows::{Beside, TransactionRow};
use crate::protocol::steps::Step;
use crate::protocol::views::TransactionDetail;
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

/// The JSON of `procedure`'s plan on `d` ([`TxnPlan::of_detail`]: the plan
/// the dialog confirms and the dry run lists, lock releases included).
/// `refused`: why any write would be refused before the first, whatever
/// the documents (said when the plan has steps and no refusal of its own).
pub fn preview_json(d: &TransactionDetail, procedure: Procedure, refused: Option<&Error>) -> Value {
    let plan = TxnPlan::of_detail(procedure, d.clone());
    let p = d.preview(procedure);
    let refused = match (&plan.refusal, refused) {
        (Some(r), _) => Some(r.to_string()),
        (None, Some(e)) if !plan.steps.is_empty() => Some(e.to_string()),
        (None, _) => None,
    };
    json!({
        "refused": refused,
        "steps": plan.steps_in_full().map(|(s, e)| json!({
            "step": s.to_string(),
            "outcome": format!("{}: {}", if s.writes() { "updated" } else { "noop" },
                               e.effect),
        })).collect::<Vec<_>>(),
        "balance_change": {"source": p.balance_change.0, "destination": p.balance_change.1},
        "balance_in_words": plan.in_words.as_ref().map(ToString::to_string),
        "ends_in": plan.ends_in.as_ref().map(|s| s.as_str().to_string()),
    })
}

/// What `show --json` judges a transaction with besides its documents.
pub struct Shown<'a> {
    /// The cluster's time.
    pub now: DateTime<Utc>,
    /// The recovery window and the investigate-after age.
    pub windows: (Duration, Duration),
    /// Why any write would be refused before the first, whatever the
    /// documents.
    pub refused: Option<&'a Error>,
    /// Its cause and the live job holding it (`list --json`'s).
    pub beside: Beside<'a>,
    /// The profile's runbooks (the cause's link).
    pub runbooks: &'a Runbooks,
}

/// The JSON of `show --json`: its `transaction` is `list --json`'s row
/// (cause and `in_job` included) without the as-of time.
pub fn detail_json(d: &TransactionDetail, s: &Shown<'_>) -> Value {
    let (now, refused) = (s.now, s.refused);
    let (recovery_window, investigate_after) = s.windows;
    let row = TransactionRow::with_windows(&d.txn, now, recovery_window, investigate_after);
    json!({
        "transaction": JsonRow::new(None, &row, s.beside, now, s.runbooks),
        "accounts": d.accounts.iter().map(|a| json!({
            "id": a.id,
            "balance": a.state.as_ref().map(|s| s.balance),
            "pending_transactions": a.state.as_ref().map(|s| s.pending.clone()).unwrap_or_default(),
            "has_this_transaction": a.carries,
            "settled_this_transaction": a.settled.map(SettledOutcome::as_str),
            "problems": a.problems,
        })).collect::<Vec<_>>(),
        "locks": d.locks.iter().map(|l| crate::protocol::locks::lock_json(l, now)).collect::<Vec<_>>(),
        "next_step": d.next_step.map(Step::label),
        "recover": preview_json(d, Procedure::Recover, refused),
        "rollback": preview_json(d, Procedure::Rollback, refused),
    })
}
