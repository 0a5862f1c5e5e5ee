//! The stuck query and recovery of every stuck transaction.
//!
//! "Stuck" is the article's definition: in created, pending, committed or
//! terminating, and not modified within the recovery window. The query pages
//! through every hit (never capped at 100), oldest first; each transaction is
//! then re-read by id before anything is done to it.

use super::report::ProcedureReport;
use super::transaction::{Transaction, TxnState};
use super::Protocol;
use crate::error::Result;
use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;

/// The one recovery-window rule: whether a document last modified at
/// `modified` has been left untouched for at least `window` at `now`
/// (sub-second precise). Unknown modification time: not known to be
/// untouched. A zero window protects nothing, not even a time slightly
/// ahead of `now` (written on another process's estimate of the cluster
/// clock). "Stuck", a stale lock's owner, and the refusal of a transaction
/// modified within the window all judge by this.
pub fn untouched_for(
    modified: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    window: Duration,
) -> bool {
    let window_len = chrono::Duration::from_std(window).unwrap_or(chrono::Duration::MAX);
    modified.is_some_and(|m| window.is_zero() || now.signed_duration_since(m) >= window_len)
}

/// "Stuck": in flight (created, pending, committed, terminating) and
/// untouched for the recovery window ([`untouched_for`]).
pub fn is_stuck(t: &Transaction, now: DateTime<Utc>, window: Duration) -> bool {
    t.state.as_ref().is_some_and(TxnState::is_in_flight)
        && untouched_for(t.modification_time, now, window)
}

/// The query body for non-terminal transactions last modified more than
/// `older_than` ago (by the cluster's clock), oldest first.
pub fn stuck_query(older_than: Duration) -> Value {
    json!({
        "query": {"bool": {"filter": [
            {"terms": {"transaction_state": TxnState::NON_TERMINAL_NAMES}},
            {"range": {"modification_time": {"lte": format!("now-{}s", older_than.as_secs())}}}
        ]}},
        "sort": [{"modification_time": {"order": "asc"}}]
    })
}

/// Query for transactions by state (all when `states` is empty) and age.
pub fn list_query(states: &[String], older_than: Option<Duration>) -> Value {
    let mut filter = Vec::new();
    if !states.is_empty() {
        filter.push(json!({"terms": {"transaction_state": states}}));
    }
    if let Some(d) = older_than {
        filter.push(
            json!({"range": {"modification_time": {"lte": format!("now-{}s", d.as_secs())}}}),
        );
    }
    json!({
        "query": {"bool": {"filter": filter}},
        "sort": [{"modification_time": {"order": "asc", "missing": "_first", "unmapped_type": "date"}}]
    })
}

impl Protocol {
    /// Every stuck transaction, oldest first, as found by search.
    pub async fn stuck_transactions(&self) -> Result<Vec<Transaction>> {
        let hits = self
            .cluster()
            .scan(
                &self.config.indices.transactions,
                stuck_query(self.config.recovery_window),
            )
            .await?;
        Ok(hits
            .iter()
            .map(|h| Transaction::from_source(&h.id, &h.source))
            .collect())
    }

    /// Transactions matching `states` (all when empty) older than `older_than`.
    pub async fn list_transactions(
        &self,
        states: &[String],
        older_than: Option<Duration>,
    ) -> Result<Vec<Transaction>> {
        let hits = self
            .cluster()
            .scan(
                &self.config.indices.transactions,
                list_query(states, older_than),
            )
            .await?;
        Ok(hits
            .iter()
            .map(|h| Transaction::from_source(&h.id, &h.source))
            .collect())
    }

    /// Recovers every stuck transaction, at most `concurrency` at a time.
    /// Each one is re-read and re-checked against the recovery window, so a
    /// transaction that moved since the search is left alone.
    pub async fn recover_all_stuck(&self, concurrency: usize) -> Result<Vec<ProcedureReport>> {
        let ids: Vec<String> = self
            .stuck_transactions()
            .await?
            .into_iter()
            .map(|t| t.id)
            .collect();
        let reports = stream::iter(ids)
            .map(|id| async move { self.recover(&id, false).await })
            .buffer_unordered(concurrency.max(1))
            .collect::<Vec<_>>()
            .await;
        Ok(reports)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_rule() {
        let now = Utc::now();
        let ms = |n: i64| chrono::Duration::milliseconds(n);
        let window = Duration::from_millis(500);
        assert!(!untouched_for(Some(now - ms(499)), now, window));
        assert!(untouched_for(Some(now - ms(500)), now, window));
        assert!(!untouched_for(None, now, window));
        // A zero window: even a time a little ahead (clock estimates differ).
        assert!(untouched_for(Some(now + ms(300)), now, Duration::ZERO));
        assert!(!untouched_for(Some(now + ms(300)), now, window));
    }
}
