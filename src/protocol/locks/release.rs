//! Releasing locks: only by the owner (a delete conditional on the
//! `_seq_no` read when ownership was checked), by an operator (stale locks,
//! or any with force), every lock a transaction owns when it ends (its
//! accounts' and any other resource's, found by owner), and every lock
//! stale on evidence whose owner is not in flight (what `recover
//! --all-stuck` sweeps; never an unknown one). Each release follows the
//! lock's shape ([`super::ReleaseAction`]): a delete, or a shared
//! tree lock's count decremented. A read is retried by the transport within
//! the read budget, once (never again here); a write with an unknown outcome
//! is re-read and judged again. A release never silently gives up: one that
//! fails is reported as a failed step and its lock left to the next recovery.

// A release refusal is returned once per release, never in a hot loop.
#![allow(clippy::result_large_err)]

use super::ReleaseAction;
use super::{LockInfo, LockView, Staleness};
use crate::cluster::{Changes, DeleteOutcome, VersionedDoc, WriteOutcome};
use crate::error::{Error, Result};
use crate::protocol::read::Coverage;
use crate::protocol::report::{ProcedureReport, StepResult};
use crate::protocol::transaction::{Transaction, Transfer, TxnState};

use crate::protocol::Protocol;
use std::collections::BTreeSet;

/// Outcome of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseOutcome {
    /// Deleted.
    Released,
    /// One holder of a shared tree lock released: its `lock_count` was
    /// decremented (conditionally on the version read) and others remain.
    Decremented {
        /// Holders left.
        left: i64,
    },
    /// There was no lock.
    NotHeld,
    /// Not released, and why (not the owner, not stale, changed meanwhile).
    Refused(ReleaseRefusal),
}

/// Why a lock was not released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseRefusal {
    /// An operator's release without force of a lock that is not stale.
    NotStale {
        /// The locked resource.
        resource: String,
        /// Who holds it, in words ([`LockInfo::holder_label`]).
        holder: String,
        /// What the lock's judgement says (live or unknown, never stale).
        staleness: Staleness,
        /// Its owner transaction and that transaction's state, when both are known.
        owner: Option<(String, TxnState)>,
    },
    /// A transaction's release of a lock someone else holds.
    NotOwner {
        /// Who holds it, in words.
        holder: String,
        /// The transaction that asked.
        owner: String,
    },
    /// The lock changed between its judgement and its release.
    Changed,
    /// Every conditional release met a newer version.
    KeptChanging,
}

impl ReleaseRefusal {
    /// Whether the words name the locked resource (a caller printing it
    /// need not name it again).
    pub fn names_resource(&self) -> bool {
        matches!(self, ReleaseRefusal::NotStale { .. })
    }

    fn not_stale(view: &LockView) -> ReleaseRefusal {
        ReleaseRefusal::NotStale {
            resource: view.info.resource.clone(),
            holder: view.info.holder_label(),
            staleness: view.staleness.clone(),
            owner: view.info.owner.clone().zip(view.owner_state.clone()),
        }
    }
}

impl std::fmt::Display for ReleaseRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReleaseRefusal::NotStale {
                resource,
                holder,
                staleness,
                owner,
            } => {
                match (staleness, owner) {
                    (Staleness::Unknown(why), _) => {
                        write!(f, "lock on `{resource}` is not known to be stale: {why}")?
                    }
                    (_, Some((o, s))) => write!(
                        f,
                        "lock on `{resource}` held by {holder} is not stale: its owner transaction `{o}` is {s} and may still be running"
                    )?,
                    (_, None) => write!(
                        f,
                        "lock on `{resource}` held by {holder} is not stale: its holder is alive"
                    )?,
                }
                f.write_str("; use --force (with --reason) to release it anyway")
            }
            ReleaseRefusal::NotOwner { holder, owner } => {
                write!(f, "held by {holder}, not by `{owner}`")
            }
            ReleaseRefusal::Changed => {
                f.write_str("the lock changed while it was being checked; look again")
            }
            ReleaseRefusal::KeptChanging => f.write_str("the lock kept changing; not released"),
        }
    }
}

