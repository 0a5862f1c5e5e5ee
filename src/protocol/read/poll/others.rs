//! The poll's read of what other operators are doing
//! ([`crate::protocol::jobs::LiveJobs`], [`crate::protocol::jobs::SeenAct`]):
//! three more searches of the audit index in the poll's one `_msearch` (no
//! request of their own: the running jobs' heads, the lists of the jobs no
//! earlier poll of this poller read, kept in [`JobLists`], and the acts
//! finished lately), asked just before the acks' search and read
//! apart from the others: a missing audit index is no jobs and no acts,
//! and one the user may not read leaves them unknown with a warning,
//! never the poll failed. With `--audit-trail file:PATH` the trail is not
//! in the cluster: nothing is asked.

use crate::error::{Error, Result};
use crate::protocol::jobs::{
    live_jobs_searches, recent_acts_search, JobLists, LiveJobs, SeenAct, SeenActs,
};
use crate::protocol::read::coverage::Coverage;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The others' searches of the poll taken at `now`, on `audit` (none: a
/// file trail), knowing the lists of the jobs and the acts `known` holds.
pub(super) struct OthersSearch {
    now: DateTime<Utc>,
    /// The audit index and the acts' search on it, built once (`known`
    /// notes it asked); none for a file trail.
    audit: Option<(String, Value)>,
    known: Known,
}

/// What earlier polls of the handle read of the others and keep.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// The running jobs' lists.
    pub jobs: JobLists,
    /// The acts finished lately.
    pub acts: SeenActs,
}

/// What the poll read of the other operators.
#[derive(Debug, Default)]
pub(super) struct Others {
    /// The live jobs and what they hold.
    pub jobs: LiveJobs,
    /// The acts finished lately, oldest first.
    pub acts: Vec<SeenAct>,
    /// What the next poll need not read again (none read: what was known).
    pub known: Known,
    /// What the poll says of them (a job's parts given up).
    pub warnings: Vec<String>,
}

impl OthersSearch {
    /// The searches for the jobs live and the acts finished at `now`, the
    /// lists of the jobs and the acts in `known` not asked again.
    pub(super) fn new(now: DateTime<Utc>, audit: Option<&str>, mut known: Known) -> OthersSearch {
        let audit = audit.map(|ix| (ix.to_string(), recent_acts_search(now, &mut known.acts)));
        OthersSearch { now, audit, known }
    }

    /// Their places in the `_msearch` (none for a file trail): the jobs'
    /// heads, the lists of those not known, then the acts'.
    pub(super) fn searches(&self) -> Vec<(String, Value)> {
        match &self.audit {
            None => Vec::new(),
            Some((ix, acts)) => {
                let [heads, lists] = live_jobs_searches(self.now, &self.known.jobs);
                vec![
                    (ix.clone(), heads),
                    (ix.clone(), lists),
                    (ix.clone(), acts.clone()),
                ]
            }
        }
    }

    /// How many answers it takes off the end of the `_msearch`'s.
    pub(super) fn asked(&self) -> usize {
        if self.audit.is_some() {
            3
        } else {
            0
        }
    }

    /// Its answers read (`asked` of them, in the order of [`Self::searches`],
    /// each coverage added to `coverage`); what went wrong in words when
    /// they could not be read (the next poll then reads every list again).
    pub(super) fn read(
        self,
        answers: Vec<Result<Value>>,
        coverage: &mut Coverage,
    ) -> std::result::Result<Others, String> {
        let mut known = self.known;
        let mut read = Vec::new();
        for answer in answers {
            match answer {
                Ok(v) => {
                    coverage.add(Coverage::of(&v));
                    read.push(Some(v));
                }
                Err(Error::IndexMissing(_)) => read.push(None),
                Err(e) => return Err(e.to_string()),
            }
        }
        let mut out = Others::default();
        if let [Some(heads), Some(lists), acts] = read.as_slice() {
            out.jobs = LiveJobs::from_answers(heads, lists, &mut known.jobs, self.now)
                .map_err(|e| e.to_string())?;
            if let Some(acts) = acts {
                out.acts = known
                    .acts
                    .add_answer(acts, self.now)
                    .map_err(|e| e.to_string())?;
            }
        }
        out.warnings = known.jobs.warnings();
        out.known = known;
        Ok(out)
    }
}
