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
//! Both are read by search in the poll's one `_msearch` (the jobs' heads
//! and the lists of jobs not seen before: [`live_jobs_searches`], kept in
//! [`JobLists`]; the acts not seen before: [`recent_acts_search`], kept in
//! [`SeenActs`]), and the live jobs by whole records (their parts too) for
//! an act ([`live_jobs`]). A
//! search reads only the run records' heads and lists (`_source`
//! filtered: the plan and steps are never read); a job whose transactions
//! overflow into parts (past its run record's first
//! [`crate::protocol::trail::pages::RECORD_BUDGET`]) is known by the poll
//! for those its run record lists when it first sees it, and for the rest
//! from the next poll on (its parts, read once; one missing for
//! [`PART_ASKS`] polls is no longer asked); an act reads every part
//! before it acts.

use super::life::{life_at, JobLife};
use crate::error::Result;
use crate::protocol::read::kept_ids::{leave_out, ReadThrough};
use crate::protocol::report::Tally;
use crate::protocol::time::{format_timestamp, human_age, parse_timestamp};
use crate::protocol::trail::{self, ActOutcome, ActionKind, Operator, RecordStatus};
use crate::protocol::{Protocol, ProtocolConfig};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

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
    /// Each job's transactions, in the order of `jobs`.
    held: Vec<Held>,
}

/// One job's transactions, as a set shared with [`JobLists`] (which keeps
/// it while the job runs: it is built once, not every poll).
type Held = Arc<HashSet<String>>;

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
        txns: Held,
    ) {
        let JobLife::Live { since } = life else {
            return;
        };
        self.jobs.push(HeldBy {
            operator: operator.clone(),
            job: id.to_string(),
            action,
            heartbeat_age_s: since.num_seconds(),
        });
        self.held.push(txns);
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
                let txns = Arc::new(r.transactions.iter().cloned().collect());
                out.add(&r.record_id, &r.operator, r.action, life, txns);
            }
        }
        out
    }

    /// The live jobs in the answers to [`live_jobs_searches`] (`heads`,
    /// and `lists` of the jobs `kept` did not hold), at `now`; `kept` then
    /// holds the lists of the running jobs `heads` names, and no others. A
    /// job whose list neither answer nor `kept` holds (it began between
    /// the two searches) holds nothing this poll and is read again next.
    pub fn from_answers(
        heads: &Value,
        lists: &Value,
        kept: &mut JobLists,
        now: DateTime<Utc>,
    ) -> Result<LiveJobs> {
        let asked = kept.parts_wanted();
        let listed = crate::cluster::hit_refs(lists)?;
        // A full answer may have cut the parts (sorted last): unanswered
        // only when it was not.
        let full = listed.len() >= JOBS_CAP + asked.len();
        for h in listed {
            kept.read(h.id, h.source);
        }
        if !full {
            kept.unanswered(&asked);
        }
        let mut out = LiveJobs::default();
        let mut running = HashSet::new();
        for h in crate::cluster::hits(heads)? {
            running.insert(h.id.clone());
            let Ok(head) = serde_json::from_value::<Head>(Value::Object(h.source)) else {
                tracing::debug!(record = %h.id, "a running record's head is unreadable");
                continue;
            };
            if head.status == RecordStatus::Running {
                let life = life_at(head.alive_at, head.alive_every_ms, now);
                let list = kept.by_job.get(&h.id).map(|k| k.held.clone());
                out.add(
                    &h.id,
                    &head.operator,
                    head.action,
                    life,
                    list.unwrap_or_default(),
                );
            }
        }
        kept.by_job.retain(|id, _| running.contains(id));
        Ok(out)
    }

    /// The live job holding `txn`, if any.
    pub fn holding(&self, txn: &str) -> Option<&HeldBy> {
        let n = self.held.iter().position(|held| held.contains(txn))?;
        Some(&self.jobs[n])
    }

    /// These live jobs without job `id` (an act's own run).
    pub fn without(mut self, id: &str) -> LiveJobs {
        let Some(n) = self.jobs.iter().position(|j| j.job == id) else {
            return self;
        };
        self.jobs.remove(n);
        self.held.remove(n);
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

/// The filter of the poll's searches for the running jobs: run records of
/// bulk acts still `running` whose heartbeat is at most an hour old at
/// `now` (each is then judged by its own period), but those of `known`.
fn running_jobs<'a>(now: DateTime<Utc>, known: impl Iterator<Item = &'a String>) -> Value {
    let mut must_not = vec![json!({"exists": {"field": "run_id"}})];
    // By id only: the lists kept are those of the running jobs the heads'
    // search names, at most `JOBS_CAP`, far below the ids' cap.
    must_not.extend(leave_out(known.map(|id| (id.as_str(), None)), None));
    json!({
        "filter": [
            {"term": {"bulk": true}},
            {"term": {"status": "running"}},
            {"range": {"alive_at": {"gte": format_timestamp(now - HEARTBEAT_LOOKBACK)}}},
        ],
        "must_not": must_not,
    })
}

