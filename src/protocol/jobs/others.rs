//! Several operators at once (issue 30 item 4): what the other operators
//! and processes are doing, read from the audit trail. Two readings:
//!
//! - [`LiveJobs`]: the bulk runs whose record is `running` with a fresh
//!   heartbeat ([`super::job_life`] says `Live`), each with whose it is,
//!   which job and how fresh its heartbeat is, and the transactions it
//!   works on. The dashboard marks those rows, `list --json` says
//!   `in_job`, and an act on one of them is refused unless forced
//!   (`intervene::ActRefusal::HeldByJob`); a bulk selection leaves them out.
//! - [`SeenAct`]: the acts recorded as finished lately (run records only),
//!   which the dashboard logs when they are not its own.
//!
//! Both are read by search, as one search each in the poll's one
//! `_msearch` ([`live_jobs_search`], [`recent_acts_search`]), and the live
//! jobs by whole records (their parts too) for an act ([`live_jobs`]). A
//! search reads only the run records' heads (`_source` filtered: the plan
//! and steps are never read), so a job whose transactions overflow into
//! parts is known by the poll for those its run record lists (the first
//! [`crate::protocol::trail::pages::PAGE_BUDGET`] of them); an act reads
//! its parts too.

use super::life::{life_at, JobLife};
use crate::error::Result;
use crate::protocol::report::Tally;
use crate::protocol::time::{format_timestamp, human_age};
use crate::protocol::trail::{self, ActOutcome, ActionKind, Operator, RecordStatus};
use crate::protocol::{Protocol, ProtocolConfig};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt;

/// Most running jobs one poll reads.
pub const JOBS_CAP: usize = 50;
/// Most recently finished acts one poll reads.
pub const ACTS_CAP: usize = 50;
/// How far back the poll looks for finished acts: the dashboard logs
/// those it has not logged yet, so this only has to cover the time a
/// record takes to be searchable and a poll or two.
pub const ACTS_LOOKBACK: chrono::Duration = chrono::Duration::minutes(10);
/// How stale a running record's heartbeat may be and still be read by the
/// poll's search (each record is then judged by its own period).
const HEARTBEAT_LOOKBACK: chrono::Duration = chrono::Duration::hours(1);

/// A live job holding a transaction: whose it is, which job, how fresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldBy {
    /// Who runs it (the record's operator).
    pub operator: Operator,
    /// The job's id (its run record's id: `jobs`, `--resume` name it so).
    pub job: String,
    /// What it does (`recover`, `rollback`).
    pub action: ActionKind,
    /// Since its last heartbeat, in seconds.
    pub heartbeat_age_s: i64,
}

impl fmt::Display for HeldBy {
    /// `alice's live recover job `ID` (heartbeat 3s ago)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}'s live {} job `{}` (heartbeat {} ago)",
            self.operator.user,
            self.action,
            self.job,
            human_age(self.heartbeat_age_s)
        )
    }
}

/// The live jobs, and the transactions each works on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveJobs {
    jobs: Vec<HeldBy>,
    by_txn: HashMap<String, usize>,
}

/// The head of a run record: what the poll's searches read of it.
#[derive(Debug, Deserialize)]
struct Head {
    operator: Operator,
    action: ActionKind,
    #[serde(default)]
    transactions: Vec<String>,
    status: RecordStatus,
    #[serde(default)]
    alive_at: Option<DateTime<Utc>>,
    #[serde(default)]
    alive_every_ms: Option<u64>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    bulk: bool,
    #[serde(default)]
    forced: bool,
    #[serde(default)]
    outcome: Option<ActOutcome>,
    #[serde(default)]
    counts: Option<Tally>,
    #[serde(default)]
    finished_at: Option<DateTime<Utc>>,
    #[serde(default)]
    overrode: Vec<String>,
}

impl LiveJobs {
    /// Adds job `id` (of `operator`, doing `action`) holding `txns` when
    /// `life` is live; a transaction two jobs hold is named by the first.
    fn add(
        &mut self,
        id: &str,
        operator: &Operator,
        action: ActionKind,
        life: JobLife,
        txns: &[String],
    ) {
        let JobLife::Live { since } = life else {
            return;
        };
        let n = self.jobs.len();
        self.jobs.push(HeldBy {
            operator: operator.clone(),
            job: id.to_string(),
            action,
            heartbeat_age_s: since.num_seconds(),
        });
        for t in txns {
            self.by_txn.entry(t.clone()).or_insert(n);
        }
    }

