//! The counts the monitoring `check` reports, read through the one read
//! side and its rules: stuck and needing investigation
//! ([`super::read::rules::urgency`], undated in-flight ones included), odd
//! documents (no state, or one this tool does not know:
//! [`super::read::Queries::odd_states`] on the discovered fields), stale
//! locks (the lock rule), audit findings (the audit) and the healing
//! verdict ([`super::read::verdict::healing`], its evidence read in one
//! `_msearch`). A partial view
//! (failed shards) is an error: a monitoring check must not say OK on half
//! the data. The stuck transactions themselves come along, oldest first, so
//! the check can say which ones to act on. Acknowledged stuck ones
//! ([`super::acks`]) are not counted as stuck: they come apart, with
//! their acks, so the check lists them without alerting on them.
//! Thresholds and output formats are the CLI's business.

use super::acks::{acks_on, Ack, Acks};
use super::locks::LockView;
use super::read::poll::{file_marks, healing_sources};
use super::read::verdict::{self, Cause, CauseEvidence, Healing};
use super::read::{urgency, Queries};
use super::transaction::Transaction;
use super::Protocol;
use crate::error::Result;
use crate::error::WriteRefusal;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

/// What one check counted, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckCounts {
    /// In-flight transactions untouched for the recovery window, the
    /// acknowledged ones not counted.
    pub stuck: u64,
    /// Of those, the ones stuck for longer than `investigate_after`.
    pub needs_investigation: u64,
    /// Stuck transactions acknowledged (no alert on them).
    pub acked: u64,
    /// Transactions with no state or a state this tool does not know.
    pub odd_documents: u64,
    /// Locks presumed abandoned.
    pub stale_locks: u64,
    /// Findings of the audit (money, dangling entries, malformed documents).
    pub audit_findings: u64,
    /// 1 when the application's own recovery has stalled or is not running
    /// (the healing verdict: [`super::read::verdict::healing`]), else 0.
    pub recovery_stalled: u64,
    /// When the counts were taken (the cluster's clock).
    pub as_of: DateTime<Utc>,
}

/// One check's reading: the counts, the healing verdict, and the stuck
/// transactions they count (oldest first), so an alert can name them.
#[derive(Debug, Clone)]
pub struct CheckReading {
    /// What was counted.
    pub counts: CheckCounts,
    /// Whether the application's own recovery is working.
    pub healing: Healing,
    /// The stuck transactions not acknowledged, oldest first.
    pub stuck: Vec<StuckOne>,
    /// The acknowledged stuck ones, oldest first, with their acks.
    pub acked: Vec<(StuckOne, Ack)>,
    /// The profile's runbooks per cause, shown beside each cause.
    pub runbooks: verdict::Runbooks,
}

impl CheckReading {
    /// The stuck transactions listed (acknowledged ones left out), by
    /// cause: what `check --format prometheus` publishes as the exporter
    /// does (`estx_stuck_by_cause`). One not judged yet counts for none.
    pub fn stuck_by_cause(&self) -> BTreeMap<verdict::CauseKind, u64> {
        let mut out = BTreeMap::new();
        for c in self.stuck.iter().filter_map(|s| s.cause.as_ref()) {
            *out.entry(c.kind()).or_insert(0) += 1;
        }
        out
    }
}

/// One stuck transaction as the check saw it.
#[derive(Debug, Clone)]
pub struct StuckOne {
    /// The transaction.
    pub transaction: Transaction,
    /// Stuck for longer than `investigate_after` (the same rule as the count).
    pub needs_investigation: bool,
    /// Why it is stuck and what is safe ([`super::read::verdict::cause`];
    /// `None` until judged, once the locks and the healing verdict are read).
    pub cause: Option<Cause>,
}

/// What causes are judged on, read once for a whole reading (`check`,
/// `list --json`): every lock, the healing verdict, and the stuck
/// transactions per account.
#[derive(Debug, Clone, Default)]
pub struct CauseReading {
    /// Every lock, judged.
    pub locks: Vec<LockView>,
    /// The healing verdict.
    pub healing: Healing,
    /// Stuck transactions per account (source and destination).
    pub stuck_by_account: BTreeMap<String, u64>,
    /// The write check's refusal, when the mappings would reject the
    /// protocol's writes.
    pub writes: Option<WriteRefusal>,
}

impl CauseReading {
    /// The evidence, borrowed.
    pub fn evidence(&self) -> CauseEvidence<'_> {
        CauseEvidence {
            locks: &self.locks,
            healing: &self.healing,
            stuck_by_account: &self.stuck_by_account,
            writes: self.writes.as_ref(),
        }
    }

    /// The cause of `t` at `now` under recovery window `window` (`None`:
    /// not stuck).
    pub fn cause_of(
        &self,
        t: &Transaction,
        now: DateTime<Utc>,
        window: std::time::Duration,
    ) -> Option<Cause> {
        verdict::cause::judge(t, &self.evidence(), now, window)
    }
}

/// The stuck transactions (every in-flight one read), oldest first.
pub(crate) async fn stuck_ones(p: &Protocol, now: DateTime<Utc>) -> Result<Vec<StuckOne>> {
    let stuck = p.stuck_transactions().await?;
    Ok(stuck
        .into_iter()
        .map(|transaction| StuckOne {
            needs_investigation: urgency(&transaction, now, &p.config).needs_investigation(),
            transaction,
            cause: None,
        })
        .collect())
}

