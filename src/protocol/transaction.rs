//! Transaction documents, read tolerantly.
//!
//! Deployments that followed the article by hand are the norm, so a
//! transaction is parsed field by field: both `src_acct`/`dest_acct` and the
//! article mapping's `src_account`/`dest_account` are accepted, unknown states
//! are kept (never dropped), and everything that is wrong is collected in
//! [`Transaction::problems`] instead of failing the whole read.

use super::integer::exact_integer;
use super::problem::{Problem, Problems};
use super::reverse::link::{link_of, REVERSED_BY, REVERSES};
use super::time::parse_timestamp;
use crate::error::Error;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::fmt;

pub use super::integer::MAX_AMOUNT;

/// Why `amount` cannot be moved, if it cannot: amounts are positive and at
/// most [`MAX_AMOUNT`].
pub fn amount_problem(amount: i64) -> Option<Problem> {
    (!(1..=MAX_AMOUNT).contains(&amount)).then_some(Problem::AmountOutOfRange(amount))
}

/// The protocol state of a transaction (`transaction_state`).
///
/// Ordered by the one state order every view uses ([`TxnState::KNOWN`]:
/// protocol order, then unknown states by name); [`TxnState::order_key`]
/// puts a missing state last.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TxnState {
    /// Written, not yet started.
    Created,
    /// Being applied to the accounts.
    Pending,
    /// Applied to both accounts; ids being removed.
    Committed,
    /// Done; terminal.
    Finished,
    /// Being rolled back.
    Terminating,
    /// Rolled back; terminal.
    RolledBack,
    /// A state this tool does not know; kept verbatim, never acted upon.
    Unknown(String),
}

impl TxnState {
    /// Every known state in protocol order, for display and aggregation.
    pub const KNOWN: [TxnState; 6] = [
        TxnState::Created,
        TxnState::Pending,
        TxnState::Committed,
        TxnState::Terminating,
        TxnState::Finished,
        TxnState::RolledBack,
    ];

    /// The names of the non-terminal states the stuck query looks for.
    pub const NON_TERMINAL_NAMES: [&'static str; 4] =
        ["created", "pending", "committed", "terminating"];

    /// Parses the stored string; anything unrecognised becomes `Unknown`.
    pub fn parse(s: &str) -> TxnState {
        match s {
            "created" => TxnState::Created,
            "pending" => TxnState::Pending,
            "committed" => TxnState::Committed,
            "finished" => TxnState::Finished,
            "terminating" => TxnState::Terminating,
            "rolled-back" => TxnState::RolledBack,
            other => TxnState::Unknown(other.to_string()),
        }
    }

    /// The string stored in `transaction_state`.
    pub fn as_str(&self) -> &str {
        match self {
            TxnState::Created => "created",
            TxnState::Pending => "pending",
            TxnState::Committed => "committed",
            TxnState::Finished => "finished",
            TxnState::Terminating => "terminating",
            TxnState::RolledBack => "rolled-back",
            TxnState::Unknown(s) => s,
        }
    }

    /// Position in [`TxnState::KNOWN`]; unknown states come after.
    fn rank(&self) -> usize {
        TxnState::KNOWN
            .iter()
            .position(|k| k == self)
            .unwrap_or(TxnState::KNOWN.len())
    }

    /// The sort key of a state as read, in the one state order: known
    /// states in protocol order, then unknown ones by name, then no state.
    pub fn order_key(s: Option<&TxnState>) -> (bool, Option<&TxnState>) {
        (s.is_none(), s)
    }

    /// Finished or rolled-back: nothing will ever happen to it again.
    pub fn is_terminal(&self) -> bool {
        matches!(self, TxnState::Finished | TxnState::RolledBack)
    }

    /// One of the four states in which recovery has work to do.
    pub fn is_in_flight(&self) -> bool {
        matches!(
            self,
            TxnState::Created | TxnState::Pending | TxnState::Committed | TxnState::Terminating
        )
    }
}

impl Ord for TxnState {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let name = |s: &TxnState| match s {
            TxnState::Unknown(n) => Some(n.clone()),
            _ => None,
        };
        (self.rank(), name(self)).cmp(&(other.rank(), name(other)))
    }
}

