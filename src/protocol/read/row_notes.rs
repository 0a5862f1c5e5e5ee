//! What a reading adds beside each row of a listing (`list`'s machine
//! formats, `show --json`, the dashboard's CSV export, the support
//! bundle's `stuck.csv`): the cause of each stuck transaction, judged by
//! the one pure verdict (`verdict::cause`) on one reading of the locks,
//! the healing verdict and the stuck per account, and the live job
//! working on each row (`jobs::LiveJobs`, each job's record read whole),
//! or why other operators' jobs cannot be seen (a file trail).
//! Read once per listing; a part that cannot be read is said and leaves
//! its column empty, never stops the listing.

use super::verdict::Cause;
use crate::error::Error;
use crate::protocol::check::CauseReading;
use crate::protocol::jobs::{live_jobs, others_unavailable, HeldBy, LiveJobs, OthersUnavailable};
use crate::protocol::rows::Beside;
use crate::protocol::transaction::Transaction;
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// A part of [`RowNotes`] that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NotesUnread {
    /// The causes' evidence: rows carry no cause.
    #[error("causes not judged: {0}")]
    Causes(Error),
    /// The running jobs: every row's `in_job` is empty.
    #[error("the running jobs could not be read ({0}): in_job is null")]
    Jobs(Error),
}

/// The causes' evidence and the live jobs, read once for a listing.
#[derive(Debug, Clone, Default)]
pub struct RowNotes {
    causes: Option<CauseReading>,
    jobs: LiveJobs,
    others: Option<OthersUnavailable>,
    now: DateTime<Utc>,
    window: Duration,
}

impl RowNotes {
    /// Why other operators' jobs cannot be seen (a file trail), if so.
    pub fn others_unavailable(&self) -> Option<OthersUnavailable> {
        self.others
    }

    /// What is beside row `id`: its `cause` ([`RowNotes::cause`]), the
    /// live job holding it, and why others' jobs cannot be seen.
    pub fn beside<'a>(&'a self, id: &str, cause: Option<&'a Cause>) -> Beside<'a> {
        Beside {
            cause,
            in_job: self.in_job(id),
            others_unavailable: self.others,
        }
    }

    /// The cause of `t` (`None`: not stuck, or causes not read).
    pub fn cause(&self, t: &Transaction) -> Option<Cause> {
        self.causes
            .as_ref()
            .and_then(|r| r.cause_of(t, self.now, self.window))
    }

    /// The live job holding transaction `id`.
    pub fn in_job(&self, id: &str) -> Option<&HeldBy> {
        self.jobs.holding(id)
    }
}

/// The notes of `p`'s rows at `now`: the causes' evidence and the live
/// jobs, each read once; what could not be read is given back beside them.
pub async fn row_notes(p: &Protocol, now: DateTime<Utc>) -> (RowNotes, Vec<NotesUnread>) {
    let mut unread = Vec::new();
    let causes = match p.cause_reading().await {
        Ok((_, r)) => Some(r),
        Err(e) => {
            unread.push(NotesUnread::Causes(e));
            None
        }
    };
    let jobs = live_jobs(p).await.unwrap_or_else(|e| {
        unread.push(NotesUnread::Jobs(e));
        LiveJobs::default()
    });
    let c = p.config();
    let notes = RowNotes {
        causes,
        jobs,
        others: others_unavailable(c),
        now,
        window: c.recovery_window,
    };
    (notes, unread)
}
