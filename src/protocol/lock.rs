//! Lock documents, in every shape deployments use: this tool's
//! (`owner` = transaction id, `process_id`, `created_at`, `expires_at`), the
//! definitive guide's document locks (`process_id` only) and tree locks
//! (`lock_type: exclusive`, or `shared` with `lock_count`).

use super::read::rules::urgency;
use super::time::{human_age, parse_timestamp};
use super::transaction::{read_integer, Transaction};
use super::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// A lock document as read.
#[derive(Debug, Clone, PartialEq)]
pub struct LockInfo {
    /// The locked resource (the document id).
    pub resource: String,
    /// The transaction that owns it, when the lock says.
    pub owner: Option<String>,
    /// The process holding it, when the lock says.
    pub process_id: Option<String>,
    /// When it was taken.
    pub created_at: Option<DateTime<Utc>>,
    /// When its lease runs out, if it has one.
    pub expires_at: Option<DateTime<Utc>>,
    /// `exclusive` or `shared` for tree locks.
    pub lock_type: Option<String>,
    /// Number of holders of a shared lock.
    pub lock_count: Option<i64>,
    /// What could not be read.
    pub problems: Vec<String>,
}

/// What is known of a lock's owner transaction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Owner<'a> {
    /// No such transaction document.
    Missing,
    /// The document exists but its state cannot be read.
    Unreadable,
    /// The document, with a readable state.
    Is(&'a Transaction),
}

impl<'a> Owner<'a> {
    /// From a lookup by id: `None` = no document.
    pub fn from_lookup(found: Option<&'a Transaction>) -> Owner<'a> {
        match found {
            None => Owner::Missing,
            Some(t) if t.state.is_none() => Owner::Unreadable,
            Some(t) => Owner::Is(t),
        }
    }
}

/// Whether a lock's holder can be presumed gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staleness {
    /// Held by a live-looking owner.
    Live,
    /// Safe to release: the reason in words.
    Stale(String),
    /// Cannot tell (no owner recorded, no lease): an operator must decide.
    Unknown(String),
}

impl Staleness {
    /// True only for [`Staleness::Stale`].
    pub fn is_stale(&self) -> bool {
        matches!(self, Staleness::Stale(_))
    }
}

