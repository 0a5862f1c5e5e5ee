//! Making the [`FaultProxy`] shed `_bulk` items as a loaded cluster does:
//! Elasticsearch and OpenSearch reject the items their write thread pool
//! has no room for, one by one, with `429` and
//! `es_rejected_execution_exception` inside a `200` answer whose `errors`
//! is true, while the other items of the same request are written
//! (<https://www.elastic.co/guide/en/elasticsearch/reference/current/docs-bulk.html>:
//! "the bulk API ... returns a 429 ... for each rejected item";
//! Elastic's blog "Why am I seeing bulk rejections in my Elasticsearch
//! cluster?"). The proxy takes every `every`-th item out of the request
//! before forwarding it (so the cluster never sees it) and puts the
//! rejection in its place in the answer.
//!
//! Reads are shed the same way: `_mget` and `_msearch` answer 200 with a
//! per-item failure for the items the search thread pool rejected
//! (`_msearch`: "each response ... an error object" for a failed search,
//! status 429 for a rejection; `_mget`: the item's `error`), the others
//! answered. The proxy forwards the read and puts a rejection in place of
//! every `every`-th item of the answer.

use super::{FaultProxy, Request, Shared};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The shedding rule: every `every`-th `_bulk` item is rejected (0: none).
#[derive(Debug, Default)]
pub(super) struct Rule {
    every: AtomicUsize,
    seen: AtomicUsize,
    rejected: AtomicUsize,
    read_every: AtomicUsize,
    read_seen: AtomicUsize,
    read_rejected: AtomicUsize,
}

/// The positions taken out of one request, and how many items it had.
pub(super) struct Shed {
    rejected: Vec<usize>,
    items: usize,
}

impl FaultProxy {
    /// Rejects every `every`-th `_bulk` item from now on with 429
    /// `es_rejected_execution_exception` (5: 20 % of them); 0 stops.
    pub fn shed_bulk_items(&self, every: usize) {
        self.shared.shed.every.store(every, Ordering::SeqCst);
    }

    /// Rejects every `every`-th item of `_mget` and `_msearch` answers from
    /// now on with a per-item 429 `es_rejected_execution_exception`; 0 stops.
    pub fn shed_read_items(&self, every: usize) {
        self.shared.shed.read_every.store(every, Ordering::SeqCst);
    }

    /// `_mget`/`_msearch` items rejected so far.
    pub fn shed_read_count(&self) -> usize {
        self.shared.shed.read_rejected.load(Ordering::SeqCst)
    }

    /// `_bulk` items rejected so far.
    pub fn shed_items(&self) -> usize {
        self.shared.shed.rejected.load(Ordering::SeqCst)
    }
}

/// The rejection of one item, as the cluster writes it.
fn rejection(action: &Value) -> Value {
    let (op, meta) = action
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap_or_else(|| ("index".into(), json!({})));
    json!({ op: {
        "_index": meta.get("_index").cloned().unwrap_or(Value::Null),
        "_id": meta.get("_id").cloned().unwrap_or(Value::Null),
        "status": 429,
        "error": {"type": "es_rejected_execution_exception",
            "reason": "rejected execution of coordinating operation [shard_detail=[bulk][0]], \
                       coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, \
                       coordinating_operation_bytes=1, max_coordinating_and_primary_bytes=0"}
    }})
}

/// Takes the rejected items out of a `_bulk` request (`None`: the rule is
/// off, or this is no `_bulk`). Items are `index`/`create`/`update` (an
/// action line and a source line) or `delete` (an action line).
pub(super) fn before(shared: &Shared, request: &mut Request) -> Option<(Shed, Vec<Value>)> {
    let every = shared.shed.every.load(Ordering::SeqCst);
    if every == 0 || request.method != "POST" || !request.target.contains("_bulk") {
        return None;
    }
    let chunked = request.headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    let body = if chunked {
        super::super::dechunk(&request.body)?
    } else {
        request.body.clone()
    };
    let text = String::from_utf8(body).ok()?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let mut kept = String::new();
    let mut shed = Shed {
        rejected: Vec::new(),
        items: 0,
    };
    let mut actions = Vec::new();
    while let Some(action) = lines.next() {
        let parsed: Value = serde_json::from_str(action).ok()?;
        let source = if parsed.get("delete").is_some() {
            None
        } else {
            Some(lines.next()?)
        };
        let n = shared.shed.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if n.is_multiple_of(every) {
            shed.rejected.push(shed.items);
            shared.shed.rejected.fetch_add(1, Ordering::SeqCst);
            actions.push(parsed);
        } else {
            kept.push_str(action);
            kept.push('\n');
            if let Some(s) = source {
                kept.push_str(s);
                kept.push('\n');
            }
        }
        shed.items += 1;
    }
    super::personality::set_body(request, kept.into_bytes());
    Some((shed, actions))
}

/// Whether nothing is left to forward.
pub(super) fn all_shed(shed: &(Shed, Vec<Value>)) -> bool {
    shed.0.rejected.len() == shed.0.items
}

/// The answer when every item was shed.
pub(super) fn answer_all(shed: &(Shed, Vec<Value>)) -> Vec<u8> {
    let items: Vec<Value> = shed.1.iter().map(rejection).collect();
    super::Canned::json(200, json!({"took": 0, "errors": true, "items": items})).bytes(0)
}

/// The upstream answer with the rejections put back in their places.
pub(super) fn after(shed: &(Shed, Vec<Value>), response: Vec<u8>) -> Vec<u8> {
    let (s, actions) = shed;
    super::personality::rebody(response, |mut v| {
        let written = v
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut written = written.into_iter();
        let mut rejected = s.rejected.iter().zip(actions).peekable();
        let mut items = Vec::with_capacity(s.items);
        for i in 0..s.items {
            match rejected.peek() {
                Some((&at, action)) if at == i => {
                    items.push(rejection(action));
                    rejected.next();
                }
                _ => items.extend(written.next()),
            }
        }
        v["items"] = Value::Array(items);
        v["errors"] = Value::Bool(true);
        v
    })
}

/// A read answer (`_mget`, `_msearch`) with every `every`-th item replaced
/// by a rejection, as a loaded search thread pool answers.
pub(super) fn after_read(shared: &Shared, target: &str, response: Vec<u8>) -> Vec<u8> {
    let every = shared.shed.read_every.load(Ordering::SeqCst);
    let key = if target.contains("_mget") {
        "docs"
    } else if target.contains("_msearch") {
        "responses"
    } else {
        return response;
    };
    if every == 0 {
        return response;
    }
    let error = json!({"root_cause": [{"type": "es_rejected_execution_exception",
        "reason": "rejected execution of search operation"}],
        "type": "es_rejected_execution_exception",
        "reason": "rejected execution of search operation"});
    super::personality::rebody(response, |mut v| {
        if let Some(items) = v.get_mut(key).and_then(Value::as_array_mut) {
            for item in items.iter_mut() {
                let n = shared.shed.read_seen.fetch_add(1, Ordering::SeqCst) + 1;
                if !n.is_multiple_of(every) {
                    continue;
                }
                shared.shed.read_rejected.fetch_add(1, Ordering::SeqCst);
                *item = if key == "docs" {
                    json!({"_index": item.get("_index").cloned().unwrap_or(Value::Null),
                        "_id": item.get("_id").cloned().unwrap_or(Value::Null),
                        "error": error.clone()})
                } else {
                    json!({"error": error.clone(), "status": 429})
                };
            }
        }
        v
    })
}
