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

use super::read::read_lock;
use super::ReleaseAction;
use super::{LockInfo, LockView, Staleness};
use crate::cluster::{Changes, DeleteOutcome, VersionedDoc, WriteOutcome};
use crate::error::{Error, Result};
use crate::protocol::read::Coverage;
use crate::protocol::report::{ProcedureReport, StepResult};
use crate::protocol::trail::{ActOutcome, TrailStep};
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

    pub(super) fn not_stale(view: &LockView) -> ReleaseRefusal {
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

    /// This release as a step of an audit record (`locks_index/resource`).
    pub fn trail_step(&self, locks_index: &str, txn: &str, resource: &str) -> TrailStep {
        let (result, detail) = match self {
            ReleaseOutcome::Released | ReleaseOutcome::Decremented { .. } => {
                ("updated", self.to_string())
            }
            ReleaseOutcome::NotHeld => ("noop", "not held".to_string()),
            ReleaseOutcome::Refused(why) => ("refused", why.to_string()),
        };
        TrailStep {
            txn: txn.into(),
            label: "release lock".into(),
            target: format!("{locks_index}/{resource}"),
            result: result.into(),
            detail,
            wrote_state: None,
            receipt: None,
        }
    }
}

/// The outcome and summary of releasing locks (`failed`: the release
/// itself failed before any outcome).
pub fn release_outcome(
    outcomes: &[(String, ReleaseOutcome)],
    failed: bool,
) -> (ActOutcome, String) {
    let any = |f: fn(&ReleaseOutcome) -> bool| outcomes.iter().any(|(_, o)| f(o));
    let outcome = if failed {
        ActOutcome::Failed
    } else if any(|o| matches!(o, ReleaseOutcome::Refused(_))) {
        ActOutcome::Refused
    } else if any(ReleaseOutcome::released) {
        ActOutcome::Completed
    } else {
        ActOutcome::NothingToDo
    };
    let summary = outcomes
        .iter()
        .map(|(r, o)| format!("{r}: {o}"))
        .collect::<Vec<_>>()
        .join(", ");
    let summary = match (summary.is_empty(), failed) {
        (false, _) => summary,
        (true, true) => "failed before releasing anything".to_string(),
        (true, false) => "no locks held".to_string(),
    };
    (outcome, summary)
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

/// Releases every lock a transfer holds: those on its two accounts
/// (read by id, so a lock not yet searchable is not missed) and any
/// other resource it owns (an invoice, an order: found by a search on
/// `owner`), reporting each one released or failed. Called on every
/// path that ends a transaction.
pub(crate) async fn release_transfer_locks(
    p: &Protocol,
    t: &Transfer,
    report: &mut ProcedureReport,
) {
    let accounts = [t.src.clone(), t.dest.clone()].into_iter().collect();
    release_locks_of(p, &t.id, accounts, report).await;
}

/// [`Self::release_transfer_locks`] for a terminal transaction read as
/// it is (its accounts may be missing from a malformed document).
pub(crate) async fn release_leftover_locks(
    p: &Protocol,
    txn: &Transaction,
    report: &mut ProcedureReport,
) {
    let accounts = [txn.src.clone(), txn.dest.clone()]
        .into_iter()
        .flatten()
        .collect();
    release_locks_of(p, &txn.id, accounts, report).await;
}

/// Releases the locks `owner` holds on `accounts` and every other lock
/// a search on `owner` finds; a failed search is reported as a failed
/// release (a lock may be left behind), not passed over.
async fn release_locks_of(
    p: &Protocol,
    owner: &str,
    mut resources: BTreeSet<String>,
    report: &mut ProcedureReport,
) {
    match locks_owned_by(p, owner).await {
        Ok(found) => resources.extend(found),
        Err(Error::IndexMissing(_)) => return,
        Err(e) => {
            let target = format!("{}/*", p.config.indices.locks);
            record_lock(p, report, owner, target, StepResult::Error(e.to_string()));
        }
    }
    release_owned_reported(p, owner, resources, report).await;
}

/// Releases each of `resources` `owner` holds, reporting each release
/// (or its failure) as a step of `report`.
pub(crate) async fn release_owned_reported(
    p: &Protocol,
    owner: &str,
    resources: BTreeSet<String>,
    report: &mut ProcedureReport,
) {
    for resource in resources {
        let target = format!("{}/{resource}", p.config.indices.locks);
        let result = match p.release_owned(&resource, owner).await {
            Ok(ReleaseOutcome::NotHeld) | Ok(ReleaseOutcome::Refused(_)) => continue,
            Ok(ReleaseOutcome::Released | ReleaseOutcome::Decremented { .. }) => {
                StepResult::Updated(crate::protocol::decide::Effect::LockReleased)
            }
            Err(Error::IndexMissing(_)) => return,
            Err(e) => StepResult::Error(e.to_string()),
        };
        record_lock(p, report, owner, target, result);
    }
}

fn record_lock(
    p: &Protocol,
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
    p.notify(&r);
    report.push(r);
}

/// Ids of the lock documents whose `owner` is `txn` (by a search through
/// the read side). A partial search may miss some: it is logged, and the
/// callers also read the transaction's accounts by id.
async fn locks_owned_by(p: &Protocol, txn: &str) -> Result<Vec<String>> {
    let (ids, summary) = p.lock_ids_owned_by(txn).await?;
    if let Some(partial) = summary.coverage.describe() {
        tracing::warn!(txn, %partial, "the search for the transaction's locks was partial");
    }
    Ok(ids)
}

/// Deletes the lock only while it is exactly as judged.
pub(super) async fn release_unchanged(p: &Protocol, judged: &LockInfo) -> Result<ReleaseOutcome> {
    release_checked(p, &judged.resource, |info| {
        if info == judged {
            Ok(())
        } else {
            Err(ReleaseRefusal::Changed)
        }
    })
    .await
}

pub(super) async fn release_checked<F>(
    p: &Protocol,
    resource: &str,
    mut allowed: F,
) -> Result<ReleaseOutcome>
where
    F: FnMut(&LockInfo) -> std::result::Result<(), ReleaseRefusal>,
{
    let (mut unknown, mut conflicts) = (0u32, 0usize);
    loop {
        let Some(doc) = read_lock(p, resource).await? else {
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
        match release_as_shaped(p, &info, &doc).await {
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
            Err(e) if e.is_transient() && unknown < p.config.retry.max_unknown => {
                unknown += 1;
                tokio::time::sleep(p.config.retry.base_backoff * unknown).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// One release of `info` (read as `doc`) by its shape's protocol, both
/// conditional on the version read: a delete, or a shared tree lock's
/// `lock_count` decremented. `None`: the lock changed meanwhile.
async fn release_as_shaped(
    p: &Protocol,
    info: &LockInfo,
    doc: &VersionedDoc,
) -> Result<Option<ReleaseOutcome>> {
    let index = &p.config.indices.locks;
    let at = (doc.seq_no, doc.primary_term);
    let routing = doc.routing.as_deref();
    match info.shape.release_action() {
        ReleaseAction::Delete => Ok(
            match p
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
            let written = p
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
