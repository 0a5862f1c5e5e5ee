//! The JSON of `show --json` and of one transaction: presentation, kept in
//! the CLI (the protocol module returns read models, not JSON). The
//! transaction is the protocol's [`TransactionRow`], the row `list` prints.

use crate::protocol::account::SettledOutcome;
use crate::protocol::executor::StepOutcome;
use crate::protocol::rows::TransactionRow;
use crate::protocol::steps::Step;
use crate::protocol::views::{Preview, TransactionDetail};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

/// The JSON of a preview.
pub fn preview_json(p: &Preview) -> Value {
    json!({
        "refused": p.refusal.as_ref().map(|r| r.to_string()),
        "steps": p.steps.iter().map(|s| json!({
            "step": s.step.label(),
            "outcome": match &s.outcome { StepOutcome::Updated(e) => format!("updated: {e}"), StepOutcome::Noop(r) => format!("noop: {r}") },
        })).collect::<Vec<_>>(),
        "balance_change": {"source": p.balance_change.0, "destination": p.balance_change.1},
        "ends_in": p.ends_in.as_ref().map(|s| s.as_str().to_string()),
    })
}

/// The JSON of `show --json`.
pub fn detail_json(
    d: &TransactionDetail,
    now: DateTime<Utc>,
    recovery_window: Duration,
    investigate_after: Duration,
) -> Value {
    json!({
        "transaction": TransactionRow::with_windows(&d.txn, now, recovery_window, investigate_after),
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
        "recover": preview_json(&d.recover),
        "rollback": preview_json(&d.rollback),
    })
}
