//! The audit-trail documents: what an intervention is (action, targets,
//! reason, plan), who made it, and how each step and the whole ended.

use crate::error::{Error, Result};
use crate::protocol::decide::Effect;
use crate::protocol::problem::{Problem, Problems};
use crate::protocol::receipt::Receipt;
use crate::protocol::report::{StepReport, StepResult, Tally, Verdict};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

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
    /// `reverse`: the compensating transfer of a finished one.
    Reverse,
    /// `ack`: transactions acknowledged for a while (`protocol::acks`).
    Ack,
    /// `unack`: acknowledgements taken back.
    Unack,
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActionKind::Rollback => "rollback",
            ActionKind::Recover => "recover",
            ActionKind::ReleaseLock => "release-lock",
            ActionKind::AuditRepair => "audit-repair",
            ActionKind::Transfer => "transfer",
            ActionKind::Reverse => "reverse",
            ActionKind::Ack => "ack",
            ActionKind::Unack => "unack",
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

impl Operator {
    /// `user` of the operating system on `host` (security off).
    pub fn os(user: impl Into<String>, host: impl Into<String>) -> Operator {
        Operator {
            user: user.into(),
            source: OperatorSource::Os,
            host: host.into(),
        }
    }

    /// `user` as the cluster authenticated it, on `host`.
    pub fn cluster(user: impl Into<String>, host: impl Into<String>) -> Operator {
        Operator {
            user: user.into(),
            source: OperatorSource::Cluster,
            host: host.into(),
        }
    }

    /// Whether `other` is the same identity: the same user from the same
    /// source (the host aside: one person may plan on one machine and
    /// apply on another).
    pub fn same_identity(&self, other: &Operator) -> bool {
        self.user == other.user && self.source == other.source
    }
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

/// The audit record of an intervention as it is written before its first
/// step (built from the act and its plan by
/// `intervene::draft`, in the act layer above).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordDraft {
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
    /// The config profile it was made under, if any.
    pub profile: Option<String>,
    /// Whether that profile is marked production.
    pub production: bool,
    /// The plan file it ran (`apply`): its hash, who planned and who approved it.
    pub approval: Option<Approval>,
    /// The live jobs of other operators it acted over (forced, on
    /// transactions they held): `JOB (USER)` each.
    pub overrode: Vec<String>,
}

/// What a record of `estx-tui apply` says of the plan file it ran: the
/// plan's hash, who planned it and who approved it (the operator who ran
/// `apply`), when it was planned, and the items refused as drifted (their
/// documents changed since the plan was made).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// The plan's hash (`sha256:...`).
    pub plan_hash: String,
    /// Who made the plan (`--plan-out`).
    pub planner: Operator,
    /// Who ran it (`apply`).
    pub approver: Operator,
    /// When it was planned (the cluster's time).
    pub planned_at: DateTime<Utc>,
    /// The plan's transactions refused as drifted, not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drifted: Vec<String>,
}

impl RecordDraft {
    /// A record on `transactions` with no plan, reason or targets yet.
    pub fn new(action: ActionKind, transactions: Vec<String>, interface: Interface) -> Self {
        RecordDraft {
            action,
            transactions,
            targets: Vec::new(),
            reason: None,
            forced: false,
            bulk: false,
            plan: Vec::new(),
            interface,
            profile: None,
            production: false,
            approval: None,
            overrode: Vec::new(),
        }
    }

    /// The reason, trimmed, if one was given.
    pub fn reason_text(&self) -> Option<&str> {
        self.reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
    }
}

/// How an act ended, as its record keeps it when it is finished.
#[derive(Debug, Clone)]
pub struct Ending {
    /// The outcome (the worst of a bulk run's verdicts).
    pub outcome: ActOutcome,
    /// The verdict in words.
    pub summary: String,
    /// A bulk run's verdicts counted ([`Record::counts`]).
    pub counts: Option<Tally>,
    /// Each step's outcome.
    pub steps: Vec<TrailStep>,
}

