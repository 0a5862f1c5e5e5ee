//! Reading the trail back: every record that names a transaction, in the
//! run record or in one of its parts, or every record started since a
//! time (`bundle`), with its lists whole again; and the timeline of
//! interventions (`history --since`) from run records alone.

use super::pages::{merge, part_id, Checkpointed, Part};
use super::record::{
    parse_record, ActOutcome, ActionKind, Interface, Operator, Record, RecordStatus,
};
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::protocol::problem::{Problem, Problems};
use crate::protocol::report::Tally;
use crate::protocol::time::format_timestamp;
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Parts read per request (each under [`super::pages::PAGE_BUDGET`]).
const PARTS_PER_READ: u32 = 8;

/// Every recorded intervention on transaction `txn`, oldest first, each
/// with its transactions, plan and steps whole (parts read back in order).
/// With `--audit-trail file:PATH`, those of that file.
pub async fn history(p: &Protocol, txn: &str) -> Result<Vec<Record>> {
    if let Some(path) = &p.config().audit_file {
        return super::file::history(path, txn);
    }
    records_where(p, json!({ "term": { "transactions": txn } })).await
}

/// Every intervention started at or after `since`, oldest first, whole.
/// With `--audit-trail file:PATH`, those of that file.
pub async fn records_since(p: &Protocol, since: DateTime<Utc>) -> Result<Vec<Record>> {
    if let Some(path) = &p.config().audit_file {
        return super::file::records_since(path, since);
    }
    let from = format_timestamp(since);
    records_where(p, json!({ "range": { "started_at": { "gte": from } } })).await
}

/// The interventions started at or after `since` (single and bulk),
/// newest first, each as its run record says: the timeline of `history
/// --since` (and, later, the dashboard's). Only run records are read,
/// never their parts (one query, cheap on a large trail), so a running
/// bulk run's transactions are those its record holds ([`Entry`]). With
/// `--audit-trail file:PATH`, those of that file.
pub async fn timeline(p: &Protocol, since: DateTime<Utc>) -> Result<Vec<Entry>> {
    let mut records = match &p.config().audit_file {
        Some(path) => super::file::run_records(path)?
            .into_iter()
            .filter(|r| r.started_at >= since)
            .collect(),
        None => {
            let query = json!({ "bool": {
                "filter": [{ "range": { "started_at": { "gte": format_timestamp(since) } } }],
                "must_not": [{ "exists": { "field": "run_id" } }],
            } });
            let index = &p.config().indices.audit;
            let hits = p.cluster().scan(index, json!({ "query": query })).await?;
            let mut records = Vec::with_capacity(hits.len());
            for h in hits {
                records.push(parse_record(&h.id, &h.source)?);
            }
            records
        }
    };
    records.sort_by(|a, b| (b.started_at, &b.record_id).cmp(&(a.started_at, &a.record_id)));
    Ok(records.iter().map(Entry::of).collect())
}

/// One intervention in the timeline: when, who, what, how it ended, why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// The run record's id (`history ID`'s records name it too).
    pub record_id: String,
    /// When it began (the cluster's time).
    pub started_at: DateTime<Utc>,
    /// When it was completed; none while running or after a crash.
    pub finished_at: Option<DateTime<Utc>>,
    /// Who.
    pub operator: Operator,
    /// CLI or dashboard.
    pub interface: Interface,
    /// The action.
    pub action: ActionKind,
    /// Whether safety checks were overridden.
    pub forced: bool,
    /// Whether it acted on a selection of many transactions.
    pub bulk: bool,
    /// How many transactions it concerned: a finished bulk run's counted
    /// verdicts, else those its run record names.
    pub transactions: usize,
    /// Whether more transactions than `transactions` may be concerned: a
    /// bulk run not finished whose list continues in parts (not read).
    pub at_least: bool,
    /// Other targets (lock resources, accounts).
    pub targets: Vec<String>,
    /// Running until completed.
    pub status: RecordStatus,
    /// How it ended, once finished.
    pub outcome: Option<ActOutcome>,
    /// A bulk run's verdicts counted (as `history ID` headlines them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Tally>,
    /// What the run said when it ended.
    pub summary: Option<String>,
    /// The operator's reason.
    pub reason: Option<String>,
}

impl Entry {
    /// What it acted on, in words: `3 transaction(s)` (`or more` while a
    /// bulk run's list continues in parts; left out when none and other
    /// targets are named), then its other targets.
    pub fn what(&self) -> String {
        let plus = if self.at_least { " or more" } else { "" };
        let mut parts = Vec::new();
        if self.transactions > 0 || self.targets.is_empty() {
            parts.push(format!("{}{plus} transaction(s)", self.transactions));
        }
        if !self.targets.is_empty() {
            parts.push(format!("targets: {}", self.targets.join(", ")));
        }
        parts.join("; ")
    }

    /// How it ended, in words: a finished bulk run by its counts (`3
    /// completed, 1 refused`), another by its outcome and what it said;
    /// one not finished is `UNFINISHED` (running, or its process died).
    pub fn outcome_text(&self) -> String {
        let said = self.summary.as_deref().unwrap_or_default();
        match (self.status, self.outcome) {
            (RecordStatus::Finished, Some(o)) => match &self.counts {
                Some(counts) => counts.brief(),
                None if said.starts_with(&o.to_string()) => said.to_string(),
                None => format!("{o}: {said}"),
            },
            _ => "UNFINISHED: no end recorded (running, or its process died part-way)".into(),
        }
    }

