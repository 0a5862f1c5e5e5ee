//! The evidence behind the healing verdict, read with searches that ride
//! in the poll's one `_msearch` (and in `check`'s one `_msearch` of them):
//! [`HealingSearch`] names each. Transactions that left a stuck state
//! within the lookback are finished or rolled-back ones modified within it
//! that had been in flight for at least the recovery window (created that
//! long before their last modification; the oldest created first, at most
//! [`RECOVERED_CAP`]); the operator records active in the lookback (the
//! audit index, or the [`OperatorMark`]s the caller read from
//! `--audit-trail file:PATH`) tell the operator's from the
//! application's (listed in a record, or modified while an operator's bulk
//! run was going); and the newest heartbeat of any instance in the
//! application's heartbeat index, where the profile names one. None of
//! these answers fails a poll: one that cannot be read leaves its part of
//! the evidence unknown.

use super::healing::{lookback, AppHeartbeat, Recoveries};
use crate::error::{Error, Result};
use crate::protocol::locks::LivenessSource;
use crate::protocol::read::discovery::Fields;
use crate::protocol::read::kept_ids::ReadThrough;
use crate::protocol::read::queries::Queries;
use crate::protocol::schema::Field;
use crate::protocol::time::{format_timestamp, parse_timestamp};
use crate::protocol::transaction::Transaction;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// Most recently finished transactions read to find those that left a
/// stuck state (the oldest created first: those most likely to have).
pub const RECOVERED_CAP: usize = 200;
/// Most operator records read for the lookback.
const RECORDS_CAP: usize = 500;

/// One search of the healing evidence, named so that its answer is read
/// back as what it is, wherever it rides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealingSearch {
    /// Finished or rolled back within the lookback, in flight for a window.
    Recovered,
    /// Operator records active within the lookback (audit index).
    OperatorRecords,
    /// The newest heartbeat in the application's heartbeat index.
    Heartbeat,
}

/// Where the evidence is read, from the settings in force.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// The transactions index.
    pub transactions: &'a str,
    /// The audit index; `None` under `--audit-trail file:PATH` (the
    /// caller reads the file's [`OperatorMark`]s).
    pub audit: Option<&'a str>,
    /// The application's heartbeat index, where a profile names one.
    pub liveness: Option<&'a LivenessSource>,
    /// The recovery window.
    pub window: std::time::Duration,
}

/// The searches of the healing evidence at `taken_at`, each with its
/// index and body: none for recoveries when the mapping cannot compare
/// dates; none for records under a file trail (read from the file); none
/// for heartbeats without a liveness source. The records `kept` holds
/// (finished, read by an earlier poll) are not asked again; those that
/// ended before the lookback are dropped from it first, and it notes the
/// search asked.
pub fn searches(
    fields: &Fields,
    at: &Sources,
    taken_at: DateTime<Utc>,
    kept: &mut FinishedMarks,
) -> Vec<(HealingSearch, String, Value)> {
    let mut out = Vec::new();
    if !fields.ages_queryable() {
        return out;
    }
    let q = Queries::new(fields);
    let window = at.window;
    let since = since(taken_at, window);
    let created_before = taken_at - chrono::Duration::from_std(window).unwrap_or_default();
    let ct = fields.schema.name(Field::CreationTime).to_string();
    let mt = fields.modification_time.query_name().to_string();
    // Only the two times are read of each (the application's names: the
    // source filter runs before the schema's boundary renames).
    let source = [ct.clone(), fields.modification_time.name.clone()];
    out.push((
        HealingSearch::Recovered,
        at.transactions.to_string(),
        json!({"size": RECOVERED_CAP, "_source": source, "query": {"bool": {"filter": [
            q.state_in(&["finished", "rolled-back"]),
            {"range": {mt: {"gte": since.timestamp_millis(), "format": "epoch_millis"}}},
            {"range": {ct.clone(): {"lte": created_before.timestamp_millis(), "format": "epoch_millis"}}},
        ]}}, "sort": [{ct: {"order": "asc", "unmapped_type": "date"}}]}),
    ));
    if let Some(audit) = at.audit {
        kept.by_record.retain(|_, (_, finished)| *finished >= since);
        let from = format_timestamp(since);
        let active =
            ["started_at", "finished_at", "alive_at"].map(|f| json!({"range": {f: {"gte": from}}}));
        let mut query = json!({"should": active, "minimum_should_match": 1});
        let records = kept
            .by_record
            .iter()
            .map(|(id, (_, end))| (id.as_str(), *end));
        let leave_out = kept.read.leave_out("finished_at", records, taken_at);
        if !leave_out.is_empty() {
            query["must_not"] = Value::Array(leave_out);
        }
        // Oldest finished first, the running ones (no end) before them:
        // read every poll, never cut by the finished ones.
        out.push((
            HealingSearch::OperatorRecords,
            audit.to_string(),
            json!({"size": RECORDS_CAP,
                "_source": ["transactions", "bulk", "started_at", "finished_at"],
                "query": {"bool": query},
                "sort": ReadThrough::oldest_first("finished_at")}),
        ));
    }
    if let Some(l) = at.liveness {
        out.push((
            HealingSearch::Heartbeat,
            l.index.clone(),
            json!({"size": 1, "sort": [{l.time_field.clone(): {"order": "desc", "unmapped_type": "date"}}]}),
        ));
    }
    out
}

