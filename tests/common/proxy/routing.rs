//! Making the [`FaultProxy`] answer as an index of several primary shards
//! does for documents an application indexed with custom routing
//! (`?routing=X`, `_routing` not required).
//!
//! osmem-server 0.1.6 finds a document by id whatever its routing value.
//! Elasticsearch and OpenSearch send a request by id to the shard its
//! routing value hashes to (the id when none is given); Elasticsearch's
//! reference, `_routing` field (mapping-routing-field): "The same routing
//! value needs to be provided when getting, deleting, or updating the
//! document"; a search fans out to every shard ("Querying on the `_routing`
//! field (also see the ids query)"). So, with [`FaultProxy::route_by_shards`]:
//! - `GET /{index}/_doc/{id}` without `routing=` misses (404,
//!   `found: false`) a document whose `_routing` is not its id, and so does
//!   an `_mget` item without a `routing`;
//! - a write, partial update or delete conditional on `if_seq_no` without
//!   `routing` (alone,
//!   or as a `_bulk` item) reaches a shard holding no such document and gets
//!   409 `version_conflict_engine_exception` ("... but no document was
//!   found"): it is sent on with an `if_seq_no` no document has;
//! - searches, the `ids` query included, find it with its `_routing`;
//! - a settings answer reports [`PRIMARY_SHARDS`] primary shards for every
//!   index (osmem reports the one it has), as the index such routing needs
//!   has: with one primary shard every routing value hashes to it
//!   (`shard_num = hash(_routing) % num_primary_shards`, same page), and
//!   the tool skips its miss check there.
//!
//! Not simulated: an unconditional index or a create without routing would
//! put a second copy on another shard (osmem overwrites, or answers 409).

use super::super::parse_response;
use super::{forward, lock, FaultProxy, Request, Shared};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

/// The primary shards every index reports in a settings answer.
const PRIMARY_SHARDS: &str = "3";

/// An `if_seq_no` no document reaches: the write conflicts, as on a shard
/// that does not hold the document.
const NO_SUCH_SEQ_NO: i64 = 9_000_000_000_000;

/// What to change in the answer to a read by id, or to a settings read.
pub(super) enum Miss {
    /// A GET without a routing value.
    Get,
    /// An `_mget`: the routing value each item asked with (`None`: none).
    Mget(Vec<Option<String>>),
    /// A settings answer: every index has [`PRIMARY_SHARDS`] shards.
    Settings,
}

impl FaultProxy {
    /// Answers as an index of several primary shards does for documents
    /// indexed with custom routing (see the module docs).
    pub fn route_by_shards(&self, on: bool) {
        self.shared.route_by_shards.store(on, Ordering::SeqCst);
    }
}

/// Rewrites conditional writes that lack the routing of a routed document
/// (so they conflict), and says which reads by id must miss.
pub(super) fn before(shared: &Shared, request: &mut Request) -> Option<Miss> {
    if !shared.route_by_shards.load(Ordering::SeqCst) {
        return None;
    }
    let (path, query) = match request.target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (request.target.clone(), String::new()),
    };
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let routed_query = query.split('&').any(|kv| kv.starts_with("routing="));
    match (request.method.as_str(), segments.as_slice()) {
        ("GET" | "HEAD", [_, "_doc", _]) if !routed_query => Some(Miss::Get),
        ("GET" | "POST", [.., "_mget"]) => Some(Miss::Mget(mget_routings(&request.body))),
        ("GET", [.., "_settings"]) => Some(Miss::Settings),
        ("PUT" | "POST" | "DELETE", [index, "_doc" | "_update", id])
            if !routed_query && query.contains("if_seq_no=") =>
        {
            if is_routed_elsewhere(shared, request, index, id) {
                request.target = format!("{path}?{}", impossible_seq_no(&query));
            }
            None
        }
        ("POST" | "PUT", [.., "_bulk"]) => {
            let body = bulk_without_routing(shared, request);
            if let Some(body) = body {
                super::personality::set_body(request, body);
            }
            None
        }
        _ => None,
    }
}

/// The answer to a read by id as the shards would give it.
pub(super) fn after(miss: &Miss, response: Vec<u8>) -> Vec<u8> {
    match miss {
        Miss::Get => {
            let Some((200, body)) = parse_response(&response) else {
                return response;
            };
            match serde_json::from_slice::<Value>(&body) {
                Ok(doc) if routed_away(&doc) => {
                    let gone = json!({"_index": doc["_index"], "_id": doc["_id"], "found": false});
                    super::rewrite::Canned::json(404, gone).bytes(0)
                }
                _ => response,
            }
        }
        Miss::Mget(asked) => super::personality::rebody(response, |mut v| {
            if let Some(docs) = v.get_mut("docs").and_then(Value::as_array_mut) {
                for (doc, routing) in docs.iter_mut().zip(asked) {
                    if routing.is_none() && routed_away(doc) {
                        *doc = json!({"_index": doc["_index"], "_id": doc["_id"], "found": false});
                    }
                }
            }
            v
        }),
        Miss::Settings => super::personality::rebody(response, |mut v| {
            for settings in v.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                let Some(s) = settings.get_mut("settings").and_then(Value::as_object_mut) else {
                    continue;
                };
                match s.get_mut("index").and_then(Value::as_object_mut) {
                    Some(index) => index.insert("number_of_shards".into(), json!(PRIMARY_SHARDS)),
                    None => s.insert("index.number_of_shards".into(), json!(PRIMARY_SHARDS)),
                };
            }
            v
        }),
    }
}

