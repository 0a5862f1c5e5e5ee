//! The thin layer over the official `elasticsearch` client.
//!
//! It exposes exactly the document operations the protocol needs — realtime
//! GET with `_seq_no`/`_primary_term`, conditional writes, `op_type=create`,
//! conditional deletes, search and full scans — and turns HTTP answers into
//! typed outcomes: a 409 is a [`WriteOutcome::Conflict`], not an error; a
//! missing index is [`Error::IndexMissing`]; a transport failure is
//! [`Error::Unreachable`] (for a write: unknown outcome).

mod connect;

pub use connect::ConnectOptions;

use crate::error::{Error, Result};
use elasticsearch::http::response::Response;
use elasticsearch::indices::{IndicesCreateParts, IndicesExistsParts, IndicesRefreshParts};
use elasticsearch::params::OpType;
use elasticsearch::{
    BulkParts, ClearScrollParts, CountParts, CreateParts, DeleteParts, Elasticsearch, GetParts,
    IndexParts, MgetParts, MsearchParts, ScrollParts, SearchParts,
};
use serde_json::{json, Map, Value};

/// A document with the concurrency tokens it was read at.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionedDoc {
    /// Document id.
    pub id: String,
    /// `_seq_no` at read time.
    pub seq_no: i64,
    /// `_primary_term` at read time.
    pub primary_term: i64,
    /// `_source`.
    pub source: Map<String, Value>,
}

/// Outcome of a conditional write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written; the document is now at these tokens.
    Written {
        /// New `_seq_no`.
        seq_no: i64,
        /// New `_primary_term`.
        primary_term: i64,
    },
    /// Someone wrote first (HTTP 409); re-read and decide again.
    Conflict,
}

/// Outcome of an `op_type=create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateOutcome {
    /// The document did not exist and now does.
    Created,
    /// A document with this id already exists; nothing was written.
    AlreadyExists,
}

/// Outcome of a conditional delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// Deleted.
    Deleted,
    /// The document changed since it was read; nothing was deleted.
    Conflict,
    /// Already gone.
    NotFound,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Document id.
    pub id: String,
    /// `_source` (empty when not requested).
    pub source: Map<String, Value>,
}

/// A handle on the cluster; cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    client: Elasticsearch,
    url: String,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("url", &self.url).finish()
    }
}

/// Page size for scans.
const SCAN_PAGE: usize = 1000;

impl Cluster {
    /// Builds a handle; does not touch the network.
    pub fn connect(opts: &ConnectOptions) -> Result<Cluster> {
        Ok(Cluster {
            client: connect::build_client(opts)?,
            url: opts.url.clone(),
        })
    }

    /// The URL this handle talks to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Realtime GET by id: the latest write, refreshed or not.
    pub async fn get(&self, index: &str, id: &str) -> Result<Option<VersionedDoc>> {
        let resp = self
            .client
            .get(GetParts::IndexId(index, id))
            .realtime(true)
            .send()
            .await
            .map_err(transport)?;
        if resp.status_code().as_u16() == 404 {
            let body = read_json(resp).await?;
            if body.get("found") == Some(&Value::Bool(false)) {
                return Ok(None);
            }
            return Err(error_from(404, &body, index));
        }
        let body = check(resp, index).await?;
        Ok(Some(versioned(id, &body)?))
    }