    /// The live jobs among whole records `records`, judged at `now`.
    pub fn of_records<'a>(
        records: impl IntoIterator<Item = &'a trail::Record>,
        now: DateTime<Utc>,
    ) -> LiveJobs {
        let mut out = LiveJobs::default();
        for r in records {
            if r.status == RecordStatus::Running {
                let life = life_at(r.alive_at, r.alive_every_ms, now);
                out.add(&r.record_id, &r.operator, r.action, life, &r.transactions);
            }
        }
        out
    }

    /// The live jobs in the answer to [`live_jobs_search`], at `now`.
    pub fn from_answer(answer: &Value, now: DateTime<Utc>) -> Result<LiveJobs> {
        let mut out = LiveJobs::default();
        for h in crate::cluster::hits(answer)? {
            let Ok(head) = serde_json::from_value::<Head>(Value::Object(h.source)) else {
                tracing::debug!(record = %h.id, "a running record's head is unreadable");
                continue;
            };
            if head.status == RecordStatus::Running {
                let life = life_at(head.alive_at, head.alive_every_ms, now);
                out.add(&h.id, &head.operator, head.action, life, &head.transactions);
            }
        }
        Ok(out)
    }

    /// The live job holding `txn`, if any.
    pub fn holding(&self, txn: &str) -> Option<&HeldBy> {
        self.by_txn.get(txn).map(|&n| &self.jobs[n])
    }

    /// These live jobs without job `id` (an act's own run).
    pub fn without(mut self, id: &str) -> LiveJobs {
        let Some(n) = self.jobs.iter().position(|j| j.job == id) else {
            return self;
        };
        self.jobs.remove(n);
        self.by_txn.retain(|_, i| *i != n);
        for i in self.by_txn.values_mut() {
            if *i > n {
                *i -= 1;
            }
        }
        self
    }

    /// The live jobs, newest first as read.
    pub fn jobs(&self) -> &[HeldBy] {
        &self.jobs
    }

    /// Whether no job is live.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

/// The poll's search for the running jobs (run records of bulk acts still
/// `running` whose heartbeat is at most an hour old at `now`): their heads
/// only, newest first.
pub fn live_jobs_search(now: DateTime<Utc>) -> Value {
    json!({
        "size": JOBS_CAP,
        "query": {"bool": {
            "filter": [
                {"term": {"bulk": true}},
                {"term": {"status": "running"}},
                {"range": {"alive_at": {"gte": format_timestamp(now - HEARTBEAT_LOOKBACK)}}},
            ],
            "must_not": [{"exists": {"field": "run_id"}}],
        }},
        "sort": [{"started_at": {"order": "desc"}}],
        "_source": ["operator", "action", "transactions", "status", "alive_at", "alive_every_ms"],
    })
}

/// Why the other operators' jobs and acts cannot be seen: the dashboard's
/// jobs view says it, `list --json` and `show --json` carry it on each row
/// (`others_unavailable`), never an empty view that reads as "nobody".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OthersUnavailable {
    /// The audit trail is a local file (`--audit-trail file:PATH`): it
    /// holds this machine's records only, and the poll asks the cluster
    /// nothing of the others.
    FileTrail,
}

impl fmt::Display for OthersUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OthersUnavailable::FileTrail => f.write_str(
                "other operators' jobs are not seen: the audit trail is a local file \
                 (--audit-trail file:PATH), only its own jobs are",
            ),
        }
    }
}

/// Why the other operators' jobs cannot be seen under `config` (`None`:
/// they can, from the audit index).
pub fn others_unavailable(config: &ProtocolConfig) -> Option<OthersUnavailable> {
    config
        .audit_file
        .is_some()
        .then_some(OthersUnavailable::FileTrail)
}

/// The live jobs of `p`'s audit trail now, read whole (their parts too):
/// what an act checks its transactions against. A trail not there yet
/// (no audit index, a file trail not written yet) has none.
pub async fn live_jobs(p: &Protocol) -> Result<LiveJobs> {
    if p.config().audit_file.as_ref().is_some_and(|f| !f.exists()) {
        // A file trail not written yet holds no job.
        return Ok(LiveJobs::default());
    }
    let records = match trail::unfinished_jobs(p).await {
        Ok(r) => r,
        Err(crate::error::Error::IndexMissing(_)) => return Ok(LiveJobs::default()),
        Err(e) => return Err(e),
    };
    Ok(LiveJobs::of_records(&records, p.now().await))
}

/// [`live_jobs`] for an act's check: a trail this user may not search
/// (a role that writes the audit index but may not read it) is warned of
/// in the log and read as no live job, so the check that coordinates
/// operators never blocks a repair (the fence keeps each write right
/// whatever runs beside it).
pub async fn live_jobs_for_act(p: &Protocol) -> LiveJobs {
    live_jobs(p).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the running jobs could not be read: acting without the check");
        LiveJobs::default()
    })
}

/// An act some operator finished lately, as its run record's head says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenAct {
    /// The record's id.
    pub record_id: String,
    /// Who.
    pub operator: Operator,
    /// What.
    pub action: ActionKind,
    /// On which transactions (a bulk run's first page of them).
    pub transactions: Vec<String>,
    /// A bulk run.
    pub bulk: bool,
    /// Forced.
    pub forced: bool,
    /// Jobs it overrode (acted on their transactions while they ran).
    pub overrode: Vec<String>,
    /// How it ended.
    pub outcome: Option<ActOutcome>,
    /// A bulk run's counts.
    pub counts: Option<Tally>,
    /// Why.
    pub reason: Option<String>,
    /// When it finished.
    pub finished_at: Option<DateTime<Utc>>,
}

