//! The shapes lock documents come in, told apart by their fields alone:
//! this tool's own, Kestra's `LockService` locks, the definitive guide's
//! global, document and tree locks, and anything else (unknown). The shape
//! says who the holder is (a transaction, an instance, a process, nobody)
//! and how a lock is released (deleted, or a shared tree lock decremented).
//!
//! Applications name a lock's times in their own way: the names read for
//! the creation time and for the lease are listed once here
//! ([`CREATED_NAMES`], [`LEASE_NAMES`]) and are ignored when the shape is
//! told (any shape may carry them).

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Names under which applications record when a lock was taken, in the
/// order they are tried: this tool's and the snake_case convention, Kestra's
/// and camelCase ones, then generic names.
pub const CREATED_NAMES: [&str; 12] = [
    "created_at",
    "createdAt",
    "creation_time",
    "creationTime",
    "locked_at",
    "lockedAt",
    "acquired_at",
    "acquiredAt",
    "timestamp",
    "@timestamp",
    "date",
    "created",
];

/// Names under which applications record until when a lock is leased, in
/// the order they are tried.
pub const LEASE_NAMES: [&str; 12] = [
    "expires_at",
    "expiresAt",
    "lease_until",
    "leaseUntil",
    "lock_until",
    "lockUntil",
    "valid_until",
    "validUntil",
    "expiry",
    "expires",
    "expiration",
    "expiration_time",
];

/// A tree lock of the definitive guide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeLock {
    /// `{"lock_type": "exclusive"}`: one holder; released by a delete.
    Exclusive,
    /// `{"lock_type": "shared", "lock_count": n}`: n holders; released by
    /// a decrement, deleted when the count reaches zero.
    Shared {
        /// Holders counted in the document.
        count: i64,
    },
}

/// What kind of lock a document is, judged by its fields alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockShape {
    /// This tool's: `owner` (a transaction id), optionally `process_id`
    /// (the process holding it for the transaction) and its times.
    Own,
    /// Kestra's `LockService`: `{category, id, owner, createdAt}` under the
    /// id `category_id`, held by a server instance (`owner`), no expiry.
    Kestra {
        /// The lock's category.
        category: String,
        /// The locked id within the category.
        id: String,
    },
    /// The guide's global lock: an empty document whose existence is the lock.
    GuideGlobal,
    /// The guide's document lock: `{"process_id": …}`.
    GuideDocument,
    /// The guide's tree lock (exclusive, or shared with a count).
    GuideTree(TreeLock),
    /// Fields no known scheme writes: shown, never interpreted.
    Unknown,
}

/// What releasing a lock of a shape writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseAction {
    /// Delete the document.
    Delete,
    /// Write `lock_count` = `to` (one holder fewer; other holders remain).
    Decrement {
        /// The count after the release.
        to: i64,
    },
}

impl ReleaseAction {
    /// What it writes to the lock on `resource`, in words (the dashboard's
    /// release dialog).
    pub fn describe(&self, resource: &str) -> String {
        match self {
            ReleaseAction::Delete => format!("delete lock {resource}"),
            ReleaseAction::Decrement { to } => {
                format!("decrement lock_count of {resource} to {to} (other holders keep it)")
            }
        }
    }
}

impl LockShape {
    /// Classifies a lock document stored under the id `resource`.
    pub fn classify(resource: &str, src: &Map<String, Value>) -> LockShape {
        let keys: BTreeSet<&str> = src
            .keys()
            .map(String::as_str)
            .filter(|k| !CREATED_NAMES.contains(k) && !LEASE_NAMES.contains(k))
            .collect();
        let text = |k: &str| match src.get(k) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let is = |names: &[&str]| keys.iter().copied().eq(names.iter().copied());
        if is(&[]) {
            return LockShape::GuideGlobal;
        }
        if is(&["process_id"]) && is_id(src.get("process_id")) {
            return LockShape::GuideDocument;
        }
        if is(&["category", "id", "owner"]) {
            if let (Some(category), Some(id), Some(_)) =
                (text("category"), text("id"), text("owner"))
            {
                if resource == format!("{category}_{id}") {
                    return LockShape::Kestra { category, id };
                }
            }
            return LockShape::Unknown;
        }
        if is(&["lock_type"]) && text("lock_type").as_deref() == Some("exclusive") {
            return LockShape::GuideTree(TreeLock::Exclusive);
        }
        if is(&["lock_count", "lock_type"]) && text("lock_type").as_deref() == Some("shared") {
            if let Some(count) = src.get("lock_count").and_then(Value::as_i64) {
                return LockShape::GuideTree(TreeLock::Shared { count });
            }
            return LockShape::Unknown;
        }
        let own =
            keys.contains("owner") && keys.iter().all(|k| ["owner", "process_id"].contains(k));
        if own && is_id(src.get("owner")) && keys.iter().all(|k| is_id(src.get(*k))) {
            return LockShape::Own;
        }
        LockShape::Unknown
    }

