//! A bulk run as a job, the tasks' side (after [`super::task`], which
//! starts them): running a started bulk act while reporting each item as
//! it ends (the marked rows' run and a resumed job alike), reading the
//! unfinished jobs for the jobs view, and resuming one from its record as
//! the dashboard's bulk run, reporting on the one event channel as every
//! task does.

use super::event::runner_for;
use super::event::{Event, LeftIds, OnMarks};
use crate::protocol::intervene::{self, BulkAct, Choices, Stop};
use crate::protocol::jobs::Pace;
use crate::protocol::trail::receipts::Verification;
use crate::protocol::trail::{ActOutcome, Interface};
use crate::protocol::{Procedure, Protocol};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Reads the unfinished bulk jobs for the jobs view.
pub fn spawn_jobs(proto: Protocol, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let jobs = crate::protocol::trail::unfinished_jobs(&proto).await;
        let _ = events.send(Event::Jobs(jobs));
    });
}

/// An unfinished job the operator chose to resume.
#[derive(Debug, Clone)]
pub struct Job {
    /// Its audit record's id.
    pub run: String,
    /// Rollback or recover.
    pub procedure: Procedure,
    /// What the operator typed to confirm it on a production profile, and
    /// the reason when forced over a job not presumed dead.
    pub confirmed: super::event::ResumeConfirmed,
}

/// Resumes `job` from its record ([`intervene::resume`], as `--resume`
/// does) as the dashboard's bulk run: its items reported as they end,
/// `stop` and `pace` steering it; says how many it runs, then how it ended.
pub fn spawn_resume(
    proto: Protocol,
    job: Job,
    stop: Arc<Stop>,
    pace: Arc<Pace>,
    events: UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let on = OnMarks::Procedure(job.procedure);
        let proto = proto.with_pace(pace);
        let runner = runner_for(job.procedure);
        let c = job.confirmed;
        let choices = Choices::new(Interface::Dashboard, c.reason.clone())
            .forced(c.forced)
            .confirmed(c.typed);
        let started = match intervene::resume(&proto, &job.run, runner, choices).await {
            Ok(s) => s,
            Err(n) => {
                let summary = format!("job {} not resumed: {n}", job.run);
                let _ = events.send(Event::BulkDone {
                    on,
                    not_started: 0,
                    summary,
                    record: None,
                    left: None,
                    receipts: None,
                });
                return;
            }
        };
        let total = started.plan().selected.transactions.len();
        let _ = events.send(Event::JobResumed {
            run: job.run.clone(),
            total,
            left_file: crate::local_files::left_ids_path(&job.run),
        });
        let ended = run_reporting(&proto, started, on, &stop, &events).await;
        let _ = events.send(Event::BulkDone {
            on,
            not_started: ended.not_started,
            summary: ended.summary,
            record: ended.record,
            left: ended.left,
            receipts: ended.receipts,
        });
    });
}

/// How a bulk run ended, for its [`Event::BulkDone`].
pub(super) struct RunEnded {
    /// Items that never started.
    pub not_started: usize,
    /// The act's sentence with its audit record.
    pub summary: String,
    /// Its audit record alone (`audit record ID`), when it did not fail.
    pub record: Option<String>,
    /// The ids a stop left, as written for `--ids-from`.
    pub left: Option<LeftIds>,
    /// The act's receipts verified, when it ran.
    pub receipts: Option<Verification>,
}

impl RunEnded {
    /// A run that never started: all `n` items left as they were.
    pub(super) fn not_run(n: usize, summary: String) -> RunEnded {
        RunEnded {
            not_started: n,
            summary,
            record: None,
            left: None,
            receipts: None,
        }
    }
}

/// Runs a started bulk act (marked rows, or a resumed job), reporting each
/// transaction as it ends; writes the ids a stop left, one a line, to the
/// job's file for `--ids-from` (as the command line's stopped run does).
pub(super) async fn run_reporting(
    proto: &Protocol,
    started: intervene::Started<BulkAct>,
    on: OnMarks,
    stop: &Stop,
    events: &UnboundedSender<Event>,
) -> RunEnded {
    let done = started
        .run_bulk(proto, stop, |r| {
            let _ = events.send(Event::BulkItem {
                act: on.item(r.txn.clone()),
                summary: r.verdict.to_string(),
                outcome: ActOutcome::from(&r.verdict),
            });
        })
        .await;
    let b = &done.value;
    let summary = done.to_string();
    // The log counts the items itself; it names the record.
    let record = match &b.failed {
        None => summary
            .strip_prefix(&format!("{} · ", done.what()))
            .map(str::to_string),
        Some(_) => None,
    };
    let ids = b.left();
    let left = (!ids.is_empty()).then(|| {
        let run = done.record.to_string();
        let file = crate::local_files::write_left_ids(&run, Some(&run), &ids, None)
            .map_err(|e| e.to_string());
        LeftIds {
            count: ids.len(),
            file,
        }
    });
    RunEnded {
        not_started: b.not_started.len(),
        summary,
        record,
        left,
        receipts: Some(done.receipts),
    }
}
