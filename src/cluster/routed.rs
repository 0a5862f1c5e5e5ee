//! Documents an application indexed with custom routing (`?routing=X`)
//! that the mapping does not require (`_routing.required` is refused by
//! discovery instead).
//!
//! A document lives on the shard its routing value hashes to; a GET or
//! `_mget` by id alone hashes the id, so on an index with more than one
//! primary shard it looks on the wrong shard and answers `found: false`.
//! Elasticsearch's reference (`_routing` field, mapping-routing-field): "The
//! same routing value needs to be provided when getting, deleting, or
//! updating the document", and "the `_id` uniqueness is not guaranteed across
//! all of the shards in the index" when routing values differ. So a miss is
//! not evidence that the document is absent: here it is confirmed by an
//! `ids` search, which fans out to every shard and returns each hit's
//! `_routing`. A document the search finds is read again by a realtime
//! `_mget` with its routing value (a search sees only refreshed writes; the
//! GET sees the latest one), and every later write to it passes that value
//! ([`VersionedDoc::routing`]). A search that some shards failed to answer
//! confirms nothing ([`Error::Partial`]); an id found twice (the same id
//! indexed under two routing values, on two shards) is refused as
//! ambiguous.
//!
//! On an index discovery found to have a single primary shard, where every
//! routing value hashes to that shard, a miss is final and no search is made
//! (see `shards`).
//!
//! What a search cannot see, this cannot either: a routed document written
//! within the last refresh interval (or on an index with
//! `refresh_interval: -1`) is still reported absent.

use super::response::versioned;
use super::search::whole;
use super::{Cluster, VersionedDoc};
use crate::error::{Error, Result};
use elasticsearch::MgetParts;
use serde_json::{json, Value};
use std::collections::HashMap;

impl Cluster {
    /// The documents among `ids` (which a GET or `_mget` by id missed) that
    /// exist all the same under a routing value, as read by a realtime
    /// `_mget` with it; an id absent from the map is absent from the index
    /// (see the module docs). No search on an index known to have one
    /// primary shard: there the miss was final (see `shards`).
    pub(super) async fn found_elsewhere(
        &self,
        index: &str,
        ids: &[String],
    ) -> Result<HashMap<String, VersionedDoc>> {
        if ids.is_empty() || self.miss_is_final(index) {
            return Ok(HashMap::new());
        }
        let hits = self.search_ids(index, ids).await?;
        let mut found = HashMap::new();
        let mut routed = Vec::new();
        for doc in hits {
            match &doc.routing {
                Some(r) => routed.push(json!({"_id": doc.id, "routing": r})),
                // Created since the miss, without routing: the hit is it.
                None => {
                    found.insert(doc.id.clone(), doc);
                }
            }
        }
        if !routed.is_empty() {
            let again = self.mget_body(index, json!({ "docs": routed })).await?;
            // Deleted since the search: absent.
            found.extend(again.into_iter().flatten().map(|d| (d.id.clone(), d)));
        }
        Ok(found)
    }

    /// An `ids` search (every shard) with each hit's version and routing;
    /// refuses a partial answer and an id found more than once.
    async fn search_ids(&self, index: &str, ids: &[String]) -> Result<Vec<VersionedDoc>> {
        let body = json!({
            "size": ids.len(),
            "query": {"ids": {"values": ids}},
            "seq_no_primary_term": true,
        });
        // Untranslated: the caller translates what it keeps (`read_doc`).
        let mut answer = self.search_untranslated(index, body).await?;
        whole(&answer, index)?;
        let hits = match answer.pointer_mut("/hits/hits").map(Value::take) {
            Some(Value::Array(hits)) => hits,
            _ => return Err(Error::Decode("search answer without hits".into())),
        };
        let mut docs: Vec<VersionedDoc> = Vec::with_capacity(hits.len());
        for h in hits {
            let id = h
                .get("_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let doc = versioned(&id, h)?;
            if let Some(twin) = docs.iter().find(|d| d.id == doc.id) {
                return Err(ambiguous(index, twin, &doc));
            }
            docs.push(doc);
        }
        Ok(docs)
    }

    /// A realtime `_mget` with `body` (`ids`, or `docs` with routing); one
    /// entry per requested document, `None` where not found.
    pub(super) async fn mget_body(
        &self,
        index: &str,
        body: Value,
    ) -> Result<Vec<Option<VersionedDoc>>> {
        // The body names the documents as `ids` or as `docs`: a retry asks
        // for the busy ones in the same form.
        let key = if body.get("ids").is_some() {
            "ids"
        } else {
            "docs"
        };
        let asked = body
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let docs = self
            .per_item(
                asked.len(),
                super::multi_get::item_is_busy,
                |at: Vec<usize>| {
                    let some: Vec<Value> = at.iter().map(|&i| asked[i].clone()).collect();
                    self.mget_items(MgetParts::Index(index), json!({ key: some }), index)
                },
            )
            .await?;
        docs.into_iter()
            .map(|d| {
                if d.get("error").is_some() {
                    return Err(super::response::mget_item_error(&d, index));
                }
                if d.get("found") == Some(&Value::Bool(true)) {
                    let id = d
                        .get("_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    versioned(&id, d).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect()
    }
}

/// The same id on two shards: which one the application means cannot be
/// told, so nothing is read or written as if there were one.
fn ambiguous(index: &str, a: &VersionedDoc, b: &VersionedDoc) -> Error {
    let routing = |d: &VersionedDoc| d.routing.clone().unwrap_or_else(|| "its id".into());
    Error::Invalid(format!(
        "`{}` exists twice in `{index}`, routed by {} and by {}: a write without the \
         routing value indexed a second copy on another shard; the tool cannot tell \
         which is the document, so it neither reads nor writes it (delete the wrong copy \
         with `DELETE {index}/_doc/{}?routing=...`)",
        a.id,
        routing(a),
        routing(b),
        a.id
    ))
}
