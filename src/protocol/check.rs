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

use super::read::poll::{AttentionCounts, Snapshot, DEFAULT_CAP};
use super::read::{urgency, Queries};
use super::transaction::Transaction;
use super::Protocol;
use crate::error::{Error, Result};
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
    /// their cost, see [`super::audit::pace`]), else running the audit.
    pub async fn check_reading_with(&self, audit_findings: Option<u64>) -> Result<CheckReading> {
        let now = self.now().await;
        let stuck = self.stuck_ones(now).await?;
        let needs_investigation = stuck.iter().filter(|s| s.needs_investigation).count() as u64;
        let odd_documents = self.odd_count().await?;
        let stale_locks = self.stale_lock_count().await?;
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

    /// The counts `check` reports, taken from one dashboard poll, which a
    /// watcher (the exporter) publishes with them: the poll counts the
    /// stuck, those needing investigation and the odd ones over every
    /// document with the same queries `check` counts with, and judges the
    /// locks by the same rule, so a reading costs the poll's few requests
    /// whatever the number of transactions. A count the poll could not take
    /// is read as `check` reads it: the stuck and odd ones when the cluster
    /// cannot compare dates (or the transactions index is missing), the
    /// stale locks when there are more than the poll lists or some were
    /// judged without their owners or heartbeats. `audit_findings` comes
    /// from the watcher's paced audit. A partial poll is an error.
    pub async fn watch_reading(&self, audit_findings: u64) -> Result<(CheckCounts, Snapshot)> {
        let snap = self.poll_snapshot(DEFAULT_CAP).await?;
        if let Some(partial) = snap.read.coverage.describe() {
            return Err(Error::Invalid(format!(
                "a partial view ({partial}): no counts"
            )));
        }
        let now = snap.taken_at;
        let attention = snap.read.attention;
        let (stuck, needs_investigation, odd_documents) = match attention {
            Some(AttentionCounts {
                stuck: Some(stuck),
                needs_investigation: Some(n),
                odd,
            }) => (stuck, n, odd),
            _ => {
                let stuck = self.stuck_ones(now).await?;
                let n = stuck.iter().filter(|s| s.needs_investigation).count() as u64;
                (stuck.len() as u64, n, self.odd_count().await?)
            }
        };
        let all_locks_judged =
            snap.locks.len() as u64 >= snap.read.locks_total && !snap.read.locks_judged_blind;
        let stale_locks = if all_locks_judged {
            snap.locks.iter().filter(|l| l.staleness.is_stale()).count() as u64
        } else {
            self.stale_lock_count().await?
        };
        let counts = CheckCounts {
            stuck,
            needs_investigation,
            odd_documents,
            stale_locks,
            audit_findings,
            as_of: now,
        };
        Ok((counts, snap))
    }

    /// The stuck transactions (every in-flight one read), oldest first.
    async fn stuck_ones(&self, now: DateTime<Utc>) -> Result<Vec<StuckOne>> {
        let stuck = self.stuck_transactions().await?;
        Ok(stuck
            .into_iter()
            .map(|transaction| StuckOne {
                needs_investigation: urgency(&transaction, now, &self.config).needs_investigation(),
                transaction,
            })
            .collect())
    }

    /// Transactions in no state or one this tool does not know (a count).
    async fn odd_count(&self) -> Result<u64> {
        let d = self.discovery().await?;
        let odd = Queries::new(&d.fields).odd_states();
        self.cluster()
            .count(&self.config.indices.transactions, odd)
            .await
    }

    /// Locks stale on evidence, every lock read and judged.
    async fn stale_lock_count(&self) -> Result<u64> {
        let locks = self.list_locks().await?;
        Ok(locks.iter().filter(|l| l.staleness.is_stale()).count() as u64)
    }
}
