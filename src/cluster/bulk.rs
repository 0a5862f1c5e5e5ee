//! Conditional writes of many documents in one `_bulk` request, each item
//! an `update` action carrying only the fields its steps set (`{"doc":
//! ...}`, see [`Changes`]) conditional on the `_seq_no`/`_primary_term` it was
//! decided on, with one typed outcome per item (the batched executor's only
//! write path); and
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
use super::{Changes, Cluster};
use crate::error::{Error, Result};
use elasticsearch::BulkParts;
use serde_json::{json, Value};
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
    /// failed.
    pub async fn bulk_put_if_versioned(
        &self,
        writes: &[CondWrite<'_>],
    ) -> Result<Vec<(ItemOutcome, Option<(i64, i64)>)>> {
        let lines = writes
            .iter()
            .map(|w| self.bulk_lines(w))
            .collect::<Result<Vec<_>>>()?;
        let sizes: Vec<usize> = lines.iter().map(Vec::len).collect();
        let sent = in_requests(&sizes, |r| self.bulk_request(&writes[r.clone()], &lines[r])).await;
        let mut outcomes = Vec::with_capacity(writes.len());
        for (r, answer) in sent {
            match answer {
                Ok(items) => outcomes.extend(items),
                Err(e) => outcomes.extend(r.map(|_| (ItemOutcome::Failed(e.clone()), None))),
            }
        }
        Ok(outcomes)
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

    /// An unconditional item's two NDJSON lines, newlines included.
    fn index_lines(&self, index: &str, id: &str, doc: &Value) -> Result<Vec<u8>> {
        let action = json!({"index": {"_index": index, "_id": id}});
        let doc = match doc.as_object() {
            Some(o) => Value::Object(self.write_source(index, o).into_owned()),
            None => doc.clone(),
        };
        let mut bytes = serde_json::to_vec(&action).map_err(|e| Error::Decode(e.to_string()))?;
        bytes.push(b'\n');
        serde_json::to_writer(&mut bytes, &doc).map_err(|e| Error::Decode(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Sends one `_bulk` request of unconditional items; fails with the
    /// first item's error if any failed.
    async fn bulk_index_request(&self, index: &str, lines: &[Vec<u8>]) -> Result<()> {
        let resp = self
            .client
            .bulk(BulkParts::None)
            .body(vec![lines.concat()])
            .send();
        let resp = self.send(resp).await?;
        let body = check(resp, index).await?;
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

    /// One item's two NDJSON lines (the `update` action and its `{"doc":
    /// ...}` body), newlines included.
    fn bulk_lines(&self, w: &CondWrite<'_>) -> Result<Vec<u8>> {
        let meta = json!({
            "_index": w.index,
            "_id": w.id,
            "if_seq_no": w.seq_no,
            "if_primary_term": w.primary_term,
        });
        let action = json!({ "update": super::dotted::with_routing(meta, w.routing) });
        let body = self.update_body(w.index, w.changes);
        let mut bytes = serde_json::to_vec(&action).map_err(|e| Error::Decode(e.to_string()))?;
        bytes.push(b'\n');
        serde_json::to_writer(&mut bytes, &body).map_err(|e| Error::Decode(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Sends one `_bulk` request of already serialised items.
    async fn bulk_request(
        &self,
        writes: &[CondWrite<'_>],
        lines: &[Vec<u8>],
    ) -> Result<Vec<(ItemOutcome, Option<(i64, i64)>)>> {
        let body: Vec<u8> = lines.concat();
        // Sent once: a write is never retried here (its outcome is unknown).
        let resp = self.client.bulk(BulkParts::None).body(vec![body]).send();
        let resp = self.send(resp).await?;
        let body = check(resp, writes[0].index).await?;
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
