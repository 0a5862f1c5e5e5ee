//! The operator audit trail: one record per intervention that writes
//! (rollback, recovery, lock release, audit repair, an operator's transfer)
//! in the audit index, saying who, why, what was planned and what each step
//! did. The record is written *before* the first step and completed after
//! the last, so a process that dies in between leaves a visible unfinished
//! record. A large run's lists go into bounded part documents linked by the
//! run's id ([`pages`]); [`history`] reads them back whole. Every write
//! resolves a lost answer as the protocol's writes do. Knows nothing of
//! terminals, nor of the acts: the act layer above it (`protocol::intervene`) calls
//! [`Trail::begin`] and [`Trail::finish`] around each act it performs.

mod compact;
pub mod file;
mod history;
mod listed;
pub mod pages;
pub mod receipts;
mod record;
mod resume;
mod st_text;

pub use history::{history, jobs, records_since, timeline, unfinished_jobs, Entry};
use record::parse_record;
pub use record::*;
pub use resume::{CheckpointsWritten, Unfinished};

use super::decide::Effect;
use super::executor::{Created, DocDecision, Executor};
use super::handle::host_name;
use super::report::Tally;
use super::Protocol;
use crate::cluster::ClockSource;
use crate::cluster::{BulkCreated, Changes};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use pages::{Listed, Page, Part, PAGE_BUDGET, RECORD_BUDGET};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::path::PathBuf;

/// The tool's version with its commit ([`crate::VERSION`], as `--version`
/// prints it), written into every record.
pub const TOOL_VERSION: &str = crate::VERSION;

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
    /// The local file records go to instead of the index
    /// (`--audit-trail file:PATH`, [`file`]).
    file: Option<PathBuf>,
    /// How often a bulk run's heartbeat is rewritten.
    heartbeat: std::time::Duration,
}

impl Trail {
    /// Opens the trail: refuses with [`Error::IndexMissing`] when the audit
    /// index does not exist (an act turns it into
    /// `ActRefusal::AuditIndexMissing`, which says to run `estx-tui init` or
    /// record to a file), so no intervention runs unrecorded; resolves who
    /// the operator is.
    ///
    /// With `--audit-trail file:PATH` the records go to that local file
    /// instead ([`file`]), whether the index exists or not.
    pub async fn open(p: &Protocol) -> Result<Trail> {
        let cluster = p.cluster().clone();
        let file = p.config().audit_file.clone();
        let index = match &file {
            Some(path) => {
                file::check(path)?;
                file::describe(path)
            }
            None => p.config().indices.audit.clone(),
        };
        if file.is_none() {
            if !cluster.index_exists(&index).await? {
                return Err(Error::IndexMissing(index));
            }
            // A record is created whole, then completed by partial updates:
            // where the product refuses those (field or document level
            // security on the audit index, a write block), the act would run
            // and leave its record unfinished. Asked as the act's own indices
            // are (`protocol::preflight`), before anything is written.
            p.check_partial_updates_on(&index).await?;
        }
        // The records' times are the cluster's ([`Trail::now`]): asked of
        // it unless asked in the last minute.
        p.sync_clock().await;
        let operator = operator_of(&cluster).await?;
        Ok(Trail {
            exec: p.exec.clone(),
            index,
            operator,
            file,
            heartbeat: p.config().job_heartbeat,
        })
    }

    /// The record `id` as stored (the index's realtime copy, or the file's
    /// last line of it).
    async fn stored(&self, id: &str) -> Result<Record> {
        match &self.file {
            Some(path) => file::record(path, id),
            None => {
                let doc = self.exec.get("audit record", &self.index, id).await?;
                parse_record(id, &doc.source)
            }
        }
    }

    /// Who the records name.
    pub fn operator(&self) -> &Operator {
        &self.operator
    }

    /// The audit index (`file:PATH` for a file trail).
    pub fn index(&self) -> &str {
        &self.index
    }