/// Whether a found document was indexed with a routing value other than its id.
fn routed_away(doc: &Value) -> bool {
    doc.get("found") == Some(&Value::Bool(true))
        && doc
            .get("_routing")
            .and_then(Value::as_str)
            .is_some_and(|r| Some(r) != doc.get("_id").and_then(Value::as_str))
}

/// The routing value of each item of an `_mget` body.
fn mget_routings(body: &[u8]) -> Vec<Option<String>> {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if let Some(ids) = v.get("ids").and_then(Value::as_array) {
        return vec![None; ids.len()];
    }
    v.get("docs")
        .and_then(Value::as_array)
        .map(|docs| {
            docs.iter()
                .map(|d| {
                    d.get("routing")
                        .or_else(|| d.get("_routing"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `index/id` (as the path carries it) is routed by something
/// other than its id, asked upstream with the request's own credentials.
fn is_routed_elsewhere(shared: &Shared, request: &Request, index: &str, id: &str) -> bool {
    let probe = Request {
        method: "GET".into(),
        target: format!("/{index}/_doc/{id}"),
        version: "HTTP/1.1".into(),
        headers: request
            .headers
            .iter()
            .filter(|(n, _)| {
                !n.eq_ignore_ascii_case("content-length")
                    && !n.eq_ignore_ascii_case("transfer-encoding")
                    && !n.eq_ignore_ascii_case("content-type")
            })
            .cloned()
            .collect(),
        body: Vec::new(),
    };
    let Ok(response) = forward(shared, &probe) else {
        return false;
    };
    lock(&shared.log).push(format!("GET /{index}/_doc/{id} -> (routing probe)"));
    parse_response(&response)
        .and_then(|(_, body)| serde_json::from_slice::<Value>(&body).ok())
        .is_some_and(|doc| routed_away(&doc))
}

/// `query` with its `if_seq_no` replaced by [`NO_SUCH_SEQ_NO`].
fn impossible_seq_no(query: &str) -> String {
    query
        .split('&')
        .map(|kv| {
            if kv.starts_with("if_seq_no=") {
                format!("if_seq_no={NO_SUCH_SEQ_NO}")
            } else {
                kv.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A `_bulk` body whose conditional items without routing on routed
/// documents now conflict; `None` when nothing changes.
fn bulk_without_routing(shared: &Shared, request: &Request) -> Option<Vec<u8>> {
    let default_index = request
        .target
        .split('?')
        .next()
        .and_then(|p| p.trim_start_matches('/').split('/').next())
        .filter(|s| !s.starts_with('_'))
        .map(str::to_string);
    let text = String::from_utf8(request.body.clone()).ok()?;
    let mut changed = false;
    let mut lines: Vec<String> = Vec::new();
    let mut source_next = false;
    for line in text.lines() {
        if std::mem::take(&mut source_next) || line.trim().is_empty() {
            lines.push(line.to_string());
            continue;
        }
        let Ok(mut action) = serde_json::from_str::<Value>(line) else {
            lines.push(line.to_string());
            continue;
        };
        source_next = action.get("delete").is_none();
        let kind = ["index", "create", "delete", "update"]
            .into_iter()
            .find(|k| action.get(*k).is_some())
            .unwrap_or("index");
        let meta = action
            .get_mut(kind)
            .filter(|m| m.get("if_seq_no").is_some() && m.get("routing").is_none());
        let target = meta.as_ref().and_then(|m| {
            let index = m
                .get("_index")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| default_index.clone())?;
            Some((index, encode(m.get("_id").and_then(Value::as_str)?)))
        });
        match (meta, target) {
            (Some(meta), Some((index, id)))
                if is_routed_elsewhere(shared, request, &index, &id) =>
            {
                meta["if_seq_no"] = json!(NO_SUCH_SEQ_NO);
                changed = true;
                lines.push(action.to_string());
            }
            _ => lines.push(line.to_string()),
        }
    }
    changed.then(|| format!("{}\n", lines.join("\n")).into_bytes())
}

/// An id as a path segment (percent-encoded but for unreserved characters).
fn encode(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
