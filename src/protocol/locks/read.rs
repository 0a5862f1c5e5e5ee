//! Locks through the one read side: every lock query is built by
//! [`crate::protocol::read::queries`] from the resolved `owner`/`created_at` fields and paged
//! by [`crate::protocol::read::scan`], so the `locks` command, the audit and the sweep of
//! abandoned locks see the same shard coverage and total as the other reads
//! ("partial: N of M shards failed", "600 of 10 000").

use super::LockInfo;
use super::LockView;
use crate::error::{Error, Result};
use crate::protocol::read::by_id::by_ids;
use crate::protocol::read::scan::{scan, Scan, ScanSummary};
use crate::protocol::read::Queries;
use crate::protocol::transaction::Transaction;
use crate::protocol::Protocol;
use serde_json::json;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Locks found by a scan of the locks index, with what the scan saw.
#[derive(Debug, Clone, Default)]
pub struct LockListing {
    /// The locks, oldest first, each judged against its owner.
    pub locks: Vec<LockView>,
    /// Total, coverage (of the locks scan and of the owners' reads).
    pub summary: ScanSummary,
}

impl Protocol {
    /// Every lock, oldest first, with staleness (one scan plus one read of
    /// the owners by id); with `complete_only`, stops before a page some
    /// shards failed to fill (the summary's coverage says so). A missing
    /// locks index is an empty listing.
    pub async fn list_locks_with(&self, complete_only: bool) -> Result<LockListing> {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let what = Scan {
            query: json!({"match_all": {}}),
            sort: q.locks_sort(),
            aggs: None,
            complete_only,
        };
        let mut infos: Vec<LockInfo> = Vec::new();
        let scanned = scan(self.cluster(), &self.config.indices.locks, what, |hits| {
            infos.extend(hits.iter().map(|h| LockInfo::from_source(&h.id, &h.source)));
            true
        })
        .await;
        let mut summary = match scanned {
            Ok(s) => s,
            Err(Error::IndexMissing(_)) => return Ok(LockListing::default()),
            Err(e) => return Err(e),
        };
        let locks = self.judge_locks(infos, &mut summary.coverage).await?;
        Ok(LockListing { locks, summary })
    }

    /// The locks on `resources` read again by id (realtime: one `_mget`),
    /// each judged against its owner as the listing judges them (one more
    /// read of the owners by id, and their heartbeats): the audit confirms
    /// the stale locks of a listing with a few requests however many they
    /// are. Resources no longer locked are left out.
    pub async fn lock_views(&self, resources: &[String]) -> Result<Vec<LockView>> {
        if resources.is_empty() {
            return Ok(Vec::new());
        }
        let d = self.discovery().await?;
        let by_search = d.locks.id_problem().is_some();
        let mut coverage = crate::protocol::read::Coverage::default();
        let ix = &self.config.indices.locks;
        let docs = by_ids(self.cluster(), ix, resources, by_search, &mut coverage).await?;
        let infos: Vec<LockInfo> = resources
            .iter()
            .zip(docs)
            .filter_map(|(id, doc)| Some(LockInfo::from_source(id, &doc?)))
            .collect();
        self.judge_locks(infos, &mut coverage).await
    }

    /// Judges `infos` against their owners (read by id) and their holders'
    /// heartbeats, oldest first.
    async fn judge_locks(
        &self,
        infos: Vec<LockInfo>,
        coverage: &mut crate::protocol::read::Coverage,
    ) -> Result<Vec<LockView>> {
        let d = self.discovery().await?;
        let owners: Vec<String> = infos
            .iter()
            .filter_map(|i| i.owner.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let by_search = d.transactions.id_problem().is_some();
        let ix = &self.config.indices.transactions;
        let found: HashMap<String, Transaction> =
            match by_ids(self.cluster(), ix, &owners, by_search, coverage).await {
                Ok(docs) => owners
                    .iter()
                    .zip(docs)
                    .filter_map(|(id, d)| Some((id.clone(), Transaction::from_source(id, &d?))))
                    .collect(),
                Err(Error::IndexMissing(_)) => HashMap::new(),
                Err(e) => return Err(e),
            };
        let beats = self.heartbeats(&holders_to_ask(&infos, &found)).await?;
        let now = self.now().await;
        let mut locks: Vec<LockView> = infos
            .into_iter()
            .map(|info| LockView::judge(info, &found, &beats, now, &self.config))
            .collect();
        locks.sort_by_key(|v| v.info.created_at);
        Ok(locks)
    }

    /// Ids of the lock documents whose `owner` is `txn`, by a search on the
    /// resolved `owner` field (the exact one, or a phrase on an analysed
    /// one), with the scan's summary (a partial one may have missed some).
    pub async fn lock_ids_owned_by(&self, txn: &str) -> Result<(Vec<String>, ScanSummary)> {
        let (found, summary) = self.scan_locks_owned_by(&[txn.to_string()]).await?;
        Ok((
            found.into_iter().map(|(resource, _)| resource).collect(),
            summary,
        ))
    }

    /// The resources locked by each of `owners` (one search; a partial one
    /// is logged, and may have missed some).
    pub async fn locks_owned_by_any(
        &self,
        owners: &[String],
    ) -> Result<HashMap<String, Vec<String>>> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        if owners.is_empty() {
            return Ok(out);
        }
        let (found, summary) = self.scan_locks_owned_by(owners).await?;
        if let Some(partial) = summary.coverage.describe() {
            tracing::warn!(%partial, "the search for the transactions' locks was partial");
        }
        for (resource, owner) in found {
            out.entry(owner).or_default().push(resource);
        }
        Ok(out)
    }

    /// `(resource, owner)` of the locks whose `owner` is one of `owners`,
    /// by a search on the resolved `owner` field.
    async fn scan_locks_owned_by(
        &self,
        owners: &[String],
    ) -> Result<(Vec<(String, String)>, ScanSummary)> {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let what = Scan::new(q.locks_owned_by(owners), Vec::new());
        let wanted: HashSet<&String> = owners.iter().collect();
        let mut found = Vec::new();
        let summary = scan(self.cluster(), &self.config.indices.locks, what, |hits| {
            found.extend(hits.into_iter().filter_map(|h| {
                let owner = LockInfo::from_source(&h.id, &h.source).owner?;
                wanted.contains(&owner).then_some((h.id, owner))
            }));
            true
        })
        .await?;
        Ok((found, summary))
    }
}

/// The holders whose heartbeat the judgement needs: those of locks whose
/// `owner` is not a transaction found in `owners`.
pub fn holders_to_ask(infos: &[LockInfo], owners: &HashMap<String, Transaction>) -> Vec<String> {
    infos
        .iter()
        .filter(|i| i.owner.as_ref().is_none_or(|o| !owners.contains_key(o)))
        .filter_map(|i| i.holder_id().map(str::to_string))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The `locks` command's count line: "N locks" or, when fewer were read than
/// the index holds (a partial view), "N of T locks".
pub fn count_text(listing: &LockListing) -> Option<String> {
    let seen = listing.locks.len() as u64;
    (listing.summary.total > seen)
        .then(|| format!("{seen} of {} locks read", listing.summary.total))
}
