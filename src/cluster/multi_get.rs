//! Documents of several indices by id in one realtime `_mget`: the body's
//! `docs` name each document's `_index` and `_id`, and the path names no
//! index. Elasticsearch 7.17, 8 and 9 (reference, "Multi get (mget) API":
//! `GET /_mget {"docs": [{"_index": ..., "_id": ...}]}`, "to retrieve
//! multiple documents from one or more indices";
//! https://www.elastic.co/guide/en/elasticsearch/reference/current/docs-multi-get.html)
//! and OpenSearch (API reference, "Multi-get documents", "Example without
//! specifying index in URL";
//! https://docs.opensearch.org/docs/api-reference/document-apis/multi-get/)
//! answer one entry per item, in order, and a failure for one item (its
//! index missing, or not readable by the user) "is included in place in the
//! response" as that item's `error` (Elasticsearch 6.x-7.x reference, same
//! page), so the other indices' documents still arrive.
//!
//! Each index's answer is its own: an item error fails only that index's
//! documents, typed as the same error on its own (`mget_item_error`), and a
//! miss is confirmed as [`Cluster::mget`] confirms it (see `routed`).
//!
//! Groups of one index go with the index in the path and only ids in the
//! body; where the cluster refuses indices named in the body
//! (`rest.action.multi.allow_explicit_index: false`, see `scope`), each
//! group is its own request, whose failure (a missing index, a refusal)
//! is that group's answer as an item error would be.

use super::response::{check, mget_item_error, versioned};
use super::{scope, Cluster, VersionedDoc};
use crate::error::{Error, Result};
use elasticsearch::MgetParts;
use serde_json::{json, Value};

/// The documents of one index an `_mget` asks for.
pub struct MgetGroup<'a> {
    /// The index.
    pub index: &'a str,
    /// Their ids.
    pub ids: &'a [String],
}

/// One index's answer: one entry per id (`None`: missing), or the error
/// its items carried.
pub type GroupDocs = Result<Vec<Option<VersionedDoc>>>;

impl Cluster {
    /// Realtime multi-GET of several indices in one request: one answer per
    /// group, in order (see the module docs). An error of the request as a
    /// whole (transport, authentication) is the outer error. Groups of one
    /// index name it in the path only; groups of several go in one request
    /// naming each document's index, or one request per group where the
    /// cluster refuses that (see `scope`).
    pub async fn mget_groups(&self, groups: &[MgetGroup<'_>]) -> Result<Vec<GroupDocs>> {
        if groups.iter().all(|g| g.ids.is_empty()) {
            return Ok(groups.iter().map(|_| Ok(Vec::new())).collect());
        }
        let one_index = scope::by_index(groups, |g| g.index).len() == 1;
        if !one_index && !self.scope.per_index() {
            match self.mget_across(groups).await {
                Err(Error::ExplicitIndexRefused { .. }) => self.scope.refused(),
                answered => return answered,
            }
        }
        let mut out = Vec::with_capacity(groups.len());
        for g in groups {
            out.push(match self.mget_in(g).await {
                Ok(docs) => docs,
                Err(e) if whole_request(&e) => return Err(e),
                // As an item error in one request: this group's only.
                Err(e) => Err(e),
            });
        }
        Ok(out)
    }

    /// One `_mget` naming each document's index in the body; items answered
    /// busy (a per-item 429) are asked again on their own.
    async fn mget_across(&self, groups: &[MgetGroup<'_>]) -> Result<Vec<GroupDocs>> {
        let docs: Vec<Value> = groups
            .iter()
            .flat_map(|g| g.ids.iter().map(|id| json!({"_index": g.index, "_id": id})))
            .collect();
        let names: Vec<&str> = groups.iter().map(|g| g.index).collect();
        let names = names.join(",");
        let answered = self
            .per_item(docs.len(), item_is_busy, |at: Vec<usize>| {
                let body =
                    json!({ "docs": at.iter().map(|&i| docs[i].clone()).collect::<Vec<_>>() });
                self.mget_items(MgetParts::None, body, &names)
            })
            .await?;
        let mut items = answered.into_iter();
        let mut out = Vec::with_capacity(groups.len());
        for g in groups {
            let answered: Vec<Value> = items.by_ref().take(g.ids.len()).collect();
            out.push(self.group_docs(g, answered).await);
        }
        Ok(out)
    }

    /// One group's `_mget`, its index in the path and only ids in the body;
    /// items answered busy are asked again on their own.
    async fn mget_in(&self, g: &MgetGroup<'_>) -> Result<GroupDocs> {
        if g.ids.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        let answered = self
            .per_item(g.ids.len(), item_is_busy, |at: Vec<usize>| {
                let ids: Vec<&String> = at.iter().map(|&i| &g.ids[i]).collect();
                self.mget_items(MgetParts::Index(g.index), json!({ "ids": ids }), g.index)
            })
            .await?;
        Ok(self.group_docs(g, answered).await)
    }

    /// One realtime `_mget` of `body`: its `docs`, one per item asked.
    pub(super) async fn mget_items(
        &self,
        parts: MgetParts<'_>,
        body: Value,
        names: &str,
    ) -> Result<Vec<Value>> {
        let resp = self
            .send_read(|| {
                self.client
                    .mget(parts.clone())
                    .realtime(true)
                    .body(&body)
                    .send()
            })
            .await?;
        // Taken out of the answer, not copied.
        match check(resp, names).await? {
            Value::Object(mut answer) => match answer.remove("docs") {
                Some(Value::Array(docs)) => Ok(docs),
                _ => Err(Error::Decode("mget answer without docs".into())),
            },
            _ => Err(Error::Decode("mget answer without docs".into())),
        }
    }

    /// One group's items read: the first item error fails the group; misses
    /// are confirmed (routing), then the documents translated.
    async fn group_docs(&self, g: &MgetGroup<'_>, items: Vec<Value>) -> GroupDocs {
        let mut docs = Vec::with_capacity(items.len());
        for (id, item) in g.ids.iter().zip(items) {
            if item.get("error").is_some() {
                return Err(mget_item_error(&item, g.index));
            }
            docs.push(if item.get("found") == Some(&Value::Bool(true)) {
                Some(versioned(id, item)?)
            } else {
                None
            });
        }
        let missed: Vec<String> = g
            .ids
            .iter()
            .zip(&docs)
            .filter(|(_, d)| d.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        let mut elsewhere = self.found_elsewhere(g.index, &missed).await?;
        Ok(g.ids
            .iter()
            .zip(docs)
            .map(|(id, d)| d.or_else(|| elsewhere.remove(id)))
            .map(|d| d.map(|d| self.read_doc(g.index, d)))
            .collect())
    }
}

/// Whether a failed request failed as a whole (nothing reached, busy, or
/// the credentials refused): the outer error, as for one request across
/// indices; any other error is what that index answered.
fn whole_request(e: &Error) -> bool {
    e.is_transient() || matches!(e, Error::Auth { status: 401, .. })
}

/// Whether an `_mget` item was answered busy (a per-item 429, an
/// unavailable shard): it is asked for again on its own.
pub(super) fn item_is_busy(item: &Value) -> bool {
    item.get("error").is_some() && mget_item_error(item, "").is_transient()
}
