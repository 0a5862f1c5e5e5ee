//! Locks through the one read side: every lock query is built by
//! [`crate::protocol::read::queries`] from the resolved `owner`/`created_at` fields and paged
//! by [`crate::protocol::read::scan`], so the `locks` command, the audit and the sweep of
//! abandoned locks see the same shard coverage and total as the other reads
//! ("partial: N of M shards failed", "600 of 10 000").

use super::LockInfo;
use super::LockView;
use crate::cluster::VersionedDoc;
use crate::error::{Error, Result};
use crate::protocol::read::by_id::by_ids;
use crate::protocol::read::scan::{scan, Scan, ScanSummary};
use crate::protocol::read::Queries;
use crate::protocol::transaction::Transaction;
use crate::protocol::Protocol;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Locks found by a scan of the locks index, with what the scan saw.
#[derive(Debug, Clone, Default)]
pub struct LockListing {
    /// The locks, oldest first, each judged against its owner.
    pub locks: Vec<LockView>,
    /// Total, coverage (of the locks scan and of the owners' reads).
    pub summary: ScanSummary,
}

/// The holders whose heartbeat the judgement needs: those of locks whose
/// `owner` is not a transaction found in `owners` (their staleness), and
/// those whose owner is in flight (the cause verdict asks whether the
/// worker holding a stuck transaction's lock is alive: [`LockView::holder`]).
pub fn holders_to_ask(infos: &[LockInfo], owners: &HashMap<String, Transaction>) -> Vec<String> {
    infos
        .iter()
        .filter(|i| {
            i.owner.as_ref().is_none_or(|o| {
                owners
                    .get(o)
                    .is_none_or(|t| t.state.as_ref().is_none_or(|s| !s.is_terminal()))
            })
        })
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

/// Judges `infos` against their owners (read by id) and their holders'
/// heartbeats, oldest first.
pub(super) async fn judge_locks(
    p: &Protocol,
    infos: Vec<LockInfo>,
    coverage: &mut crate::protocol::read::Coverage,
) -> Result<Vec<LockView>> {
    let d = p.discovery().await?;
    let owners: Vec<String> = infos
        .iter()
        .filter_map(|i| i.owner.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let by_search = d.transactions.id_problem().is_some();
    let ix = &p.config.indices.transactions;
    let found: HashMap<String, Transaction> =
        match by_ids(p.cluster(), ix, &owners, by_search, coverage).await {
            Ok(docs) => owners
                .iter()
                .zip(docs)
                .filter_map(|(id, d)| Some((id.clone(), Transaction::from_source(id, &d?))))
                .collect(),
            Err(Error::IndexMissing(_)) => HashMap::new(),
            Err(e) => return Err(e),
        };
    let beats = p.heartbeats(&holders_to_ask(&infos, &found)).await?;
    let now = p.now().await;
    let mut locks: Vec<LockView> = infos
        .into_iter()
        .map(|info| LockView::judge(info, &found, &beats, now, &p.config))
        .collect();
    locks.sort_by_key(|v| v.info.created_at);
    Ok(locks)
}

/// `(resource, owner)` of the locks whose `owner` is one of `owners`,
/// by a search on the resolved `owner` field.
pub(super) async fn scan_locks_owned_by(
    p: &Protocol,
    owners: &[String],
) -> Result<(Vec<(String, String)>, ScanSummary)> {
    let d = p.discovery().await?;
    let q = Queries::new(&d.fields);
    let what = Scan::new(q.locks_owned_by(owners), Vec::new());
    let wanted: HashSet<&String> = owners.iter().collect();
    let mut found = Vec::new();
    let summary = scan(p.cluster(), &p.config.indices.locks, what, |hits| {
        found.extend(hits.into_iter().filter_map(|h| {
            let owner = LockInfo::from_source(&h.id, &h.source).owner?;
            wanted.contains(&owner).then_some((h.id, owner))
        }));
        true
    })
    .await?;
    Ok((found, summary))
}

/// Reads the lock on `resource` by id. The transport has already retried
/// a busy or silent cluster for the whole read budget (`--retry-budget`,
/// see `cluster::send`): retrying here again would multiply that budget
/// by the retry policy (a release whose reads kept failing took six
/// budgets), so an error here is the read's last word: the caller reports
/// the failed step and leaves the lock to the next recovery.
pub(crate) async fn read_lock(p: &Protocol, resource: &str) -> Result<Option<VersionedDoc>> {
    p.cluster().get(&p.config.indices.locks, resource).await
}
