//! The audit trail in a local file (`--audit-trail file:PATH`), for a
//! cluster without the audit index and an operator who may not create it:
//! every intervention is still recorded, never silently not. The file is
//! JSON Lines, append-only: the record as begun (`"status": "running"`),
//! each part (a job's checkpoints), then the record as completed, each a
//! line; the last line of a record is its state. A running job's
//! heartbeats are lines of their own (`{"alive_of": id, "alive_at": ..}`),
//! which readers before them skip. It is created 0600 and
//! opened without following a symlink, and must belong to the user
//! (`local_files::open_private`). Every record names the file in its
//! targets (`--audit-trail=file:PATH`), so a copy of it says where it was
//! kept.

use super::pages::{self, Checkpointed, Part};
use super::record::{parse_record, Record, RecordStatus};
use crate::error::{Error, Result};
use crate::protocol::problem::{Problem, Problems};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// `file:PATH` as `--audit-trail` takes it.
pub fn parse(s: &str) -> std::result::Result<PathBuf, String> {
    match s.strip_prefix("file:") {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => Err(format!(
            "`{s}`: expected file:PATH (a local append-only JSON Lines file)"
        )),
    }
}

/// How the records name the file (`file:PATH`).
pub fn describe(path: &Path) -> String {
    format!("file:{}", path.display())
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Invalid(format!("audit trail {}: {e}", describe(path)))
}

/// Checks the file can be written (creating it 0600), refusing a symlink
/// or a file of another user.
pub fn check(path: &Path) -> Result<()> {
    crate::local_files::open_private(path)
        .map(drop)
        .map_err(|e| io(path, e))
}

/// Appends `doc` as one line.
pub fn append<T: Serialize>(path: &Path, doc: &T) -> Result<()> {
    let mut line = serde_json::to_vec(doc).map_err(|e| Error::Invalid(e.to_string()))?;
    line.push(b'\n');
    let mut f = crate::local_files::open_private(path).map_err(|e| io(path, e))?;
    f.write_all(&line).map_err(|e| io(path, e))?;
    f.sync_data().map_err(|e| io(path, e))
}

/// Every line of the file, parsed.
fn lines(path: &Path) -> Result<Vec<Value>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| io(path, e))?;
    let mut out = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line.map_err(|e| io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| Error::Malformed {
            kind: "audit trail line",
            id: describe(path),
            problems: Problems::one(Problem::Undecodable(e.to_string())),
        })?);
    }
    Ok(out)
}

/// A heartbeat line of a running job (`Trail::beat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Beat {
    /// The run record's id.
    pub alive_of: String,
    /// When (the cluster's time).
    pub alive_at: DateTime<Utc>,
    /// The period, in milliseconds.
    pub alive_every_ms: u64,
}

impl Beat {
    /// The heartbeat of run `id` at `at`, every `every_ms`.
    pub fn new(id: &str, at: DateTime<Utc>, every_ms: u64) -> Beat {
        Beat {
            alive_of: id.to_string(),
            alive_at: at,
            alive_every_ms: every_ms,
        }
    }
}

/// Record `id` as its last line says, with its latest heartbeat.
pub fn record(path: &Path, id: &str) -> Result<Record> {
    let records = records(path, |v| v["record_id"] == id || v["alive_of"] == id)?;
    records.into_values().next().ok_or_else(|| Error::NotFound {
        kind: "audit record",
        index: describe(path),
        id: id.to_string(),
    })
}

/// Every record of the lines `wanted` keeps, as its last line says, with
/// its latest heartbeat, by id.
fn records(path: &Path, wanted: impl Fn(&Value) -> bool) -> Result<BTreeMap<String, Record>> {
    let mut out: BTreeMap<String, Record> = BTreeMap::new();
    let mut beats: BTreeMap<String, Beat> = BTreeMap::new();
    for v in lines(path)?.into_iter().filter(|v| wanted(v)) {
        if v.get("run_id").is_some() {
            continue;
        }
        if v.get("alive_of").is_some() {
            if let Ok(b) = serde_json::from_value::<Beat>(v) {
                beats.insert(b.alive_of.clone(), b);
            }
            continue;
        }
        let Value::Object(m) = v else { continue };
        let id = m.get("record_id").and_then(Value::as_str).unwrap_or("");
        let id = id.to_string();
        out.insert(id.clone(), parse_record(&id, &m)?);
    }
    for (id, b) in beats {
        if let Some(r) = out.get_mut(&id) {
            if r.alive_at.is_none_or(|at| at < b.alive_at) {
                r.alive_at = Some(b.alive_at);
                r.alive_every_ms = Some(b.alive_every_ms);
            }
        }
    }
    Ok(out)
}

/// Every run record of the file as its last line says (parts not read).
pub fn run_records(path: &Path) -> Result<Vec<Record>> {
    Ok(records(path, |_| true)?.into_values().collect())
}

/// The bulk runs whose record in the file is still `running` (with `all`,
/// finished ones too), newest first, each whole ([`whole`]), as
/// `trail::jobs` reads them from the index.
pub fn jobs(path: &Path, all: bool) -> Result<Vec<(Record, Checkpointed)>> {
    let mut jobs = whole(path, |r| {
        r.bulk && (all || r.status == RecordStatus::Running)
    })?;
    jobs.reverse();
    Ok(jobs)
}