impl Ending {
    /// The ending of a single act (no counts).
    pub fn of(outcome: ActOutcome, summary: impl Into<String>, steps: Vec<TrailStep>) -> Ending {
        Ending {
            outcome,
            summary: summary.into(),
            counts: None,
            steps,
        }
    }
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
    /// The transaction state this step wrote, when it moved the
    /// transaction document (`created -> pending` wrote `pending`): with
    /// the time the run wrote it down, the evidence a job's way back judges
    /// its own writes by (`protocol::jobs::OwnWrites`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrote_state: Option<String>,
    /// What the step's balance write did to its account (an apply or undo
    /// that changed the balance): the evidence `audit --receipts` checks
    /// (`trail::receipts`). Records written before receipts have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
}

impl From<&StepReport> for TrailStep {
    fn from(r: &StepReport) -> Self {
        let (result, detail) = match &r.result {
            StepResult::Updated(e) => ("updated", e.to_string()),
            StepResult::Noop(n) => ("noop", n.to_string()),
            StepResult::Error(m) => ("error", m.clone()),
        };
        let wrote_state = match &r.result {
            StepResult::Updated(Effect::Transitioned { to, .. }) => Some(to.as_str().to_string()),
            _ => None,
        };
        TrailStep {
            txn: r.txn.clone(),
            label: r.label.clone(),
            target: r.target.clone(),
            result: result.into(),
            detail,
            wrote_state,
            receipt: r.receipt,
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

/// How a whole act (an intervention) ended, as its audit record says: the
/// kind of its verdict, or the worst of its transactions' verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActOutcome {
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

impl From<&Verdict> for ActOutcome {
    fn from(v: &Verdict) -> Self {
        match v {
            // Another process ended it: the intervention's aim is reached.
            Verdict::Completed(_) | Verdict::EndedElsewhere(_) => ActOutcome::Completed,
            Verdict::NothingToDo(_) => ActOutcome::NothingToDo,
            Verdict::Refused(_) => ActOutcome::Refused,
            Verdict::Stopped(_) => ActOutcome::Stopped,
            Verdict::Failed(_) => ActOutcome::Failed,
        }
    }
}

impl fmt::Display for ActOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActOutcome::Completed => "completed",
            ActOutcome::NothingToDo => "nothing to do",
            ActOutcome::Refused => "refused",
            ActOutcome::Stopped => "stopped",
            ActOutcome::Failed => "failed",
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
    /// Whether it acted on a selection of many transactions (records
    /// written before bulk actions existed read as `false`).
    #[serde(default)]
    pub bulk: bool,
    /// CLI or dashboard.
    pub interface: Interface,
    /// The config profile it was made under (`--profile`), if any
    /// (records written before profiles were noted read as none).
    #[serde(default)]
    pub profile: Option<String>,
    /// Whether that profile is marked `production = true`.
    #[serde(default)]
    pub production: bool,
    /// The plan file it ran (`apply`): its hash, planner and approver
    /// (records of acts run without a plan have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Who.
    pub operator: Operator,
    /// Step labels as previewed.
    pub plan: Vec<String>,
    /// Running until completed.
    pub status: RecordStatus,
    /// How it ended (once finished).
    pub outcome: Option<ActOutcome>,
    /// The verdict in words (once finished).
    pub summary: Option<String>,
    /// A finished bulk run's transactions by how they ended ("2 completed,
    /// 1 refused"): what `jobs --all` and `history` headline instead of the
    /// worst outcome alone. A resumed job's count its earlier runs' too
    /// (their checkpoints count a transaction ended done as completed).
    /// None for single acts, and for records written before counts were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Tally>,
    /// Each step's outcome (once finished).
    pub steps: Vec<TrailStep>,
    /// How many part documents hold the rest of `transactions`, `plan` and
    /// `steps` (see `trail::pages`): those of the plan while running, all of
    /// them once finished (records written before parts existed read as 0;
    /// `history` gives the lists whole).
    #[serde(default)]
    pub parts: u32,
    /// When the record was written, before the first step.
    pub started_at: DateTime<Utc>,
    /// When it was completed.
    pub finished_at: Option<DateTime<Utc>>,
    /// A bulk run's heartbeat: when its process last said it still runs it
    /// (the cluster's time; `protocol::jobs::life`). Records written before
    /// heartbeats existed have none (their life is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alive_at: Option<DateTime<Utc>>,
    /// How often that heartbeat is rewritten, in milliseconds (a job is
    /// presumed dead after a few such periods without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alive_every_ms: Option<u64>,
    /// Each time the run was resumed after its process died or was
    /// stopped (`--resume`, the jobs view's Enter): by whom, when, and for
    /// a forced one why. A forced resume also sets `forced` ([`Record::resume`]).
    /// Records written before resumes were recorded have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<Resumption>,
    /// Which clock its times (`started_at`, `finished_at`, `alive_at`) come
    /// from, said by records kept in a file trail (a record in the audit
    /// index is always in the cluster's time, as estimated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<TimesFrom>,
    /// The live jobs of other operators it was forced over, on
    /// transactions they held (`JOB (USER)` each;
    /// `intervene::ActRefusal::HeldByJob`). Records written before
    /// operators saw each other's jobs have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrode: Vec<String>,
    /// The estx-tui version that intervened.
    pub tool_version: String,
}

/// One resume of a run, as its record keeps it: who resumed it and why,
/// as every other forced intervention says who and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumption {
    /// Who resumed it.
    pub operator: Operator,
    /// From where.
    pub interface: Interface,
    /// When (the cluster's time).
    pub at: DateTime<Utc>,
    /// Whether it was forced over a job not presumed dead.
    pub forced: bool,
    /// The job's life when it was resumed (`live (heartbeat 4s ago)`).
    pub life: String,
    /// The operator's reason (required when forced).
    pub reason: Option<String>,
}

/// Where a record's times come from (`Cluster::clock_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimesFrom {
    /// The cluster's own `now`, as estimated from its answers.
    Cluster,
    /// The `Date` headers of its answers (no `now` probe answered).
    DateHeader,
    /// This machine's clock (the cluster gave no evidence of its time).
    Local,
}