    /// A short name for listings and JSON.
    pub fn label(&self) -> &'static str {
        match self {
            LockShape::Own => "estx",
            LockShape::Kestra { .. } => "kestra",
            LockShape::GuideGlobal => "guide global",
            LockShape::GuideDocument => "guide document",
            LockShape::GuideTree(TreeLock::Exclusive) => "guide tree exclusive",
            LockShape::GuideTree(TreeLock::Shared { .. }) => "guide tree shared",
            LockShape::Unknown => "unknown",
        }
    }

    /// How a release follows the shape's protocol: a shared tree lock held
    /// more than once loses one holder; everything else is deleted.
    pub fn release_action(&self) -> ReleaseAction {
        match self {
            LockShape::GuideTree(TreeLock::Shared { count }) if *count > 1 => {
                ReleaseAction::Decrement { to: count - 1 }
            }
            _ => ReleaseAction::Delete,
        }
    }
}

/// A string or an integer: what an id field may hold.
fn is_id(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape(resource: &str, v: Value) -> LockShape {
        LockShape::classify(resource, v.as_object().unwrap())
    }

    #[test]
    fn every_known_shape_is_told_by_its_fields() {
        let ts = "2026-01-01T00:00:00Z";
        let own = json!({"owner": "t1", "process_id": "h:1", "created_at": ts, "expires_at": ts});
        assert_eq!(shape("A", own), LockShape::Own);
        assert_eq!(shape("A", json!({"owner": "t1"})), LockShape::Own);
        let kestra =
            json!({"category": "execution", "id": "e-1", "owner": "5f1c-uuid", "createdAt": ts});
        assert_eq!(
            shape("execution_e-1", kestra.clone()),
            LockShape::Kestra {
                category: "execution".into(),
                id: "e-1".into()
            }
        );
        // Not under Kestra's id: not interpreted as Kestra's.
        assert_eq!(shape("e-1", kestra), LockShape::Unknown);
        assert_eq!(shape("global", json!({})), LockShape::GuideGlobal);
        assert_eq!(
            shape("1", json!({"process_id": 123})),
            LockShape::GuideDocument
        );
        assert_eq!(
            shape("1", json!({"process_id": 123, "timestamp": ts})),
            LockShape::GuideDocument
        );
        assert_eq!(
            shape("/a/b", json!({"lock_type": "exclusive"})),
            LockShape::GuideTree(TreeLock::Exclusive)
        );
        assert_eq!(
            shape("/a", json!({"lock_type": "shared", "lock_count": 3})),
            LockShape::GuideTree(TreeLock::Shared { count: 3 })
        );
    }

    #[test]
    fn anything_else_is_unknown() {
        for v in [
            json!({"lock_type": "shared"}),
            json!({"lock_type": "shared", "lock_count": "x"}),
            json!({"lock_type": "weird"}),
            json!({"owner": "t1", "note": "mine"}),
            json!({"owner": {"id": 1}}),
            json!({"process_id": [1]}),
            json!({"holder": "x"}),
        ] {
            assert_eq!(shape("r", v.clone()), LockShape::Unknown, "{v}");
        }
    }

    #[test]
    fn only_a_shared_lock_held_twice_or_more_is_decremented() {
        let shared = |count| LockShape::GuideTree(TreeLock::Shared { count });
        assert_eq!(
            shared(3).release_action(),
            ReleaseAction::Decrement { to: 2 }
        );
        assert_eq!(shared(1).release_action(), ReleaseAction::Delete);
        assert_eq!(shared(0).release_action(), ReleaseAction::Delete);
        assert_eq!(LockShape::Own.release_action(), ReleaseAction::Delete);
        assert_eq!(
            LockShape::GuideTree(TreeLock::Exclusive).release_action(),
            ReleaseAction::Delete
        );
    }
}