    /// Writes the unfinished record of `i`, before its first step, then the
    /// parts its transactions and plan overflow into ([`pages`]).
    pub async fn begin(&self, i: &RecordDraft) -> Result<RecordId> {
        Ok(self.begin_run(i).await?.0)
    }

    /// [`Trail::begin`], also saying how many parts the plan took (the
    /// steps' parts, and a job's checkpoints, are numbered after them).
    pub async fn begin_run(&self, i: &RecordDraft) -> Result<(RecordId, u32)> {
        let started_at = self.now();
        let id = format!(
            "{}-{}-{:08x}",
            started_at.format("%Y%m%dT%H%M%S%.3fZ"),
            i.action,
            rand::random::<u32>()
        );
        let mut pages =
            pages::plan_pages(&i.transactions, &i.plan, RECORD_BUDGET, PAGE_BUDGET).into_iter();
        let first = pages.next().unwrap_or_default();
        let rest: Vec<Page> = pages.collect();
        let mut targets = i.targets.clone();
        if let Some(path) = &self.file {
            targets.push(format!("--audit-trail={}", file::describe(path)));
        }
        let record = Record {
            transactions: first.transactions,
            targets,
            reason: i.reason_text().map(str::to_string),
            forced: i.forced,
            bulk: i.bulk,
            profile: i.profile.clone(),
            production: i.production,
            approval: i.approval.clone(),
            plan: first.plan,
            parts: count(rest.len())?,
            alive_at: i.bulk.then_some(started_at),
            alive_every_ms: i.bulk.then(|| self.heartbeat_ms()),
            clock: self.file.as_ref().map(|_| self.clock()),
            overrode: i.overrode.clone(),
            ..Record::new(
                id.clone(),
                i.action,
                i.interface,
                self.operator.clone(),
                started_at,
            )
        };
        let parts = record.parts;
        self.create_own(&id, &record).await?;
        if let Written {
            failed: Some((_, e)),
            ..
        } = self.write_parts(&id, 1, rest, &Listed::default()).await
        {
            return Err(e);
        }
        Ok((RecordId(id), parts))
    }

    /// The time every record's times are written in: the cluster's, as
    /// estimated ([`crate::cluster::Cluster::now`]), the clock the
    /// heartbeat, the life rule (`protocol::jobs::life`) and the jobs view
    /// judge by, whatever this machine's clock says.
    fn now(&self) -> DateTime<Utc> {
        self.exec.cluster().now()
    }

    /// Which clock [`Trail::now`] is now (a file trail's records say it).
    fn clock(&self) -> TimesFrom {
        match self.exec.cluster().clock_status().source {
            ClockSource::Cluster { .. } => TimesFrom::Cluster,
            ClockSource::DateHeader { .. } => TimesFrom::DateHeader,
            ClockSource::Local { .. } => TimesFrom::Local,
        }
    }

    /// Notes in the unfinished record `id`, before the resumed run's first
    /// step, who resumes it, when, and (forced over a job not presumed
    /// dead) why ([`Record::resume`]): a resume that dies in its turn is
    /// still on record. Refused when the record is no longer running.
    pub async fn resume(
        &self,
        id: &str,
        interface: Interface,
        forced: bool,
        life: String,
        reason: Option<String>,
    ) -> Result<()> {
        let r = Resumption {
            operator: self.operator.clone(),
            interface,
            at: self.now(),
            forced,
            life,
            reason,
        };
        if let Some(path) = &self.file {
            let mut record = self.stored(id).await?;
            record.resume(r);
            return file::append(path, &record);
        }
        self.exec
            .run("audit record", &self.index, id, |doc| {
                let mut record = parse_record(id, doc)?;
                if record.status != RecordStatus::Running {
                    return Err(Error::Invalid(format!("run `{id}` is no longer running")));
                }
                record.resume(r.clone());
                let changes = Changes::between(doc, &to_stored(&record)?);
                Ok(DocDecision::Write(changes, Effect::Recorded))
            })
            .await
            .map(|_| ())
    }

