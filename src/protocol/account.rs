//! Account documents: `balance`, `pending_transactions`, and the fencing
//! record `settled_transactions` this tool adds.
//!
//! The settled record is what closes the reference protocol's two holes: an
//! account remembers, for a bounded time, every transaction it has settled
//! (applied and then removed after commit, or undone by a rollback), so a late
//! or duplicate worker can never apply that transaction to it again. Every
//! field the tool does not know is kept on write.

use super::time::{format_timestamp, parse_timestamp};
use super::transaction::read_integer;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

/// Name of the field holding the fencing records.
pub const SETTLED_FIELD: &str = "settled_transactions";

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

/// One fencing record: this account is done with transaction `txn`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Settled {
    /// The transaction id.
    pub txn: String,
    /// Applied-then-removed, or undone.
    pub outcome: SettledOutcome,
    /// When the record was written; drives pruning.
    pub at: DateTime<Utc>,
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
    /// Fencing records (see the module docs).
    pub settled: Vec<Settled>,
}

impl AccountState {
    /// A fresh account with a balance and no history.
    pub fn new(balance: i64) -> AccountState {
        AccountState {
            balance,
            pending: Vec::new(),
            settled: Vec::new(),
        }
    }

    /// Whether `txn` is in `pending_transactions`.
    pub fn carries(&self, txn: &str) -> bool {
        self.pending.iter().any(|p| p == txn)
    }

    /// The fencing record for `txn`, if any.
    pub fn settled_of(&self, txn: &str) -> Option<&Settled> {
        self.settled.iter().find(|s| s.txn == txn)
    }

    /// Reads the protocol fields; every problem is reported in words.
    pub fn from_source(src: &Map<String, Value>) -> Result<AccountState, Vec<String>> {
        let mut problems = Vec::new();
        let balance = match src.get("balance") {
            None | Some(Value::Null) => {
                problems.push("`balance` is missing".to_string());
                0
            }
            Some(v) => read_integer(v).unwrap_or_else(|| {
                problems.push(format!("`balance` is not an integer: {v}"));
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
                        problems.push(format!(
                            "`pending_transactions` holds a non-string: {other}"
                        ));
                        None
                    }
                })
                .collect(),
            Some(other) => {
                problems.push(format!("`pending_transactions` is not an array: {other}"));
                Vec::new()
            }
        };
        let settled = match src.get(SETTLED_FIELD) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|i| {
                    let rec = parse_settled(i);
                    if rec.is_none() {
                        problems.push(format!("`{SETTLED_FIELD}` holds an unreadable record: {i}"));
                    }
                    rec
                })
                .collect(),
            Some(other) => {
                problems.push(format!("`{SETTLED_FIELD}` is not an array: {other}"));
                Vec::new()
            }
        };
        if problems.is_empty() {
            Ok(AccountState {
                balance,
                pending,
                settled,
            })
        } else {
            Err(problems)
        }
    }

    /// Writes the protocol fields into `doc`, leaving every other field alone.
    pub fn write_into(&self, doc: &mut Map<String, Value>) {
        doc.insert("balance".into(), json!(self.balance));
        doc.insert("pending_transactions".into(), json!(self.pending));
        if !self.settled.is_empty() || doc.contains_key(SETTLED_FIELD) {
            let records: Vec<Value> = self
                .settled
                .iter()
                .map(|s| json!({"id": s.txn, "outcome": s.outcome.as_str(), "at": format_timestamp(s.at)}))
                .collect();
            doc.insert(SETTLED_FIELD.into(), Value::Array(records));
        }
    }
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
        st.write_into(&mut doc);
        assert_eq!(doc["owner"], "ops");
        assert_eq!(doc["balance"], 400);
        assert_eq!(doc[SETTLED_FIELD][0]["id"], "t0");
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
    }

    #[test]
    fn malformed_accounts_name_every_problem() {
        let doc = json!({"balance": "lots", "pending_transactions": [1], "settled_transactions": [{"id":"x"}]});
        let problems = AccountState::from_source(doc.as_object().unwrap()).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(AccountState::from_source(json!({}).as_object().unwrap()).is_err());
    }
}
