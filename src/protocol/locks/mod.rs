//! The lock concern in one place: lock documents in every shape
//! deployments use (see [`shape`]): this tool's (`owner` = transaction id,
//! `process_id`, `created_at`, `expires_at`), Kestra's (`{category, id,
//! owner: <instance>, createdAt}`), the definitive guide's global (`{}`),
//! document (`process_id`) and tree locks (`lock_type: exclusive`, or
//! `shared` with `lock_count`), and unknown ones.
//!
//! - Read tolerantly ([`LockInfo`]), judged on evidence in [`judge`], with
//!   the holders' heartbeats of [`liveness`] when configured; a lock with
//!   its judgement is a [`LockView`].
//! - [`acquire`]: taking a lock (and taking over a stale one), a
//!   transfer's locks, a lock's JSON row.
//! - [`release`]: releasing (by the owner, by an operator, a transaction's
//!   locks when it ends) and the sweep of abandoned locks.
//! - [`read`]: every lock through the one read side (scans, coverage).
//!
//! The acts on locks are methods of [`Protocol`], all in this file's one
//! `impl` block (with the holders' heartbeats as the handle reads them), so
//! every caller reaches them the same way as the other concerns'; the files
//! above hold the mechanics as free functions taking the `Protocol`.
//!
//! [`Protocol`]: crate::protocol::Protocol

pub mod acquire;
mod info;
pub mod judge;
pub mod liveness;
pub mod read;
pub mod release;
pub mod shape;
mod view;

pub use acquire::{lock_json, AcquireOutcome};
pub use info::LockInfo;
pub use judge::{Owner, StaleReason, Staleness, UnknownReason};
pub use liveness::{Heartbeat, Heartbeats, LivenessSource};
pub use read::LockListing;
pub use release::{
    release_outcome, ReleaseOutcome, ReleaseRefusal, Sweep, SweptLock, TxnLocksRelease,
};
pub use shape::{LockShape, ReleaseAction, TreeLock};
pub use view::LockView;

use crate::cluster::CreateOutcome;
use crate::error::{Error, Result};
use crate::protocol::read::by_id::by_ids;
use crate::protocol::read::scan::{scan, Scan, ScanSummary};
use crate::protocol::read::Queries;
use crate::protocol::Protocol;
use acquire::{judge_lock, lock_doc, ACQUIRE_ATTEMPTS};
use liveness::{read_heartbeats, LivenessReport, MAX_HEARTBEATS};
use read::{judge_locks, read_lock, scan_locks_owned_by};
use release::{release_checked, release_unchanged};
use serde_json::{json, Map};
use std::collections::{BTreeSet, HashMap};

#[cfg(test)]
mod tests;