    /// How often a bulk run's heartbeat is rewritten.
    pub fn heartbeat(&self) -> std::time::Duration {
        self.heartbeat
    }

    fn heartbeat_ms(&self) -> u64 {
        u64::try_from(self.heartbeat.as_millis()).unwrap_or(u64::MAX)
    }

    /// Rewrites the heartbeat of the running record `id` (`alive_at`, the
    /// cluster's time now, and the period: `protocol::jobs::life`), as
    /// every record write, conditional on the version read. Writes nothing
    /// and says `false` when the record is no longer running (whoever
    /// finished it, the run is over). A file trail gets a line of its own,
    /// `{"alive_of": id, ...}`.
    pub async fn beat(&self, id: &RecordId) -> Result<bool> {
        let at = self.now();
        let every = self.heartbeat_ms();
        if let Some(path) = &self.file {
            file::append(path, &file::Beat::new(&id.0, at, every))?;
            return Ok(true);
        }
        let at = serde_json::to_value(at).map_err(|e| Error::Invalid(e.to_string()))?;
        let ended = std::sync::atomic::AtomicBool::new(false);
        let written = self
            .exec
            .run("audit record", &self.index, &id.0, |doc| {
                if doc.get("status").and_then(Value::as_str) != Some("running") {
                    ended.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Err(Error::Invalid(format!("run `{id}` is no longer running")));
                }
                let changes = Changes::new()
                    .set("alive_at", at.clone())
                    .set("alive_every_ms", every.into());
                Ok(DocDecision::Write(changes, Effect::Recorded))
            })
            .await;
        match written {
            Err(_) if ended.load(std::sync::atomic::Ordering::Relaxed) => Ok(false),
            w => w.map(|_| true),
        }
    }

    /// Completes the record: outcome, summary, every step, the end time.
    /// Steps that do not fit in the record go into parts first ([`pages`]).
    /// Transactions found while running (e.g. by `recover --all-stuck`) are
    /// added to the record's list (or listed by the steps' parts).
    pub async fn finish(&self, id: &RecordId, ending: Ending) -> Result<()> {
        self.finish_after(id, 0, ending, &Listed::default()).await
    }

    /// [`Trail::finish`] of a run that has already written `checkpoints`
    /// parts of steps after its plan's (a job's checkpoints,
    /// `protocol::jobs`): `steps` are the rest, written after them. The
    /// steps' parts index only the transactions the run's plan did not
    /// list (`listed`, [`Listed`]).
    pub async fn finish_after(
        &self,
        id: &RecordId,
        checkpoints: u32,
        ending: Ending,
        listed: &Listed,
    ) -> Result<()> {
        if let Some(path) = &self.file {
            // A file has no size limit: the steps go inline, after the
            // checkpoints' lines.
            let mut record = self.stored(&id.0).await?;
            let Ending {
                outcome,
                summary,
                counts,
                steps,
            } = ending;
            for s in &steps {
                if !s.txn.is_empty() && !record.transactions.contains(&s.txn) {
                    record.transactions.push(s.txn.clone());
                }
            }
            record.status = RecordStatus::Finished;
            record.outcome = Some(outcome);
            record.summary = Some(summary);
            record.counts = counts;
            record.steps = steps;
            record.parts += checkpoints;
            record.finished_at = Some(self.now());
            return file::append(path, &record);
        }
        // Read once: how many parts the plan took and whether the steps fit
        // beside what the record holds decide where they go; the completion
        // is then written conditional on this very read (a conflict reads
        // it again, as any write does).
        let doc = self.exec.get("audit record", &self.index, &id.0).await?;
        let steps = ending.steps;
        let plan_parts = stored_parts(&id.0, &doc.source)?;
        let (inline, parts) = if checkpoints == 0
            && plan_parts == 0
            && pages::fits_inline(&doc.source, &steps, PAGE_BUDGET)
        {
            (steps, 0)
        } else {
            let first = plan_parts + checkpoints + 1;
            let written = self
                .write_parts(&id.0, first, pages::step_pages(steps, PAGE_BUDGET), listed)
                .await;
            if let Some((_, e)) = written.failed {
                return Err(e);
            }
            (Vec::new(), written.next(first) - 1)
        };
        let completion = Completion {
            outcome: ending.outcome,
            summary: ending.summary,
            counts: ending.counts,
            steps: inline,
            parts,
            finished_at: self.now(),
        };
        self.exec
            .run_read("audit record", &self.index, doc, |doc| {
                let changes = completion.changes(&id.0, doc)?;
                Ok(DocDecision::Write(changes, Effect::Recorded))
            })
            .await
            .map(|_| ())
    }

