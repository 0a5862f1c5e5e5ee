//! Conditional writes of many documents in one `_bulk` request, each item
//! an `update` action carrying only the fields its steps set (`{"doc":
//! ...}`, see [`Changes`]) conditional on the `_seq_no`/`_primary_term` it was
//! decided on, with one typed outcome per item (the batched executor's only
//! write path); new documents created together (`create` actions: the audit
//! trail's parts); and
//! unconditional indexing of many documents (seeding, benchmarks).
//!
//! `_bulk` is not atomic: every item succeeds or fails on its own, exactly as
//! if it had been sent alone. A transport failure of a request leaves the
//! outcome of every item IN IT unknown; the caller re-reads them.
//!
//! Bodies are kept within what every product and common front accepts: at
//! most [`MAX_BULK_BODY`] bytes per request (nginx's default
//! `client_max_body_size` is 1 MiB and answers 413 past it,
//! <https://nginx.org/en/docs/http/ngx_http_core_module.html#client_max_body_size>;
//! Amazon OpenSearch Service refuses more than 10 MiB on small instance
//! types, <https://docs.aws.amazon.com/opensearch-service/latest/developerguide/limits.html#network-limits>;
//! Elasticsearch's own `http.max_content_length` is 100 MB). A front with a
//! smaller limit answers 413 before anything is processed, so the request is
//! halved and sent again, down to single items.

use super::reason::truncate;
use super::response::{check, error_from};
use super::{scope, Changes, Cluster};
use crate::error::{Error, Result};
use elasticsearch::BulkParts;
use serde_json::{json, Map, Value};
use std::future::Future;
use std::ops::Range;

/// The largest `_bulk` body sent in one request (see the module's notes).
pub const MAX_BULK_BODY: usize = 1024 * 1024;

/// HTTP 413: the request body was refused whole, nothing of it processed.
const TOO_LARGE: u16 = 413;

/// One conditional partial update.
#[derive(Debug, Clone, Copy)]
pub struct CondWrite<'a> {
    /// Target index.
    pub index: &'a str,
    /// Document id (carried in the body, so any id works).
    pub id: &'a str,
    /// The fields the write sets.
    pub changes: &'a Changes,
    /// `_seq_no` the write is conditional on.
    pub seq_no: i64,
    /// `_primary_term` the write is conditional on.
    pub primary_term: i64,
    /// The document's custom routing value, as read
    /// ([`VersionedDoc::routing`](super::VersionedDoc::routing)).
    pub routing: Option<&'a str>,
}

/// What happened to one item of a `_bulk` of `create` actions.
#[derive(Debug)]
pub enum BulkCreated {
    /// The document did not exist and now does.
    Created,
    /// A document with this id already exists; nothing was written.
    AlreadyExists,
    /// The item failed; a transient error (429, 5xx, a lost answer) leaves
    /// its outcome unknown.
    Failed(Error),
}

/// What happened to one item of a conditional `_bulk`.
#[derive(Debug)]
pub enum ItemOutcome {
    /// Written by this request.
    Written,
    /// The document was not at the version the item was conditional on
    /// (HTTP 409 for this item); nothing was written.
    Conflict,
    /// The item failed; a transient error (429, 5xx) leaves its outcome to
    /// be found by re-reading, any other is final.
    Failed(Error),
}

