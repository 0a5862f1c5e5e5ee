//! Documents by id, the one way the read side fetches a known list of them.

use super::coverage::Coverage;
use crate::cluster::{Cluster, MgetGroup};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Documents by id: a realtime multi-get, or (behind an alias over several
/// indices, which a multi-get cannot read) an `ids` search.
pub(crate) async fn by_ids(
    cluster: &Cluster,
    index: &str,
    ids: &[String],
    by_search: bool,
    coverage: &mut Coverage,
) -> Result<Vec<Option<serde_json::Map<String, Value>>>> {
    if !by_search {
        return Ok(cluster
            .mget(index, ids)
            .await?
            .into_iter()
            .map(|d| d.map(|d| d.source))
            .collect());
    }
    let answer = cluster
        .search(
            index,
            json!({"size": ids.len(), "query": {"ids": {"values": ids}}}),
        )
        .await?;
    coverage.add(Coverage::of(&answer));
    let found: HashMap<String, serde_json::Map<String, Value>> = crate::cluster::hits(&answer)?
        .into_iter()
        .map(|h| (h.id, h.source))
        .collect();
    Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
}

/// One index's documents to read by id: by search where a multi-get
/// cannot read them (see [`by_ids`]).
pub(super) struct IdRead<'a> {
    pub index: &'a str,
    pub ids: &'a [String],
    pub by_search: bool,
}

/// One index's documents by id (`None`: missing), or the error its read met.
pub(super) type ReadDocs = Result<Vec<Option<serde_json::Map<String, Value>>>>;

/// The documents of several indices by id in as few requests as they
/// allow: those a multi-get can read in one multi-index `_mget` (an index's
/// item errors fail that index's answer only), each of the others by an
/// `ids` search; one answer per read, in order. A read of no ids costs
/// nothing (what the reads cost is counted by a metered handle).
pub(super) async fn by_ids_across(
    cluster: &Cluster,
    reads: &[IdRead<'_>],
    coverage: &mut Coverage,
) -> Result<Vec<ReadDocs>> {
    let by_id: Vec<MgetGroup> = reads
        .iter()
        .filter(|r| !r.by_search && !r.ids.is_empty())
        .map(|r| MgetGroup {
            index: r.index,
            ids: r.ids,
        })
        .collect();
    let mut fetched = Vec::new().into_iter();
    if !by_id.is_empty() {
        fetched = cluster.mget_groups(&by_id).await?.into_iter();
    }
    let mut out = Vec::with_capacity(reads.len());
    for r in reads {
        out.push(if r.ids.is_empty() {
            Ok(Vec::new())
        } else if r.by_search {
            by_ids(cluster, r.index, r.ids, true, coverage).await
        } else {
            let docs = fetched
                .next()
                .unwrap_or_else(|| Err(Error::Decode("the mget answered fewer indices".into())));
            docs.map(|d| d.into_iter().map(|d| d.map(|d| d.source)).collect())
        });
    }
    Ok(out)
}
