//! The poll's read of what other operators are doing
//! ([`crate::protocol::jobs::LiveJobs`], [`crate::protocol::jobs::SeenAct`]):
//! two more searches of the audit index in the poll's one `_msearch` (no
//! request of their own), asked just before the acks' search and read
//! apart from the others: a missing audit index is no jobs and no acts,
//! and one the user may not read leaves them unknown with a warning,
//! never the poll failed. With `--audit-trail file:PATH` the trail is not
//! in the cluster: nothing is asked.

use crate::error::{Error, Result};
use crate::protocol::jobs::{live_jobs_search, recent_acts_search, seen_acts, LiveJobs, SeenAct};
use crate::protocol::read::coverage::Coverage;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The others' searches of the poll taken at `now`, on `audit` (none: a
/// file trail).
pub(super) struct OthersSearch {
    now: DateTime<Utc>,
    audit: Option<String>,
}

/// What the poll read of the other operators.
#[derive(Debug, Default)]
pub(super) struct Others {
    /// The live jobs and what they hold.
    pub jobs: LiveJobs,
    /// The acts finished lately, oldest first.
    pub acts: Vec<SeenAct>,
}

impl OthersSearch {
    /// The searches for the jobs live and the acts finished at `now`.
    pub(super) fn new(now: DateTime<Utc>, audit: Option<&str>) -> OthersSearch {
        OthersSearch {
            now,
            audit: audit.map(str::to_string),
        }
    }

    /// Their places in the `_msearch` (none for a file trail): the jobs'
    /// search, then the acts'.
    pub(super) fn searches(&self) -> Vec<(String, Value)> {
        match &self.audit {
            None => Vec::new(),
            Some(ix) => vec![
                (ix.clone(), live_jobs_search(self.now)),
                (ix.clone(), recent_acts_search(self.now)),
            ],
        }
    }

    /// How many answers it takes off the end of the `_msearch`'s.
    pub(super) fn asked(&self) -> usize {
        if self.audit.is_some() {
            2
        } else {
            0
        }
    }

    /// Its answers read (`jobs` then `acts`, each coverage added to
    /// `coverage`); what went wrong in words when they could not be read.
    pub(super) fn read(
        &self,
        jobs: Option<Result<Value>>,
        acts: Option<Result<Value>>,
        coverage: &mut Coverage,
    ) -> std::result::Result<Others, String> {
        let mut out = Others::default();
        for (n, answer) in [jobs, acts].into_iter().enumerate() {
            match answer {
                Some(Ok(v)) => {
                    coverage.add(Coverage::of(&v));
                    if n == 0 {
                        out.jobs =
                            LiveJobs::from_answer(&v, self.now).map_err(|e| e.to_string())?;
                    } else {
                        out.acts = seen_acts(&v).map_err(|e| e.to_string())?;
                    }
                }
                None | Some(Err(Error::IndexMissing(_))) => {}
                Some(Err(e)) => return Err(e.to_string()),
            }
        }
        Ok(out)
    }
}