impl Cluster {
    /// Sends `writes` as conditional `update` actions of `_bulk` and returns
    /// one outcome per item, in order; a request that failed gives its own
    /// items [`ItemOutcome::Failed`] (for a transient error: their outcome
    /// unknown). `Err` means nothing was sent (an item could not be
    /// serialised).
    pub async fn bulk_put_if(&self, writes: &[CondWrite<'_>]) -> Result<Vec<ItemOutcome>> {
        let outcomes = self.bulk_put_if_versioned(writes).await?;
        Ok(outcomes.into_iter().map(|(outcome, _)| outcome).collect())
    }

    /// [`Cluster::bulk_put_if`], with the `(_seq_no, _primary_term)` each
    /// written item now has (when the answer says), so a caller can chain a
    /// further conditional write on a document it has just written.
    ///
    /// The writes go in as many requests as [`MAX_BULK_BODY`] (or a 413)
    /// asks; a request that fails gives [`ItemOutcome::Failed`] to its own
    /// items only, so an item written by another request is never reported
    /// failed. Writes of one index name it in the path only; writes of
    /// several go in one request naming each item's index, or one request
    /// per index where the cluster refuses that (see `scope`): the refused
    /// request ran nothing (the product refuses it while parsing), so its
    /// items are sent again per index. Splitting changes nothing the
    /// protocol relies on: the items of one `_bulk` have no order among
    /// them (they run on their shards independently, "as if sent alone"),
    /// each stays conditional on the version it was decided on, and each
    /// gets its own outcome; the batched executor sends each phase of a
    /// round (one index: transactions, or accounts) and waits for its
    /// answer before the next, so its fence and order are those of the
    /// requests, not of the items.
    pub async fn bulk_put_if_versioned(
        &self,
        writes: &[CondWrite<'_>],
    ) -> Result<Vec<(ItemOutcome, Option<(i64, i64)>)>> {
        let groups = scope::by_index(writes, |w| w.index);
        let mut out: Vec<Option<Answered>> = (0..writes.len()).map(|_| None).collect();
        if groups.len() > 1 && !self.scope.per_index() {
            for (r, answer) in self.bulk_sent(None, writes).await? {
                match answer {
                    // Left unanswered: sent again below, one index at a time.
                    Err(Error::ExplicitIndexRefused { .. }) => self.scope.refused(),
                    answer => fill(&mut out, r, answer),
                }
            }
        }
        for (index, at) in groups {
            let left: Vec<usize> = at.into_iter().filter(|&i| out[i].is_none()).collect();
            if left.is_empty() {
                continue;
            }
            let part: Vec<CondWrite<'_>> = left.iter().map(|&i| writes[i]).collect();
            let mut answered: Vec<Option<Answered>> = (0..part.len()).map(|_| None).collect();
            for (r, answer) in self.bulk_sent(Some(index), &part).await? {
                fill(&mut answered, r, answer);
            }
            for (i, a) in left.into_iter().zip(answered) {
                out[i] = a;
            }
        }
        Ok(out
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| {
                    let e = Error::Decode("a _bulk item was left unanswered".into());
                    (ItemOutcome::Failed(e), None)
                })
            })
            .collect())
    }

    /// Serialises `writes` (naming each item's index unless `path` names
    /// the one index) and sends them in as many requests as their size
    /// asks: each range of items with its request's answer.
    async fn bulk_sent(
        &self,
        path: Option<&str>,
        writes: &[CondWrite<'_>],
    ) -> Result<Vec<(Range<usize>, Result<Vec<Answered>>)>> {
        let lines = writes
            .iter()
            .map(|w| self.bulk_lines(w, path.is_none()))
            .collect::<Result<Vec<_>>>()?;
        let sizes: Vec<usize> = lines.iter().map(Vec::len).collect();
        Ok(in_requests(&sizes, |r| {
            self.bulk_request(path, &writes[r.clone()], &lines[r])
        })
        .await)
    }

    /// Indexes many documents unconditionally (`index` actions: seeding,
    /// benchmarks, tests), in as many `_bulk` requests as [`MAX_BULK_BODY`]
    /// (or a 413) asks. Fails if any item failed.
    pub async fn bulk_index(&self, index: &str, docs: &[(String, Value)]) -> Result<()> {
        let lines = docs
            .iter()
            .map(|(id, doc)| self.index_lines(index, id, doc))
            .collect::<Result<Vec<_>>>()?;
        let sizes: Vec<usize> = lines.iter().map(Vec::len).collect();
        let sent = in_requests(&sizes, |r| self.bulk_index_request(index, &lines[r])).await;
        sent.into_iter().try_for_each(|(_, answer)| answer)
    }

    /// Creates many new documents in `index` (`create` actions: each
    /// written only if no document has its id, as [`Cluster::create`]), in
    /// as many `_bulk` requests as [`MAX_BULK_BODY`] (or a 413) asks: one
    /// outcome per document, in order. A request that failed gives its own
    /// items [`BulkCreated::Failed`] (for a transient error: their outcome
    /// unknown, to be resolved one by one). `Err` means nothing was sent.
    pub async fn bulk_create(
        &self,
        index: &str,
        docs: &[(String, Map<String, Value>)],
    ) -> Result<Vec<BulkCreated>> {
        let lines = docs
            .iter()
            .map(|(id, doc)| {
                // The index is in the path (see `scope`).
                item_lines(
                    &json!({"create": {"_id": id}}),
                    &*self.write_source(index, doc),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let sizes: Vec<usize> = lines.iter().map(Vec::len).collect();
        let sent = in_requests(&sizes, |r| self.bulk_create_request(index, &lines[r])).await;
        let mut out = Vec::with_capacity(docs.len());
        for (r, answer) in sent {
            match answer {
                Ok(items) if items.len() == r.len() => out.extend(items),
                Ok(_) => out.extend(r.map(|_| {
                    BulkCreated::Failed(Error::Decode(
                        "_bulk answer without one item per action".into(),
                    ))
                })),
                Err(e) => out.extend(r.map(|_| BulkCreated::Failed(e.clone()))),
            }
        }
        Ok(out)
    }

    /// Sends one `_bulk` request of `create` items.
    async fn bulk_create_request(
        &self,
        index: &str,
        lines: &[Vec<u8>],
    ) -> Result<Vec<BulkCreated>> {
        let body = self
            .send_bulk(BulkParts::Index(index), lines, index)
            .await?;
        let items = body
            .get("items")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Decode("_bulk answer without items".into()))?;
        Ok(items
            .iter()
            .map(|item| {
                let Some(result) = item.get("create") else {
                    return BulkCreated::Failed(Error::Decode(format!(
                        "unexpected _bulk item {item}"
                    )));
                };
                let status = result
                    .get("status")
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok())
                    .unwrap_or(500);
                match status {
                    200..=299 => BulkCreated::Created,
                    409 => BulkCreated::AlreadyExists,
                    _ => BulkCreated::Failed(error_from(status, result, index)),
                }
            })
            .collect())
    }

    /// An unconditional item's two NDJSON lines, newlines included.
    fn index_lines(&self, index: &str, id: &str, doc: &Value) -> Result<Vec<u8>> {
        // The index is in the path (see `scope`).
        let action = json!({"index": {"_id": id}});
        let doc = match doc.as_object() {
            Some(o) => Value::Object(self.write_source(index, o).into_owned()),
            None => doc.clone(),
        };
        item_lines(&action, &doc)
    }

    /// Sends one `_bulk` request of unconditional items; fails with the
    /// first item's error if any failed.
    async fn bulk_index_request(&self, index: &str, lines: &[Vec<u8>]) -> Result<()> {
        let body = self
            .send_bulk(BulkParts::Index(index), lines, index)
            .await?;
        if body.get("errors").and_then(Value::as_bool) != Some(true) {
            return Ok(());
        }
        let first = body
            .get("items")
            .and_then(Value::as_array)
            .and_then(|items| {
                items
                    .iter()
                    .find_map(|i| i.pointer("/index/error").cloned())
            })
            .unwrap_or(Value::Null);
        Err(Error::Cluster {
            status: 400,
            reason: format!("bulk indexing failed: {}", truncate(&first.to_string())),
            retry_after: None,
        })
    }

    /// One item's two NDJSON lines (the `update` action, naming its index
    /// when `explicit`, and its `{"doc": ...}` body), newlines included.
    fn bulk_lines(&self, w: &CondWrite<'_>, explicit: bool) -> Result<Vec<u8>> {
        let mut meta = json!({
            "_id": w.id,
            "if_seq_no": w.seq_no,
            "if_primary_term": w.primary_term,
        });
        if explicit {
            meta["_index"] = json!(w.index);
        }
        let action = json!({ "update": super::dotted::with_routing(meta, w.routing) });
        item_lines(&action, &self.update_body(w.index, w.changes))
    }

    /// Sends one `_bulk` request of already serialised items, on `parts`'
    /// index or on the indices the items name, once (a write is never
    /// retried here: its outcome is unknown); the answer's body, with its
    /// errors typed against `index`.
    async fn send_bulk(
        &self,
        parts: BulkParts<'_>,
        lines: &[Vec<u8>],
        index: &str,
    ) -> Result<Value> {
        let resp = self.client.bulk(parts).body(vec![lines.concat()]).send();
        let resp = self.send(resp).await?;
        check(resp, index).await
    }

    /// Sends one `_bulk` request of already serialised items, on `path`'s
    /// index or (`None`) on the indices the items name.
    async fn bulk_request(
        &self,
        path: Option<&str>,
        writes: &[CondWrite<'_>],
        lines: &[Vec<u8>],
    ) -> Result<Vec<Answered>> {
        let parts = path.map_or(BulkParts::None, BulkParts::Index);
        let body = self.send_bulk(parts, lines, writes[0].index).await?;
        let items = body
            .get("items")
            .and_then(Value::as_array)
            .filter(|items| items.len() == writes.len())
            .ok_or_else(|| Error::Decode("_bulk answer without one item per action".into()))?;
        Ok(items
            .iter()
            .zip(writes)
            .map(|(item, w)| item_outcome(item, w.index))
            .collect())
    }
}

/// One `_bulk` item's two NDJSON lines, `action` and its `body`, newlines
/// included.
fn item_lines(action: &Value, body: &impl serde::Serialize) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(action).map_err(|e| Error::Decode(e.to_string()))?;
    bytes.push(b'\n');
    serde_json::to_writer(&mut bytes, body).map_err(|e| Error::Decode(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Sends the items whose serialised sizes are `sizes` in requests of at
/// most [`MAX_BULK_BODY`] bytes (`send` sends one range of them); a request
/// refused whole as too large (413: nothing of it processed) is halved and
/// sent again, down to single items. Every item is in exactly one returned
/// range, in order, with its request's answer.
async fn in_requests<T, F, Fut>(sizes: &[usize], mut send: F) -> Vec<(Range<usize>, Result<T>)>
where
    F: FnMut(Range<usize>) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut answers = Vec::new();
    let mut pending: Vec<Range<usize>> = chunks(sizes, MAX_BULK_BODY);
    pending.reverse();
    while let Some(r) = pending.pop() {
        match send(r.clone()).await {
            Err(Error::Cluster { status, .. }) if status == TOO_LARGE && r.len() > 1 => {
                let mid = r.start + r.len() / 2;
                tracing::info!(items = r.len(), "_bulk refused as too large (413): halving");
                pending.push(mid..r.end);
                pending.push(r.start..mid);
            }
            answer => answers.push((r, answer)),
        }
    }
    answers
}

/// Consecutive ranges of items whose bodies add up to at most `budget`
/// bytes; an item larger than the budget goes alone.
fn chunks(sizes: &[usize], budget: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, &size) in sizes.iter().enumerate() {
        if i > start && used + size > budget {
            out.push(start..i);
            (start, used) = (i, 0);
        }
        used += size;
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// One item's outcome and the version it now has.
type Answered = (ItemOutcome, Option<(i64, i64)>);

/// Puts a request's answer into `out` at `r`: its items' outcomes, or its
/// failure for each of them.
fn fill(out: &mut [Option<Answered>], r: Range<usize>, answer: Result<Vec<Answered>>) {
    match answer {
        Ok(items) => {
            for (slot, item) in out[r].iter_mut().zip(items) {
                *slot = Some(item);
            }
        }
        Err(e) => {
            for slot in &mut out[r] {
                *slot = Some((ItemOutcome::Failed(e.clone()), None));
            }
        }
    }
}

fn item_outcome(item: &Value, index: &str) -> (ItemOutcome, Option<(i64, i64)>) {
    let Some(result) = item.get("update") else {
        let e = Error::Decode(format!("unexpected _bulk item {item}"));
        return (ItemOutcome::Failed(e), None);
    };
    let status = result
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(500);
    match status {
        // `noop` (200) included: the document already held the changes and
        // stayed at the version the item was conditional on.
        200..=299 => {
            let seq_no = result.get("_seq_no").and_then(Value::as_i64);
            let term = result.get("_primary_term").and_then(Value::as_i64);
            (ItemOutcome::Written, seq_no.zip(term))
        }
        409 => (ItemOutcome::Conflict, None),
        _ => (ItemOutcome::Failed(error_from(status, result, index)), None),
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::bulk::chunks;

    #[test]
    fn chunks_stay_within_the_budget_and_keep_every_item_once_in_order() {
        assert!(chunks(&[], 10).is_empty());
        assert_eq!(chunks(&[4, 4, 4], 10), vec![0..2, 2..3]);
        assert_eq!(chunks(&[4, 6, 10, 1], 10), vec![0..2, 2..3, 3..4]);
        // An item over the budget goes alone, never dropped.
        assert_eq!(chunks(&[3, 25, 3], 10), vec![0..1, 1..2, 2..3]);
        assert_eq!(chunks(&[10, 10], 10), vec![0..1, 1..2]);
    }
}
