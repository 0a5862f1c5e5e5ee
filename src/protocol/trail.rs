//! The operator audit trail: one document per intervention that writes
//! (rollback, recovery, lock release, audit repair, an operator's transfer)
//! in the audit index, saying who, why, what was planned and what each step
//! did. The record is written *before* the first step and completed after
//! the last, so a process that dies in between leaves a visible unfinished
//! record. Knows nothing of terminals: the CLI and the dashboard call
//! [`Trail::begin`] and [`Trail::finish`] around the protocol's procedures.

use super::locks::ReleaseOutcome;
use super::report::{StepReport, StepResult, Verdict};
use super::steps::{plan, Procedure};
use super::transaction::TxnState;
use super::Protocol;
use crate::cluster::{Cluster, CreateOutcome, WriteOutcome};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::fmt;

/// The tool's version, written into every record.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What kind of intervention a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionKind {
    /// `rollback` / the dashboard's `R`.
    Rollback,
    /// `recover` / the dashboard's `F`.
    Recover,
    /// `release-lock` / the dashboard's `L`.
    ReleaseLock,
    /// `audit --repair`.
    AuditRepair,
    /// `transfer` started by an operator.
    Transfer,
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActionKind::Rollback => "rollback",
            ActionKind::Recover => "recover",
            ActionKind::ReleaseLock => "release-lock",
            ActionKind::AuditRepair => "audit-repair",
            ActionKind::Transfer => "transfer",
        })
    }
}

/// Where the intervention was started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interface {
    /// A headless command.
    Cli,
    /// A dashboard key.
    Dashboard,
}

impl fmt::Display for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Interface::Cli => "cli",
            Interface::Dashboard => "dashboard",
        })
    }
}

/// Where the operator's name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperatorSource {
    /// The cluster's `_security/_authenticate` (security on).
    Cluster,
    /// The OS user running the tool (security off).
    Os,
}

/// Who intervened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operator {
    /// The cluster user, else the OS user.
    pub user: String,
    /// Which of the two `user` is.
    pub source: OperatorSource,
    /// The host the tool ran on.
    pub host: String,
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let via = match self.source {
            OperatorSource::Cluster => "cluster user",
            OperatorSource::Os => "OS user",
        };
        write!(f, "{} ({via}) on {}", self.user, self.host)
    }
}

/// What an operator is about to do, as previewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intervention {
    /// The action.
    pub action: ActionKind,
    /// Transactions concerned (what `history ID` finds the record by).
    pub transactions: Vec<String>,
    /// Other targets: lock resources, accounts of a transfer.
    pub targets: Vec<String>,
    /// Why (free text from the operator).
    pub reason: Option<String>,
    /// Whether the recovery window / staleness check was overridden.
    pub forced: bool,
    /// Whether it acts on a selection of many transactions.
    pub bulk: bool,
    /// The plan as previewed: step labels in order.
    pub plan: Vec<String>,
    /// Where it was started from.
    pub interface: Interface,
}

impl Intervention {
    /// An intervention on `transactions` with no plan, reason or targets yet.
    pub fn new(action: ActionKind, transactions: Vec<String>, interface: Interface) -> Self {
        Intervention {
            action,
            transactions,
            targets: Vec::new(),
            reason: None,
            forced: false,
            bulk: false,
            plan: Vec::new(),
            interface,
        }
    }

    /// Whether this intervention may not run without a reason: rollbacks,
    /// forced and bulk actions (the rule, written once).
    pub fn needs_reason(&self) -> bool {
        self.action == ActionKind::Rollback || self.forced || self.bulk
    }

    /// The reason, trimmed, if one was given.
    pub fn reason_text(&self) -> Option<&str> {
        self.reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
    }
}

/// The step labels `procedure` would run from `state` (empty when terminal
/// or refused): the plan recorded as previewed.
pub fn plan_labels(procedure: Procedure, state: Option<&TxnState>) -> Vec<String> {
    state
        .and_then(|s| plan(procedure, s).ok())
        .map(|steps| steps.iter().map(|s| s.label().to_string()).collect())
        .unwrap_or_default()
}

/// How one recorded step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrailStep {
    /// Transaction id (empty for steps not about one).
    pub txn: String,
    /// Human label of the step.
    pub label: String,
    /// `index/id` the step acted on.
    pub target: String,
    /// `updated`, `noop`, `error` or `refused`.
    pub result: String,
    /// What happened, in words.
    pub detail: String,
}

impl From<&StepReport> for TrailStep {
    fn from(r: &StepReport) -> Self {
        let (result, detail) = match &r.result {
            StepResult::Updated(e) => ("updated", e.to_string()),
            StepResult::Noop(n) => ("noop", n.to_string()),
            StepResult::Error(m) => ("error", m.clone()),
        };
        TrailStep {
            txn: r.txn.clone(),
            label: r.label.clone(),
            target: r.target.clone(),
            result: result.into(),
            detail,
        }
    }
}

impl TrailStep {
    /// A lock release as a step (`locks_index/resource`).
    pub fn release(locks_index: &str, txn: &str, resource: &str, o: &ReleaseOutcome) -> Self {
        let (result, detail) = match o {
            ReleaseOutcome::Released => ("updated", "released".to_string()),
            ReleaseOutcome::NotHeld => ("noop", "not held".to_string()),
            ReleaseOutcome::Refused(why) => ("refused", why.clone()),
        };
        TrailStep {
            txn: txn.into(),
            label: "release lock".into(),
            target: format!("{locks_index}/{resource}"),
            result: result.into(),
            detail,
        }
    }