/// Every record of the file that names transaction `txn` (in the run
/// record or in one of its parts), oldest first, whole: `history ID` of a
/// file trail.
pub fn history(path: &Path, txn: &str) -> Result<Vec<Record>> {
    Ok(whole(path, |_| true)?
        .into_iter()
        .map(|(r, _)| r)
        .filter(|r| r.transactions.iter().any(|t| t == txn))
        .collect())
}

/// Every record of the file started at or after `since`, oldest first,
/// whole: `bundle`'s interventions from a file trail.
pub fn records_since(path: &Path, since: DateTime<Utc>) -> Result<Vec<Record>> {
    Ok(whole(path, |r| r.started_at >= since)?
        .into_iter()
        .map(|(r, _)| r)
        .collect())
}

/// The records `keep` keeps (judged on the run record as its last line
/// says), oldest first, each whole: its parts merged in, with its latest
/// heartbeat and what its checkpoints say ended. The file is read twice
/// (records, then parts), whatever the number of records.
fn whole(path: &Path, keep: impl Fn(&Record) -> bool) -> Result<Vec<(Record, Checkpointed)>> {
    let records: Vec<Record> = records(path, |_| true)?
        .into_values()
        .filter(|r| keep(r))
        .collect();
    let mut parts = parts_by_run(path)?;
    let mut out = Vec::with_capacity(records.len());
    for mut r in records {
        let parts = parts.remove(&r.record_id).unwrap_or_default();
        let checkpointed = Checkpointed::of_record(&r, &parts);
        for part in parts {
            pages::merge(&mut r, part.page);
        }
        out.push((r, checkpointed));
    }
    out.sort_by(|(a, _), (b, _)| (a.started_at, &a.record_id).cmp(&(b.started_at, &b.record_id)));
    Ok(out)
}

/// A part line, parsed.
fn part(id: &str, v: Value) -> Result<Part> {
    serde_json::from_value(v).map_err(|e| Error::Malformed {
        kind: "audit record part",
        id: id.to_string(),
        problems: Problems::one(Problem::Undecodable(e.to_string())),
    })
}

/// The parts of run `id`, in the order written.
pub fn parts(path: &Path, id: &str) -> Result<Vec<Part>> {
    lines(path)?
        .into_iter()
        .filter(|v| v["run_id"] == id)
        .map(|v| part(id, v))
        .collect()
}

/// Every run's parts, each run's in the order written, by run id.
fn parts_by_run(path: &Path) -> Result<BTreeMap<String, Vec<Part>>> {
    let mut out: BTreeMap<String, Vec<Part>> = BTreeMap::new();
    for v in lines(path)? {
        let Some(run) = v.get("run_id").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        let p = part(&run, v)?;
        out.entry(run).or_default().push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, status: &str, bulk: bool, started: &str) -> Value {
        json!({"record_id": id, "action": "recover", "transactions": ["t-1"],
            "targets": [], "reason": null, "forced": false, "bulk": bulk,
            "interface": "cli", "operator": {"user": "u", "source": "os", "host": "h"},
            "plan": [], "status": status, "outcome": null, "summary": null, "steps": [],
            "parts": 0, "started_at": started, "finished_at": null, "tool_version": "0"})
    }

    #[test]
    fn a_file_lists_its_running_bulk_jobs_with_their_parts_and_latest_heartbeat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trail.jsonl");
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        let mut finished = record("done", "running", true, "2026-01-01T09:00:00Z");
        append(&path, &finished).unwrap();
        finished["status"] = json!("finished");
        append(&path, &finished).unwrap();
        append(
            &path,
            &record("one", "running", false, "2026-01-01T10:00:00Z"),
        )
        .unwrap();
        append(
            &path,
            &record("old", "running", true, "2026-01-01T11:00:00Z"),
        )
        .unwrap();
        append(
            &path,
            &record("new", "running", true, "2026-01-01T12:00:00Z"),
        )
        .unwrap();
        let part = json!({"run_id": "new", "part": 1, "transactions": ["t-2"]});
        append(&path, &part).unwrap();
        for s in ["12:00:10", "12:00:20"] {
            let beat = Beat::new("new", at(&format!("2026-01-01T{s}Z")), 10_000);
            append(&path, &beat).unwrap();
        }
        let jobs: Vec<Record> = jobs(&path, false)
            .unwrap()
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        let ids: Vec<&str> = jobs.iter().map(|r| r.record_id.as_str()).collect();
        assert_eq!(ids, ["new", "old"], "running bulk jobs, newest first");
        assert_eq!(jobs[0].transactions, ["t-1", "t-2"]);
        assert_eq!(jobs[0].alive_at, Some(at("2026-01-01T12:00:20Z")));
        assert_eq!(jobs[0].alive_every_ms, Some(10_000));
        assert_eq!(jobs[1].alive_at, None, "an older record: no heartbeat");
        assert_eq!(record_of(&path, "new").alive_at, jobs[0].alive_at);
    }

    fn record_of(path: &Path, id: &str) -> Record {
        super::record(path, id).unwrap()
    }
}