impl std::fmt::Display for ReleaseOutcome {
    /// The words every report uses: `released`, `one holder released (N
    /// left)`, `not held`, `refused: why`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReleaseOutcome::Released => write!(f, "released"),
            ReleaseOutcome::Decremented { left } => {
                write!(f, "one holder released ({left} left)")
            }
            ReleaseOutcome::NotHeld => write!(f, "not held"),
            ReleaseOutcome::Refused(why) => write!(f, "refused: {why}"),
        }
    }
}

impl ReleaseOutcome {
    /// Whether it wrote (a delete or a decrement).
    pub fn released(&self) -> bool {
        matches!(
            self,
            ReleaseOutcome::Released | ReleaseOutcome::Decremented { .. }
        )
    }
}

/// A lock released (or not) by the sweep of abandoned locks.
#[derive(Debug, Clone, PartialEq)]
pub struct SweptLock {
    /// The lock as judged before the release.
    pub view: LockView,
    /// What the release did.
    pub outcome: ReleaseOutcome,
}

/// What a sweep of abandoned locks did, and how complete its listing was.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sweep {
    /// Each lock released (or refused).
    pub swept: Vec<SweptLock>,
    /// Shards behind the listing of the locks (partial only when allowed).
    pub coverage: Coverage,
}

/// What an operator release of a transaction's locks did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TxnLocksRelease {
    /// Each lock the transaction held, by resource, and what its release did.
    pub released: Vec<(String, ReleaseOutcome)>,
    /// Shards behind the search for its locks (partial only when allowed).
    pub coverage: Coverage,
}

/// How many times a release re-reads after the lock changed under it.
const RELEASE_ATTEMPTS: usize = 5;

impl Protocol {
    /// Releases every lock a transfer holds: those on its two accounts
    /// (read by id, so a lock not yet searchable is not missed) and any
    /// other resource it owns (an invoice, an order: found by a search on
    /// `owner`), reporting each one released or failed. Called on every
    /// path that ends a transaction.
    pub(crate) async fn release_transfer_locks(&self, t: &Transfer, report: &mut ProcedureReport) {
        let accounts = [t.src.clone(), t.dest.clone()].into_iter().collect();
        self.release_locks_of(&t.id, accounts, report).await;
    }

    /// [`Self::release_transfer_locks`] for a terminal transaction read as
    /// it is (its accounts may be missing from a malformed document).
    pub(crate) async fn release_leftover_locks(
        &self,
        txn: &Transaction,
        report: &mut ProcedureReport,
    ) {
        let accounts = [txn.src.clone(), txn.dest.clone()]
            .into_iter()
            .flatten()
            .collect();
        self.release_locks_of(&txn.id, accounts, report).await;
    }

    /// Releases the locks `owner` holds on `accounts` and every other lock
    /// a search on `owner` finds; a failed search is reported as a failed
    /// release (a lock may be left behind), not passed over.
    async fn release_locks_of(
        &self,
        owner: &str,
        mut resources: BTreeSet<String>,
        report: &mut ProcedureReport,
    ) {
        match self.locks_owned_by(owner).await {
            Ok(found) => resources.extend(found),
            Err(Error::IndexMissing(_)) => return,
            Err(e) => {
                let target = format!("{}/*", self.config.indices.locks);
                self.record_lock(report, owner, target, StepResult::Error(e.to_string()));
            }
        }
        self.release_owned_reported(owner, resources, report).await;
    }

    /// Releases each of `resources` `owner` holds, reporting each release
    /// (or its failure) as a step of `report`.
    pub(crate) async fn release_owned_reported(
        &self,
        owner: &str,
        resources: BTreeSet<String>,
        report: &mut ProcedureReport,
    ) {
        for resource in resources {
            let target = format!("{}/{resource}", self.config.indices.locks);
            let result = match self.release_owned(&resource, owner).await {
                Ok(ReleaseOutcome::NotHeld) | Ok(ReleaseOutcome::Refused(_)) => continue,
                Ok(ReleaseOutcome::Released | ReleaseOutcome::Decremented { .. }) => {
                    StepResult::Updated(crate::protocol::decide::Effect::LockReleased)
                }
                Err(Error::IndexMissing(_)) => return,
                Err(e) => StepResult::Error(e.to_string()),
            };
            self.record_lock(report, owner, target, result);
        }
    }

    fn record_lock(
        &self,
        report: &mut ProcedureReport,
        txn: &str,
        target: String,
        result: StepResult,
    ) {
        let r = crate::protocol::report::StepReport {
            txn: txn.to_string(),
            step: None,
            label: crate::protocol::report::RELEASE_LOCK.into(),
            target,
            result,
            receipt: None,
        };
        self.notify(&r);
        report.push(r);
    }

