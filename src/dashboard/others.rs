//! Several operators at once, the dashboard's side: which rows another
//! operator's live job holds ([`held_by`]: the table's `@` mark and the
//! detail's line), and the acts of others logged as they land
//! ([`log_acts`]: one line per act, a bulk run as one line, each once).
//! Both read the poll's snapshot (`Snapshot::live_jobs`,
//! `Snapshot::others_acts`: two searches of its one `_msearch`); this
//! dashboard's own acts and jobs are known by their record ids
//! ([`Others::own`]) and are neither marked nor logged twice.

use super::app::App;
use super::log::LogLevel;
use crate::protocol::jobs::HeldBy;
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

/// The live job of another operator (or another process) holding `txn`,
/// as the last poll saw it; none for this dashboard's own job.
pub fn held_by<'a>(app: &'a App, txn: &str) -> Option<&'a HeldBy> {
    let held = app.snapshot.as_ref()?.live_jobs.holding(txn)?;
    (!app.poll.others.is_own(&held.job)).then_some(held)
}

/// Logs the acts the last poll saw finished that are not this
/// dashboard's own and were not logged yet (each once, oldest first;
/// none finished before the dashboard's first poll).
pub fn log_acts(app: &mut App) {
    let Some(s) = app.snapshot.as_ref() else {
        return;
    };
    let since = *app.poll.others.since.get_or_insert(s.taken_at);
    let news: Vec<(String, String)> = s
        .others_acts
        .iter()
        .filter(|a| a.finished_at.is_some_and(|f| f >= since))
        .filter(|a| !app.poll.others.is_own(&a.record_id))
        .filter(|a| !app.poll.others.logged.contains(&a.record_id))
        .map(|a| (a.record_id.clone(), a.to_string()))
        .collect();
    for (id, line) in news {
        app.poll.others.logged.insert(id);
        app.push_log(LogLevel::Info, line);
    }
}