    /// Realtime multi-GET; one entry per id, `None` where missing.
    pub async fn mget(&self, index: &str, ids: &[String]) -> Result<Vec<Option<VersionedDoc>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let resp = self
            .client
            .mget(MgetParts::Index(index))
            .realtime(true)
            .body(json!({ "ids": ids }))
            .send()
            .await
            .map_err(transport)?;
        let body = check(resp, index).await?;
        let docs = body
            .get("docs")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Decode("mget answer without docs".into()))?;
        docs.iter()
            .map(|d| {
                if let Some(err) = d.get("error") {
                    return Err(error_from(500, &json!({ "error": err }), index));
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

    /// Writes `source` only if the document is still at `seq_no`/`primary_term`.
    pub async fn put_if(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
        seq_no: i64,
        primary_term: i64,
    ) -> Result<WriteOutcome> {
        let resp = self
            .client
            .index(IndexParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term)
            .body(source)
            .send()
            .await
            .map_err(transport)?;
        if resp.status_code().as_u16() == 409 {
            return Ok(WriteOutcome::Conflict);
        }
        let body = check(resp, index).await?;
        Ok(WriteOutcome::Written {
            seq_no: body.get("_seq_no").and_then(Value::as_i64).unwrap_or(-1),
            primary_term: body
                .get("_primary_term")
                .and_then(Value::as_i64)
                .unwrap_or(-1),
        })
    }

    /// Creates the document only if no document has this id (`op_type=create`).
    pub async fn create(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
    ) -> Result<CreateOutcome> {
        let resp = self
            .client
            .create(CreateParts::IndexId(index, id))
            .body(source)
            .send()
            .await
            .map_err(transport)?;
        if resp.status_code().as_u16() == 409 {
            return Ok(CreateOutcome::AlreadyExists);
        }
        check(resp, index).await?;
        Ok(CreateOutcome::Created)
    }

    /// Plain index (create or overwrite) with `op_type=index`; for seeding and tests.
    pub async fn put(&self, index: &str, id: &str, source: &Value) -> Result<()> {
        let resp = self
            .client
            .index(IndexParts::IndexId(index, id))
            .op_type(OpType::Index)
            .body(source)
            .send()
            .await
            .map_err(transport)?;
        check(resp, index).await.map(|_| ())
    }

    /// Indexes many documents in one `_bulk` request (seeding, benchmarks).
    /// Fails if any item failed.
    pub async fn bulk_index(&self, index: &str, docs: &[(String, Value)]) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let mut lines: Vec<elasticsearch::http::request::JsonBody<Value>> =
            Vec::with_capacity(docs.len() * 2);
        for (id, doc) in docs {
            lines.push(json!({"index": {"_index": index, "_id": id}}).into());
            lines.push(doc.clone().into());
        }
        let resp = self
            .client
            .bulk(BulkParts::None)
            .body(lines)
            .send()
            .await
            .map_err(transport)?;
        let body = check(resp, index).await?;
        if body.get("errors").and_then(Value::as_bool) == Some(true) {
            let first = body
                .get("items")
                .and_then(Value::as_array)
                .and_then(|items| {
                    items
                        .iter()
                        .find_map(|i| i.pointer("/index/error").cloned())
                })
                .unwrap_or(Value::Null);
            return Err(Error::Cluster {
                status: 400,
                reason: format!("bulk indexing failed: {}", truncate(&first.to_string())),
            });
        }
        Ok(())
    }

    /// Deletes the document only if it is still at `seq_no`/`primary_term`.
    pub async fn delete_if(
        &self,
        index: &str,
        id: &str,
        seq_no: i64,
        primary_term: i64,
    ) -> Result<DeleteOutcome> {
        let resp = self
            .client
            .delete(DeleteParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term)
            .send()
            .await
            .map_err(transport)?;
        match resp.status_code().as_u16() {
            409 => Ok(DeleteOutcome::Conflict),
            404 => {
                let body = read_json(resp).await?;
                if body.get("result").and_then(Value::as_str) == Some("not_found") {
                    Ok(DeleteOutcome::NotFound)
                } else {
                    Err(error_from(404, &body, index))
                }
            }
            _ => {
                check(resp, index).await?;
                Ok(DeleteOutcome::Deleted)
            }
        }
    }

    /// One search request; returns the raw answer.
    pub async fn search(&self, index: &str, body: Value) -> Result<Value> {
        let resp = self
            .client
            .search(SearchParts::Index(&[index]))
            .body(body)
            .send()
            .await
            .map_err(transport)?;
        check(resp, index).await
    }

    /// Several searches in one round trip (`_msearch`); one answer per body,
    /// in order. A failed sub-search becomes an `Err` in its slot.
    pub async fn msearch(&self, searches: &[(String, Value)]) -> Result<Vec<Result<Value>>> {
        if searches.is_empty() {
            return Ok(Vec::new());
        }
        let mut lines: Vec<elasticsearch::http::request::JsonBody<Value>> = Vec::new();
        for (index, body) in searches {
            lines.push(json!({ "index": index }).into());
            lines.push(body.clone().into());
        }
        let resp = self
            .client
            .msearch(MsearchParts::None)
            .body(lines)
            .send()
            .await
            .map_err(transport)?;
        let body = check(resp, "_msearch").await?;
        let answers = body
            .get("responses")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Decode("msearch answer without responses".into()))?;
        Ok(searches
            .iter()
            .zip(answers)
            .map(|((index, _), a)| {
                if a.get("error").is_some() {
                    let status = a.get("status").and_then(Value::as_u64).unwrap_or(500) as u16;
                    Err(error_from(status, a, index))
                } else {
                    Ok(a.clone())
                }
            })
            .collect())
    }

    /// Every hit of `body` (its `query`, `sort` and `_source`), paging with
    /// the scroll API so no result set is capped. Meant for operator-driven
    /// batch work (listing, recovery, audit), not for the dashboard's polls.
    pub async fn scan(&self, index: &str, mut body: Value) -> Result<Vec<Hit>> {
        if let Some(o) = body.as_object_mut() {
            o.entry("size").or_insert(json!(SCAN_PAGE));
        }
        let resp = self
            .client
            .search(SearchParts::Index(&[index]))
            .scroll("2m")
            .body(body)
            .send()
            .await
            .map_err(transport)?;
        let mut page = check(resp, index).await?;
        let mut hits = Vec::new();
        let mut scroll_ids: Vec<String> = Vec::new();
        loop {
            let batch = hits_of(&page)?;
            if let Some(sid) = page.get("_scroll_id").and_then(Value::as_str) {
                if scroll_ids.last().map(String::as_str) != Some(sid) {
                    scroll_ids.push(sid.to_string());
                }
            }
            if batch.is_empty() {
                break;
            }
            hits.extend(batch);
            let Some(sid) = scroll_ids.last().cloned() else {
                break;
            };
            let resp = self
                .client
                .scroll(ScrollParts::None)
                .body(json!({ "scroll": "2m", "scroll_id": sid }))
                .send()
                .await
                .map_err(transport)?;
            page = check(resp, index).await?;
        }
        if !scroll_ids.is_empty() {
            let ids: Vec<&str> = scroll_ids.iter().map(String::as_str).collect();
            // Best effort: scroll contexts expire on their own anyway.
            let _ = self
                .client
                .clear_scroll(ClearScrollParts::None)
                .body(json!({ "scroll_id": ids }))
                .send()
                .await;
        }
        Ok(hits)
    }

    /// Number of documents matching `query`.
    pub async fn count(&self, index: &str, query: Value) -> Result<u64> {
        let resp = self
            .client
            .count(CountParts::Index(&[index]))
            .body(json!({ "query": query }))
            .send()
            .await
            .map_err(transport)?;
        let body = check(resp, index).await?;
        body.get("count")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::Decode("count answer without count".into()))
    }

    /// Makes recent writes visible to search (tests; the cluster does it by itself every second).
    pub async fn refresh(&self, index: &str) -> Result<()> {
        let resp = self
            .client
            .indices()
            .refresh(IndicesRefreshParts::Index(&[index]))
            .send()
            .await
            .map_err(transport)?;
        check(resp, index).await.map(|_| ())
    }

    /// Whether the index exists.
    pub async fn index_exists(&self, index: &str) -> Result<bool> {
        let resp = self
            .client
            .indices()
            .exists(IndicesExistsParts::Index(&[index]))
            .send()
            .await
            .map_err(transport)?;
        match resp.status_code().as_u16() {
            200 => Ok(true),
            404 => Ok(false),
            s => Err(error_from(s, &Value::Null, index)),
        }
    }

    /// Creates an index with `body` (settings and mappings); `false` if it already existed.
    pub async fn create_index(&self, index: &str, body: Value) -> Result<bool> {
        let resp = self
            .client
            .indices()
            .create(IndicesCreateParts::Index(index))
            .body(body)
            .send()
            .await
            .map_err(transport)?;
        if resp.status_code().as_u16() == 400 {
            let body = read_json(resp).await?;
            let kind = body
                .pointer("/error/type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if kind.contains("already_exists") {
                return Ok(false);
            }
            return Err(error_from(400, &body, index));
        }
        check(resp, index).await.map(|_| true)
    }

    /// `_cluster/health` answer.
    pub async fn health(&self) -> Result<Value> {
        let resp = self
            .client
            .cluster()
            .health(elasticsearch::cluster::ClusterHealthParts::None)
            .send()
            .await
            .map_err(transport)?;
        check(resp, "_cluster").await
    }
}

