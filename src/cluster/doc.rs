//! The values the document operations exchange: a document with the
//! concurrency tokens it was read at, the typed outcome of each kind of
//! write, and a search hit.

use serde_json::{Map, Value};

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
    /// The custom routing value it was indexed with (`_routing`), which
    /// every write to it must pass (see `routed`); `None` when routed by id.
    pub routing: Option<String>,
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

impl WriteOutcome {
    /// The version a write answer (a document API's, or a `_bulk` item's)
    /// says the document is at now (a `noop` answer gives the version it
    /// stayed at); `-1` where the answer does not say.
    pub(super) fn of_answer(body: &Value) -> WriteOutcome {
        WriteOutcome::Written {
            seq_no: body.get("_seq_no").and_then(Value::as_i64).unwrap_or(-1),
            primary_term: body
                .get("_primary_term")
                .and_then(Value::as_i64)
                .unwrap_or(-1),
        }
    }
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
