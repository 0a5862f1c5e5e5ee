//! The poll's read of the live acknowledgements ([`crate::protocol::acks`]):
//! one more search in the poll's one `_msearch` (no request of its own),
//! always its last, read apart from the others: a missing acks index is no
//! acks (not a missing index the header warns of), and one the user may
//! not read leaves the acks unknown with a warning, never the poll failed.

use crate::error::{Error, Result};
use crate::protocol::acks::{live_search, Acks};
use crate::protocol::read::coverage::Coverage;
use crate::protocol::Indices;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The acks search of the poll taken at `now`.
pub(super) struct AcksSearch {
    now: DateTime<Utc>,
}

impl AcksSearch {
    /// The search for the acks live at `now`.
    pub(super) fn new(now: DateTime<Utc>) -> AcksSearch {
        AcksSearch { now }
    }

    /// Its place in the `_msearch`: the acks index and the body.
    pub(super) fn search(&self, ix: &Indices) -> (String, Value) {
        (ix.acks.clone(), live_search(self.now))
    }

    /// Its answer read: the live acks (its coverage added to `coverage`);
    /// what went wrong in words when it could not be read.
    pub(super) fn read(
        &self,
        answer: Option<Result<Value>>,
        coverage: &mut Coverage,
    ) -> std::result::Result<Acks, String> {
        match answer {
            Some(Ok(v)) => {
                coverage.add(Coverage::of(&v));
                Acks::from_answer(&v, self.now).map_err(|e| e.to_string())
            }
            None | Some(Err(Error::IndexMissing(_))) => Ok(Acks::default()),
            Some(Err(e)) => Err(e.to_string()),
        }
    }
}