impl PartialOrd for TxnState {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for TxnState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnState::Unknown(s) => write!(f, "unknown({s})"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// A transaction document as read, with whatever could be understood of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Transaction {
    /// Document id (the transaction id).
    pub id: String,
    /// Source account id.
    pub src: Option<String>,
    /// Destination account id.
    pub dest: Option<String>,
    /// Units moved from source to destination.
    pub amount: Option<i64>,
    /// Protocol state; `None` when the field is missing or not a string.
    pub state: Option<TxnState>,
    /// When it was created.
    pub creation_time: Option<DateTime<Utc>>,
    /// When its state last changed; drives recovery.
    pub modification_time: Option<DateTime<Utc>>,
    /// The transaction this one reverses (`reverses`: it is the
    /// compensating transfer of that one), if it is a reversal.
    pub reverses: Option<String>,
    /// The reversal that compensates this one (`reversed_by`), if reversed.
    pub reversed_by: Option<String>,
    /// Everything wrong with the document; empty when well-formed.
    pub problems: Problems,
}

/// The validated part of a transaction that account steps need.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Transfer {
    /// Transaction id.
    pub id: String,
    /// Source account id.
    pub src: String,
    /// Destination account id.
    pub dest: String,
    /// Units moved.
    pub amount: i64,
}

fn read_string(
    src: &Map<String, Value>,
    keys: &[&str],
    problems: &mut Vec<Problem>,
) -> Option<String> {
    for key in keys {
        match src.get(*key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
            Some(Value::String(_)) => {
                problems.push(Problem::Empty(key.to_string()));
                return None;
            }
            Some(other) => {
                problems.push(Problem::NotAString {
                    field: key.to_string(),
                    value: other.to_string(),
                });
                return None;
            }
        }
    }
    problems.push(Problem::Missing(
        keys.iter().map(|k| k.to_string()).collect(),
    ));
    None
}

impl Transaction {
    /// Reads a transaction document tolerantly, collecting problems.
    pub fn from_source(id: &str, src: &Map<String, Value>) -> Transaction {
        let mut problems = Vec::new();
        let src_acct = read_string(src, &["src_acct", "src_account"], &mut problems);
        let dest_acct = read_string(src, &["dest_acct", "dest_account"], &mut problems);
        let amount = match src.get("amount") {
            None | Some(Value::Null) => {
                problems.push(Problem::Missing(vec!["amount".into()]));
                None
            }
            Some(v) => {
                let a = exact_integer(v);
                match a {
                    Err(why) => problems.push(Problem::NotAnInteger {
                        field: "amount".into(),
                        value: v.to_string(),
                        why,
                    }),
                    Ok(a) => problems.extend(amount_problem(a)),
                }
                a.ok()
            }
        };
        let state = match src.get("transaction_state") {
            Some(Value::String(s)) => {
                let st = TxnState::parse(s);
                if let TxnState::Unknown(s) = &st {
                    problems.push(Problem::UnknownState {
                        field: "transaction_state".into(),
                        state: s.clone(),
                    });
                }
                Some(st)
            }
            None | Some(Value::Null) => {
                problems.push(Problem::Missing(vec!["transaction_state".into()]));
                None
            }
            Some(other) => {
                problems.push(Problem::NotAString {
                    field: "transaction_state".into(),
                    value: other.to_string(),
                });
                None
            }
        };
        let mut time = |key: &str, required: bool| match src.get(key) {
            None | Some(Value::Null) => {
                if required {
                    problems.push(Problem::Missing(vec![key.to_string()]));
                }
                None
            }
            Some(v) => {
                let t = parse_timestamp(v);
                if t.is_none() {
                    problems.push(Problem::NotATimestamp {
                        field: key.to_string(),
                        value: v.to_string(),
                    });
                }
                t
            }
        };
        let creation_time = time("creation_time", false);
        let modification_time = time("modification_time", true);
        if let (Some(a), Some(b)) = (&src_acct, &dest_acct) {
            if a == b {
                problems.push(Problem::SameAccount(a.clone()));
            }
        }
        Transaction {
            id: id.to_string(),
            src: src_acct,
            dest: dest_acct,
            amount,
            state,
            creation_time,
            modification_time,
            reverses: link_of(src, REVERSES),
            reversed_by: link_of(src, REVERSED_BY),
            problems: Problems(problems),
        }
    }

