//! What a protocol write sends: only the fields its step sets, as a partial
//! `_update` (`{"doc": {...}}`) conditional on the version the step was
//! decided on — never a whole `_source` read back.
//!
//! Why: a role with field-level security (Elasticsearch `field_security`,
//! OpenSearch FLS and field masking) reads documents without the fields it
//! may not see, and a whole document indexed back deletes them for good.
//! `_update` merges the partial into the stored source on the server (objects
//! recursively, arrays and scalars replaced whole), so every field the step
//! does not set stays as stored, whoever can read it. Both products refuse
//! `_update` to such a role outright (see `response`'s
//! [`Error::UpdateRefused`](crate::Error::UpdateRefused)), which stops the
//! act with nothing of that write done.
//!
//! The same shape answers the other question a write raises: after an answer
//! was lost, did it land? It did when the document moved past the version it
//! was conditional on and holds every field of its [evidence](Changes::set)
//! — whatever else others (an ingest pipeline, the application) changed.

use super::VersionedDoc;
use serde_json::{Map, Value};

/// The fields one conditional write sets (the protocol's canonical names;
/// the handle translates them to the application's on the way out).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changes {
    /// Fields whose values prove the write landed.
    evidence: Map<String, Value>,
    /// Fields written but never taken as evidence: a stamp an ingest
    /// pipeline or the application may overwrite (`modification_time`).
    stamps: Map<String, Value>,
    /// Written even when it changes nothing (`"detect_noop": false`), so
    /// the version advances: a claim or a fence.
    forced: bool,
}

impl Changes {
    /// No field set yet.
    pub fn new() -> Changes {
        Changes::default()
    }

    /// A write that sets nothing and still advances the version (`"doc":
    /// {}` with `"detect_noop": false`): the fence a claim or a fencing undo
    /// puts on a document so that any write decided on an older version of
    /// it conflicts. Both products write the unchanged source under a new
    /// `_seq_no` (Elasticsearch `UpdateHelper.prepareUpdateIndexRequest`:
    /// the no-op answer only when `detect_noop` is true).
    pub fn fence() -> Changes {
        Changes {
            forced: true,
            ..Changes::default()
        }
    }

    /// The fields of `after` that differ from `before` (added or changed),
    /// all as evidence. A field `before` has and `after` lacks is left as
    /// stored: a merge never removes a field, and a field the writer does
    /// not know (or cannot see) is not the writer's to remove.
    pub fn between(before: &Map<String, Value>, after: &Map<String, Value>) -> Changes {
        let mut evidence = Map::new();
        for (key, value) in after {
            if before.get(key) != Some(value) {
                evidence.insert(key.clone(), value.clone());
            }
        }
        Changes {
            evidence,
            ..Changes::default()
        }
    }

    /// Sets `key` to `value`, as evidence of the write.
    pub fn set(mut self, key: &str, value: Value) -> Changes {
        self.stamps.remove(key);
        self.evidence.insert(key.to_string(), value);
        self
    }

    /// Sets `key` to `value` without taking it as evidence (see
    /// [`Changes::landed`]).
    pub fn stamp(mut self, key: &str, value: Value) -> Changes {
        self.evidence.remove(key);
        self.stamps.insert(key.to_string(), value);
        self
    }

    /// The same write, sent even if it changes nothing.
    pub fn forced(mut self) -> Changes {
        self.forced = true;
        self
    }

    /// Whether it is sent with `"detect_noop": false`.
    pub fn is_forced(&self) -> bool {
        self.forced
    }

    /// Whether it sets no field (a fence).
    pub fn is_empty(&self) -> bool {
        self.evidence.is_empty() && self.stamps.is_empty()
    }

    /// The partial document sent (`"doc"`), canonical names.
    pub fn doc(&self) -> Map<String, Value> {
        let mut doc = self.evidence.clone();
        doc.extend(self.stamps.iter().map(|(k, v)| (k.clone(), v.clone())));
        doc
    }

    /// `src` with the write merged in as the server merges it: objects key
    /// by key, everything else replaced.
    pub fn apply_to(&self, src: &Map<String, Value>) -> Map<String, Value> {
        let mut out = src.clone();
        merge(&mut out, &self.doc());
        out
    }

