//! What is wrong with a document the tool read, typed. The readers of
//! transactions, accounts, locks and audit records report each problem as a
//! [`Problem`]; its wording is written once, in `Display`, so callers test
//! the kind (`matches!`) and never the words. Field names are the canonical
//! ones until [`crate::protocol::schema::Schema::localize_problems`] gives
//! them the application's names.

use crate::protocol::integer::{NotExact, MAX_AMOUNT};
use serde::{Serialize, Serializer};
use std::fmt;

/// One thing wrong with a document (or with the documents an act needs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// None of these names of one field is present (`` `a`/`b` is missing ``).
    Missing(Vec<String>),
    /// The field holds an empty string.
    Empty(String),
    /// The field holds something else than a string (the value as JSON).
    NotAString {
        /// The field.
        field: String,
        /// What it holds, as JSON.
        value: String,
    },
    /// The field holds no exact integer, and why.
    NotAnInteger {
        /// The field.
        field: String,
        /// What it holds, as JSON.
        value: String,
        /// Why it is not one the tool can compute with.
        why: NotExact,
    },
    /// The field holds no time the tool can read.
    NotATimestamp {
        /// The field.
        field: String,
        /// What it holds, as JSON.
        value: String,
    },
    /// The field should be an array and is not.
    NotAnArray {
        /// The field.
        field: String,
        /// What it holds, as JSON.
        value: String,
    },
    /// An array field holds an item of the wrong kind.
    NonString {
        /// The field.
        field: String,
        /// The item, as JSON.
        item: String,
    },
    /// An array of records holds one the tool cannot read.
    UnreadableRecord {
        /// The field.
        field: String,
        /// The record, as JSON.
        record: String,
    },
    /// The state field holds a state the tool does not know.
    UnknownState {
        /// The state field.
        field: String,
        /// The state as written.
        state: String,
    },
    /// The state field is missing or not a string, as a step reads it (the
    /// value as it was found, `None` when absent).
    NoState(String),
    /// Source and destination are the same account.
    SameAccount(String),
    /// The amount is outside `1..=MAX_AMOUNT`.
    AmountOutOfRange(i64),
    /// Nothing in particular is wrong, but parts the act needs are absent.
    Incomplete,
    /// The account the document names does not exist.
    AccountMissing,
    /// An account a transfer names is missing or malformed.
    AccountUnusable,
    /// A step's decision found the documents contradict each other.
    Contradiction(Contradiction),
    /// Another document is unreadable (an account a transfer names).
    Document {
        /// What kind of document.
        kind: &'static str,
        /// Its id.
        id: String,
        /// What is wrong with it.
        problems: Problems,
    },
    /// Another document is not there.
    NotFound {
        /// What kind of document.
        kind: &'static str,
        /// The index searched.
        index: String,
        /// Its id.
        id: String,
    },
    /// A finished audit record names more parts than were found.
    PartsMissing {
        /// How many the record names.
        named: u32,
        /// How many were found.
        found: u32,
    },
    /// The document does not decode (the decoder's message).
    Undecodable(String),
}

