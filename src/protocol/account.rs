//! Account documents: `balance`, `pending_transactions`, and `pending_deltas`
//! (the balance change each pending transaction made here; a delta whose
//! entry someone else removed is dropped on read and so on the next write).
//!
//! The fence against late and duplicate applies needs no per-account history
//! (see `protocol::decide`): an account holds only what the reference
//! protocol holds plus one delta per transaction it currently carries, so its
//! size does not grow with the number of transfers. Older versions of this
//! tool kept `settled_transactions` records; they are still read (an apply of
//! a transaction the account has a record of is a no-op, an undo of one it
//! settled as applied is a contradiction) and kept in the document as they
//! are, but never written. Every field the tool does not know is kept on write.

use super::integer::exact_integer;
use super::problem::{Problem, Problems};
use super::time::parse_timestamp;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

/// Name of the field holding the legacy fencing records (read, never written).
pub const SETTLED_FIELD: &str = "settled_transactions";

/// Name of the field holding the delta each pending transaction applied.
pub const DELTAS_FIELD: &str = "pending_deltas";

/// How an account settled a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SettledOutcome {
    /// Applied, then removed from `pending_transactions` after commit.
    Applied,
    /// Undone by a rollback (or fenced before it was ever applied).
    Undone,
}

impl SettledOutcome {
    /// The stored string.
    pub fn as_str(self) -> &'static str {
        match self {
            SettledOutcome::Applied => "applied",
            SettledOutcome::Undone => "undone",
        }
    }
}

/// One legacy fencing record: this account is done with transaction `txn`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Settled {
    /// The transaction id.
    pub txn: String,
    /// Applied-then-removed, or undone.
    pub outcome: SettledOutcome,
    /// When the record was written.
    pub at: DateTime<Utc>,
}

/// The balance change a pending transaction made on this account, so an undo
/// reverses exactly what was applied even if the transaction's amount was
/// edited since.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PendingDelta {
    /// The transaction id.
    pub txn: String,
    /// What the apply added to the balance.
    pub delta: i64,
}

/// The part of an account document the protocol reads and writes.
///
/// Kept free of JSON so the pure step functions (and the model checker) can
/// work on it directly; [`AccountState::write_into`] merges it back into the
/// full document, keeping every other field.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccountState {
    /// Current balance in units.
    pub balance: i64,
    /// Transactions applied to this account and not yet removed or undone.
    pub pending: Vec<String>,
    /// The delta each pending transaction applied (absent for entries written
    /// by the application's own scripts or an older estx-tui).
    pub deltas: Vec<PendingDelta>,
    /// Legacy fencing records (see the module docs); read only.
    pub settled: Vec<Settled>,
}

impl AccountState {
    /// A fresh account with a balance and no history.
    pub fn new(balance: i64) -> AccountState {
        AccountState {
            balance,
            pending: Vec::new(),
            deltas: Vec::new(),
            settled: Vec::new(),
        }
    }

    /// Whether `txn` is in `pending_transactions`.
    pub fn carries(&self, txn: &str) -> bool {
        self.pending.iter().any(|p| p == txn)
    }

    /// The legacy fencing record for `txn`, if any.
    pub fn settled_of(&self, txn: &str) -> Option<&Settled> {
        self.settled.iter().find(|s| s.txn == txn)
    }

    /// The delta recorded for pending transaction `txn`, if any.
    pub fn delta_of(&self, txn: &str) -> Option<i64> {
        self.deltas.iter().find(|d| d.txn == txn).map(|d| d.delta)
    }

    /// Reads the protocol fields; every problem is reported.
    pub fn from_source(src: &Map<String, Value>) -> Result<AccountState, Problems> {
        let mut problems = Vec::new();
        let balance = match src.get("balance") {
            None | Some(Value::Null) => {
                problems.push(Problem::Missing(vec!["balance".into()]));
                0
            }
            Some(v) => exact_integer(v).unwrap_or_else(|why| {
                problems.push(Problem::NotAnInteger {
                    field: "balance".into(),
                    value: v.to_string(),
                    why,
                });
                0
            }),
        };
        let pending = match src.get("pending_transactions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.clone()),
                    other => {
                        problems.push(Problem::NonString {
                            field: "pending_transactions".into(),
                            item: other.to_string(),
                        });
                        None
                    }
                })
                .collect(),
            Some(other) => {
                problems.push(Problem::NotAnArray {
                    field: "pending_transactions".into(),
                    value: other.to_string(),
                });
                Vec::new()
            }
        };
        let deltas = records(src, DELTAS_FIELD, parse_delta, &mut problems);
        // A delta describes a pending entry: once the entry is gone (removed
        // by anyone, e.g. the application's own remove script, which does not
        // know this field) the delta is dropped, and the next write of the
        // account leaves it out.
        let deltas: Vec<PendingDelta> = deltas
            .into_iter()
            .filter(|d| pending.contains(&d.txn))
            .collect();
        let settled = records(src, SETTLED_FIELD, parse_settled, &mut problems);
        if problems.is_empty() {
            Ok(AccountState {
                balance,
                pending,
                deltas,
                settled,
            })
        } else {
            Err(Problems(problems))
        }
    }

    /// Writes the protocol fields into `doc`, leaving every other field
    /// alone (legacy settled records included: they are never rewritten).
    /// `pending_deltas` appears once an apply has recorded a delta and stays
    /// (possibly empty), so an account's size does not depend on its history.
    pub fn write_into(&self, doc: &mut Map<String, Value>) {
        doc.insert("balance".into(), json!(self.balance));
        doc.insert("pending_transactions".into(), json!(self.pending));
        if !self.deltas.is_empty() || doc.contains_key(DELTAS_FIELD) {
            let records: Vec<Value> = self
                .deltas
                .iter()
                .map(|d| json!({"txn": d.txn, "delta": d.delta}))
                .collect();
            doc.insert(DELTAS_FIELD.into(), Value::Array(records));
        }
    }
}