    /// Whether this write, conditional on `at`, is in `doc` (a re-read
    /// after its answer was lost, in the same canonical names): the
    /// document moved past `at` and every field of the evidence holds the
    /// value written. Stamps are not looked at — an ingest pipeline that
    /// sets `modification_time` on every write overwrites ours, and the
    /// application may move it too — nor is any field the write does not
    /// set. A fence (no evidence) is in as soon as the version moved: any
    /// write after `at` fences whatever was decided on `at` or before.
    ///
    /// The rule cannot tell our write from another process's that set the
    /// same values after `at`; either way the document holds what the step
    /// wanted, and every step is idempotent, so only whom the report credits
    /// can differ.
    pub fn landed(&self, doc: &VersionedDoc, at: (i64, i64)) -> bool {
        at != (doc.seq_no, doc.primary_term)
            && self
                .evidence
                .iter()
                .all(|(k, v)| doc.source.get(k).is_some_and(|stored| covers(stored, v)))
    }
}

/// `target` with `patch` merged in as `_update` does (Elasticsearch
/// `XContentHelper.update`): nested objects merged key by key, any other
/// value replaced.
fn merge(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        match (target.get_mut(key), value) {
            (Some(Value::Object(old)), Value::Object(new)) => merge(old, new),
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Whether `stored` holds `written` after a merge: an object holds every
/// key written (it may keep others), anything else is equal.
fn covers(stored: &Value, written: &Value) -> bool {
    match (stored, written) {
        (Value::Object(s), Value::Object(w)) => w
            .iter()
            .all(|(k, v)| s.get(k).is_some_and(|sv| covers(sv, v))),
        _ => stored == written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn doc(seq_no: i64, source: Value) -> VersionedDoc {
        VersionedDoc {
            id: "t".into(),
            seq_no,
            primary_term: 1,
            source: map(source),
            routing: None,
        }
    }

    #[test]
    fn between_sends_only_what_changed() {
        let before = map(json!({"balance": 10, "pending_transactions": ["t"], "owner": "x"}));
        let after = map(json!({"balance": 5, "pending_transactions": ["t"], "owner": "x"}));
        let c = Changes::between(&before, &after);
        assert_eq!(c.doc(), map(json!({"balance": 5})));
        assert!(!c.is_forced());
        assert_eq!(c.apply_to(&before), after);
        // A field the writer lacks (hidden from it) is not removed.
        let hidden = map(json!({"balance": 10, "ssn": "x"}));
        let seen = map(json!({"balance": 5}));
        assert_eq!(Changes::between(&hidden, &seen).doc(), seen);
    }

    #[test]
    fn merging_keeps_nested_keys_the_write_does_not_name() {
        let src = map(json!({"a": {"x": 1, "y": 2}, "l": [1, 2]}));
        let c = Changes::new()
            .set("a", json!({"x": 3}))
            .set("l", json!([3]));
        assert_eq!(
            c.apply_to(&src),
            map(json!({"a": {"x": 3, "y": 2}, "l": [3]}))
        );
        assert!(c.landed(&doc(2, json!({"a": {"x": 3, "y": 2}, "l": [3]})), (1, 1)));
    }

    #[test]
    fn a_write_landed_only_past_its_version_and_whatever_the_stamps_became() {
        let c = Changes::new()
            .set("transaction_state", json!("committed"))
            .stamp("modification_time", json!("2026-01-01T00:00:01Z"));
        let by_pipeline = json!({"transaction_state": "committed",
            "modification_time": "2026-01-01T00:00:09Z", "note": "other"});
        assert!(c.landed(&doc(5, by_pipeline.clone()), (4, 1)));
        assert!(!c.landed(&doc(4, by_pipeline), (4, 1)), "same version");
        let not_ours = json!({"transaction_state": "pending"});
        assert!(!c.landed(&doc(5, not_ours), (4, 1)));
        assert!(Changes::fence().landed(&doc(5, json!({})), (4, 1)));
        assert!(!Changes::fence().landed(&doc(4, json!({})), (4, 1)));
    }
}