    /// Writes `pages` as parts `first`, `first + 1`, ... of run `run`, in
    /// order, in one `_bulk` of `create` actions (or as many as its body
    /// limit asks) instead of one request each. A part the `_bulk` did not
    /// create (its answer lost, or its number taken by another run of the
    /// same job) is written again alone ([`Trail::write_part`]: one found
    /// holding exactly our page is ours; a number taken moves the page to
    /// the first free one after). Stops at the first page that cannot be
    /// written. A file trail appends them in order. Of each page's
    /// transactions, those of `listed` are stored unindexed ([`Listed`]).
    pub(crate) async fn write_parts(
        &self,
        run: &str,
        first: u32,
        pages: Vec<Page>,
        listed: &Listed,
    ) -> Written {
        let mut written = Written::default();
        let created = match &self.file {
            Some(_) => None,
            None => {
                let docs = (first..)
                    .zip(&pages)
                    .map(|(n, page)| {
                        let stored = stored_part(run, n, page, listed)?;
                        Ok((pages::part_id(run, n), stored))
                    })
                    .collect::<Result<Vec<_>>>();
                match docs {
                    Ok(docs) if !docs.is_empty() => self
                        .exec
                        .cluster()
                        .bulk_create(&self.index, &docs)
                        .await
                        .ok(),
                    _ => None,
                }
            }
        };
        let mut created = created.map(Vec::into_iter);
        for (n, page) in (first..).zip(pages) {
            let answer = created.as_mut().and_then(Iterator::next);
            if matches!(answer, Some(BulkCreated::Created)) {
                written.numbers.push(n);
                continue;
            }
            match self.write_part(run, n, page, listed).await {
                Ok(at) => written.numbers.push(at),
                Err(e) => {
                    written.failed = Some((n, e));
                    break;
                }
            }
        }
        written
    }

    /// Writes `page` as part `n` of run `run`, or as the first number after
    /// it that is free: a number holding another page was taken by another
    /// run of the same job (a resume forced over a job whose process still
    /// ran), whose parts stay the record's. Returns the number written.
    pub(crate) async fn write_part(
        &self,
        run: &str,
        n: u32,
        page: Page,
        listed: &Listed,
    ) -> Result<u32> {
        if let Some(path) = &self.file {
            let part = Part {
                run_id: run.to_string(),
                part: n,
                page,
            };
            file::append(path, &part)?;
            return Ok(n);
        }
        let mut at = n;
        loop {
            let id = pages::part_id(run, at);
            let source = stored_part(run, at, &page, listed)?;
            match self.exec.create(&self.index, &id, &source).await? {
                Created::Created => return Ok(at),
                Created::Exists { doc, .. } if doc.source == source => return Ok(at),
                Created::Exists { .. } if at - n < MAX_TAKEN_PARTS => at += 1,
                Created::Exists { .. } => {
                    return Err(Error::Invalid(format!(
                        "audit document `{id}` already exists, as do the {MAX_TAKEN_PARTS} \
                         part numbers before it; try again"
                    )))
                }
            }
        }
    }