/// The poll's two searches for the running jobs at `now`: their heads
/// (who, what, heartbeat: no transactions), newest first; and the
/// transaction lists of those not in `known` (the lists an earlier poll
/// read), with the parts `known` still lacks of the jobs it holds (a job
/// over [`RECORD_BUDGET`](trail::pages::RECORD_BUDGET) of ids lists the rest in parts, at most
/// [`PARTS_PER_POLL`] read per poll: a big job's rows beyond its first page
/// are known from the next poll on; a part missing [`PART_ASKS`] polls is
/// given up). A running record's list and parts are
/// written when it begins and only its end adds to them
/// (`trail::Record`'s completion, after which it is no longer running), so
/// what is read once holds while the job runs: the poll reads each job's
/// list once, not every few seconds (issue 30 item 5: three jobs over
/// 5 000 transactions were two thirds of the poll's answer).
pub fn live_jobs_searches(now: DateTime<Utc>, known: &JobLists) -> [Value; 2] {
    let heads = json!({
        "size": JOBS_CAP,
        "query": {"bool": running_jobs(now, std::iter::empty())},
        "sort": [{"started_at": {"order": "desc"}}],
        "_source": ["operator", "action", "status", "alive_at", "alive_every_ms"],
    });
    let unseen = running_jobs(now, known.by_job.keys());
    let parts = known.parts_wanted();
    let lists = json!({
        "size": JOBS_CAP + parts.len(),
        "query": {"bool": {"should": [
            {"bool": unseen},
            {"ids": {"values": parts}},
        ], "minimum_should_match": 1}},
        "sort": [{"started_at": {"order": "desc", "unmapped_type": "date"}}],
        "_source": ["transactions", "parts", "run_id", "part"],
    });
    [heads, lists]
}

/// Most parts of the running jobs' lists one poll reads (each holds up to
/// [`PAGE_BUDGET`](trail::pages::PAGE_BUDGET) of ids).
pub const PARTS_PER_POLL: usize = 4;

/// How many polls may ask a running job's part and find it missing before
/// the poller stops asking it (issue 30 item 5): a part that never arrives
/// (its write failed, its process died between the record and its parts)
/// would otherwise take one of the [`PARTS_PER_POLL`] places every poll,
/// for as long as the job runs. A job's parts are written just after its
/// record, so one that is late is late by the refresh interval, a poll or
/// two. The rows a part given up lists are then not marked as the job's
/// (the poll says so in its warnings, [`JobLists::warnings`]); an act
/// still reads every part of every live job before it acts
/// ([`live_jobs`]), so this costs a mark, never a collision unchecked.
pub const PART_ASKS: u32 = 5;

/// The transaction lists of the running jobs an earlier poll read, by
/// run record id ([`live_jobs_searches`]): kept by the poller,
/// each dropped once its job is no longer among the running.
#[derive(Debug, Clone, Default)]
pub struct JobLists {
    by_job: HashMap<String, KeptList>,
}

/// One running job's list as read so far.
#[derive(Debug, Clone, Default)]
struct KeptList {
    /// The transactions its record and the parts read list.
    held: Held,
    /// The numbers of its parts not read yet, each with how many polls
    /// asked it and found it missing.
    unread: Vec<(u32, u32)>,
    /// The numbers of its parts no longer asked: missing [`PART_ASKS`]
    /// times.
    given_up: Vec<u32>,
}

impl JobLists {
    /// The ids of the parts to read next, at most [`PARTS_PER_POLL`].
    fn parts_wanted(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .by_job
            .iter()
            .flat_map(|(run, l)| {
                l.unread
                    .iter()
                    .map(move |&(n, _)| trail::pages::part_id(run, n))
            })
            .collect();
        ids.sort();
        ids.truncate(PARTS_PER_POLL);
        ids
    }