impl Record {
    /// A record of `action` as it begins: running, written by this
    /// version of the tool, naming nothing else yet (no transactions,
    /// targets, reason, plan, profile or heartbeat; neither forced nor
    /// bulk). `begin_run` fills in what its draft says; tests build theirs
    /// from it, setting only what they are about, so a new field is added
    /// here once.
    pub fn new(
        record_id: impl Into<String>,
        action: ActionKind,
        interface: Interface,
        operator: Operator,
        started_at: DateTime<Utc>,
    ) -> Record {
        Record {
            record_id: record_id.into(),
            action,
            transactions: Vec::new(),
            targets: Vec::new(),
            reason: None,
            forced: false,
            bulk: false,
            interface,
            profile: None,
            production: false,
            approval: None,
            operator,
            plan: Vec::new(),
            status: RecordStatus::Running,
            outcome: None,
            summary: None,
            counts: None,
            steps: Vec::new(),
            parts: 0,
            started_at,
            finished_at: None,
            alive_at: None,
            alive_every_ms: None,
            resumed: Vec::new(),
            clock: None,
            overrode: Vec::new(),
            tool_version: crate::VERSION.into(),
        }
    }

    /// Notes that the run was resumed as `r` says; a forced resume makes
    /// the whole record forced, as a forced act's record is, so a search
    /// for forced interventions finds it.
    pub fn resume(&mut self, r: Resumption) {
        self.forced |= r.forced;
        self.resumed.push(r);
    }
}

/// An audit record as stored (packed, `super::compact`, or in the full
/// form records had before), or why it cannot be read.
pub(super) fn parse_record(id: &str, source: &Map<String, Value>) -> Result<Record> {
    let malformed = |problems: String| Error::Malformed {
        kind: "audit record",
        id: id.to_string(),
        problems: Problems::one(Problem::Undecodable(problems)),
    };
    let mut source = source.clone();
    super::compact::unpack(&mut source).map_err(malformed)?;
    serde_json::from_value(Value::Object(source)).map_err(|e| malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_reason_is_no_reason() {
        let mut d = RecordDraft::new(ActionKind::Rollback, vec![], Interface::Dashboard);
        d.reason = Some("   ".into());
        assert_eq!(d.reason_text(), None);
    }
}