    /// Creates audit document `id`. A lost answer is resolved as the
    /// protocol's writes resolve theirs ([`Executor::create`]): the document
    /// found under its id (random, or a part of a random one) is ours when it
    /// holds exactly what we sent.
    async fn create_own<T: Serialize>(&self, id: &str, doc: &T) -> Result<()> {
        if let Some(path) = &self.file {
            return file::append(path, doc);
        }
        let source = to_stored(doc)?;
        match self.exec.create(&self.index, id, &source).await? {
            Created::Created => Ok(()),
            Created::Exists { doc, .. } if doc.source == source => Ok(()),
            Created::Exists { .. } => Err(Error::Invalid(format!(
                "audit document `{id}` already exists; try again"
            ))),
        }
    }
}

/// What [`Trail::write_parts`] wrote: the number each page went under, in
/// order, and the first page that could not be written, if any, with the
/// number to write it at again (it and the pages after it were not
/// written, or not known to be).
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The part number of each page written.
    pub numbers: Vec<u32>,
    /// The number the first page not written goes under, and why it was not.
    pub failed: Option<(u32, Error)>,
}

impl Written {
    /// The number the next part goes under (`first` when none was written).
    pub fn next(&self, first: u32) -> u32 {
        match &self.failed {
            Some((n, _)) => *n,
            None => self.numbers.iter().max().map_or(first, |n| n + 1),
        }
    }
}

/// What completing a record writes into it ([`Trail::finish_after`]).
struct Completion {
    outcome: ActOutcome,
    summary: String,
    counts: Option<Tally>,
    /// The steps kept in the record itself (none when they went to parts).
    steps: Vec<TrailStep>,
    /// How many parts the finished record has.
    parts: u32,
    finished_at: DateTime<Utc>,
}

impl Completion {
    /// The fields of stored record `doc` (run `id`) the completion
    /// changes, in their stored form, as [`to_stored`] of the completed
    /// [`Record`] would hold them: status, outcome, summary, counts, parts,
    /// the end time, the inline steps packed, and the transactions those
    /// steps add to its list. Only these are sent (the record's lists are
    /// neither read back into a [`Record`] nor packed again).
    fn changes(&self, id: &str, doc: &Map<String, Value>) -> Result<Changes> {
        if doc.get("record_id").and_then(Value::as_str) != Some(id) {
            return Err(Error::Malformed {
                kind: "audit record",
                id: id.to_string(),
                problems: crate::protocol::problem::Problems::one(
                    crate::protocol::problem::Problem::Undecodable("no record_id naming it".into()),
                ),
            });
        }
        let mut after = Map::new();
        after.insert("status".into(), value(&RecordStatus::Finished)?);
        after.insert("outcome".into(), value(&self.outcome)?);
        after.insert("summary".into(), Value::String(self.summary.clone()));
        if let Some(counts) = &self.counts {
            after.insert("counts".into(), value(counts)?);
        }
        after.insert("steps".into(), Value::Array(Vec::new()));
        after.insert("parts".into(), self.parts.into());
        after.insert("finished_at".into(), value(&self.finished_at)?);
        compact::pack_steps(&mut after, &self.steps);
        let listed: Vec<&str> = doc
            .get("transactions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut known: std::collections::HashSet<&str> = listed.iter().copied().collect();
        let mut transactions: Vec<Value> = listed.iter().map(|t| Value::from(*t)).collect();
        for s in &self.steps {
            if !s.txn.is_empty() && known.insert(s.txn.as_str()) {
                transactions.push(Value::String(s.txn.clone()));
            }
        }
        if transactions.len() > listed.len() {
            after.insert("transactions".into(), Value::Array(transactions));
        }
        Ok(Changes::between(doc, &after))
    }
}

/// `v` as a JSON value.
fn value<T: Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::Invalid(format!("audit record: {e}")))
}

/// How many parts stored record `doc` (run `id`) says it has.
fn stored_parts(id: &str, doc: &Map<String, Value>) -> Result<u32> {
    match doc.get("parts") {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| Error::Malformed {
                kind: "audit record",
                id: id.to_string(),
                problems: crate::protocol::problem::Problems::one(
                    crate::protocol::problem::Problem::Undecodable(format!("parts: {v}")),
                ),
            }),
    }
}

/// How many part numbers in a row a part write skips as taken by another
/// run of the same job before it gives up.
const MAX_TAKEN_PARTS: u32 = 10_000;

