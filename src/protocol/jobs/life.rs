//! Whether a job is still running somewhere: the evidence of life a job's
//! record carries, and the one rule that reads it. While a bulk run runs,
//! its record's `alive_at` is rewritten every `alive_every_ms` (the
//! heartbeat, in the cluster's clock, `--job-heartbeat`), so a record still
//! `running` whose heartbeat is recent belongs to a live process (here, in
//! another operator's shell or another dashboard), and one whose heartbeat
//! stopped for [`SILENT_PERIODS`] periods belongs to a process presumed
//! dead. Records written before heartbeats existed carry none: unknown,
//! judged on no evidence. Resuming is safe only for a job presumed dead
//! (a live one would be run twice: fenced, so no step applied twice, but
//! confusing and wasteful); the others resume only when forced, with a
//! reason ([`JobLife::resumable`]). The CLI's `--resume` and the
//! dashboard's jobs view both ask this rule.

use crate::protocol::time::human_age;
use crate::protocol::trail::Record;
use chrono::{DateTime, Utc};
use std::fmt;

/// Heartbeat periods without one after which a job is presumed dead (its
/// own period, as its record says: a job is judged by what it promised).
pub const SILENT_PERIODS: u32 = 4;

/// What a job's record says of its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobLife {
    /// Its heartbeat is recent: its process still runs it.
    Live {
        /// Since its last heartbeat (zero when the heartbeat is ahead of
        /// this clock).
        since: chrono::Duration,
    },
    /// No heartbeat for [`SILENT_PERIODS`] of its periods: its process is
    /// presumed dead.
    PresumedDead {
        /// Since its last heartbeat.
        silent_for: chrono::Duration,
    },
    /// The record carries no heartbeat (written by an older version):
    /// nothing says whether its process lives.
    Unknown,
}

/// The life of `record` at `now` (the cluster's time): see [`JobLife`].
pub fn job_life(record: &Record, now: DateTime<Utc>) -> JobLife {
    life_at(record.alive_at, record.alive_every_ms, now)
}

/// The life at `now` of a record whose last heartbeat was `alive_at`,
/// promised every `alive_every_ms` (what [`job_life`] reads of a whole
/// record, for a reader of its head alone).
pub(super) fn life_at(
    alive_at: Option<DateTime<Utc>>,
    alive_every_ms: Option<u64>,
    now: DateTime<Utc>,
) -> JobLife {
    let (Some(at), Some(every)) = (alive_at, alive_every_ms) else {
        return JobLife::Unknown;
    };
    let since = (now - at).max(chrono::Duration::zero());
    let period = chrono::Duration::milliseconds(i64::try_from(every).unwrap_or(i64::MAX / 8));
    if since > period * SILENT_PERIODS as i32 {
        JobLife::PresumedDead { silent_for: since }
    } else {
        JobLife::Live { since }
    }
}

impl JobLife {
    /// Whether the job may be resumed: a job presumed dead always; a live
    /// or unknown one only when `forced` (with a reason, as every forced
    /// act: `intervene::reason_missing`).
    pub fn resumable(&self, forced: bool) -> bool {
        forced || matches!(self, JobLife::PresumedDead { .. })
    }

    /// In a few words, for a row: `live, beat 4s ago`, `presumed dead,
    /// silent 12m00s`, `unknown, no heartbeat`.
    pub fn short(&self) -> String {
        match self {
            JobLife::Live { since } => format!("live, beat {} ago", human_age(since.num_seconds())),
            JobLife::PresumedDead { silent_for } => format!(
                "presumed dead, silent {}",
                human_age(silent_for.num_seconds())
            ),
            JobLife::Unknown => "unknown, no heartbeat".to_string(),
        }
    }

    /// Its kind in a word or two (`live`, `presumed dead`, `unknown`).
    pub fn kind(&self) -> &'static str {
        match self {
            JobLife::Live { .. } => "live",
            JobLife::PresumedDead { .. } => "presumed dead",
            JobLife::Unknown => "unknown",
        }
    }
}

/// `live (heartbeat 4s ago)`, `presumed dead (no heartbeat for 12m)`,
/// `unknown (no heartbeat recorded: an older version's record)`.
impl fmt::Display for JobLife {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobLife::Live { since } => {
                write!(f, "live (heartbeat {} ago)", human_age(since.num_seconds()))
            }
            JobLife::PresumedDead { silent_for } => write!(
                f,
                "presumed dead (no heartbeat for {})",
                human_age(silent_for.num_seconds())
            ),
            JobLife::Unknown => {
                f.write_str("unknown (no heartbeat recorded: an older version's record)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::trail::{ActionKind, Interface, Operator};

    fn record(alive_at: Option<DateTime<Utc>>, every_ms: Option<u64>) -> Record {
        let op = Operator::os("u", "h");
        Record {
            bulk: true,
            alive_at,
            alive_every_ms: every_ms,
            ..Record::new("r", ActionKind::Recover, Interface::Cli, op, Utc::now())
        }
    }

    #[test]
    fn a_recent_heartbeat_is_live_a_silent_one_dead_and_none_unknown() {
        let now = Utc::now();
        let s = chrono::Duration::seconds;
        let at = |ago| record(Some(now - s(ago)), Some(10_000));
        assert_eq!(job_life(&at(3), now), JobLife::Live { since: s(3) });
        // Four periods of 10 s: still live at 40 s, presumed dead past it.
        assert_eq!(job_life(&at(40), now), JobLife::Live { since: s(40) });
        assert_eq!(
            job_life(&at(41), now),
            JobLife::PresumedDead { silent_for: s(41) }
        );
        // Judged by the record's own period: 1 s beats are dead after 4 s.
        let fast = record(Some(now - s(5)), Some(1000));
        assert!(matches!(job_life(&fast, now), JobLife::PresumedDead { .. }));
        // A heartbeat ahead of this clock is live, its age zero.
        assert_eq!(
            job_life(&at(-2), now),
            JobLife::Live {
                since: chrono::Duration::zero()
            }
        );
        // No heartbeat (an older version's record), or half of one: unknown.
        assert_eq!(job_life(&record(None, None), now), JobLife::Unknown);
        assert_eq!(job_life(&record(Some(now), None), now), JobLife::Unknown);
    }

    #[test]
    fn only_a_job_presumed_dead_resumes_unforced() {
        let dead = JobLife::PresumedDead {
            silent_for: chrono::Duration::minutes(12),
        };
        let live = JobLife::Live {
            since: chrono::Duration::seconds(4),
        };
        assert!(dead.resumable(false));
        assert!(!live.resumable(false) && live.resumable(true));
        assert!(!JobLife::Unknown.resumable(false) && JobLife::Unknown.resumable(true));
        assert_eq!(live.to_string(), "live (heartbeat 4s ago)");
        assert_eq!(dead.to_string(), "presumed dead (no heartbeat for 12m00s)");
        assert_eq!(dead.short(), "presumed dead, silent 12m00s");
    }
}