impl Problem {
    /// Every field name the problem carries, to be renamed by a schema map.
    pub(crate) fn fields_mut(&mut self) -> Vec<&mut String> {
        match self {
            Problem::Missing(fields) => fields.iter_mut().collect(),
            Problem::Empty(field)
            | Problem::NotAString { field, .. }
            | Problem::NotAnInteger { field, .. }
            | Problem::NotATimestamp { field, .. }
            | Problem::NotAnArray { field, .. }
            | Problem::NonString { field, .. }
            | Problem::UnreadableRecord { field, .. }
            | Problem::UnknownState { field, .. } => vec![field],
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing(fields) => write!(f, "`{}` is missing", fields.join("`/`")),
            Problem::Empty(field) => write!(f, "`{field}` is empty"),
            Problem::NotAString { field, value } => write!(f, "`{field}` is not a string: {value}"),
            Problem::NotAnInteger { field, value, why } => {
                write!(f, "`{field}` is not an integer: {value} ({why})")
            }
            Problem::NotATimestamp { field, value } => {
                write!(f, "`{field}` is not a timestamp: {value}")
            }
            Problem::NotAnArray { field, value } => write!(f, "`{field}` is not an array: {value}"),
            Problem::NonString { field, item } => write!(f, "`{field}` holds a non-string: {item}"),
            Problem::UnreadableRecord { field, record } => {
                write!(f, "`{field}` holds an unreadable record: {record}")
            }
            Problem::UnknownState { field, state } => {
                write!(f, "`{field}` holds an unknown state `{state}`")
            }
            Problem::NoState(value) => {
                write!(f, "`transaction_state` is missing or not a string: {value}")
            }
            Problem::SameAccount(a) => {
                write!(f, "source and destination are the same account `{a}`")
            }
            Problem::AmountOutOfRange(amount) => {
                write!(f, "amount must be between 1 and {MAX_AMOUNT}, got {amount}")
            }
            Problem::Incomplete => f.write_str("incomplete"),
            Problem::AccountMissing => f.write_str("account does not exist"),
            Problem::AccountUnusable => f.write_str("an account it names is missing or malformed"),
            Problem::Contradiction(why) => write!(f, "{why}"),
            Problem::Document { kind, id, problems } => {
                write!(f, "{kind} `{id}` is malformed: {problems}")
            }
            Problem::NotFound { kind, index, id } => {
                write!(f, "{kind} `{id}` not found in index `{index}`")
            }
            Problem::PartsMissing { named, found } => {
                write!(f, "names {named} parts, {found} found")
            }
            Problem::Undecodable(why) => f.write_str(why),
        }
    }
}

/// A decision that cannot be taken because the documents contradict the
/// protocol ([`super::decide`]'s refusals): a document problem of its own
/// kind, so it is written here, below the decisions that find it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Contradiction {
    /// An undo of a transaction the account settled as committed.
    SettledAsCommitted {
        /// The transaction.
        txn: String,
    },
    /// The transaction's amount was edited after it was applied.
    AmountChanged {
        /// The delta the account recorded.
        applied: i64,
        /// The amount the transaction document says now.
        document: u64,
    },
    /// The balance change would overflow.
    Overflow {
        /// The balance.
        balance: i64,
        /// The change.
        delta: i64,
    },
    /// A recorded delta that cannot be reversed (`i64::MIN`).
    CannotNegate(i64),
    /// A step asked of an account that is not an account step (its label).
    NotAnAccountStep(&'static str),
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Contradiction::SettledAsCommitted { txn } => write!(
                f,
                "account settled `{txn}` as committed; a rollback must not undo it"
            ),
            Contradiction::AmountChanged { applied, document } => write!(
                f,
                "amount changed after it was applied: applied {applied:+}, document says {document}"
            ),
            Contradiction::Overflow { balance, delta } => {
                write!(f, "balance {balance} {delta:+} overflows")
            }
            Contradiction::CannotNegate(delta) => write!(f, "cannot negate {delta}"),
            Contradiction::NotAnAccountStep(step) => write!(f, "{step} is not an account step"),
        }
    }
}

/// A problem is shown and serialised as its words.
impl Serialize for Problem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Everything wrong with one document, in the order found; shown joined by
/// `; ` and serialised as a list of words.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    /// One problem.
    pub fn one(p: Problem) -> Problems {
        Problems(vec![p])
    }
}

impl std::ops::Deref for Problems {
    type Target = Vec<Problem>;
    fn deref(&self) -> &Vec<Problem> {
        &self.0
    }
}

impl std::ops::DerefMut for Problems {
    fn deref_mut(&mut self) -> &mut Vec<Problem> {
        &mut self.0
    }
}

impl<'a> IntoIterator for &'a Problems {
    type Item = &'a Problem;
    type IntoIter = std::slice::Iter<'a, Problem>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl From<Vec<Problem>> for Problems {
    fn from(v: Vec<Problem>) -> Problems {
        Problems(v)
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_read_as_they_always_did() {
        let p = Problems(vec![
            Problem::Missing(vec!["src_acct".into(), "src_account".into()]),
            Problem::UnknownState {
                field: "transaction_state".into(),
                state: "paused".into(),
            },
        ]);
        assert_eq!(
            p.to_string(),
            "`src_acct`/`src_account` is missing; `transaction_state` holds an unknown state `paused`"
        );
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            serde_json::json!([
                "`src_acct`/`src_account` is missing",
                "`transaction_state` holds an unknown state `paused`"
            ])
        );
    }
}
