//! A liveness source for locks held by processes: an index of heartbeats
//! the application keeps (Kestra-like systems record each server instance
//! with the time it last reported). Configured per profile; without one,
//! a lock held by a process or an instance is judged unknown.
//!
//! What a heartbeat says of a holder: older than the timeout, the holder is
//! dead (its locks are stale on evidence); fresh, it is alive; no heartbeat
//! at all, nothing can be told (unknown). Heartbeats are found by a search,
//! which may lag the last write by the index's refresh interval: the
//! timeout must exceed the heartbeat period plus that interval.

use crate::cluster::Cluster;
use crate::error::Result;
use crate::protocol::time::{human_age, parse_timestamp};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

/// Where heartbeats are read and how old one may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LivenessSource {
    /// The index holding the heartbeats.
    pub index: String,
    /// The field naming the instance (a `keyword`, or its `.keyword`
    /// sub-field: it is matched exactly).
    pub instance_field: String,
    /// The field holding the time of the heartbeat.
    pub time_field: String,
    /// A holder whose last heartbeat is older than this is dead.
    pub timeout: Duration,
}

impl std::fmt::Display for LivenessSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "heartbeats in `{}` (instance `{}`, time `{}`), dead after {}",
            self.index,
            self.instance_field,
            self.time_field,
            human_age(self.timeout.as_secs() as i64)
        )
    }
}

/// What the liveness source says of one holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heartbeat {
    /// No liveness source is configured.
    NotConfigured,
    /// Configured, and the holder has no heartbeat there.
    Missing,
    /// The holder's latest heartbeat.
    Seen(DateTime<Utc>),
}

/// Latest heartbeat by instance id.
pub type Heartbeats = HashMap<String, DateTime<Utc>>;

impl Heartbeat {
    /// What `beats` (read from `source`) say of `holder`.
    pub fn of(source: Option<&LivenessSource>, beats: &Heartbeats, holder: &str) -> Heartbeat {
        match (source, beats.get(holder)) {
            (None, _) => Heartbeat::NotConfigured,
            (Some(_), None) => Heartbeat::Missing,
            (Some(_), Some(at)) => Heartbeat::Seen(*at),
        }
    }
}

impl LivenessSource {
    /// The source field the instance id is read from (`x.keyword` is `x`).
    fn instance_source_field(&self) -> &str {
        self.instance_field
            .strip_suffix(".keyword")
            .unwrap_or(&self.instance_field)
    }

    /// The latest heartbeat of each instance among `hits`' sources.
    pub(crate) fn latest(
        &self,
        sources: impl Iterator<Item = serde_json::Map<String, Value>>,
    ) -> Heartbeats {
        let mut out = Heartbeats::new();
        for src in sources {
            let id = match src.get(self.instance_source_field()) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => continue,
            };
            let Some(at) = src.get(&self.time_field).and_then(parse_timestamp) else {
                continue;
            };
            let e = out.entry(id).or_insert(at);
            if at > *e {
                *e = at;
            }
        }
        out
    }
}

/// Upper bound of heartbeat documents read per lookup.
pub(crate) const MAX_HEARTBEATS: usize = 10_000;

/// The latest heartbeat of each of `holders` in `source` (one search). A
/// missing heartbeat index is an error: the configuration names it.
pub async fn read_heartbeats(
    cluster: &Cluster,
    source: &LivenessSource,
    holders: &[String],
) -> Result<Heartbeats> {
    if holders.is_empty() {
        return Ok(Heartbeats::new());
    }
    let body = json!({
        "size": MAX_HEARTBEATS,
        "query": {"terms": {source.instance_field.clone(): holders}},
    });
    let answer = cluster.search(&source.index, body).await?;
    let hits = crate::cluster::hits(&answer)?;
    Ok(source.latest(hits.into_iter().map(|h| h.source)))
}

/// What `doctor` says of the configured liveness source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LivenessReport {
    /// The source, in words.
    pub source: String,
    /// Why its heartbeats could not be read, if they could not.
    pub error: Option<String>,
    /// Instances with a heartbeat within the timeout.
    pub instances_alive: usize,
    /// Instances whose last heartbeat is older than the timeout.
    pub instances_dead: usize,
    /// Locks whose holder's heartbeat is fresh (live).
    pub locks_live: usize,
    /// Locks whose holder's heartbeat is too old (stale).
    pub locks_dead: usize,
    /// Locks held by a process or instance with no heartbeat (unknown).
    pub locks_without_heartbeat: usize,
}

impl std::fmt::Display for LivenessReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(e) = &self.error {
            return write!(f, "{}: cannot be read: {e}", self.source);
        }
        write!(
            f,
            "{}: {} instances alive, {} dead; locks of processes: {} live, {} stale (holder dead), {} unknown (no heartbeat)",
            self.source,
            self.instances_alive,
            self.instances_dead,
            self.locks_live,
            self.locks_dead,
            self.locks_without_heartbeat
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_heartbeat_of_each_instance_counts() {
        let s = LivenessSource {
            index: "hb".into(),
            instance_field: "server.keyword".into(),
            time_field: "heartbeatDate".into(),
            timeout: Duration::from_secs(60),
        };
        let docs = [
            json!({"server": "i1", "heartbeatDate": "2026-01-01T00:00:00Z"}),
            json!({"server": "i1", "heartbeatDate": "2026-01-01T00:01:00Z"}),
            json!({"server": "i2", "heartbeatDate": "not a time"}),
            json!({"heartbeatDate": "2026-01-01T00:01:00Z"}),
        ];
        let beats = s.latest(docs.iter().map(|d| d.as_object().unwrap().clone()));
        assert_eq!(beats.len(), 1);
        let at = parse_timestamp(&json!("2026-01-01T00:01:00Z")).unwrap();
        assert_eq!(Heartbeat::of(Some(&s), &beats, "i1"), Heartbeat::Seen(at));
        assert_eq!(Heartbeat::of(Some(&s), &beats, "i2"), Heartbeat::Missing);
        assert_eq!(Heartbeat::of(None, &beats, "i1"), Heartbeat::NotConfigured);
    }
}
