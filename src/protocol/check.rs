//! The counts the monitoring `check` reports, read through the one read
//! side and its rules: stuck and needing investigation
//! ([`super::read::rules::urgency`], undated in-flight ones included), odd
//! documents (no state, or one this tool does not know:
//! [`super::read::Queries::odd_states`] on the discovered fields), stale
//! locks (the lock rule) and audit findings (the audit). A partial view
//! (failed shards) is an error: a monitoring check must not say OK on half
//! the data. Thresholds and output formats are the CLI's business.

use super::read::{urgency, Queries};
use super::Protocol;
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
/// What one check counted, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckCounts {
    /// In-flight transactions untouched for the recovery window.
    pub stuck: u64,
    /// Of those, the ones stuck for longer than `investigate_after`.
    pub needs_investigation: u64,
    /// Transactions with no state or a state this tool does not know.
    pub odd_documents: u64,
    /// Locks presumed abandoned.
    pub stale_locks: u64,
    /// Findings of the audit (money, dangling entries, malformed documents).
    pub audit_findings: u64,
    /// When the counts were taken (the cluster's clock).
    pub as_of: DateTime<Utc>,
}

impl Protocol {
    /// Counts everything `check` reports. Any read that fails fails the
    /// whole check: a monitoring check must not report OK on half the data.
    pub async fn check_counts(&self) -> Result<CheckCounts> {
        let now = self.now().await;
        let stuck = self.stuck_transactions().await?;
        let needs_investigation = stuck
            .iter()
            .filter(|t| urgency(t, now, &self.config).needs_investigation())
            .count() as u64;
        let d = self.discovery().await?;
        let odd_documents = self
            .cluster()
            .count(
                &self.config.indices.transactions,
                Queries::new(&d.fields).odd_states(),
            )
            .await?;
        let stale_locks = self
            .list_locks()
            .await?
            .iter()
            .filter(|l| l.staleness.is_stale())
            .count() as u64;
        let audit_findings = self.audit(None, false).await?.findings.len() as u64;
        Ok(CheckCounts {
            stuck: stuck.len() as u64,
            needs_investigation,
            odd_documents,
            stale_locks,
            audit_findings,
            as_of: now,
        })
    }
}
