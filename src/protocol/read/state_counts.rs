//! Per-state counts of transactions, as a poll loads them (from the
//! states aggregation, or counted from listed rows where the state field
//! has no exact form) and in the one state order every view uses.

use super::queries::MISSING_STATE_KEY;
use crate::protocol::schema::Schema;
use crate::protocol::transaction::{Transaction, TxnState};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Count and age of one state.
#[derive(Debug, Clone, PartialEq)]
pub struct StateCount {
    /// The state (unknown ones verbatim; `None` = field missing).
    pub state: Option<TxnState>,
    /// Documents in it.
    pub count: u64,
    /// Oldest modification time in it.
    pub oldest: Option<DateTime<Utc>>,
}

/// What needs an operator, counted over every document by the poll (not
/// from the rows it lists, which are capped): the same queries and rules
/// as `check`, so the dashboard's header and `check` agree at any scale.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttentionCounts {
    /// Stuck: in flight and untouched for the recovery window, or undated
    /// (those needing investigation included). `None` when the mapping
    /// cannot compare dates on the server.
    pub stuck: Option<u64>,
    /// Of those, untouched past `investigate_after` (or undated).
    pub needs_investigation: Option<u64>,
    /// Transactions with no state or one this tool does not know.
    pub odd: u64,
}

/// Counts listed transactions by state (where no aggregation is possible).
pub(super) fn count_listed(txns: &[Transaction]) -> Vec<StateCount> {
    let mut out: Vec<StateCount> = Vec::new();
    for t in txns {
        match out.iter_mut().find(|c| c.state == t.state) {
            Some(c) => c.count += 1,
            None => out.push(StateCount {
                state: t.state.clone(),
                count: 1,
                oldest: t.modification_time,
            }),
        }
    }
    out
}

/// The counts of a by-state aggregation; its keys are the application's
/// values, read back to canonical states through `schema`.
pub(super) fn buckets(v: &Value, schema: &Schema) -> Vec<StateCount> {
    v.pointer("/aggregations/states/buckets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|b| {
            let name = b.get("key").and_then(Value::as_str).unwrap_or_default();
            StateCount {
                state: (name != MISSING_STATE_KEY)
                    .then(|| TxnState::parse(&schema.state_from_app(name))),
                count: b.get("doc_count").and_then(Value::as_u64).unwrap_or(0),
                oldest: b
                    .pointer("/oldest/value")
                    .and_then(Value::as_f64)
                    .and_then(|ms| DateTime::from_timestamp_millis(ms as i64)),
            }
        })
        .collect()
}

/// Known states in protocol order (zero where absent), then unknown ones,
/// then "no state": the one state order every view uses.
pub fn ordered(mut found: Vec<StateCount>) -> Vec<StateCount> {
    let mut out: Vec<StateCount> = TxnState::KNOWN
        .iter()
        .map(
            |s| match found.iter().position(|c| c.state.as_ref() == Some(s)) {
                Some(i) => found.remove(i),
                None => StateCount {
                    state: Some(s.clone()),
                    count: 0,
                    oldest: None,
                },
            },
        )
        .collect();
    found.sort_by(|a, b| {
        TxnState::order_key(a.state.as_ref()).cmp(&TxnState::order_key(b.state.as_ref()))
    });
    out.extend(found);
    out
}