/// The lock concern on the handle: taking, reading, judging and releasing
/// locks, and the holders' heartbeats. The mechanics are free functions
/// in this module's files.
impl Protocol {
    /// Tries once to take the lock on `resource` for transaction `owner`:
    /// a create; on a 409 or a lost answer, a read of who holds it (it may be
    /// us, when the lost create landed); a stale holder's lock is deleted
    /// conditionally on the version read and the create tried again.
    pub async fn acquire_lock(&self, resource: &str, owner: &str) -> Result<AcquireOutcome> {
        let index = &self.config.indices.locks;
        // The lease is judged by other processes: stamp it on the cluster's clock.
        self.sync_clock().await;
        let times = self.time_fields().await?;
        let mut unknown = 0u32;
        let mut took_over: Option<(LockInfo, StaleReason)> = None;
        let mut last = LockInfo::from_source(resource, &Map::new());
        for _ in 0..ACQUIRE_ATTEMPTS {
            match self
                .cluster()
                .create(index, resource, &lock_doc(self, owner, &times))
                .await
            {
                Ok(CreateOutcome::Created) => {
                    return Ok(match took_over {
                        Some((old, why)) => AcquireOutcome::TookOver(old, why),
                        None => AcquireOutcome::Acquired,
                    })
                }
                Ok(CreateOutcome::AlreadyExists) => {}
                // Unknown outcome: the read below tells whether it is ours.
                Err(e) if e.is_transient() => {
                    unknown += 1;
                    if unknown > self.config.retry.max_unknown {
                        return Err(e);
                    }
                    tokio::time::sleep(self.config.retry.base_backoff * unknown).await;
                }
                Err(e) => return Err(e),
            }
            // Released meanwhile, or our lost create never landed: create again.
            let Some(doc) = read_lock(self, resource).await? else {
                continue;
            };
            let view = judge_lock(self, resource, &doc).await?;
            if view.info.owner.as_deref() == Some(owner) {
                return Ok(AcquireOutcome::Acquired);
            }
            let Staleness::Stale(why) = view.staleness else {
                return Ok(AcquireOutcome::Held(view.info));
            };
            tracing::info!(resource, holder = %view.info.holder_label(), %why, "taking over a stale lock");
            // Whatever the answer (deleted, gone, changed, unknown), the
            // create decides: it only succeeds on an absent lock.
            match self
                .cluster()
                .delete_if_routed(
                    index,
                    resource,
                    (doc.seq_no, doc.primary_term),
                    doc.routing.as_deref(),
                )
                .await
            {
                Ok(_) => {}
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e),
            }
            last = view.info.clone();
            took_over = Some((view.info, why));
        }
        Ok(AcquireOutcome::Held(last))
    }

    /// One lock with its owner's state and staleness.
    pub async fn lock_view(&self, resource: &str) -> Result<Option<LockView>> {
        match read_lock(self, resource).await? {
            Some(doc) => Ok(Some(judge_lock(self, resource, &doc).await?)),
            None => Ok(None),
        }
    }

    /// Every lock, oldest first, with staleness, through the read side;
    /// partial pages included. Callers that must know whether some shards
    /// failed use [`Protocol::list_locks_with`].
    pub async fn list_locks(&self) -> Result<Vec<LockView>> {
        Ok(self.list_locks_with(false).await?.locks)
    }

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
        let locks = judge_locks(self, infos, &mut summary.coverage).await?;
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
        judge_locks(self, infos, &mut coverage).await
    }

    /// Ids of the lock documents whose `owner` is `txn`, by a search on the
    /// resolved `owner` field (the exact one, or a phrase on an analysed
    /// one), with the scan's summary (a partial one may have missed some).
    pub async fn lock_ids_owned_by(&self, txn: &str) -> Result<(Vec<String>, ScanSummary)> {
        let (found, summary) = scan_locks_owned_by(self, &[txn.to_string()]).await?;
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
        let (found, summary) = scan_locks_owned_by(self, owners).await?;
        if let Some(partial) = summary.coverage.describe() {
            tracing::warn!(%partial, "the search for the transactions' locks was partial");
        }
        for (resource, owner) in found {
            out.entry(owner).or_default().push(resource);
        }
        Ok(out)
    }

    /// The latest heartbeat of each of `holders` in the configured liveness
    /// source (empty when none is configured).
    pub async fn heartbeats(&self, holders: &[String]) -> Result<Heartbeats> {
        match &self.config.liveness {
            Some(source) => read_heartbeats(self.cluster(), source, holders).await,
            None => Ok(Heartbeats::new()),
        }
    }

    /// Every heartbeat in the configured source, latest per instance (for
    /// `doctor`); `None` when no source is configured.
    pub async fn all_heartbeats(&self) -> Option<Result<Heartbeats>> {
        let source = self.config.liveness.as_ref()?;
        let body = json!({"size": MAX_HEARTBEATS, "query": {"match_all": {}}});
        Some(match self.cluster().search(&source.index, body).await {
            Ok(answer) => crate::cluster::hits(&answer)
                .map(|hits| source.latest(hits.into_iter().map(|h| h.source))),
            Err(e) => Err(e),
        })
    }

    /// What the configured liveness source concludes now: its instances
    /// alive and dead, and how the locks held by processes are judged by
    /// it; `None` when none is configured.
    pub async fn liveness_report(&self) -> Option<LivenessReport> {
        let source = self.config.liveness.as_ref()?;
        let mut r = LivenessReport {
            source: source.to_string(),
            error: None,
            instances_alive: 0,
            instances_dead: 0,
            locks_live: 0,
            locks_dead: 0,
            locks_without_heartbeat: 0,
        };
        let beats = match self.all_heartbeats().await? {
            Ok(b) => b,
            Err(e) => {
                r.error = Some(e.to_string());
                return Some(r);
            }
        };
        let now = self.now().await;
        let timeout = chrono::Duration::from_std(source.timeout).unwrap_or(chrono::Duration::MAX);
        r.instances_dead = beats.values().filter(|at| now - **at > timeout).count();
        r.instances_alive = beats.len() - r.instances_dead;
        let locks = match self.list_locks().await {
            Ok(l) => l,
            Err(e) => {
                r.error = Some(format!("the locks could not be listed: {e}"));
                return Some(r);
            }
        };
        for l in locks.iter().filter(|l| l.owner_state.is_none()) {
            match &l.staleness {
                Staleness::Live if l.info.holder_id().is_some() => r.locks_live += 1,
                Staleness::Stale(StaleReason::HolderDead { .. }) => r.locks_dead += 1,
                Staleness::Unknown(UnknownReason::NoHeartbeat { .. }) => {
                    r.locks_without_heartbeat += 1
                }
                _ => {}
            }
        }
        Some(r)
    }

    /// Releases `resource` if (and only if) transaction `owner` holds it. The
    /// delete is conditional on the `_seq_no` read when ownership was checked,
    /// so a lock re-taken meanwhile by someone else is never deleted.
    // A release refusal is returned once per release, never in a hot loop.
    #[allow(clippy::result_large_err)]
    pub async fn release_owned(&self, resource: &str, owner: &str) -> Result<ReleaseOutcome> {
        release_checked(self, resource, |info| {
            if info.owner.as_deref() == Some(owner) {
                Ok(())
            } else {
                Err(ReleaseRefusal::NotOwner {
                    holder: info.holder_label(),
                    owner: owner.to_string(),
                })
            }
        })
        .await
    }

    /// Operator release of `resource`: without `force`, only a stale lock.
    /// On a deployment without a locks index nothing is held.
    pub async fn release_lock(&self, resource: &str, force: bool) -> Result<ReleaseOutcome> {
        if self.discovery().await?.locks.is_absent() {
            return Ok(ReleaseOutcome::NotHeld);
        }
        let Some(view) = self.lock_view(resource).await? else {
            return Ok(ReleaseOutcome::NotHeld);
        };
        if !force && !view.staleness.is_stale() {
            return Ok(ReleaseOutcome::Refused(ReleaseRefusal::not_stale(&view)));
        }
        release_unchanged(self, &view.info).await
    }

    /// Operator release of every lock owned by transaction `txn`: those found
    /// by a search on `owner` plus the transaction's two accounts (read by id,
    /// so a lock not yet searchable is not missed). Without `force`, only when
    /// they are stale. A partial search (some shards failed) is acted on and
    /// logged: see [`Self::release_transaction_locks_allowing`] to refuse it
    /// or to be told.
    pub async fn release_transaction_locks(
        &self,
        txn: &str,
        force: bool,
    ) -> Result<Vec<(String, ReleaseOutcome)>> {
        let r = self
            .release_transaction_locks_allowing(txn, force, true)
            .await?;
        if let Some(partial) = r.coverage.describe() {
            tracing::warn!(txn, %partial, "the search for the transaction's locks was partial");
        }
        Ok(r.released)
    }

    /// [`Self::release_transaction_locks`]; a partial search for the locks
    /// `txn` owns is refused before any release unless `allow_partial`, with
    /// which the locks found (and the two accounts' locks, read by id) are
    /// released and the result says the search was partial.
    pub async fn release_transaction_locks_allowing(
        &self,
        txn: &str,
        force: bool,
        allow_partial: bool,
    ) -> Result<TxnLocksRelease> {
        let mut resources: BTreeSet<String> = BTreeSet::new();
        if let Some((t, _)) = self.read_transaction(txn).await? {
            resources.extend(t.src.clone());
            resources.extend(t.dest.clone());
        }
        let coverage = match self.lock_ids_owned_by(txn).await {
            Ok((found, summary)) => {
                summary
                    .coverage
                    .require_complete(allow_partial, "release the transaction's locks")?;
                resources.extend(found);
                summary.coverage
            }
            Err(Error::IndexMissing(_)) => return Ok(TxnLocksRelease::default()),
            Err(e) => return Err(e),
        };
        let mut released = Vec::new();
        for resource in resources {
            let Some(view) = self.lock_view(&resource).await? else {
                continue;
            };
            if view.info.owner.as_deref() != Some(txn) {
                continue;
            }
            let outcome = if !force && !view.staleness.is_stale() {
                ReleaseOutcome::Refused(ReleaseRefusal::not_stale(&view))
            } else {
                self.release_owned(&resource, txn).await?
            };
            released.push((resource, outcome));
        }
        Ok(TxnLocksRelease { released, coverage })
    }

    /// Releases every lock stale on evidence whose owner is not an
    /// in-flight transaction ([`LockView::is_sweepable`]: those nobody will
    /// ever release: a holder that died after its last step, a release
    /// that failed, a lease run out, a holder its heartbeats say is dead).
    /// Each is released only while it is exactly as judged. Locks whose
    /// owner is stuck are left to the recovery of that owner, which
    /// releases them when it ends it; unknown locks are never swept.
    /// Refuses (releasing nothing) when the listing of the locks is partial;
    /// see [`Self::release_abandoned_locks_allowing`].
    pub async fn release_abandoned_locks(&self) -> Result<Vec<SweptLock>> {
        Ok(self.release_abandoned_locks_allowing(false).await?.swept)
    }

    /// [`Self::release_abandoned_locks`]; a partial listing of the locks (some
    /// shards failed) is refused before any release unless `allow_partial`,
    /// with which the locks that were listed are swept (each re-read and
    /// released by id) and the sweep says the listing was partial.
    pub async fn release_abandoned_locks_allowing(&self, allow_partial: bool) -> Result<Sweep> {
        let listing = match self.list_locks_with(!allow_partial).await {
            Ok(l) => l,
            Err(Error::IndexMissing(_)) => return Ok(Sweep::default()),
            Err(e) => return Err(e),
        };
        let coverage = listing.summary.coverage;
        coverage.require_complete(allow_partial, "sweep abandoned locks")?;
        let mut out = Vec::new();
        for view in listing.locks.into_iter().filter(LockView::is_sweepable) {
            // Judged again by id: the search may be behind.
            let Some(fresh) = self.lock_view(&view.info.resource).await? else {
                continue;
            };
            if fresh.info != view.info || !fresh.is_sweepable() {
                continue;
            }
            let outcome = release_unchanged(self, &fresh.info).await?;
            if outcome != ReleaseOutcome::NotHeld {
                out.push(SweptLock {
                    view: fresh,
                    outcome,
                });
            }
        }
        Ok(Sweep {
            swept: out,
            coverage,
        })
    }
}