/// The start of the lookback at `taken_at`.
fn since(taken_at: DateTime<Utc>, window: std::time::Duration) -> DateTime<Utc> {
    taken_at - chrono::Duration::from_std(lookback(window)).unwrap_or_default()
}

/// The start of the lookback at `taken_at` (the records of a file trail
/// started since are read).
pub fn lookback_start(taken_at: DateTime<Utc>, window: std::time::Duration) -> DateTime<Utc> {
    since(taken_at, window)
}

/// An operator's act as the evidence needs it: the transactions its record
/// names, and, for a bulk run, when it ran (it may have changed others).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperatorMark {
    /// The transactions its record lists.
    pub transactions: Vec<String>,
    /// A bulk run: from its start to its end (`None`: still running).
    pub bulk_run: Option<(DateTime<Utc>, Option<DateTime<Utc>>)>,
}

impl OperatorMark {
    /// The mark of a stored (or file) record's fields.
    fn of(src: &Map<String, Value>) -> OperatorMark {
        let field = |k: &str| src.get(k).unwrap_or(&Value::Null);
        let transactions = field("transactions")
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let bulk = field("bulk").as_bool().unwrap_or(false);
        let bulk_run = bulk
            .then(|| parse_timestamp(field("started_at")))
            .flatten()
            .map(|from| (from, parse_timestamp(field("finished_at"))));
        OperatorMark {
            transactions,
            bulk_run,
        }
    }
}

/// The marks of the finished operator records an earlier poll read, by
/// record id, each with its end: a finished record no longer changes (its
/// completion was its last write), so the poll reads each once and keeps
/// it while it ended within the lookback (issue 30 item 5: the records'
/// lists were a fifth of the fullest poll's answer). A running record is
/// read every poll (its end may add transactions). Those kept are left out
/// of the next search by time as far back as all were read, the others by
/// id up to a cap ([`ReadThrough`]): one missed would credit the
/// application with an operator's recovery.
#[derive(Debug, Clone, Default)]
pub struct FinishedMarks {
    by_record: std::collections::HashMap<String, (OperatorMark, DateTime<Utc>)>,
    read: ReadThrough,
}

/// The operators' marks of a file trail (`--audit-trail file:PATH`), read
/// here from its lines rather than through the trail's reader (which would
/// pull this module into the trail's import circle).
#[derive(Debug, Clone, PartialEq)]
pub enum FileMarks {
    /// The trail is the audit index (searched in the `_msearch`).
    NoFile,
    /// The file's records started within the lookback.
    Read(Vec<OperatorMark>),
    /// The file could not be read (the recoveries are then unknown).
    Unreadable,
}

impl FileMarks {
    /// The marks of the file at `path` for records started at or after
    /// `since`; opened without following a symlink, as the trail does.
    pub fn read(path: &std::path::Path, since: DateTime<Utc>) -> FileMarks {
        use std::io::Read as _;
        use std::os::unix::fs::OpenOptionsExt;
        let mut text = String::new();
        let read = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .and_then(|mut f| f.read_to_string(&mut text));
        match read {
            Ok(_) => FileMarks::Read(marks_of_lines(&text, since)),
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "file trail unreadable");
                FileMarks::Unreadable
            }
        }
    }
}

/// The marks of a file trail's JSON Lines: each record as its last line
/// says (the file appends the record as begun, then as completed), with
/// the transactions of its parts (`run_id`); heartbeat lines and lines that
/// are not JSON are passed over.
pub fn marks_of_lines(text: &str, since: DateTime<Utc>) -> Vec<OperatorMark> {
    let mut records: std::collections::BTreeMap<String, Value> = Default::default();
    let mut parts: std::collections::HashMap<String, Vec<String>> = Default::default();
    for v in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if let Some(id) = v["record_id"].as_str() {
            records.insert(id.to_string(), v);
        } else if let Some(run) = v["run_id"].as_str() {
            parts.entry(run.to_string()).or_default().extend(
                v.as_object()
                    .map(OperatorMark::of)
                    .unwrap_or_default()
                    .transactions,
            );
        }
    }
    records
        .into_iter()
        .filter(|(_, v)| parse_timestamp(&v["started_at"]).is_some_and(|t| t >= since))
        .map(|(id, v)| {
            let mut m = v.as_object().map(OperatorMark::of).unwrap_or_default();
            m.transactions.extend(parts.remove(&id).unwrap_or_default());
            m
        })
        .collect()
}