/// A number of parts as stored.
fn count(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Invalid(format!("too many audit record parts: {n}")))
}

/// A record or part document of the audit index, as stored (packed, or in
/// the full form of earlier versions), in the full form `history --json`
/// shows: for readers of the index's raw documents (tests, tools).
pub fn unpacked(mut doc: Map<String, Value>) -> Result<Map<String, Value>> {
    compact::unpack(&mut doc).map_err(|problems| Error::Malformed {
        kind: "audit document",
        id: doc
            .get("record_id")
            .or_else(|| doc.get("run_id"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        problems: crate::protocol::problem::Problems::one(
            crate::protocol::problem::Problem::Undecodable(problems),
        ),
    })?;
    Ok(doc)
}

/// Part `n` of run `run`, holding `page`, as the audit index stores it:
/// what [`to_stored`] makes of the [`Part`], its steps packed straight from
/// the typed steps ([`compact::pack_steps`]: not serialised in the full
/// form first, nor the page copied), the transactions its run's plan lists
/// (`listed`) stored unindexed ([`compact::unindex_listed`]).
fn stored_part(run: &str, n: u32, page: &Page, listed: &Listed) -> Result<Map<String, Value>> {
    let bare = Part {
        run_id: run.to_string(),
        part: n,
        page: Page {
            transactions: page.transactions.clone(),
            plan: page.plan.clone(),
            steps: Vec::new(),
            refused: page.refused.clone(),
            failed: page.failed.clone(),
            stopped: page.stopped.clone(),
            at: page.at,
        },
    };
    let mut map = to_stored(&bare)?;
    compact::pack_steps(&mut map, &page.steps);
    compact::unindex_listed(&mut map, listed);
    Ok(map)
}

/// A record or part as the audit index stores it ([`compact::pack`]).
fn to_stored<T: Serialize>(doc: &T) -> Result<Map<String, Value>> {
    let mut map = to_map(doc)?;
    compact::pack(&mut map);
    Ok(map)
}

fn to_map<T: Serialize>(doc: &T) -> Result<Map<String, Value>> {
    match serde_json::to_value(doc) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Invalid("audit record is not an object".into())),
        Err(e) => Err(Error::Invalid(format!("audit record: {e}"))),
    }
}

/// Who the records name as the operator on `cluster`: the user it
/// authenticated us as, else the OS user (also a plan file's planner).
pub async fn operator_of(cluster: &crate::cluster::Cluster) -> Result<Operator> {
    Ok(match cluster.authenticated_user().await? {
        Some(user) => Operator::cluster(user, host_name()),
        None => os_operator(),
    })
}

