//! Documents by id, the one way the read side fetches a known list of them.

use super::coverage::Coverage;
use crate::cluster::Cluster;
use crate::error::Result;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Documents by id: a realtime multi-get, or (behind an alias over several
/// indices, which a multi-get cannot read) an `ids` search.
pub(super) async fn by_ids(
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
