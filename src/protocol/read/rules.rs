//! The rules the dashboard and the CLI share, written once: whether a
//! transaction is recent, stuck, or needs an operator, and the order states
//! are shown in. A transaction in flight with no usable `modification_time`
//! has no age: it is counted as needing investigation, never hidden.

use super::discovery::Fields;
use super::queries::Queries;
use crate::protocol::steps::ProcedureRefusal;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
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
    match t.modification_time {
        None => Urgency::Undated,
        Some(m) if !within_window(m, now, investigate_after) => Urgency::NeedsInvestigation,
        Some(m) if !within_window(m, now, recovery_window) => Urgency::Stuck,
        Some(_) => Urgency::Recent,
    }
}

/// The search form of [`urgency`], for counting over every document (the
/// dashboard's header, which must agree with `check`): the query for the
/// stuck (in flight, untouched for the recovery window, or undated) and
/// the one for those needing investigation (the same past
/// `investigate_after`). `None` when the mapping cannot compare dates on
/// the server (ages are then judged here, on the rows read).
pub fn urgency_count_queries(
    q: &Queries,
    fields: &Fields,
    config: &ProtocolConfig,
) -> Option<[Value; 2]> {
    fields.ages_queryable().then(|| {
        [
            q.stuck(config.recovery_window),
            q.stuck(config.investigate_after),
        ]
    })
}

/// Whether something last modified at `modified` is, at `now`, still within
/// `window`: the one comparison behind "recent" and "stuck" here, the
/// recovery window's refusal ([`recovery_refusal`]) and the age filters of
/// listings. To the millisecond (a `1500ms` window is not `1s`); a zero
/// window holds nothing, not even a time slightly ahead of `now` (written
/// on another process's estimate of the cluster clock).
pub fn within_window(modified: DateTime<Utc>, now: DateTime<Utc>, window: Duration) -> bool {
    if window.is_zero() {
        return false;
    }
    let window = chrono::Duration::from_std(window).unwrap_or(chrono::Duration::MAX);
    now - modified < window
}

/// Whether `t` is at least `age` old at `now` (an undated one always is: its
/// age is unknown, so it is shown, never hidden): the complement of
/// [`within_window`], for `--older-than` filters.
pub fn is_older_than(t: &Transaction, now: DateTime<Utc>, age: Duration) -> bool {
    t.modification_time
        .is_none_or(|m| !within_window(m, now, age))
}

/// The refusal of a procedure (without force) on `t` at `now`: modified
/// within the recovery window, so its worker may still be on it. Exactly
/// the transactions [`urgency`] calls [`Urgency::Recent`] (of those in
/// flight), so nothing is listed stuck yet refused, or the reverse.
pub fn recovery_refusal(
    t: &Transaction,
    now: DateTime<Utc>,
    window: Duration,
) -> Option<ProcedureRefusal> {
    let modified = t.modification_time?;
    within_window(modified, now, window).then(|| ProcedureRefusal::Recent {
        age: now - modified,
        window,
    })
}

/// Whether `t` lacks a usable `modification_time` (missing or unparseable).
pub fn is_undated(t: &Transaction) -> bool {
    t.modification_time.is_none()
}

/// Whether the only thing wrong with `t` is its `modification_time`: the
/// audit calls it undated (counted as stuck), not malformed. Known from the
/// fields, not the problems' words (which a schema map may rename): a
/// modification time that was not read adds exactly one problem (see
/// [`Transaction::from_source`]).
pub fn is_only_undated(t: &Transaction) -> bool {
    is_undated(t) && t.problems.len() == 1
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

    /// Undated but otherwise well-formed (the field missing or unreadable)
    /// is told from undated and malformed besides, and from dated.
    #[test]
    fn only_undated_is_read_from_the_fields() {
        let t = |extra: serde_json::Value| {
            let mut v = json!({"transaction_state": "pending", "src_acct": "A",
                "dest_acct": "B", "amount": 1});
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            is_only_undated(&txn(v))
        };
        assert!(t(json!({})));
        assert!(t(json!({"modification_time": "yesterday"})));
        assert!(!t(json!({"amount": "ten"})));
        assert!(!t(json!({"modification_time": "yesterday", "src_acct": 5})));
        assert!(!t(json!({"modification_time": Utc::now().to_rfc3339()})));
        assert!(!t(
            json!({"modification_time": Utc::now().to_rfc3339(), "amount": null})
        ));
    }

    /// At the edge of the recovery window, to the millisecond, and with
    /// windows that are not whole seconds: a transaction is listed stuck
    /// exactly when a recovery of it is not refused as recent.
    #[test]
    fn stuck_and_the_recovery_refusal_agree_at_the_boundary() {
        let now = Utc::now();
        for window_ms in [0u64, 1, 500, 1_000, 1_500, 60_000, 60_999] {
            let window = Duration::from_millis(window_ms);
            let investigate = Duration::from_secs(3600);
            for offset_ms in [-1_001i64, -1, 0, 1, 999, 1_000] {
                let age = window_ms as i64 + offset_ms;
                let t = txn(json!({"transaction_state": "pending", "src_acct": "A",
                    "dest_acct": "B", "amount": 1,
                    "modification_time": (now - chrono::Duration::milliseconds(age)).to_rfc3339()}));
                let stuck = urgency_with(&t, now, window, investigate).is_stuck();
                let refused = recovery_refusal(&t, now, window).is_some();
                assert_eq!(
                    stuck, !refused,
                    "window {window_ms}ms, age {age}ms: stuck {stuck}, refused {refused}"
                );
                let expect_stuck = window_ms == 0 || age >= window_ms as i64;
                assert_eq!(stuck, expect_stuck, "window {window_ms}ms, age {age}ms");
                assert_eq!(is_older_than(&t, now, window), expect_stuck);
            }
        }
    }
}