/// The OS user and host, for clusters without security.
pub fn os_operator() -> Operator {
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .or_else(passwd_user)
        .unwrap_or_else(|| "unknown".into());
    Operator::os(user, host_name())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::receipt::Receipt;
    use crate::protocol::steps::Step;

    fn step(txn: &str, label: &str, target: &str, result: &str, detail: &str) -> TrailStep {
        TrailStep {
            txn: txn.into(),
            label: label.into(),
            target: target.into(),
            result: result.into(),
            detail: detail.into(),
            wrote_state: None,
            receipt: None,
        }
    }

    /// Steps of every stored shape: usual, with a detail, unknown label,
    /// a receipt, a state written that the detail does not say.
    fn steps() -> Vec<TrailStep> {
        let mut applied = step(
            "t1",
            Step::ApplySource.label(),
            "ix-accounts/A",
            "updated",
            "applied -5",
        );
        applied.receipt = Some(Receipt::new(100, 95, (3, 1), Some((4, 1))));
        let mut odd = step("t3", "custom", "elsewhere", "refused", "why not");
        odd.wrote_state = Some("pending".into());
        vec![
            step(
                "t1",
                Step::Commit.label(),
                "ix-transactions/t1",
                "updated",
                "state pending -> committed",
            ),
            applied,
            step(
                "t2",
                Step::RemoveSource.label(),
                "ix-accounts/B",
                "noop",
                "x",
            ),
            odd,
        ]
    }

    fn running(id: &str) -> Record {
        let op = Operator::os("op", "h");
        Record {
            transactions: vec!["t1".into(), "t2".into()],
            targets: vec!["--all-stuck".into()],
            reason: Some("why".into()),
            bulk: true,
            plan: vec![format!("t1: {}", Step::Commit.label()), "odd line".into()],
            alive_at: Some(Utc::now()),
            alive_every_ms: Some(1000),
            ..Record::new(id, ActionKind::Recover, Interface::Cli, op, Utc::now())
        }
    }

    #[test]
    fn a_part_is_stored_as_the_full_form_packed() {
        let page = Page {
            transactions: vec!["t1".into(), "t2".into(), "t3".into()],
            plan: vec![format!("t1: {}", Step::Commit.label())],
            steps: steps(),
            refused: vec!["t3".into()],
            failed: vec![],
            stopped: vec!["t2".into()],
            at: Some(Utc::now()),
        };
        let full = Part {
            run_id: "r".into(),
            part: 7,
            page: page.clone(),
        };
        assert_eq!(
            stored_part("r", 7, &page, &Listed::default()).unwrap(),
            to_stored(&full).unwrap()
        );
        let bare = Page {
            steps: vec![],
            ..page
        };
        let full = Part {
            run_id: "r".into(),
            part: 2,
            page: bare.clone(),
        };
        assert_eq!(
            stored_part("r", 2, &bare, &Listed::default()).unwrap(),
            to_stored(&full).unwrap()
        );
    }

    #[test]
    fn a_part_stores_its_planned_transactions_unindexed_and_reads_back_whole() {
        let page = Page {
            transactions: vec!["t1".into(), "t2".into(), "t3".into()],
            steps: steps(),
            refused: vec!["t3".into()],
            at: Some(Utc::now()),
            ..Page::default()
        };
        let listed = Listed::of(&["t1".to_string(), "t3".to_string()]);
        let stored = stored_part("r", 4, &page, &listed).unwrap();
        assert_eq!(stored["transactions"], serde_json::json!(["t2"]));
        assert_eq!(stored["planned"], serde_json::json!(["t1", "t3"]));
        let back: Part = serde_json::from_value(Value::Object(unpacked(stored).unwrap())).unwrap();
        assert_eq!(back.page.transactions, ["t1", "t3", "t2"]);
        assert_eq!(back.page.steps, page.steps);
        assert_eq!(back.page.refused, page.refused);
    }

    #[test]
    fn a_completion_writes_what_the_completed_record_holds() {
        let record = running("r1");
        let stored = to_stored(&record).unwrap();
        for (inline, parts, counts) in [(steps(), 0, Some(Tally::default())), (vec![], 3, None)] {
            let at = Utc::now();
            let c = Completion {
                outcome: ActOutcome::Completed,
                summary: "2 completed".into(),
                counts,
                steps: inline.clone(),
                parts,
                finished_at: at,
            };
            let changes = c.changes("r1", &stored).unwrap();
            let mut done = record.clone();
            for s in &inline {
                if !done.transactions.contains(&s.txn) {
                    done.transactions.push(s.txn.clone());
                }
            }
            done.status = RecordStatus::Finished;
            done.outcome = Some(ActOutcome::Completed);
            done.summary = Some("2 completed".into());
            done.counts = counts;
            done.steps = inline;
            done.parts = parts;
            done.finished_at = Some(at);
            let want = to_stored(&done).unwrap();
            assert_eq!(changes.apply_to(&stored), want);
            assert_eq!(
                parse_record("r1", &changes.apply_to(&stored)).unwrap(),
                done
            );
        }
        assert!(Completion {
            outcome: ActOutcome::Completed,
            summary: String::new(),
            counts: None,
            steps: vec![],
            parts: 0,
            finished_at: Utc::now(),
        }
        .changes("another", &stored)
        .is_err());
    }
}
