//! Discovery of the time formats: for each time field the tool writes, the
//! mapping's type and format and the format a sample of existing documents
//! use, turned into the format every write uses
//! ([`crate::protocol::time_mapping::choose`]) or the exact conflict that
//! refuses a procedure before step 1.

use super::index_info::IndexInfo;
use crate::cluster::Cluster;
use crate::protocol::schema::{Field, Schema};
use crate::protocol::time_format::TimeFormat;
use crate::protocol::time_mapping::{choose, dominant, MappedTime, TimeConflict};
use serde::Serialize;
use serde_json::{json, Value};

/// Documents sampled per index to learn the format the application writes.
const SAMPLE: usize = 20;

/// One time field: where it is and how it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeField {
    /// The field, e.g. `modification_time`.
    pub name: String,
    /// The format sampled documents use, if any has the field.
    pub seen: Option<TimeFormat>,
    /// The format writes use, or why none fits.
    pub write: Result<TimeFormat, TimeConflict>,
}

impl TimeField {
    /// `field` under its application's `name` in the mapping, and under its
    /// canonical name in the sampled documents (read through the boundary).
    fn new(field: Field, name: &str, info: &IndexInfo, sample: &[Value]) -> TimeField {
        let mapped = MappedTime::of(info.field_mapping(name));
        let seen = dominant(
            sample.iter().filter_map(|s| s.get(field.canonical())),
            &mapped,
        );
        TimeField {
            name: name.into(),
            write: choose(name, &mapped, seen.as_ref()),
            seen,
        }
    }

    /// The value to write for `t` (the tool's default format if none fits:
    /// callers refuse before writing, see [`TimeFields::conflicts`]).
    pub fn stamp(&self, t: chrono::DateTime<chrono::Utc>) -> Value {
        match &self.write {
            Ok(f) => f.write(t),
            Err(_) => crate::protocol::time_format::DEFAULT_FORMAT.write(t),
        }
    }

    /// How it is written, in words (for `doctor`).
    pub fn how(&self) -> String {
        match &self.write {
            Ok(f) => format!("written as {f}"),
            Err(c) => format!("CANNOT be written: {}", c.why),
        }
    }
}

/// The time fields the protocol writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeFields {
    /// Transactions' `modification_time` (every state change).
    pub modification: TimeField,
    /// Transactions' `creation_time` (`transfer`, `reverse`).
    pub creation: TimeField,
    /// Locks' `created_at`.
    pub lock_created: TimeField,
    /// Locks' `expires_at`.
    pub lock_expires: TimeField,
}

impl TimeFields {
    /// From the mappings alone (nothing sampled).
    pub fn of_mappings(schema: &Schema, t: &IndexInfo, l: &IndexInfo) -> TimeFields {
        TimeFields::with_samples(schema, t, &[], l, &[])
    }

    fn with_samples(
        schema: &Schema,
        t: &IndexInfo,
        ts: &[Value],
        l: &IndexInfo,
        ls: &[Value],
    ) -> TimeFields {
        let field = |f: Field, info: &IndexInfo, sample: &[Value]| {
            TimeField::new(f, schema.name(f), info, sample)
        };
        TimeFields {
            modification: field(Field::ModificationTime, t, ts),
            creation: field(Field::CreationTime, t, ts),
            lock_created: field(Field::LockCreated, l, ls),
            lock_expires: field(Field::LockExpires, l, ls),
        }
    }

    /// Reads the mappings' formats and samples documents of both indices.
    pub async fn discover(
        cluster: &Cluster,
        schema: &Schema,
        t: &IndexInfo,
        l: &IndexInfo,
    ) -> TimeFields {
        let names = |a: Field, b: Field| [schema.name(a), schema.name(b)];
        let ts = sample(
            cluster,
            t,
            &names(Field::ModificationTime, Field::CreationTime),
        )
        .await;
        let ls = sample(cluster, l, &names(Field::LockCreated, Field::LockExpires)).await;
        TimeFields::with_samples(schema, t, &ts, l, &ls)
    }

    /// Why `modification_time`, which every procedure writes, cannot be
    /// written (refused before step 1).
    pub fn conflict(&self) -> Option<&TimeConflict> {
        self.modification.write.as_ref().err()
    }

    /// Why a new transaction (`modification_time` and `creation_time`)
    /// cannot be written (refused before it is created).
    pub fn creation_conflict(&self) -> Option<&TimeConflict> {
        self.conflict()
            .or_else(|| self.creation.write.as_ref().err())
    }

    /// The lock fields no format fits (refused before a lock is taken).
    pub fn lock_conflicts(&self) -> Vec<&TimeConflict> {
        [&self.lock_created, &self.lock_expires]
            .into_iter()
            .filter_map(|f| f.write.as_ref().err())
            .collect()
    }
}

/// The `_source` of up to [`SAMPLE`] documents having the first of `fields`
/// (none when the index is missing or the search fails: the mapping decides).
async fn sample(cluster: &Cluster, info: &IndexInfo, fields: &[&str]) -> Vec<Value> {
    if !info.exists() {
        return Vec::new();
    }
    let body = json!({"size": SAMPLE, "_source": fields,
        "query": {"exists": {"field": fields[0]}}});
    match cluster.search(&info.name, body).await {
        Ok(answer) => answer
            .pointer("/hits/hits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|h| h.get("_source").cloned())
            .collect(),
        Err(e) => {
            tracing::info!(index = %info.name, error = %e, "could not sample time formats");
            Vec::new()
        }
    }
}
