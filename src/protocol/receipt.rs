//! A receipt: what one balance write did to one account (the balance
//! before and after it, and the versions it was conditional on and landed
//! at), carried from the executor through the step reports into the audit
//! record, so the record proves what money moved (issue 31, receipts;
//! verified by `trail::receipts`).

use serde::{Deserialize, Serialize};

/// One balance write on an account (the account is its step's target).
/// A fence (a write that changes no balance) and a remove (which changes
/// none either) make none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Receipt {
    /// The balance the write was decided on.
    pub before: i64,
    /// The balance it wrote.
    pub after: i64,
    /// The `_primary_term` of the version it was conditional on (and, since
    /// a conditional write fails across a change of primary term, of the
    /// version it landed at).
    pub term: i64,
    /// The `_seq_no` it was conditional on.
    pub on: i64,
    /// The `_seq_no` it landed at, from the write's answer; `None` when the
    /// answer was lost and the write was recognised on a re-read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<i64>,
}

impl Receipt {
    /// A write from `before` to `after`, conditional on `on` and landed at
    /// `landed` (`None`: answer lost), both `(_seq_no, _primary_term)`.
    pub fn new(before: i64, after: i64, on: (i64, i64), landed: Option<(i64, i64)>) -> Receipt {
        Receipt {
            before,
            after,
            term: on.1,
            on: on.0,
            at: landed.map(|(seq, _)| seq),
        }
    }
}