    /// Whether the document is fully understood.
    pub fn is_well_formed(&self) -> bool {
        self.problems.is_empty()
    }

    /// The validated transfer, or a `Malformed` error naming every problem.
    ///
    /// Any problem, even one that would not matter for this step (an
    /// unparseable creation time), refuses: a document we do not fully
    /// understand is not one we move money for.
    pub fn transfer(&self) -> Result<Transfer, Error> {
        match (&self.src, &self.dest, self.amount) {
            (Some(src), Some(dest), Some(amount)) if self.problems.is_empty() => Ok(Transfer {
                id: self.id.clone(),
                src: src.clone(),
                dest: dest.clone(),
                amount,
            }),
            _ => Err(self.malformed()),
        }
    }

    /// The `Malformed` error for this document.
    pub fn malformed(&self) -> Error {
        Error::Malformed {
            kind: "transaction",
            id: self.id.clone(),
            problems: if self.problems.is_empty() {
                Problems::one(Problem::Incomplete)
            } else {
                self.problems.clone()
            },
        }
    }

    /// Seconds since the last modification, relative to `now`.
    pub fn age_seconds(&self, now: DateTime<Utc>) -> Option<i64> {
        self.modification_time.map(|t| (now - t).num_seconds())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn one_state_order_protocol_order_then_unknown_then_none() {
        let mut states: Vec<Option<TxnState>> = vec![
            None,
            Some(TxnState::Unknown("zz".into())),
            Some(TxnState::RolledBack),
            Some(TxnState::Finished),
            Some(TxnState::Unknown("aa".into())),
            Some(TxnState::Terminating),
            Some(TxnState::Committed),
            Some(TxnState::Pending),
            Some(TxnState::Created),
        ];
        states
            .sort_by(|a, b| TxnState::order_key(a.as_ref()).cmp(&TxnState::order_key(b.as_ref())));
        let mut want: Vec<Option<TxnState>> = TxnState::KNOWN.into_iter().map(Some).collect();
        want.push(Some(TxnState::Unknown("aa".into())));
        want.push(Some(TxnState::Unknown("zz".into())));
        want.push(None);
        assert_eq!(states, want);
        // Terminating is still in flight: it comes before the terminal states.
        assert!(TxnState::Terminating < TxnState::Finished);
    }

    #[test]
    fn reads_both_field_spellings() {
        let a = Transaction::from_source(
            "t1",
            &map(
                json!({"src_acct":"A","dest_acct":"B","amount":100,"transaction_state":"pending","modification_time":"2019-12-05T10:00:00.123456789Z"}),
            ),
        );
        let b = Transaction::from_source(
            "t1",
            &map(
                json!({"src_account":"A","dest_account":"B","amount":"100","transaction_state":"pending","modification_time":1575540000123i64}),
            ),
        );
        assert!(a.is_well_formed(), "{:?}", a.problems);
        assert!(b.is_well_formed(), "{:?}", b.problems);
        assert_eq!(a.transfer().unwrap(), b.transfer().unwrap());
    }

    #[test]
    fn collects_every_problem_and_keeps_unknown_states() {
        let t = Transaction::from_source(
            "t2",
            &map(json!({"src_acct": 5, "amount": 1.5, "transaction_state": "paused"})),
        );
        assert_eq!(t.state, Some(TxnState::Unknown("paused".into())));
        assert_eq!(t.problems.len(), 5, "{:?}", t.problems);
        assert!(t.transfer().is_err());
    }

    #[test]
    fn same_account_on_both_sides_is_a_problem() {
        let t = Transaction::from_source(
            "t3",
            &map(
                json!({"src_acct":"A","dest_acct":"A","amount":1,"transaction_state":"created","modification_time":"2020-01-01T00:00:00Z"}),
            ),
        );
        assert!(t.transfer().is_err());
    }
}