    /// Counts a poll that asked the parts `asked` and found those still
    /// unread missing; gives up on each missing [`PART_ASKS`] times.
    fn unanswered(&mut self, asked: &[String]) {
        if asked.is_empty() {
            return;
        }
        for (run, l) in &mut self.by_job {
            l.unread.retain_mut(|(n, misses)| {
                if asked.contains(&trail::pages::part_id(run, *n)) {
                    *misses += 1;
                }
                if *misses < PART_ASKS {
                    return true;
                }
                tracing::warn!(job = %run, part = *n, "a running job's part never arrived: no longer asked");
                l.given_up.push(*n);
                false
            });
        }
    }

    /// What the poll says of the parts given up: one line a job (the
    /// rows they list are not marked as its).
    pub fn warnings(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .by_job
            .iter()
            .filter(|(_, l)| !l.given_up.is_empty())
            .map(|(run, l)| {
                format!(
                    "job `{run}`: {} part(s) of its list of transactions never arrived \
                     (asked {PART_ASKS} polls): the rows they list are not marked as its",
                    l.given_up.len()
                )
            })
            .collect();
        lines.sort();
        lines
    }

    /// Reads one hit of the lists' search: a job's head (its first page
    /// and how many parts follow) or one of its parts.
    fn read(&mut self, id: &str, source: &serde_json::Map<String, Value>) {
        let listed = source.get("transactions").and_then(Value::as_array);
        let ids = listed.into_iter().flatten().filter_map(Value::as_str);
        match (
            source.get("run_id").and_then(Value::as_str),
            source.get("part"),
        ) {
            (Some(run), Some(part)) => {
                let Some(kept) = self.by_job.get_mut(run) else {
                    return;
                };
                let n = part.as_u64().and_then(|n| u32::try_from(n).ok());
                kept.unread.retain(|(u, _)| Some(*u) != n);
                Arc::make_mut(&mut kept.held).extend(ids.map(String::from));
            }
            _ => {
                let parts = source.get("parts").and_then(Value::as_u64).unwrap_or(0);
                let parts = u32::try_from(parts).unwrap_or(0);
                let held = Arc::new(ids.map(String::from).collect());
                let unread = (1..=parts).map(|n| (n, 0)).collect();
                let list = KeptList {
                    held,
                    unread,
                    given_up: Vec::new(),
                };
                self.by_job.insert(id.to_string(), list);
            }
        }
    }
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
    /// On which transactions (a bulk run's first page of them; shared:
    /// the poll keeps the act while it is recent).
    pub transactions: Arc<[String]>,
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
            match &self.transactions[..] {
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
/// `now` (run records only, finished, oldest first; heads only), but those
/// `known` holds: a finished record no longer changes, so each is read
/// once (a bulk run's head lists up to a page of transactions). Those
/// known are left out by time as far back as all were read, the others by
/// id up to a cap ([`ReadThrough`]: oldest first, so that a burst of acts
/// is read whole and one searchable late is still read), which `known`
/// notes as asked.
pub fn recent_acts_search(now: DateTime<Utc>, known: &mut SeenActs) -> Value {
    let mut must_not = vec![json!({"exists": {"field": "run_id"}})];
    let kept = known
        .by_record
        .iter()
        .filter_map(|(id, a)| Some((id.as_str(), a.finished_at?)));
    must_not.extend(known.read.leave_out("finished_at", kept, now));
    json!({
        "size": ACTS_CAP,
        "query": {"bool": {
            "filter": [
                {"term": {"status": "finished"}},
                {"range": {"finished_at": {"gte": format_timestamp(since_acts(now))}}},
            ],
            "must_not": must_not,
        }},
        "sort": ReadThrough::oldest_first("finished_at"),
        "_source": ["operator", "action", "transactions", "status", "reason", "bulk",
            "forced", "outcome", "counts", "finished_at", "overrode"],
    })
}

/// The start of the acts' lookback at `now`.
fn since_acts(now: DateTime<Utc>) -> DateTime<Utc> {
    now - ACTS_LOOKBACK
}

/// The acts finished lately that earlier polls read, by record id
/// ([`recent_acts_search`]): kept by the poller while they
/// finished within the lookback, with how far back every act has been
/// read ([`ReadThrough`]).
#[derive(Debug, Clone, Default)]
pub struct SeenActs {
    by_record: HashMap<String, SeenAct>,
    read: ReadThrough,
}

impl SeenActs {
    /// The acts in the answer to [`recent_acts_search`] added to those
    /// kept, at `now`: the last [`ACTS_CAP`] finished within the lookback,
    /// and any older read by this answer (a burst read oldest first, or
    /// one searchable late: each reaches the log once), oldest first;
    /// those finished before the lookback are no longer kept.
    pub fn add_answer(&mut self, answer: &Value, now: DateTime<Utc>) -> Result<Vec<SeenAct>> {
        let hits = crate::cluster::hits(answer)?;
        let times: Vec<Option<DateTime<Utc>>> = hits
            .iter()
            .map(|h| h.source.get("finished_at").and_then(parse_timestamp))
            .collect();
        self.read.answered(ACTS_CAP, &times);
        let mut read_now = HashSet::new();
        for h in hits {
            let Ok(head) = serde_json::from_value::<Head>(Value::Object(h.source)) else {
                tracing::debug!(record = %h.id, "a finished record's head is unreadable");
                continue;
            };
            let act = SeenAct {
                record_id: h.id.clone(),
                operator: head.operator,
                action: head.action,
                transactions: head.transactions.into(),
                bulk: head.bulk,
                forced: head.forced,
                overrode: head.overrode,
                outcome: head.outcome,
                counts: head.counts,
                reason: head.reason,
                finished_at: head.finished_at,
            };
            read_now.insert(h.id.clone());
            self.by_record.insert(h.id, act);
        }
        let since = since_acts(now);
        self.by_record
            .retain(|_, a| a.finished_at.is_some_and(|f| f >= since));
        let mut acts: Vec<&SeenAct> = self.by_record.values().collect();
        acts.sort_by(|a, b| (a.finished_at, &a.record_id).cmp(&(b.finished_at, &b.record_id)));
        let newest = acts.len().saturating_sub(ACTS_CAP);
        Ok(acts
            .iter()
            .enumerate()
            .filter(|(n, a)| *n >= newest || read_now.contains(&a.record_id))
            .map(|(_, a)| (*a).clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Operator {
        Operator::os("alice", "h")
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
        let heads = json!({"hits": {"total": {"value": 2}, "hits": [
            {"_id": "live", "_source": beat(2)},
            {"_id": "dead", "_source": beat(30)},
        ]}});
        let lists = json!({"hits": {"hits": [
            {"_id": "live", "_source": {"transactions": ["t-2"]}},
            {"_id": "dead", "_source": {"transactions": ["t-30"]}},
            {"_id": "gone", "_source": {"transactions": ["t-9"]}},
        ]}});
        let mut kept = JobLists::default();
        let jobs = LiveJobs::from_answers(&heads, &lists, &mut kept, now).unwrap();
        assert_eq!(
            kept.by_job.len(),
            2,
            "the lists of the running records are kept, no other"
        );
        let held = jobs.holding("t-2").expect("the live job's transaction");
        assert_eq!(held.job, "live");
        assert_eq!(held.heartbeat_age_s, 2);
        assert_eq!(
            held.to_string(),
            "alice's live recover job `live` (heartbeat 2s ago)"
        );
        assert!(jobs.holding("t-30").is_none(), "a dead job holds nothing");
        assert!(jobs.without("live").holding("t-2").is_none());

        // The next poll: the lists kept are not asked again, and a job
        // whose list no answer holds yet holds nothing until it is read.
        let [_, ask] = live_jobs_searches(now, &kept);
        let asked = ask.to_string();
        assert!(
            asked.contains(r#"{"ids":{"values":["#) && asked.contains("\"live\""),
            "{asked}"
        );
        let heads = json!({"hits": {"hits": [
            {"_id": "live", "_source": beat(1)},
            {"_id": "new", "_source": beat(1)},
        ]}});
        let none = json!({"hits": {"hits": []}});
        let jobs = LiveJobs::from_answers(&heads, &none, &mut kept, now).unwrap();
        assert_eq!(jobs.holding("t-2").map(|h| h.job.as_str()), Some("live"));
        assert_eq!(jobs.jobs().len(), 2);
        assert_eq!(
            kept.by_job.len(),
            1,
            "only the running job's list stays kept"
        );
    }

    /// A part asked [`PART_ASKS`] polls and never answered is asked no
    /// more, and the poll says so; the parts answered stay read.
    #[test]
    fn a_part_missing_for_a_few_polls_is_given_up() {
        let now: DateTime<Utc> = "2026-01-01T10:00:00Z".parse().unwrap();
        let heads = json!({"hits": {"hits": [{"_id": "big", "_source": {
            "operator": alice(), "action": "recover", "status": "running",
            "alive_at": format_timestamp(now), "alive_every_ms": 1000}}]}});
        let first = json!({"hits": {"hits": [
            {"_id": "big", "_source": {"transactions": ["t1"], "parts": 2}}]}});
        let part = |n| trail::pages::part_id("big", n);
        let one = json!({"hits": {"hits": [{"_id": part(1), "_source":
            {"run_id": "big", "part": 1, "transactions": ["t2"]}}]}});
        let none = json!({"hits": {"hits": []}});
        let mut kept = JobLists::default();
        LiveJobs::from_answers(&heads, &first, &mut kept, now).unwrap();
        assert_eq!(kept.parts_wanted(), [part(1), part(2)]);
        LiveJobs::from_answers(&heads, &one, &mut kept, now).unwrap();
        for _ in 1..PART_ASKS {
            assert_eq!(kept.parts_wanted(), [part(2)]);
            assert!(kept.warnings().is_empty());
            LiveJobs::from_answers(&heads, &none, &mut kept, now).unwrap();
        }
        assert!(kept.parts_wanted().is_empty(), "given up");
        let jobs = LiveJobs::from_answers(&heads, &none, &mut kept, now).unwrap();
        assert!(jobs.holding("t2").is_some() && jobs.holding("t1").is_some());
        let warned = kept.warnings();
        assert!(
            warned.len() == 1 && warned[0].contains("`big`"),
            "{warned:?}"
        );
    }

    /// The acts read are kept and not asked again; those finished before
    /// the lookback are dropped; the newest [`ACTS_CAP`] and those just
    /// read, oldest first.
    #[test]
    fn acts_seen_are_kept_while_recent_and_not_asked_again() {
        let now: DateTime<Utc> = "2026-01-01T10:00:00Z".parse().unwrap();
        let act = |id: &str, ago_s: i64| {
            json!({"_id": id, "_source": {"operator": alice(), "action": "rollback",
                "status": "finished", "transactions": ["t"], "outcome": "completed",
                "finished_at": format_timestamp(now - chrono::Duration::seconds(ago_s))}})
        };
        let mut kept = SeenActs::default();
        let answer = json!({"hits": {"hits": [act("b", 60), act("a", 120)]}});
        let acts = kept.add_answer(&answer, now).unwrap();
        let ids = |acts: &[SeenAct]| acts.iter().map(|a| a.record_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&acts), ["a", "b"]);
        let asked = recent_acts_search(now, &mut kept).to_string();
        assert!(asked.contains(r#""ids":{"values":["#), "{asked}");

        // Nine minutes on, with none new: `a` has left the lookback.
        let later = now + chrono::Duration::seconds(540);
        let none = json!({"hits": {"hits": []}});
        assert_eq!(ids(&kept.add_answer(&none, later).unwrap()), ["b"]);

        let many: Vec<Value> = (0..ACTS_CAP + 5)
            .map(|i| act(&format!("m{i:03}"), i as i64))
            .collect();
        let acts = kept
            .add_answer(&json!({"hits": {"hits": many}}), now)
            .unwrap();
        assert_eq!(acts.len(), ACTS_CAP + 5, "each act read reaches the log");
        assert_eq!(acts.last().unwrap().record_id, "m000", "the newest last");
        let acts = kept.add_answer(&none, now).unwrap();
        assert_eq!(acts.len(), ACTS_CAP);
        assert_eq!(acts[0].record_id, "m049");
    }

    #[test]
    fn a_seen_act_is_one_line_a_bulk_run_too() {
        let mut act = SeenAct {
            record_id: "r".into(),
            operator: alice(),
            action: ActionKind::Rollback,
            transactions: vec!["e2e-x".to_string()].into(),
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
