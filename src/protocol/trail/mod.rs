//! The operator audit trail: one document per intervention that writes
//! (rollback, recovery, lock release, audit repair, an operator's transfer)
//! in the audit index, saying who, why, what was planned and what each step
//! did. The record is written *before* the first step and completed after
//! the last, so a process that dies in between leaves a visible unfinished
//! record. Knows nothing of terminals: the CLI and the dashboard call
//! [`Trail::begin`] and [`Trail::finish`] around the protocol's procedures
//! (or [`Trail::run_procedure`] / [`Trail::run_release`], which do both).

pub mod bulk;
mod record;
pub mod run;

pub use record::*;
pub use run::{RecordedRun, RunAs};

use super::decide::Effect;
use super::executor::{Created, DocDecision, Executor};
use super::Protocol;
use crate::error::{Error, Result};
use chrono::Utc;
use serde_json::{json, Map, Value};
use std::fmt;

/// The tool's version, written into every record.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The id of an audit record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordId(pub String);

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The audit trail of one cluster, with the operator resolved once.
#[derive(Debug, Clone)]
pub struct Trail {
    exec: Executor,
    index: String,
    operator: Operator,
}

impl Trail {
    /// Opens the trail: refuses with [`Error::IndexMissing`] (which says to
    /// run `estx-tui init`) when the audit index does not exist, so no
    /// intervention runs unrecorded; resolves who the operator is.
    pub async fn open(p: &Protocol) -> Result<Trail> {
        let index = p.config().indices.audit.clone();
        let cluster = p.cluster().clone();
        if !cluster.index_exists(&index).await? {
            return Err(Error::IndexMissing(index));
        }
        let operator = match cluster.authenticated_user().await? {
            Some(user) => Operator {
                user,
                source: OperatorSource::Cluster,
                host: host_name(),
            },
            None => os_operator(),
        };
        Ok(Trail {
            exec: p.exec.clone(),
            index,
            operator,
        })
    }

    /// Who the records name.
    pub fn operator(&self) -> &Operator {
        &self.operator
    }

    /// The audit index.
    pub fn index(&self) -> &str {
        &self.index
    }

    /// Writes the unfinished record of `i`, before its first step. A lost
    /// answer is resolved as the protocol's writes resolve theirs
    /// ([`Executor::create`]): the record found under its (random) id is
    /// ours when it holds exactly what we sent.
    pub async fn begin(&self, i: &Intervention) -> Result<RecordId> {
        let started_at = Utc::now();
        let id = format!(
            "{}-{}-{:08x}",
            started_at.format("%Y%m%dT%H%M%S%.3fZ"),
            i.action,
            rand::random::<u32>()
        );
        let record = Record {
            record_id: id.clone(),
            action: i.action,
            transactions: i.transactions.clone(),
            targets: i.targets.clone(),
            reason: i.reason_text().map(str::to_string),
            forced: i.forced,
            bulk: i.bulk,
            interface: i.interface,
            operator: self.operator.clone(),
            plan: i.plan.clone(),
            status: RecordStatus::Running,
            outcome: None,
            summary: None,
            steps: Vec::new(),
            started_at,
            finished_at: None,
            tool_version: TOOL_VERSION.into(),
        };
        let source = to_map(&record)?;
        match self.exec.create(&self.index, &id, &source).await? {
            Created::Created => Ok(RecordId(id)),
            Created::Exists { doc, .. } if doc.source == source => Ok(RecordId(id)),
            Created::Exists { .. } => Err(Error::Invalid(format!(
                "audit record `{id}` already exists; try again"
            ))),
        }
    }

    /// Completes the record: outcome, summary, every step, the end time.
    /// Transactions found while running (e.g. by `recover --all-stuck`) are
    /// added to the record's list.
    pub async fn finish(
        &self,
        id: &RecordId,
        outcome: Outcome,
        summary: &str,
        steps: Vec<TrailStep>,
    ) -> Result<()> {
        let finished_at = Utc::now();
        self.exec
            .run("audit record", &self.index, &id.0, |doc| {
                let mut record = parse_record(&id.0, doc)?;
                for s in &steps {
                    if !s.txn.is_empty() && !record.transactions.contains(&s.txn) {
                        record.transactions.push(s.txn.clone());
                    }
                }
                record.status = RecordStatus::Finished;
                record.outcome = Some(outcome);
                record.summary = Some(summary.to_string());
                record.steps = steps.clone();
                record.finished_at = Some(finished_at);
                Ok(DocDecision::Write(to_map(&record)?, Effect::Recorded))
            })
            .await
            .map(|_| ())
    }
}

/// Every recorded intervention on transaction `txn`, oldest first.
pub async fn history(p: &Protocol, txn: &str) -> Result<Vec<Record>> {
    let index = &p.config().indices.audit;
    let hits = p
        .cluster()
        .scan(
            index,
            json!({ "query": { "term": { "transactions": txn } } }),
        )
        .await?;
    let mut records = Vec::with_capacity(hits.len());
    for h in hits {
        records.push(parse_record(&h.id, &h.source)?);
    }
    records.sort_by(|a, b| (a.started_at, &a.record_id).cmp(&(b.started_at, &b.record_id)));
    Ok(records)
}

/// An audit record as stored, or why it cannot be read.
fn parse_record(id: &str, source: &Map<String, Value>) -> Result<Record> {
    serde_json::from_value(Value::Object(source.clone())).map_err(|e| Error::Malformed {
        kind: "audit record",
        id: id.to_string(),
        problems: e.to_string(),
    })
}

fn to_map(record: &Record) -> Result<Map<String, Value>> {
    match serde_json::to_value(record) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Invalid("audit record is not an object".into())),
        Err(e) => Err(Error::Invalid(format!("audit record: {e}"))),
    }
}

/// The OS user and host, for clusters without security.
pub fn os_operator() -> Operator {
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .or_else(passwd_user)
        .unwrap_or_else(|| "unknown".into());
    Operator {
        user,
        source: OperatorSource::Os,
        host: host_name(),
    }
}

/// The name of this process's user in `/etc/passwd` (Linux; when `USER`
/// and friends are not set, e.g. under cron or systemd).
fn passwd_user() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let fields: Vec<&str> = l.split(':').collect();
        (fields.len() > 2 && fields[2] == uid).then(|| fields[0].to_string())
    })
}

/// This machine's host name (`localhost` when it cannot be found).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "localhost".into())
}
