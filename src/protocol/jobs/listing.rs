//! The list of jobs an operator reads to find one to resume (`estx-tui
//! jobs`; the dashboard's jobs view reads the same records through
//! `trail::unfinished_jobs` and judges them with the same rule): each bulk
//! run's record, read whole from the audit index or the file trail, with
//! its life at the cluster's time ([`job_life`]) and how far it got as its
//! checkpoints say.

use super::life::{job_life, JobLife};
use crate::error::Result;
use crate::protocol::trail::pages::Checkpointed;
use crate::protocol::trail::{self, ActOutcome, Record, RecordStatus};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// One job as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Its run record, whole.
    pub record: Record,
    /// Running (and its life), or finished (and how).
    pub state: JobState,
    /// How far it got (a running job: what its checkpoints say).
    pub so_far: SoFar,
}

/// Whether a job runs, and if not how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Its record is still `running`: its life by its heartbeat.
    Running(JobLife),
    /// Its record is finished, with this outcome.
    Finished(Option<ActOutcome>),
}

/// How far a job got: of its transactions, how many ended done, refused,
/// failed or stopped part-way, and how many are left (a running job: those
/// its checkpoints do not list yet; a resume runs them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SoFar {
    /// Transactions it runs.
    pub total: usize,
    /// Ended done (completed, ended elsewhere, nothing to do).
    pub done: usize,
    /// Refused.
    pub refused: usize,
    /// Failed.
    pub failed: usize,
    /// Stopped part-way.
    pub stopped: usize,
    /// Not ended (as far as its record says).
    pub left: usize,
}

impl SoFar {
    /// What `record`'s checkpoints (`c`) say of its `total` transactions;
    /// of a finished record, what its counts say (the transactions a stop
    /// left unstarted are `left`), or nothing when it keeps none (written
    /// before counts were: its summary says the rest).
    fn of(record: &Record, c: Checkpointed) -> SoFar {
        let total = record.transactions.len();
        if record.status == RecordStatus::Finished {
            return match &record.counts {
                Some(t) => SoFar {
                    total,
                    done: t.done(),
                    refused: t.refused,
                    failed: t.failed,
                    stopped: t.stopped,
                    left: t.not_started,
                },
                None => SoFar {
                    total,
                    ..SoFar::default()
                },
            };
        }
        let not_done = c.refused + c.failed + c.stopped;
        SoFar {
            total,
            done: c.ended.saturating_sub(not_done),
            refused: c.refused,
            failed: c.failed,
            stopped: c.stopped,
            left: total.saturating_sub(c.ended),
        }
    }
}

impl JobState {
    /// Whether the job may be resumed without `--force`: a running one
    /// presumed dead ([`JobLife::resumable`]).
    pub fn resumable_unforced(&self) -> bool {
        matches!(self, JobState::Running(l) if l.resumable(false))
    }

    /// `live`, `presumed dead`, `unknown`, or `finished`.
    pub fn kind(&self) -> &'static str {
        match self {
            JobState::Running(l) => l.kind(),
            JobState::Finished(_) => "finished",
        }
    }
}

/// The jobs of `p`'s audit trail (the index, or `--audit-trail
/// file:PATH`), newest first: those still running, or with `all` every
/// bulk run; each judged at the cluster's time now.
pub async fn list_jobs(p: &Protocol, all: bool) -> Result<Vec<Job>> {
    let jobs = trail::jobs(p, all).await?;
    let now = p.now().await;
    Ok(jobs.into_iter().map(|(r, c)| judged(r, c, now)).collect())
}

/// One record, judged at `now`.
fn judged(record: Record, c: Checkpointed, now: DateTime<Utc>) -> Job {
    let state = match record.status {
        RecordStatus::Running => JobState::Running(job_life(&record, now)),
        RecordStatus::Finished => JobState::Finished(record.outcome),
    };
    let so_far = SoFar::of(&record, c);
    Job {
        record,
        state,
        so_far,
    }
}
