//! The counts the monitoring `check` reports, read through the one read
//! side and its rules: stuck and needing investigation
//! ([`super::read::rules::urgency`], undated in-flight ones included), odd
//! documents (no state, or one this tool does not know:
//! [`super::read::Queries::odd_states`] on the discovered fields), stale
//! locks (the lock rule) and audit findings (the audit). A partial view
//! (failed shards) is an error: a monitoring check must not say OK on half
//! the data. The stuck transactions themselves come along, oldest first, so
//! the check can say which ones to act on. Thresholds and output formats
//! are the CLI's business.

use super::read::{urgency, Queries};
use super::transaction::Transaction;
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

/// One check's reading: the counts, and the stuck transactions they count
/// (oldest first), so an alert can name them.
#[derive(Debug, Clone)]
pub struct CheckReading {
    /// What was counted.
    pub counts: CheckCounts,
    /// The stuck transactions, oldest first.
    pub stuck: Vec<StuckOne>,
}

/// One stuck transaction as the check saw it.
#[derive(Debug, Clone)]
pub struct StuckOne {
    /// The transaction.
    pub transaction: Transaction,
    /// Stuck for longer than `investigate_after` (the same rule as the count).
    pub needs_investigation: bool,
}

impl Protocol {
    /// Counts everything `check` reports. Any read that fails fails the
    /// whole check: a monitoring check must not report OK on half the data.
    pub async fn check_reading(&self) -> Result<CheckReading> {
        self.check_reading_with(None).await
    }

    /// Counts everything `check` reports, taking the audit's findings from
    /// `audit_findings` when given (a watcher that paces its audits by
    /// their cost, see [`super::audit_pace`]), else running the audit.
    pub async fn check_reading_with(&self, audit_findings: Option<u64>) -> Result<CheckReading> {
        let now = self.now().await;
        let stuck = self.stuck_transactions().await?;
        let stuck: Vec<StuckOne> = stuck
            .into_iter()
            .map(|transaction| StuckOne {
                needs_investigation: urgency(&transaction, now, &self.config).needs_investigation(),
                transaction,
            })
            .collect();
        let needs_investigation = stuck.iter().filter(|s| s.needs_investigation).count() as u64;
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
        let audit_findings = match audit_findings {
            Some(n) => n,
            None => self.audit(None, false).await?.findings.len() as u64,
        };
        let counts = CheckCounts {
            stuck: stuck.len() as u64,
            needs_investigation,
            odd_documents,
            stale_locks,
            audit_findings,
            as_of: now,
        };
        Ok(CheckReading { counts, stuck })
    }
}
