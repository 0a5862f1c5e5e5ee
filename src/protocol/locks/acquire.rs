//! Taking locks: acquire with `op_type=create` (a 409 means held), taking
//! over a stale lock safely (a delete conditional on the `_seq_no` judged
//! stale, then a create), resolving a lost create answer by reading who
//! holds the lock, the locks of a transfer, and reading locks with their
//! staleness. Releasing is in [`release`](super::release).

use super::release::release_transfer_locks;
use super::{LockInfo, LockView, StaleReason};
use crate::cluster::VersionedDoc;
use crate::error::Result;
use crate::protocol::read::TimeFields;
use crate::protocol::report::{ProcedureReport, ReachedBy, StepResult, Verdict};
use crate::protocol::steps::{ProcedureRefusal, Step};
use crate::protocol::time::format_timestamp;
use crate::protocol::transaction::{Transfer, TxnState};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// Outcome of trying to take a lock.
#[derive(Debug, Clone, PartialEq)]
pub enum AcquireOutcome {
    /// The lock document was created for us (or already was ours).
    Acquired,
    /// A stale lock was deleted (exactly the version judged stale) and the
    /// lock created for us; the old lock and why it was stale.
    TookOver(LockInfo, StaleReason),
    /// Someone else holds it.
    Held(LockInfo),
}

/// How many times an acquire re-creates after the lock changed under it.
pub(super) const ACQUIRE_ATTEMPTS: usize = 5;

/// The lock's JSON for `locks --json`.
pub fn lock_json(v: &LockView, now: DateTime<Utc>) -> Value {
    json!({
        "resource": v.info.resource,
        "shape": v.info.shape.label(),
        "owner": v.info.owner,
        "process_id": v.info.process_id,
        "holder": v.info.holder_label(),
        "lock_type": v.info.lock_type,
        "lock_count": v.info.lock_count,
        "created_at": v.info.created_at.map(format_timestamp),
        "expires_at": v.info.expires_at.map(format_timestamp),
        "age_seconds": v.info.age_seconds(now),
        "owner_state": v.owner_state.as_ref().map(|s| s.as_str().to_string()),
        "stale": v.staleness.is_stale(),
        "staleness": v.staleness.to_string(),
        "problems": v.info.problems,
    })
}

/// A lock document for `owner`, stamped on the cluster's clock (the
/// lease is judged by other processes).
pub(super) fn lock_doc(p: &Protocol, owner: &str, times: &TimeFields) -> Map<String, Value> {
    let now = p.cluster().now();
    let lease = chrono::Duration::from_std(p.config.lock_lease).unwrap_or(chrono::Duration::MAX);
    let doc = json!({
        "owner": owner,
        "process_id": p.holder,
        "created_at": times.lock_created.stamp(now),
        "expires_at": times.lock_expires.stamp(now + lease),
    });
    doc.as_object().cloned().unwrap_or_default()
}

/// Judges a lock document just read: its owner is read by id.
pub(super) async fn judge_lock(
    p: &Protocol,
    resource: &str,
    doc: &VersionedDoc,
) -> Result<LockView> {
    let info = LockInfo::from_source(resource, &doc.source);
    let mut owners = HashMap::new();
    if let Some(o) = &info.owner {
        if let Some((t, _)) = p.read_transaction(o).await? {
            owners.insert(o.clone(), t);
        }
    }
    let holders: Vec<String> = info
        .holder_id()
        .filter(|_| owners.is_empty())
        .map(str::to_string)
        .into_iter()
        .collect();
    let beats = p.heartbeats(&holders).await?;
    Ok(LockView::judge(
        info,
        &owners,
        &beats,
        p.now().await,
        &p.config,
    ))
}

/// Takes the locks on both accounts of `t`, in a fixed (sorted) order so
/// two transfers never wait on each other in a cycle. On failure, releases
/// what it holds and rolls the still-`created` transaction back.
pub(crate) async fn lock_for_transfer(
    p: &Protocol,
    t: &Transfer,
    report: &mut ProcedureReport,
) -> std::result::Result<(), Verdict> {
    let resources: BTreeSet<&str> = [t.src.as_str(), t.dest.as_str()].into_iter().collect();
    let deadline = Instant::now() + p.config.lock_wait;
    for resource in resources {
        let target = format!("{}/{resource}", p.config.indices.locks);
        loop {
            match p.acquire_lock(resource, &t.id).await {
                Ok(AcquireOutcome::Acquired) => {}
                Ok(AcquireOutcome::TookOver(old, why)) => {
                    let result = StepResult::Updated(crate::protocol::decide::Effect::LockReleased);
                    let label = format!("take over stale lock of {} ({why})", old.holder_label());
                    p.record(report, t, None, &label, target.clone(), result);
                }
                Ok(AcquireOutcome::Held(info)) if Instant::now() < deadline => {
                    tracing::debug!(resource, holder = %info.holder_label(), "lock held; waiting");
                    tokio::time::sleep(Duration::from_millis(rand::random_range(10..60))).await;
                    continue;
                }
                Ok(AcquireOutcome::Held(info)) => {
                    let refusal = ProcedureRefusal::LockHeld {
                        resource: resource.to_string(),
                        holder: info.holder_label(),
                    };
                    let why = Verdict::Refused(refusal);
                    return Err(abandon_transfer(p, t, why, report).await);
                }
                Err(e) => return Err(abandon_transfer(p, t, Verdict::Failed(e), report).await),
            }
            let result = StepResult::Updated(crate::protocol::decide::Effect::LockAcquired);
            p.record(report, t, None, "acquire lock", target.clone(), result);
            break;
        }
    }
    Ok(())
}

/// The locks could not be taken (`why`: a lock stayed held, or the
/// cluster failed): releases whatever this transfer holds (a lock whose
/// create answer was lost included) and cancels the transaction. The
/// verdict says what really happened: `why` when this process cancelled
/// it, else where another process took the transaction.
async fn abandon_transfer(
    p: &Protocol,
    t: &Transfer,
    why: Verdict,
    report: &mut ProcedureReport,
) -> Verdict {
    release_transfer_locks(p, t, report).await;
    let step = Step::CancelCreated;
    let target = format!("{}/{}", p.config.indices.transactions, t.id);
    let outcome = p.run_step(t, step).await;
    let result = match &outcome {
        Ok(ex) => StepResult::from(&ex.outcome),
        Err(e) => StepResult::Error(e.to_string()),
    };
    p.record(report, t, Some(step), step.label(), target, result);
    match outcome {
        // The cancel failed as well: the transaction stays `created`.
        Err(e) => match why {
            Verdict::Failed(first) => Verdict::Failed(first),
            _ => Verdict::Failed(e),
        },
        Ok(_) => match report.reached.clone() {
            Some((TxnState::RolledBack, ReachedBy::ThisProcess)) | None => why,
            Some((s, _)) if s.is_terminal() => Verdict::EndedElsewhere(s),
            Some((s, _)) => {
                let cause = match &why {
                    Verdict::Refused(ProcedureRefusal::LockHeld { resource, holder }) => {
                        format!("resource `{resource}` is locked by {holder}")
                    }
                    Verdict::Failed(e) => format!("taking the locks failed: {e}"),
                    other => other.to_string(),
                };
                Verdict::Stopped(format!(
                    "{cause}, and another process had already moved the transaction on (now {s}): it is left to that process or to recovery"
                ))
            }
        },
    }
}
