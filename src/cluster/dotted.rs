//! Documents whose id a URL path cannot carry.
//!
//! `.` and `..` are dot segments: every URL parser removes them from a path,
//! and the `url` crate under the HTTP client also decodes `%2E`/`%2e` before
//! doing so (the WHATWG URL standard), so percent-encoding does not help —
//! `/accounts/_doc/%2E` is sent as `/accounts/_doc/`, which indexes a new
//! document under a generated id. Requests on such documents are therefore
//! addressed in the request body, which Elasticsearch supports with the same
//! semantics: a realtime `_mget` instead of GET, and a one-item `_bulk`
//! (`update` or `index` with `if_seq_no`/`if_primary_term`, or `create`)
//! instead of the document APIs.
//! Every other id goes in the path, percent-encoded by the client.

use super::response::{check, error_from, transport};
use super::{Cluster, CreateOutcome, DeleteOutcome, VersionedDoc, WriteOutcome};
use crate::error::{Error, Result};
use elasticsearch::BulkParts;
use serde_json::{json, Map, Value};

/// Whether `id` must be addressed in the body (see the module docs).
pub(super) fn needs_body(id: &str) -> bool {
    id == "." || id == ".."
}

/// A one-item bulk action.
pub(super) enum Action<'a> {
    /// Index the whole `source` if the document is at these tokens.
    IndexIf(&'a Map<String, Value>, i64, i64),
    /// Partial update (an `update` body: `{"doc": ...}`) if the document is
    /// at these `(_seq_no, _primary_term)` (and routing).
    UpdateIf(&'a Value, (i64, i64), Option<&'a str>),
    /// Index `source` unconditionally.
    Index(&'a Value),
    /// Create `source` if no document has the id.
    Create(&'a Map<String, Value>),
    /// Delete if the document is at these tokens (and routing).
    DeleteIf(i64, i64, Option<&'a str>),
}

impl Cluster {
    /// Realtime read of one document through `_mget`.
    pub(super) async fn get_by_body(&self, index: &str, id: &str) -> Result<Option<VersionedDoc>> {
        let mut docs = self.mget_body(index, json!({ "ids": [id] })).await?;
        Ok(docs.pop().flatten())
    }

    /// Runs one action through `_bulk`; returns the item's status and body.
    pub(super) async fn bulk_one(
        &self,
        index: &str,
        id: &str,
        action: Action<'_>,
    ) -> Result<(u16, Value)> {
        let (name, mut meta, source): (&str, Value, Option<Value>) = match action {
            Action::IndexIf(src, seq_no, term) => (
                "index",
                json!({"if_seq_no": seq_no, "if_primary_term": term}),
                Some(Value::Object(src.clone())),
            ),
            Action::UpdateIf(body, (seq_no, term), routing) => (
                "update",
                with_routing(
                    json!({"if_seq_no": seq_no, "if_primary_term": term}),
                    routing,
                ),
                Some(body.clone()),
            ),
            Action::Index(src) => ("index", json!({}), Some(src.clone())),
            Action::Create(src) => ("create", json!({}), Some(Value::Object(src.clone()))),
            Action::DeleteIf(seq_no, term, routing) => (
                "delete",
                with_routing(
                    json!({"if_seq_no": seq_no, "if_primary_term": term}),
                    routing,
                ),
                None,
            ),
        };
        // The index in the path, never in the body (see `scope`).
        meta["_id"] = json!(id);
        let mut lines: Vec<elasticsearch::http::request::JsonBody<Value>> =
            vec![json!({ name: meta }).into()];
        if let Some(src) = source {
            lines.push(src.into());
        }
        let resp = self
            .client
            .bulk(BulkParts::Index(index))
            .body(lines)
            .send()
            .await
            .map_err(transport)?;
        let body = check(resp, index).await?;
        let item = body
            .pointer(&format!("/items/0/{name}"))
            .cloned()
            .ok_or_else(|| Error::Decode(format!("bulk answer without an item for `{id}`")))?;
        let status = item
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(500);
        Ok((status, item))
    }

    /// A conditional update, conditional or plain index through `_bulk`.
    pub(super) async fn index_by_body(
        &self,
        index: &str,
        id: &str,
        action: Action<'_>,
    ) -> Result<WriteOutcome> {
        match self.bulk_one(index, id, action).await? {
            (409, _) => Ok(WriteOutcome::Conflict),
            (s, item) if (200..300).contains(&s) => Ok(WriteOutcome::of_answer(&item)),
            (s, item) => Err(error_from(s, &item, index)),
        }
    }

    /// `op_type=create` through `_bulk`.
    pub(super) async fn create_by_body(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
    ) -> Result<CreateOutcome> {
        match self.bulk_one(index, id, Action::Create(source)).await? {
            (409, _) => Ok(CreateOutcome::AlreadyExists),
            (s, _) if (200..300).contains(&s) => Ok(CreateOutcome::Created),
            (s, item) => Err(error_from(s, &item, index)),
        }
    }

    /// A conditional delete through `_bulk`.
    pub(super) async fn delete_by_body(
        &self,
        index: &str,
        id: &str,
        seq_no: i64,
        primary_term: i64,
        routing: Option<&str>,
    ) -> Result<DeleteOutcome> {
        match self
            .bulk_one(index, id, Action::DeleteIf(seq_no, primary_term, routing))
            .await?
        {
            (409, _) => Ok(DeleteOutcome::Conflict),
            (404, _) => Ok(DeleteOutcome::NotFound),
            (s, _) if (200..300).contains(&s) => Ok(DeleteOutcome::Deleted),
            (s, item) => Err(error_from(s, &item, index)),
        }
    }
}

/// A bulk action's metadata with the document's routing value, if it has one.
pub(super) fn with_routing(mut meta: Value, routing: Option<&str>) -> Value {
    if let Some(r) = routing {
        meta["routing"] = json!(r);
    }
    meta
}