    /// One repair made by `audit --repair`.
    pub fn repair(text: &str) -> Self {
        TrailStep {
            txn: String::new(),
            label: "repair".into(),
            target: String::new(),
            result: "updated".into(),
            detail: text.into(),
        }
    }
}

/// Whether the record was completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    /// Written before the first step; still so if the process died.
    Running,
    /// Completed after the last step.
    Finished,
}

/// How an intervention ended (the verdict's kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Ran to the end.
    Completed,
    /// Nothing needed doing.
    NothingToDo,
    /// Refused before changing anything (some or all targets).
    Refused,
    /// Stopped on purpose part-way.
    Stopped,
    /// Failed part-way.
    Failed,
}

impl From<&Verdict> for Outcome {
    fn from(v: &Verdict) -> Self {
        match v {
            Verdict::Completed(_) => Outcome::Completed,
            Verdict::NothingToDo(_) => Outcome::NothingToDo,
            Verdict::Refused(_) => Outcome::Refused,
            Verdict::Stopped(_) => Outcome::Stopped,
            Verdict::Failed(_) => Outcome::Failed,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Completed => "completed",
            Outcome::NothingToDo => "nothing to do",
            Outcome::Refused => "refused",
            Outcome::Stopped => "stopped",
            Outcome::Failed => "failed",
        })
    }
}

/// One audit-trail document, as stored and as `history` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The document id.
    pub record_id: String,
    /// The action.
    pub action: ActionKind,
    /// Transactions concerned.
    pub transactions: Vec<String>,
    /// Other targets (lock resources, accounts).
    pub targets: Vec<String>,
    /// The operator's reason.
    pub reason: Option<String>,
    /// Whether safety checks were overridden.
    pub forced: bool,
    /// CLI or dashboard.
    pub interface: Interface,
    /// Who.
    pub operator: Operator,
    /// Step labels as previewed.
    pub plan: Vec<String>,
    /// Running until completed.
    pub status: RecordStatus,
    /// How it ended (once finished).
    pub outcome: Option<Outcome>,
    /// The verdict in words (once finished).
    pub summary: Option<String>,
    /// Each step's outcome (once finished).
    pub steps: Vec<TrailStep>,
    /// When the record was written, before the first step.
    pub started_at: DateTime<Utc>,
    /// When it was completed.
    pub finished_at: Option<DateTime<Utc>>,
    /// The estx-tui version that intervened.
    pub tool_version: String,
}

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
    cluster: Cluster,
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
            cluster,
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

    /// Writes the unfinished record of `i`, before its first step.
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
        match self.cluster.create(&self.index, &id, &to_map(&record)?).await? {
            CreateOutcome::Created => Ok(RecordId(id)),
            CreateOutcome::AlreadyExists => Err(Error::Invalid(format!(
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
        for _ in 0..5 {
            let doc = self
                .cluster
                .get(&self.index, &id.0)
                .await?
                .ok_or_else(|| Error::NotFound {
                    kind: "audit record",
                    index: self.index.clone(),
                    id: id.0.clone(),
                })?;
            let mut record: Record = serde_json::from_value(Value::Object(doc.source.clone()))
                .map_err(|e| Error::Malformed {
                    kind: "audit record",
                    id: id.0.clone(),
                    problems: e.to_string(),
                })?;
            for s in &steps {
                if !s.txn.is_empty() && !record.transactions.contains(&s.txn) {
                    record.transactions.push(s.txn.clone());
                }
            }
            record.status = RecordStatus::Finished;
            record.outcome = Some(outcome);
            record.summary = Some(summary.to_string());
            record.steps = steps.clone();
            record.finished_at = Some(Utc::now());
            let written = self
                .cluster
                .put_if(
                    &self.index,
                    &id.0,
                    &to_map(&record)?,
                    doc.seq_no,
                    doc.primary_term,
                )
                .await?;
            if let WriteOutcome::Written { .. } = written {
                return Ok(());
            }
        }
        Err(Error::Invalid(format!(
            "audit record `{id}` kept changing; it was left unfinished"
        )))
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
        let record: Record =
            serde_json::from_value(Value::Object(h.source)).map_err(|e| Error::Malformed {
                kind: "audit record",
                id: h.id.clone(),
                problems: e.to_string(),
            })?;
        records.push(record);
    }
    records.sort_by(|a, b| {
        (a.started_at, &a.record_id).cmp(&(b.started_at, &b.record_id))
    });
    Ok(records)
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
        .unwrap_or_else(|| "unknown".into());
    Operator {
        user,
        source: OperatorSource::Os,
        host: host_name(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_required_for_rollbacks_and_forced_actions() {
        let mut i = Intervention::new(ActionKind::Recover, vec!["t".into()], Interface::Cli);
        assert!(!i.needs_reason());
        i.forced = true;
        assert!(i.needs_reason());
        let r = Intervention::new(ActionKind::Rollback, vec![], Interface::Dashboard);
        assert!(r.needs_reason());
        let mut blank = r.clone();
        blank.reason = Some("   ".into());
        assert_eq!(blank.reason_text(), None);
    }

    #[test]
    fn plan_labels_follow_the_protocol_plan() {
        let labels = plan_labels(Procedure::Rollback, Some(&TxnState::Created));
        assert_eq!(labels.len(), 1);
        assert!(plan_labels(Procedure::Recover, Some(&TxnState::Finished)).is_empty());
        assert!(plan_labels(Procedure::Recover, None).is_empty());
    }
}
