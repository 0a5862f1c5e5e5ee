//! A lock document as read, whatever its shape.

use super::shape::{self, LockShape, TreeLock};
use crate::protocol::integer::read_integer;
use crate::protocol::problem::{Problem, Problems};
use crate::protocol::time::parse_timestamp;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// A lock document as read.
#[derive(Debug, Clone, PartialEq)]
pub struct LockInfo {
    /// The locked resource (the document id).
    pub resource: String,
    /// What kind of lock it is, by its fields.
    pub shape: LockShape,
    /// The `owner` field: a transaction id in this tool's locks, a server
    /// instance in Kestra's; looked up among the transactions either way.
    pub owner: Option<String>,
    /// The process holding it, when the lock says.
    pub process_id: Option<String>,
    /// When it was taken (under any of [`shape::CREATED_NAMES`]).
    pub created_at: Option<DateTime<Utc>>,
    /// When its lease runs out, if it has one (any of [`shape::LEASE_NAMES`]).
    pub expires_at: Option<DateTime<Utc>>,
    /// `exclusive` or `shared` for tree locks.
    pub lock_type: Option<String>,
    /// Number of holders of a shared lock.
    pub lock_count: Option<i64>,
    /// What could not be read.
    pub problems: Problems,
}

impl LockInfo {
    /// Reads a lock document tolerantly.
    pub fn from_source(resource: &str, src: &Map<String, Value>) -> LockInfo {
        let mut problems = Vec::new();
        let text = |key: &str, problems: &mut Vec<Problem>| match src.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(other) => {
                problems.push(Problem::NotAString {
                    field: key.to_string(),
                    value: other.to_string(),
                });
                None
            }
        };
        let owner = text("owner", &mut problems);
        let process_id = text("process_id", &mut problems);
        let lock_type = text("lock_type", &mut problems);
        let created_at = first_time(src, &shape::CREATED_NAMES, &mut problems);
        let expires_at = first_time(src, &shape::LEASE_NAMES, &mut problems);
        let lock_count = src.get("lock_count").and_then(read_integer);
        LockInfo {
            resource: resource.to_string(),
            shape: LockShape::classify(resource, src),
            owner,
            process_id,
            created_at,
            expires_at,
            lock_type,
            lock_count,
            problems: Problems(problems),
        }
    }

    /// The id a liveness source knows the holder by: Kestra's instance
    /// (`owner`), else the holding process, else an unknown shape's `owner`;
    /// `None` for locks that name no holder (global and tree locks).
    pub fn holder_id(&self) -> Option<&str> {
        match self.shape {
            LockShape::Kestra { .. } => self.owner.as_deref(),
            LockShape::GuideGlobal | LockShape::GuideTree(_) => None,
            _ => self.process_id.as_deref().or(self.owner.as_deref()),
        }
    }

    /// Who holds it, for display, by shape: the owner transaction (and its
    /// process), Kestra's instance, the guide's process, or the lock kind.
    pub fn holder_label(&self) -> String {
        self.holder_label_cut(&|id| id.to_string(), true)
    }

    /// [`LockInfo::holder_label`] with the owner id written by `cut` (a
    /// pane shortens it to its column) and this tool's process left out
    /// unless `with_process`: one wording per shape, however narrow.
    pub fn holder_label_cut(&self, cut: &dyn Fn(&str) -> String, with_process: bool) -> String {
        match (&self.shape, &self.owner, &self.process_id) {
            (LockShape::Kestra { .. }, Some(o), _) => format!("instance {}", cut(o)),
            (LockShape::Own, Some(o), Some(p)) if with_process => {
                format!("txn {} ({p})", cut(o))
            }
            (LockShape::Own, Some(o), _) => format!("txn {}", cut(o)),
            (LockShape::GuideGlobal, _, _) => "global lock".into(),
            (LockShape::GuideTree(TreeLock::Exclusive), _, _) => "exclusive lock".into(),
            (LockShape::GuideTree(TreeLock::Shared { count }), _, _) => {
                format!("shared lock x{count}")
            }
            (_, _, Some(p)) => format!("process {p}"),
            (_, Some(o), None) => format!("owner {}", cut(o)),
            (_, None, None) => "unknown holder".into(),
        }
    }

    /// Seconds since it was taken.
    pub fn age_seconds(&self, now: DateTime<Utc>) -> Option<i64> {
        self.created_at.map(|t| (now - t).num_seconds())
    }
}

/// The first of `names` present in `src`, as a time; a present value that is
/// not one is a problem (and the next name is tried).
fn first_time(
    src: &Map<String, Value>,
    names: &[&str],
    problems: &mut Vec<Problem>,
) -> Option<DateTime<Utc>> {
    for key in names {
        match src.get(*key) {
            None | Some(Value::Null) => {}
            Some(v) => match parse_timestamp(v) {
                Some(t) => return Some(t),
                None => problems.push(Problem::NotATimestamp {
                    field: key.to_string(),
                    value: v.to_string(),
                }),
            },
        }
    }
    None
}