/// `stuck` split into those not acknowledged and those acknowledged at
/// `now` (their acks read by id).
pub(crate) async fn set_apart_acked(
    p: &Protocol,
    stuck: Vec<StuckOne>,
    now: DateTime<Utc>,
) -> Result<(Vec<StuckOne>, Vec<(StuckOne, Ack)>)> {
    let ids: Vec<String> = stuck.iter().map(|s| s.transaction.id.clone()).collect();
    let acks = acks_on(p, &ids, now).await?;
    let (mut open, mut acked) = (Vec::new(), Vec::new());
    for s in stuck {
        match acks.get(&s.transaction.id) {
            Some(a) => acked.push((s, a.clone())),
            None => open.push(s),
        }
    }
    Ok((open, acked))
}

/// Of the transactions `acks` name, how many are stuck and how many of
/// those need investigation at `now` (read by id in one request, none
/// when there are no acks): what a watcher takes off the poll's counts.
pub(crate) async fn acked_stuck_counts(
    p: &Protocol,
    acks: &Acks,
    now: DateTime<Utc>,
) -> Result<(u64, u64)> {
    if acks.is_empty() {
        return Ok((0, 0));
    }
    let ids: Vec<String> = acks.iter().map(|a| a.txn.clone()).collect();
    let docs = p
        .cluster()
        .mget(&p.config.indices.transactions, &ids)
        .await?;
    let (mut stuck, mut investigate) = (0, 0);
    for (id, doc) in ids.iter().zip(docs) {
        let Some(doc) = doc else { continue };
        let u = urgency(&Transaction::from_source(id, &doc.source), now, &p.config);
        stuck += u64::from(u.is_stuck());
        investigate += u64::from(u.needs_investigation());
    }
    Ok((stuck, investigate))
}

/// Transactions in no state or one this tool does not know (a count).
pub(crate) async fn odd_count(p: &Protocol) -> Result<u64> {
    let d = p.discovery().await?;
    let odd = Queries::new(&d.fields).odd_states();
    p.cluster().count(&p.config.indices.transactions, odd).await
}

/// What the causes of `stuck` (every stuck transaction) are judged on,
/// given `locks` (every lock) and the `healing` verdict: the write check's
/// refusal is judged on discovery.
pub(crate) async fn cause_reading<'a>(
    p: &Protocol,
    stuck: impl Iterator<Item = &'a Transaction>,
    locks: Vec<LockView>,
    healing: Healing,
) -> Result<CauseReading> {
    let d = p.discovery().await?;
    Ok(CauseReading {
        locks,
        healing,
        stuck_by_account: verdict::stuck_by_account(stuck),
        writes: super::read::writes::refusal(&p.config.indices, &d),
    })
}

/// Judges the cause of each of `stuck` on `reading` at `now`.
pub(crate) fn judge_causes<'a>(
    stuck: impl Iterator<Item = &'a mut StuckOne>,
    reading: &CauseReading,
    now: DateTime<Utc>,
    window: std::time::Duration,
) {
    for s in stuck {
        s.cause = reading.cause_of(&s.transaction, now, window);
    }
}

/// The healing verdict of a `check` at `now` over its `stuck` transactions
/// (oldest first), and the count it gives.
pub(crate) async fn healing(
    p: &Protocol,
    now: DateTime<Utc>,
    stuck: &[StuckOne],
) -> Result<(Healing, u64)> {
    let oldest = stuck
        .iter()
        .filter_map(|s| s.transaction.modification_time)
        .min();
    let e = healing_evidence(p, now, stuck.len() as u64, oldest).await?;
    let v = verdict::judge(&e, now, p.config.recovery_window);
    Ok((v, u64::from(v.is_alarm())))
}

/// The healing evidence `check` judges on at `now`, given what it
/// counted (`stuck`, the oldest dated one's `oldest_stuck`): the
/// evidence's searches in one `_msearch` (none of them fails the check:
/// what cannot be read is unknown). A one-shot reading has no previous.
async fn healing_evidence(
    p: &Protocol,
    now: DateTime<Utc>,
    stuck: u64,
    oldest_stuck: Option<DateTime<Utc>>,
) -> Result<verdict::HealingEvidence> {
    let d = p.discovery().await?;
    let config = p.config();
    let sources = healing_sources(config);
    // One reading: nothing kept from an earlier one.
    let mut kept = verdict::evidence::FinishedMarks::default();
    let named = verdict::evidence::searches(&d.fields, &sources, now, &mut kept);
    let bodies: Vec<(String, serde_json::Value)> = named
        .iter()
        .map(|(_, index, body)| (index.clone(), body.clone()))
        .collect();
    let answers = match bodies.is_empty() {
        true => Vec::new(),
        false => p.cluster().msearch(&bodies).await?,
    };
    let answers = named.iter().map(|(s, _, _)| *s).zip(answers).collect();
    let a = verdict::evidence::read(answers, file_marks(config, now), &sources, &mut kept);
    Ok(verdict::HealingEvidence {
        stuck: Some(stuck),
        oldest_stuck,
        recoveries: a.recoveries,
        heartbeat: a.heartbeat,
        previous: None,
    })
}