    /// The entry of run record `r` (its parts not merged in).
    pub fn of(r: &Record) -> Entry {
        let (transactions, at_least) = match &r.counts {
            Some(c) => (c.total(), false),
            None => (r.transactions.len(), r.parts > 0),
        };
        Entry {
            record_id: r.record_id.clone(),
            started_at: r.started_at,
            finished_at: r.finished_at,
            operator: r.operator.clone(),
            interface: r.interface,
            action: r.action,
            forced: r.forced,
            bulk: r.bulk,
            transactions,
            at_least,
            targets: r.targets.clone(),
            status: r.status,
            outcome: r.outcome,
            counts: r.counts,
            summary: r.summary.clone(),
            reason: r.reason.clone(),
        }
    }
}

/// The bulk runs (jobs) whose record is still `running`, newest first,
/// whole: jobs under way, or left unfinished by a process that died —
/// what `--resume RUN_ID` continues (the dashboard's jobs view). With
/// `--audit-trail file:PATH`, those of that file.
pub async fn unfinished_jobs(p: &Protocol) -> Result<Vec<Record>> {
    Ok(jobs(p, false).await?.into_iter().map(|(r, _)| r).collect())
}

/// The bulk runs (jobs), newest first, whole, each with what its
/// checkpoints say ended (while it runs): those still `running` ([`unfinished_jobs`]),
/// or with `all` the finished ones too (`estx-tui jobs`, the jobs view).
pub async fn jobs(p: &Protocol, all: bool) -> Result<Vec<(Record, Checkpointed)>> {
    if let Some(path) = &p.config().audit_file {
        return super::file::jobs(path, all);
    }
    let mut filter = vec![json!({ "term": { "bulk": true } })];
    if !all {
        filter.push(json!({ "term": { "status": "running" } }));
    }
    let mut out = records_with_parts(p, json!({ "bool": { "filter": filter } })).await?;
    out.reverse();
    Ok(out)
}

/// Every record whose run record or one of whose parts matches `query`.
async fn records_where(p: &Protocol, query: Value) -> Result<Vec<Record>> {
    let records = records_with_parts(p, query).await?;
    Ok(records.into_iter().map(|(r, _)| r).collect())
}

/// [`records_where`], each with what its checkpoints say ended.
async fn records_with_parts(p: &Protocol, query: Value) -> Result<Vec<(Record, Checkpointed)>> {
    let index = &p.config().indices.audit;
    let cluster = p.cluster();
    let hits = cluster.scan(index, json!({ "query": query })).await?;
    let mut records = BTreeMap::new();
    let mut runs = BTreeSet::new();
    for h in hits {
        match h.source.get("run_id").and_then(Value::as_str) {
            Some(run) => {
                runs.insert(run.to_string());
            }
            None => {
                records.insert(h.id.clone(), parse_record(&h.id, &h.source)?);
            }
        }
    }
    // Runs found only through a part: their record by id (realtime).
    let missing: Vec<String> = runs
        .into_iter()
        .filter(|r| !records.contains_key(r))
        .collect();
    for (id, doc) in missing.iter().zip(cluster.mget(index, &missing).await?) {
        if let Some(doc) = doc {
            records.insert(id.clone(), parse_record(id, &doc.source)?);
        }
    }
    let mut out = Vec::with_capacity(records.len());
    for (_, mut record) in records {
        let checkpointed = read_parts(cluster, index, &mut record).await?;
        out.push((record, checkpointed));
    }
    out.sort_by(|(a, _), (b, _)| (a.started_at, &a.record_id).cmp(&(b.started_at, &b.record_id)));
    Ok(out)
}

/// Adds the record's parts to it, in order, up to the first missing one (a
/// run that died may have written fewer than planned, or more than its
/// record counts). A finished record with fewer parts than it names is
/// malformed: some were deleted. Says what the checkpoints of a running
/// one (its parts after the plan's) say ended.
async fn read_parts(cluster: &Cluster, index: &str, record: &mut Record) -> Result<Checkpointed> {
    if record.status == RecordStatus::Finished && record.parts == 0 {
        return Ok(Checkpointed::default());
    }
    let run = record.record_id.clone();
    let parts = parts_of(cluster, index, &run).await?;
    let found = parts.len() as u32;
    let checkpointed = Checkpointed::of_record(record, &parts);
    for part in parts {
        merge(record, part.page);
    }
    if record.status == RecordStatus::Finished && found < record.parts {
        return Err(Error::Malformed {
            kind: "audit record",
            id: run,
            problems: Problems::one(Problem::PartsMissing {
                named: record.parts,
                found,
            }),
        });
    }
    Ok(checkpointed)
}

/// The parts of run `run`, in order, up to the first missing one.
pub(super) async fn parts_of(cluster: &Cluster, index: &str, run: &str) -> Result<Vec<Part>> {
    let mut parts = Vec::new();
    loop {
        let from = parts.len() as u32 + 1;
        let ids: Vec<String> = (from..from + PARTS_PER_READ)
            .map(|n| part_id(run, n))
            .collect();
        for (id, doc) in ids.iter().zip(cluster.mget(index, &ids).await?) {
            let Some(doc) = doc else { return Ok(parts) };
            let malformed = |problems: String| Error::Malformed {
                kind: "audit record part",
                id: id.clone(),
                problems: Problems::one(Problem::Undecodable(problems)),
            };
            let mut source = doc.source;
            super::compact::unpack(&mut source).map_err(malformed)?;
            let part: Part = serde_json::from_value(Value::Object(source))
                .map_err(|e| malformed(e.to_string()))?;
            parts.push(part);
        }
    }
}
