//! Conditional writes of many documents in one `_bulk` request, each item
//! conditional on the `_seq_no`/`_primary_term` it was decided on, with one
//! typed outcome per item (the batched executor's only write path).
//!
//! `_bulk` is not atomic: every item succeeds or fails on its own, exactly as
//! if it had been sent alone. A transport failure of the whole request leaves
//! the outcome of EVERY item unknown; the caller re-reads them all.

use super::response::{check, error_from};
use super::Cluster;
use crate::error::{Error, Result};
use elasticsearch::http::request::JsonBody;
use elasticsearch::BulkParts;
use serde_json::{json, Map, Value};

/// One conditional index of a full source.
#[derive(Debug, Clone, Copy)]
pub struct CondWrite<'a> {
    /// Target index.
    pub index: &'a str,
    /// Document id (carried in the body, so any id works).
    pub id: &'a str,
    /// The full new source.
    pub source: &'a Map<String, Value>,
    /// `_seq_no` the write is conditional on.
    pub seq_no: i64,
    /// `_primary_term` the write is conditional on.
    pub primary_term: i64,
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
    /// Sends `writes` as one `_bulk` of conditional `index` actions and
    /// returns one outcome per item, in order. `Err` means the request as a
    /// whole failed (for a transient error: every item's outcome unknown).
    pub async fn bulk_put_if(&self, writes: &[CondWrite<'_>]) -> Result<Vec<ItemOutcome>> {
        let outcomes = self.bulk_put_if_versioned(writes).await?;
        Ok(outcomes.into_iter().map(|(outcome, _)| outcome).collect())
    }

    /// [`Cluster::bulk_put_if`], with the `(_seq_no, _primary_term)` each
    /// written item now has (when the answer says), so a caller can chain a
    /// further conditional write on a document it has just written.
    pub async fn bulk_put_if_versioned(
        &self,
        writes: &[CondWrite<'_>],
    ) -> Result<Vec<(ItemOutcome, Option<(i64, i64)>)>> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        let mut lines: Vec<JsonBody<Value>> = Vec::with_capacity(writes.len() * 2);
        for w in writes {
            lines.push(
                json!({"index": {
                    "_index": w.index,
                    "_id": w.id,
                    "if_seq_no": w.seq_no,
                    "if_primary_term": w.primary_term,
                }})
                .into(),
            );
            lines.push(Value::Object(self.write_source(w.index, w.source).into_owned()).into());
        }
        // Sent once: a write is never retried here (its outcome is unknown).
        let resp = self.client.bulk(BulkParts::None).body(lines).send();
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

fn item_outcome(item: &Value, index: &str) -> (ItemOutcome, Option<(i64, i64)>) {
    let Some(result) = item.get("index") else {
        let e = Error::Decode(format!("unexpected _bulk item {item}"));
        return (ItemOutcome::Failed(e), None);
    };
    let status = result
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(500);
    match status {
        200..=299 => {
            let seq_no = result.get("_seq_no").and_then(Value::as_i64);
            let term = result.get("_primary_term").and_then(Value::as_i64);
            (ItemOutcome::Written, seq_no.zip(term))
        }
        409 => (ItemOutcome::Conflict, None),
        _ => (ItemOutcome::Failed(error_from(status, result, index)), None),
    }
}
