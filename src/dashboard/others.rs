//! Several operators at once, the dashboard's side: which rows another
//! operator's live job holds ([`Others::held_by`]: the table's `@` mark
//! and the detail's line), and the acts of others logged as they land
//! ([`Others::news`]: one line per act, a bulk run as one line, each once).
//! Both read the poll's snapshot (`Snapshot::live_jobs`,
//! `Snapshot::others_acts`: two searches of its one `_msearch`); this
//! dashboard's own acts and jobs are known by their record ids
//! ([`Others::own`]) and are neither marked nor logged twice.

use crate::protocol::jobs::HeldBy;
use crate::protocol::read::poll::Snapshot;
use chrono::{DateTime, Utc};
use std::collections::HashSet;

/// What the dashboard remembers of the other operators between polls.
#[derive(Debug, Clone, Default)]
pub struct Others {
    /// The records this dashboard wrote (its acts, its bulk jobs).
    own: HashSet<String>,
    /// The others' acts already logged.
    logged: HashSet<String>,
    /// The first poll's time: acts finished before it are history, not news.
    since: Option<DateTime<Utc>>,
}

impl Others {
    /// Record `id` is this dashboard's own (an act it ran, a job it runs).
    pub fn own(&mut self, id: &str) {
        self.own.insert(id.to_string());
    }

    /// Whether record `id` is this dashboard's own.
    pub fn is_own(&self, id: &str) -> bool {
        self.own.contains(id)
    }
}

impl Others {
    /// The live job of another operator (or another process) holding
    /// `txn`, as snapshot `s` saw it; none for this dashboard's own job
    /// ([`super::app::App::held_by`]).
    pub fn held_by<'a>(&self, s: Option<&'a Snapshot>, txn: &str) -> Option<&'a HeldBy> {
        let held = s?.live_jobs.holding(txn)?;
        (!self.is_own(&held.job)).then_some(held)
    }

    /// The lines to log of the acts snapshot `s` saw finished that are not
    /// this dashboard's own and were not logged yet (each once, oldest
    /// first; none finished before the dashboard's first poll).
    pub fn news(&mut self, s: &Snapshot) -> Vec<String> {
        let since = *self.since.get_or_insert(s.taken_at);
        let mut lines = Vec::new();
        for a in &s.others_acts {
            let news = a.finished_at.is_some_and(|f| f >= since)
                && !self.own.contains(&a.record_id)
                && self.logged.insert(a.record_id.clone());
            if news {
                lines.push(a.to_string());
            }
        }
        lines
    }
}
