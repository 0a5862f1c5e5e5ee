//! The audit trail in a local file (`--audit-trail file:PATH`), for a
//! cluster without the audit index and an operator who may not create it:
//! every intervention is still recorded, never silently not. The file is
//! JSON Lines, append-only: the record as begun (`"status": "running"`),
//! each part (a job's checkpoints), then the record as completed, each a
//! line; the last line of a record is its state. It is created 0600 and
//! opened without following a symlink, and must belong to the user
//! (`local_files::open_private`). Every record names the file in its
//! targets (`--audit-trail=file:PATH`), so a copy of it says where it was
//! kept.

use super::pages::Part;
use super::record::{parse_record, Record};
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;
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
            problems: e.to_string(),
        })?);
    }
    Ok(out)
}

/// Record `id` as its last line says.
pub fn record(path: &Path, id: &str) -> Result<Record> {
    let last = lines(path)?
        .into_iter()
        .rev()
        .find(|v| v.get("run_id").is_none() && v["record_id"] == id)
        .ok_or_else(|| Error::NotFound {
            kind: "audit record",
            index: describe(path),
            id: id.to_string(),
        })?;
    match last {
        Value::Object(m) => parse_record(id, &m),
        _ => Err(Error::Invalid(format!(
            "audit record `{id}` is not an object"
        ))),
    }
}

/// The parts of run `id`, in the order written.
pub fn parts(path: &Path, id: &str) -> Result<Vec<Part>> {
    lines(path)?
        .into_iter()
        .filter(|v| v["run_id"] == id)
        .map(|v| {
            serde_json::from_value(v).map_err(|e| Error::Malformed {
                kind: "audit record part",
                id: id.to_string(),
                problems: e.to_string(),
            })
        })
        .collect()
}