    /// Ids of the lock documents whose `owner` is `txn` (by a search through
    /// the read side). A partial search may miss some: it is logged, and the
    /// callers also read the transaction's accounts by id.
    async fn locks_owned_by(&self, txn: &str) -> Result<Vec<String>> {
        let (ids, summary) = self.lock_ids_owned_by(txn).await?;
        if let Some(partial) = summary.coverage.describe() {
            tracing::warn!(txn, %partial, "the search for the transaction's locks was partial");
        }
        Ok(ids)
    }

    /// Releases `resource` if (and only if) transaction `owner` holds it. The
    /// delete is conditional on the `_seq_no` read when ownership was checked,
    /// so a lock re-taken meanwhile by someone else is never deleted.
    pub async fn release_owned(&self, resource: &str, owner: &str) -> Result<ReleaseOutcome> {
        self.release_checked(resource, |info| {
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
        self.release_unchanged(&view.info).await
    }

    /// Deletes the lock only while it is exactly as judged.
    async fn release_unchanged(&self, judged: &LockInfo) -> Result<ReleaseOutcome> {
        self.release_checked(&judged.resource, |info| {
            if info == judged {
                Ok(())
            } else {
                Err(ReleaseRefusal::Changed)
            }
        })
        .await
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
            let outcome = self.release_unchanged(&fresh.info).await?;
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

    async fn release_checked<F>(&self, resource: &str, mut allowed: F) -> Result<ReleaseOutcome>
    where
        F: FnMut(&LockInfo) -> std::result::Result<(), ReleaseRefusal>,
    {
        let (mut unknown, mut conflicts) = (0u32, 0usize);
        loop {
            let Some(doc) = self.read_lock(resource).await? else {
                // Gone after a delete whose answer was lost: ours landed.
                return Ok(if unknown > 0 {
                    ReleaseOutcome::Released
                } else {
                    ReleaseOutcome::NotHeld
                });
            };
            let info = LockInfo::from_source(resource, &doc.source);
            if let Err(why) = allowed(&info) {
                return Ok(ReleaseOutcome::Refused(why));
            }
            match self.release_as_shaped(&info, &doc).await {
                Ok(Some(done)) => return Ok(done),
                Ok(None) => {
                    conflicts += 1;
                    if conflicts >= RELEASE_ATTEMPTS {
                        return Ok(ReleaseOutcome::Refused(ReleaseRefusal::KeptChanging));
                    }
                }
                // Unknown outcome: the next read tells whether it landed
                // (a decrement whose answer was lost is not retried blindly:
                // the count read next is judged again).
                Err(e) if e.is_transient() && unknown < self.config.retry.max_unknown => {
                    unknown += 1;
                    tokio::time::sleep(self.config.retry.base_backoff * unknown).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Protocol {
    /// One release of `info` (read as `doc`) by its shape's protocol, both
    /// conditional on the version read: a delete, or a shared tree lock's
    /// `lock_count` decremented. `None`: the lock changed meanwhile.
    async fn release_as_shaped(
        &self,
        info: &LockInfo,
        doc: &VersionedDoc,
    ) -> Result<Option<ReleaseOutcome>> {
        let index = &self.config.indices.locks;
        let at = (doc.seq_no, doc.primary_term);
        let routing = doc.routing.as_deref();
        match info.shape.release_action() {
            ReleaseAction::Delete => Ok(
                match self
                    .cluster()
                    .delete_if_routed(index, &info.resource, at, routing)
                    .await?
                {
                    DeleteOutcome::Deleted => Some(ReleaseOutcome::Released),
                    DeleteOutcome::NotFound => Some(ReleaseOutcome::NotHeld),
                    DeleteOutcome::Conflict => None,
                },
            ),
            ReleaseAction::Decrement { to } => {
                let changes = Changes::new().set("lock_count", to.into());
                let written = self
                    .cluster()
                    .update_if_routed(index, &info.resource, &changes, at, routing)
                    .await?;
                Ok(match written {
                    WriteOutcome::Written { .. } => Some(ReleaseOutcome::Decremented { left: to }),
                    WriteOutcome::Conflict => None,
                })
            }
        }
    }
}
