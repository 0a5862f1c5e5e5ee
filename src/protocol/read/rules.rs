//! The rules the dashboard and the CLI share, written once: whether a
//! transaction is recent, stuck, or needs an operator, and the order states
//! are shown in. A transaction in flight with no usable `modification_time`
//! has no age: it is counted as needing investigation, never hidden.

use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::time::Duration;

/// How urgently a transaction needs an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    /// Finished, rolled back, or with no state to judge by.
    Settled,
    /// In flight and modified within the recovery window: a worker may be on it.
    Recent,
    /// In flight and untouched for the recovery window (the article's "stuck").
    Stuck,
    /// Stuck for longer than the investigation threshold (1 h by default).
    NeedsInvestigation,
    /// In flight with no (parseable) `modification_time`: its age is unknown.
    Undated,
}

impl Urgency {
    /// Whether recovery may pick it up: stuck, long stuck, or undated.
    pub fn is_stuck(self) -> bool {
        self >= Urgency::Stuck
    }

    /// Whether an operator should look at it.
    pub fn needs_investigation(self) -> bool {
        self >= Urgency::NeedsInvestigation
    }
}

/// The urgency of `t` at `now` under the configured windows.
pub fn urgency(t: &Transaction, now: DateTime<Utc>, config: &ProtocolConfig) -> Urgency {
    urgency_with(t, now, config.recovery_window, config.investigate_after)
}

/// [`urgency`] with the two windows given directly.
pub fn urgency_with(
    t: &Transaction,
    now: DateTime<Utc>,
    recovery_window: Duration,
    investigate_after: Duration,
) -> Urgency {
    if !t.state.as_ref().is_some_and(TxnState::is_in_flight) {
        return Urgency::Settled;
    }
    match t.age_seconds(now) {
        None => Urgency::Undated,
        Some(a) if a >= investigate_after.as_secs() as i64 => Urgency::NeedsInvestigation,
        Some(a) if a >= recovery_window.as_secs() as i64 => Urgency::Stuck,
        Some(_) => Urgency::Recent,
    }
}

/// Whether `t` lacks a usable `modification_time` (missing or unparseable).
pub fn is_undated(t: &Transaction) -> bool {
    t.modification_time.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn txn(v: serde_json::Value) -> Transaction {
        Transaction::from_source("t", v.as_object().unwrap())
    }

    #[test]
    fn one_definition_of_stuck() {
        let c = ProtocolConfig::default();
        let now = Utc::now();
        let at = |secs: i64| (now - chrono::Duration::seconds(secs)).to_rfc3339();
        let t = |state: &str, m: Option<String>| {
            let mut v =
                json!({"transaction_state": state, "src_acct": "A", "dest_acct": "B", "amount": 1});
            if let Some(m) = m {
                v["modification_time"] = json!(m);
            }
            urgency(&txn(v), now, &c)
        };
        assert_eq!(t("pending", Some(at(10))), Urgency::Recent);
        assert_eq!(t("pending", Some(at(200))), Urgency::Stuck);
        assert_eq!(t("committed", Some(at(7200))), Urgency::NeedsInvestigation);
        assert_eq!(t("finished", Some(at(7200))), Urgency::Settled);
        assert_eq!(t("pending", None), Urgency::Undated);
        assert_eq!(t("pending", Some("yesterday".into())), Urgency::Undated);
        assert!(Urgency::Undated.is_stuck() && Urgency::Undated.needs_investigation());
    }
}