/// The answers of [`searches`], read into evidence.
#[derive(Debug, Clone, Default)]
pub struct Answered {
    /// The recoveries, when both they and the operator records were read.
    pub recoveries: Option<Recoveries>,
    /// The application's heartbeats.
    pub heartbeat: AppHeartbeat,
}

/// Reads the answers of [`searches`] (`answers`, each named), with the
/// operator marks of a file trail (`file_marks`) where there is one, or
/// those `kept` holds (the finished records read now are added to it).
pub fn read(
    answers: Vec<(HealingSearch, Result<Value>)>,
    file_marks: FileMarks,
    at: &Sources,
    kept: &mut FinishedMarks,
) -> Answered {
    let mut recovered: Option<Vec<Transaction>> = None;
    // The marks read now (a file trail's, or the running records'), and
    // whether those `kept` holds count too (a trail in the index, read).
    let mut marks: Option<Vec<OperatorMark>> = match file_marks {
        FileMarks::Read(m) => Some(m),
        FileMarks::NoFile | FileMarks::Unreadable => None,
    };
    let mut with_kept = false;
    let mut heartbeat = match at.liveness {
        Some(_) => AppHeartbeat::Unreadable,
        None => AppHeartbeat::NotConfigured,
    };
    for (search, answer) in answers {
        let answer = match answer {
            Ok(v) => Ok(v),
            // No audit index yet: no operator ever acted.
            Err(Error::IndexMissing(_)) if search == HealingSearch::OperatorRecords => {
                Ok(json!({"hits": {"hits": []}}))
            }
            Err(e) => Err(e),
        };
        let answer = match answer {
            Ok(v) => v,
            Err(e) => {
                tracing::debug!(error = %e, ?search, "healing evidence unreadable");
                continue;
            }
        };
        let hits = match crate::cluster::hit_refs(&answer) {
            Ok(h) => h,
            Err(e) => {
                tracing::debug!(error = %e, ?search, "healing evidence unreadable");
                continue;
            }
        };
        match search {
            HealingSearch::Recovered => {
                recovered = Some(
                    hits.iter()
                        .map(|h| Transaction::from_source(h.id, h.source))
                        .collect(),
                );
            }
            HealingSearch::OperatorRecords => {
                let mut read = Vec::new();
                let mut ends = Vec::with_capacity(hits.len());
                for h in hits {
                    let mark = OperatorMark::of(h.source);
                    let end = h.source.get("finished_at").and_then(parse_timestamp);
                    ends.push(end);
                    match end {
                        Some(end) => {
                            kept.by_record.insert(h.id.to_string(), (mark, end));
                        }
                        None => read.push(mark),
                    }
                }
                kept.read.answered(RECORDS_CAP, &ends);
                marks = Some(read);
                with_kept = true;
            }
            HealingSearch::Heartbeat => {
                heartbeat = match (at.liveness, hits.first()) {
                    (Some(l), Some(h)) => l
                        .latest(std::iter::once(h.source.clone()))
                        .values()
                        .max()
                        .map_or(AppHeartbeat::Unreadable, |at| AppHeartbeat::Seen {
                            at: *at,
                            timeout: l.timeout,
                        }),
                    (Some(_), None) => AppHeartbeat::NoneSeen,
                    (None, _) => AppHeartbeat::NotConfigured,
                };
            }
        }
    }
    let kept_marks = kept.by_record.values().map(|(m, _)| m);
    let kept_marks = kept_marks.filter(|_| with_kept);
    let recoveries = match (recovered, marks) {
        (Some(r), Some(m)) => Some(recoveries(&r, m.iter().chain(kept_marks), at.window)),
        _ => None,
    };
    Answered {
        recoveries,
        heartbeat,
    }
}

