//! The few writes the seed makes by hand, each standing in for something the
//! protocol module cannot (and must not) do itself: moving timestamps into
//! the past, the leftover lock of a dead process, and the late write of an
//! unfenced worker. Every write is conditional on the `_seq_no` just read.

use super::error::DemoError;
use crate::cluster::{Changes, CreateOutcome, WriteOutcome};
use crate::protocol::account::AccountState;
use crate::protocol::time::format_timestamp;
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

/// Attempts at a read-modify-write before giving up (nobody else should be
/// writing these documents while the seed runs).
const ATTEMPTS: usize = 3;

/// Reads `index/id`, lets `change` edit its source, and writes it back only
/// if it is still at the version read.
pub(crate) async fn rewrite<F>(
    proto: &Protocol,
    index: &str,
    id: &str,
    mut change: F,
) -> Result<(), DemoError>
where
    F: FnMut(&mut Map<String, Value>) -> Result<(), DemoError>,
{
    for _ in 0..ATTEMPTS {
        let Some(doc) = proto.cluster().get(index, id).await? else {
            return Err(DemoError::Seed(format!(
                "{index}/{id} vanished while being rewritten"
            )));
        };
        let mut source = doc.source.clone();
        change(&mut source)?;
        let changes = Changes::between(&doc.source, &source);
        let at = (doc.seq_no, doc.primary_term);
        match proto
            .cluster()
            .update_if_routed(index, id, &changes, at, doc.routing.as_deref())
            .await?
        {
            WriteOutcome::Written { .. } => return Ok(()),
            WriteOutcome::Conflict => continue,
        }
    }
    Err(DemoError::Seed(format!(
        "{index}/{id} kept changing while being rewritten"
    )))
}

/// Moves a transaction into the past: rewrites only `creation_time` and
/// `modification_time`, as if its worker had stopped at `modified`.
pub(crate) async fn backdate_transaction(
    proto: &Protocol,
    id: &str,
    created: DateTime<Utc>,
    modified: DateTime<Utc>,
) -> Result<(), DemoError> {
    let index = proto.config().indices.transactions.clone();
    rewrite(proto, &index, id, |src| {
        src.insert("creation_time".into(), json!(format_timestamp(created)));
        src.insert(
            "modification_time".into(),
            json!(format_timestamp(modified)),
        );
        Ok(())
    })
    .await
}

/// Moves a lock into the past: taken at `taken`, lease running out one
/// lease later (so a lock taken longer ago than the lease has expired).
pub(crate) async fn backdate_lock(
    proto: &Protocol,
    resource: &str,
    taken: DateTime<Utc>,
) -> Result<(), DemoError> {
    let index = proto.config().indices.locks.clone();
    let expires = taken + lease(proto);
    rewrite(proto, &index, resource, |src| {
        src.insert("created_at".into(), json!(format_timestamp(taken)));
        src.insert("expires_at".into(), json!(format_timestamp(expires)));
        Ok(())
    })
    .await
}

/// Writes the lock a dead process left behind on `resource`: owned by
/// transaction `owner`, taken at `taken`, lease long expired. Written
/// directly because it represents a process that no longer exists; never
/// overwrites an existing lock (returns `false` then).
pub(crate) async fn leftover_lock(
    proto: &Protocol,
    resource: &str,
    owner: &str,
    process_id: &str,
    taken: DateTime<Utc>,
) -> Result<bool, DemoError> {
    let doc = json!({
        "owner": owner,
        "process_id": process_id,
        "created_at": format_timestamp(taken),
        "expires_at": format_timestamp(taken + lease(proto)),
    });
    let doc = doc.as_object().cloned().unwrap_or_default();
    let created = proto
        .cluster()
        .create(&proto.config().indices.locks, resource, &doc)
        .await?;
    Ok(created == CreateOutcome::Created)
}

/// The write a late, unfenced worker makes: the article's step "apply to
/// account" verbatim — add `delta` to the balance and push the id into
/// `pending_transactions` — with no look at the fencing records.
///
/// Why by hand: this tool's protocol module fences such a write (an account
/// that has settled a transaction never applies it again), so it cannot
/// produce the leftover; a deployment running the reference protocol does,
/// and the audit exists to find it.
pub(crate) async fn late_unfenced_apply(
    proto: &Protocol,
    account: &str,
    txn: &str,
    delta: i64,
) -> Result<(), DemoError> {
    let index = proto.config().indices.accounts.clone();
    rewrite(proto, &index, account, |src| {
        let mut state = AccountState::from_source(src)
            .map_err(|p| DemoError::Seed(format!("account `{account}` is malformed: {}", p)))?;
        state.balance = state
            .balance
            .checked_add(delta)
            .ok_or_else(|| DemoError::Seed(format!("balance of `{account}` overflows")))?;
        state.pending.push(txn.to_string());
        state.write_into(src);
        Ok(())
    })
    .await
}

fn lease(proto: &Protocol) -> chrono::Duration {
    chrono::Duration::from_std(proto.config().lock_lease).unwrap_or(chrono::Duration::minutes(2))
}