/// The records of array field `field` (none when absent or null), each read
/// by `parse`; an unreadable record, or a field that is not an array, is a
/// problem.
fn records<T>(
    src: &Map<String, Value>,
    field: &str,
    parse: fn(&Value) -> Option<T>,
    problems: &mut Vec<Problem>,
) -> Vec<T> {
    match src.get(field) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| {
                let rec = parse(i);
                if rec.is_none() {
                    problems.push(Problem::UnreadableRecord {
                        field: field.to_string(),
                        record: i.to_string(),
                    });
                }
                rec
            })
            .collect(),
        Some(other) => {
            problems.push(Problem::NotAnArray {
                field: field.to_string(),
                value: other.to_string(),
            });
            Vec::new()
        }
    }
}

fn parse_delta(v: &Value) -> Option<PendingDelta> {
    let o = v.as_object()?;
    let txn = o.get("txn")?.as_str()?.to_string();
    let delta = o.get("delta")?.as_i64()?;
    Some(PendingDelta { txn, delta })
}

fn parse_settled(v: &Value) -> Option<Settled> {
    let o = v.as_object()?;
    let txn = o.get("id")?.as_str()?.to_string();
    let outcome = match o.get("outcome")?.as_str()? {
        "applied" => SettledOutcome::Applied,
        "undone" => SettledOutcome::Undone,
        _ => return None,
    };
    let at = parse_timestamp(o.get("at")?)?;
    Some(Settled { txn, outcome, at })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_unknown_fields() {
        let src = json!({"balance": 500, "pending_transactions": ["t1"], "owner": "ops", "settled_transactions": [{"id":"t0","outcome":"undone","at":"2026-01-01T00:00:00.000Z"}]});
        let mut doc = src.as_object().unwrap().clone();
        let mut st = AccountState::from_source(&doc).unwrap();
        assert!(st.carries("t1"));
        assert_eq!(st.settled_of("t0").unwrap().outcome, SettledOutcome::Undone);
        st.balance = 400;
        st.settled.clear();
        st.deltas.push(PendingDelta {
            txn: "t1".into(),
            delta: -100,
        });
        st.write_into(&mut doc);
        assert_eq!(doc["owner"], "ops");
        assert_eq!(doc["balance"], 400);
        // Legacy records are kept as they were, never rewritten.
        assert_eq!(doc[SETTLED_FIELD][0]["id"], "t0");
        assert_eq!(doc[DELTAS_FIELD], json!([{"txn": "t1", "delta": -100}]));
        let back = AccountState::from_source(&doc).unwrap();
        assert_eq!(back.delta_of("t1"), Some(-100));
    }

    #[test]
    fn article_shaped_account_reads_and_stays_article_shaped() {
        let mut doc = json!({"balance": 500, "pending_transactions": []})
            .as_object()
            .unwrap()
            .clone();
        let st = AccountState::from_source(&doc).unwrap();
        st.write_into(&mut doc);
        assert!(!doc.contains_key(SETTLED_FIELD));
        assert!(!doc.contains_key(DELTAS_FIELD));
    }

    #[test]
    fn a_delta_whose_entry_was_removed_elsewhere_does_not_outlive_it() {
        // The application's remove script dropped `gone` from the pending
        // entries and left its delta; `kept` is still pending.
        let doc = json!({"balance": 90, "pending_transactions": ["kept"],
            "pending_deltas": [{"txn": "gone", "delta": -10}, {"txn": "kept", "delta": 5}]});
        let st = AccountState::from_source(doc.as_object().unwrap()).unwrap();
        assert_eq!(st.delta_of("gone"), None);
        assert_eq!(st.delta_of("kept"), Some(5));
        let mut written = doc.as_object().unwrap().clone();
        st.write_into(&mut written);
        assert_eq!(
            written[DELTAS_FIELD],
            json!([{"txn": "kept", "delta": 5}]),
            "{written:?}"
        );
    }

    #[test]
    fn malformed_accounts_name_every_problem() {
        let doc = json!({"balance": "lots", "pending_transactions": [1], "settled_transactions": [{"id":"x"}], "pending_deltas": [{"txn": "t"}]});
        let problems = AccountState::from_source(doc.as_object().unwrap()).unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(AccountState::from_source(json!({}).as_object().unwrap()).is_err());
    }
}