impl LockInfo {
    /// Reads a lock document tolerantly.
    pub fn from_source(resource: &str, src: &Map<String, Value>) -> LockInfo {
        let mut problems = Vec::new();
        let text = |key: &str, problems: &mut Vec<String>| match src.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(other) => {
                problems.push(format!("`{key}` is not a string: {other}"));
                None
            }
        };
        let owner = text("owner", &mut problems);
        let process_id = text("process_id", &mut problems);
        let lock_type = text("lock_type", &mut problems);
        let mut time = |key: &str| match src.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => {
                let t = parse_timestamp(v);
                if t.is_none() {
                    problems.push(format!("`{key}` is not a timestamp: {v}"));
                }
                t
            }
        };
        let created_at = time("created_at");
        let expires_at = time("expires_at");
        let lock_count = src.get("lock_count").and_then(read_integer);
        LockInfo {
            resource: resource.to_string(),
            owner,
            process_id,
            created_at,
            expires_at,
            lock_type,
            lock_count,
            problems,
        }
    }

    /// Who holds it, for display: owner transaction, else process, else type.
    pub fn holder_label(&self) -> String {
        match (&self.owner, &self.process_id, &self.lock_type) {
            (Some(o), Some(p), _) => format!("txn {o} ({p})"),
            (Some(o), None, _) => format!("txn {o}"),
            (None, Some(p), _) => format!("process {p}"),
            (None, None, Some(t)) => match self.lock_count {
                Some(n) => format!("{t} lock x{n}"),
                None => format!("{t} lock"),
            },
            (None, None, None) => "unknown holder".into(),
        }
    }

    /// Seconds since it was taken.
    pub fn age_seconds(&self, now: DateTime<Utc>) -> Option<i64> {
        self.created_at.map(|t| (now - t).num_seconds())
    }

    /// Staleness given what is known of the owner transaction (only
    /// consulted when the lock names an owner). A lock is stale when its
    /// lease expired, or its owner is missing, terminal, or stuck by the one
    /// stuck rule ([`urgency`] under `config`'s windows), so "stuck" and
    /// "stale" never disagree.
    pub fn staleness(
        &self,
        owner: Owner<'_>,
        now: DateTime<Utc>,
        config: &ProtocolConfig,
    ) -> Staleness {
        if let Some(exp) = self.expires_at {
            if exp <= now {
                return Staleness::Stale(format!(
                    "lease expired {} ago",
                    human_age((now - exp).num_seconds())
                ));
            }
        }
        let Some(id) = &self.owner else {
            return Staleness::Unknown("the lock does not name an owner transaction".into());
        };
        match owner {
            Owner::Missing => Staleness::Stale(format!("owner transaction `{id}` does not exist")),
            Owner::Unreadable => {
                Staleness::Unknown(format!("owner transaction `{id}` has no readable state"))
            }
            Owner::Is(t) => match &t.state {
                Some(s) if s.is_terminal() => {
                    Staleness::Stale(format!("owner transaction `{id}` is {s}"))
                }
                Some(s) if urgency(t, now, config).is_stuck() => {
                    let untouched = match t.age_seconds(now) {
                        Some(age) => format!("untouched for {}", human_age(age)),
                        None => "with no usable modification time".into(),
                    };
                    Staleness::Stale(format!(
                        "owner transaction `{id}` is {s} and stuck: {untouched}, longer than the {} recovery window",
                        human_age(config.recovery_window.as_secs() as i64)
                    ))
                }
                _ => Staleness::Live,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lock(v: Value) -> LockInfo {
        LockInfo::from_source("A", v.as_object().unwrap())
    }

    #[test]
    fn reads_every_shape() {
        let ours = lock(
            json!({"owner":"t1","process_id":"w:1","created_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:02:00Z"}),
        );
        assert_eq!(ours.owner.as_deref(), Some("t1"));
        assert!(ours.problems.is_empty());
        assert_eq!(
            lock(json!({"process_id":123})).holder_label(),
            "process 123"
        );
        assert_eq!(
            lock(json!({"lock_type":"shared","lock_count":2})).holder_label(),
            "shared lock x2"
        );
        assert_eq!(
            lock(json!({"lock_type":"exclusive"})).holder_label(),
            "exclusive lock"
        );
    }

    fn owner(state: &str, minutes_ago: i64, now: DateTime<Utc>) -> Transaction {
        let t = super::super::time::format_timestamp(now - chrono::Duration::minutes(minutes_ago));
        Transaction::from_source(
            "t1",
            json!({"src_acct":"A","dest_acct":"B","amount":1,"transaction_state":state,
                   "creation_time":t,"modification_time":t})
            .as_object()
            .unwrap(),
        )
    }

    #[test]
    fn staleness_rules() {
        let now = parse_timestamp(&json!("2026-01-01T00:05:00Z")).unwrap();
        let config = &ProtocolConfig::default();
        let l = lock(json!({"owner":"t1","expires_at":"2026-01-01T00:10:00Z"}));
        let pending = owner("pending", 1, now);
        assert_eq!(
            l.staleness(Owner::Is(&pending), now, config),
            Staleness::Live
        );
        let finished = owner("finished", 0, now);
        assert!(l.staleness(Owner::Is(&finished), now, config).is_stale());
        assert!(l.staleness(Owner::Missing, now, config).is_stale());
        let expired = lock(json!({"owner":"t1","expires_at":"2026-01-01T00:01:00Z"}));
        assert!(expired
            .staleness(Owner::Is(&pending), now, config)
            .is_stale());
        assert!(matches!(
            lock(json!({"process_id":1})).staleness(Owner::Missing, now, config),
            Staleness::Unknown(_)
        ));
        assert!(matches!(
            l.staleness(Owner::Unreadable, now, config),
            Staleness::Unknown(_)
        ));
    }

    #[test]
    fn a_lock_is_stale_exactly_when_its_owner_is_stuck() {
        let now = parse_timestamp(&json!("2026-01-01T02:00:00Z")).unwrap();
        let config = &ProtocolConfig::default();
        let l = lock(json!({"owner":"t1"}));
        for state in ["created", "pending", "committed", "terminating", "odd"] {
            for minutes in [0, 1, 2, 3, 90] {
                let t = owner(state, minutes, now);
                assert_eq!(
                    l.staleness(Owner::Is(&t), now, config).is_stale(),
                    urgency(&t, now, config).is_stuck(),
                    "{state} {minutes}m"
                );
            }
        }
        let t = owner("pending", 90, now);
        match l.staleness(Owner::Is(&t), now, config) {
            Staleness::Stale(why) => {
                assert!(why.contains("stuck") && why.contains("1h30m"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }
}