fn transport(e: elasticsearch::Error) -> Error {
    match e.status_code() {
        Some(s) => Error::Cluster {
            status: s.as_u16(),
            reason: e.to_string(),
        },
        None => Error::Unreachable(with_causes(&e)),
    }
}

/// The error and its chain of causes ("error sending request: ...:
/// Connection refused"), so operators can tell a refused connection from
/// DNS, TLS or a timeout.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        cause = c.source();
    }
    msg
}

async fn read_json(resp: Response) -> Result<Value> {
    let text = resp.text().await.map_err(transport)?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| Error::Decode(format!("{e}: {}", truncate(&text))))
}

async fn check(resp: Response, index: &str) -> Result<Value> {
    let status = resp.status_code().as_u16();
    let body = read_json(resp).await?;
    if (200..300).contains(&status) {
        Ok(body)
    } else {
        Err(error_from(status, &body, index))
    }
}

fn error_from(status: u16, body: &Value, index: &str) -> Error {
    let kind = body
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let reason = body
        .pointer("/error/reason")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            body.get("error")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| truncate(&body.to_string()));
    if kind == "index_not_found_exception" {
        let missing = body
            .pointer("/error/index")
            .and_then(Value::as_str)
            .unwrap_or(index)
            .to_string();
        return Error::IndexMissing(missing);
    }
    match status {
        401 | 403 => Error::Auth { status, reason },
        _ => Error::Cluster { status, reason },
    }
}

fn versioned(id: &str, body: &Value) -> Result<VersionedDoc> {
    let seq_no = body.get("_seq_no").and_then(Value::as_i64);
    let primary_term = body.get("_primary_term").and_then(Value::as_i64);
    let source = body.get("_source").and_then(Value::as_object).cloned();
    match (seq_no, primary_term, source) {
        (Some(seq_no), Some(primary_term), Some(source)) => Ok(VersionedDoc {
            id: id.to_string(),
            seq_no,
            primary_term,
            source,
        }),
        _ => Err(Error::Decode(format!(
            "document `{id}` answer lacks _seq_no/_primary_term/_source: {}",
            truncate(&body.to_string())
        ))),
    }
}

fn hits_of(page: &Value) -> Result<Vec<Hit>> {
    let hits = page
        .pointer("/hits/hits")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::Decode("search answer without hits".into()))?;
    Ok(hits
        .iter()
        .map(|h| Hit {
            id: h
                .get("_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            source: h
                .get("_source")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
        .collect())
}

/// The hits of one search answer.
pub fn hits(page: &Value) -> Result<Vec<Hit>> {
    hits_of(page)
}

fn truncate(s: &str) -> String {
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_string()
    }
}