impl fmt::Display for SeenAct {
    /// One line: `alice: rollback of e2e-x completed (INC-9)`, a bulk run
    /// as `bob: bulk recover of 40 transaction(s): 38 completed, 2 refused
    /// (why)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = &self.operator.user;
        let action = self.action;
        let ended = match (&self.counts, self.outcome) {
            (Some(c), _) => c.brief(),
            (None, Some(o)) => o.to_string(),
            (None, None) => "ended".into(),
        };
        if self.bulk {
            let n = self.counts.map_or(self.transactions.len(), |c| c.total());
            write!(f, "{who}: bulk {action} of {n} transaction(s): {ended}")?;
        } else {
            match self.transactions.as_slice() {
                [] => write!(f, "{who}: {action} {ended}")?,
                [one] => write!(f, "{who}: {action} of {one} {ended}")?,
                [one, rest @ ..] => {
                    write!(f, "{who}: {action} of {one} (+{}) {ended}", rest.len())?
                }
            }
        }
        if self.forced {
            f.write_str(", forced")?;
        }
        if !self.overrode.is_empty() {
            write!(f, " over job {}", self.overrode.join(", "))?;
        }
        if let Some(r) = self.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            write!(f, " ({})", r.trim())?;
        }
        Ok(())
    }
}

/// The poll's search for the acts finished since `ACTS_LOOKBACK` before
/// `now` (run records only, finished, newest first; heads only).
pub fn recent_acts_search(now: DateTime<Utc>) -> Value {
    json!({
        "size": ACTS_CAP,
        "query": {"bool": {
            "filter": [
                {"term": {"status": "finished"}},
                {"range": {"finished_at": {"gte": format_timestamp(now - ACTS_LOOKBACK)}}},
            ],
            "must_not": [{"exists": {"field": "run_id"}}],
        }},
        "sort": [{"finished_at": {"order": "desc"}}],
        "_source": ["operator", "action", "transactions", "status", "reason", "bulk",
            "forced", "outcome", "counts", "finished_at", "overrode"],
    })
}

/// The acts in the answer to [`recent_acts_search`], oldest first.
pub fn seen_acts(answer: &Value) -> Result<Vec<SeenAct>> {
    let mut out = Vec::new();
    for h in crate::cluster::hits(answer)? {
        let Ok(head) = serde_json::from_value::<Head>(Value::Object(h.source)) else {
            tracing::debug!(record = %h.id, "a finished record's head is unreadable");
            continue;
        };
        out.push(SeenAct {
            record_id: h.id.clone(),
            operator: head.operator,
            action: head.action,
            transactions: head.transactions,
            bulk: head.bulk,
            forced: head.forced,
            overrode: head.overrode,
            outcome: head.outcome,
            counts: head.counts,
            reason: head.reason,
            finished_at: head.finished_at,
        });
    }
    out.reverse();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::trail::OperatorSource;

    fn alice() -> Operator {
        Operator {
            user: "alice".into(),
            source: OperatorSource::Os,
            host: "h".into(),
        }
    }

    #[test]
    fn only_live_jobs_hold_their_transactions_and_an_acts_own_job_is_left_out() {
        let now: DateTime<Utc> = "2026-01-01T10:00:00Z".parse().unwrap();
        let beat = |ago: i64| {
            json!({"operator": alice(), "action": "recover", "status": "running",
                "transactions": [format!("t-{ago}")],
                "alive_at": format_timestamp(now - chrono::Duration::seconds(ago)),
                "alive_every_ms": 1000})
        };
        let answer = json!({"hits": {"total": {"value": 2}, "hits": [
            {"_id": "live", "_source": beat(2)},
            {"_id": "dead", "_source": beat(30)},
        ]}});
        let jobs = LiveJobs::from_answer(&answer, now).unwrap();
        let held = jobs.holding("t-2").expect("the live job's transaction");
        assert_eq!(held.job, "live");
        assert_eq!(held.heartbeat_age_s, 2);
        assert_eq!(
            held.to_string(),
            "alice's live recover job `live` (heartbeat 2s ago)"
        );
        assert!(jobs.holding("t-30").is_none(), "a dead job holds nothing");
        assert!(jobs.without("live").holding("t-2").is_none());
    }

    #[test]
    fn a_seen_act_is_one_line_a_bulk_run_too() {
        let mut act = SeenAct {
            record_id: "r".into(),
            operator: alice(),
            action: ActionKind::Rollback,
            transactions: vec!["e2e-x".into()],
            bulk: false,
            forced: false,
            overrode: vec![],
            outcome: Some(ActOutcome::Completed),
            counts: None,
            reason: Some("INC-9".into()),
            finished_at: None,
        };
        assert_eq!(
            act.to_string(),
            "alice: rollback of e2e-x completed (INC-9)"
        );
        act.forced = true;
        act.overrode = vec!["J1".into()];
        assert_eq!(
            act.to_string(),
            "alice: rollback of e2e-x completed, forced over job J1 (INC-9)"
        );
    }
}