/// Of `finished` (finished or rolled back within the lookback), those that
/// left a stuck state (in flight for at least `window`), told apart by the
/// operators' `marks` (borrowed: the poller keeps hundreds of finished
/// records' marks, read through once per poll, never copied).
pub fn recoveries<'a>(
    finished: &[Transaction],
    marks: impl IntoIterator<Item = &'a OperatorMark>,
    window: std::time::Duration,
) -> Recoveries {
    let window = chrono::Duration::from_std(window).unwrap_or_default();
    // Only the transactions that left a stuck state are looked up in the
    // marks (the few the recovered search read, not the marks' thousands).
    let left: Vec<&Transaction> = finished.iter().filter(|t| left_stuck(t, window)).collect();
    let recovered: HashSet<&str> = left.iter().map(|t| t.id.as_str()).collect();
    let mut named: HashSet<&str> = HashSet::new();
    let mut bulk_runs = Vec::new();
    let mut records = 0u64;
    for m in marks {
        records += 1;
        bulk_runs.extend(m.bulk_run);
        named.extend(
            m.transactions
                .iter()
                .map(String::as_str)
                .filter(|t| recovered.contains(t)),
        );
    }
    let during_bulk = |at: DateTime<Utc>| {
        bulk_runs
            .iter()
            .any(|(from, to)| *from <= at && to.is_none_or(|to| at <= to))
    };
    let mut r = Recoveries {
        operator_records: records,
        ..Recoveries::default()
    };
    for t in left {
        let Some(modified) = t.modification_time else {
            continue;
        };
        if named.contains(t.id.as_str()) || during_bulk(modified) {
            r.by_operator += 1;
        } else {
            r.by_application += 1;
            r.last = r.last.max(Some(modified));
        }
    }
    r
}

/// Whether `t` (finished or rolled back) was in flight for at least
/// `window`: it left a stuck state, so someone recovered it.
fn left_stuck(t: &Transaction, window: chrono::Duration) -> bool {
    match (t.creation_time, t.modification_time) {
        (Some(created), Some(modified)) => modified - created >= window,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(id: &str, created_ago: i64, modified_ago: i64, now: DateTime<Utc>) -> Transaction {
        let t = |s: i64| format_timestamp(now - chrono::Duration::seconds(s));
        let v = json!({"transaction_state": "finished", "src_acct": "A", "dest_acct": "B",
            "amount": 1, "creation_time": t(created_ago), "modification_time": t(modified_ago)});
        Transaction::from_source(id, v.as_object().unwrap())
    }

    /// Only those in flight for a window count; those an operator's record
    /// names, or that moved during an operator's bulk run, are the
    /// operator's.
    #[test]
    fn recoveries_are_told_from_quick_transfers_and_operators() {
        let now = Utc::now();
        let w = std::time::Duration::from_secs(60);
        let finished = [
            txn("quick", 70, 65, now),
            txn("app", 300, 10, now),
            txn("named", 300, 20, now),
            txn("in-bulk", 300, 40, now),
        ];
        let marks = [
            OperatorMark {
                transactions: vec!["named".into()],
                bulk_run: None,
            },
            OperatorMark {
                transactions: vec![],
                bulk_run: Some((
                    now - chrono::Duration::seconds(50),
                    Some(now - chrono::Duration::seconds(30)),
                )),
            },
        ];
        let r = recoveries(&finished, &marks, w);
        assert_eq!((r.by_application, r.by_operator), (1, 2));
        assert_eq!(r.operator_records, 2);
        assert_eq!(r.last, finished[1].modification_time);
    }

    /// A file trail: each record by its last line, with its parts'
    /// transactions; those started before the lookback, heartbeats and
    /// broken lines passed over.
    #[test]
    fn a_file_trails_marks_are_its_records_last_lines_and_parts() {
        let now = Utc::now();
        let t = |s: i64| format_timestamp(now - chrono::Duration::seconds(s));
        let text = [
            json!({"record_id": "old", "transactions": ["a"], "bulk": false, "started_at": t(900)}),
            json!({"record_id": "run", "transactions": ["b"], "bulk": true, "started_at": t(60), "finished_at": null}),
            json!({"alive_of": "run", "alive_at": t(50)}),
            json!({"run_id": "run", "part": 1, "transactions": ["c"]}),
            json!({"record_id": "run", "transactions": ["b"], "bulk": true, "started_at": t(60), "finished_at": t(40)}),
        ]
        .map(|v| v.to_string())
        .join("\n")
            + "\nnot json\n";
        let marks = marks_of_lines(&text, now - chrono::Duration::seconds(300));
        assert_eq!(marks.len(), 1, "{marks:?}");
        assert_eq!(marks[0].transactions, vec!["b", "c"]);
        let (from, to) = marks[0].bulk_run.unwrap();
        assert_eq!(to.map(|to| (to - from).num_seconds()), Some(20));
    }
}
