//! The healing verdict, a pure function over evidence: is the
//! application's own recovery loop (the article's "Recovering from
//! errors") working through what is stuck, has it stalled, is it not
//! running at all, or is nothing stuck? The dashboard's header, `check`
//! (its `recovery_stalled` count and a line of its long output), the
//! exporter and `list --json` all read this one verdict; the evidence is
//! read by [`super::evidence`] within the poll's one `_msearch`.
//!
//! The rules, in order (`W` the recovery window, `L` = [`LOOKBACK_WINDOWS`]
//! × `W` the lookback):
//! 1. nothing stuck: [`Healing::Idle`], whatever else (never an alarm);
//! 2. a transaction left a stuck state within `L` with no operator record
//!    (finished or rolled back, in flight for at least `W`): healing;
//! 3. the oldest stuck transaction left since the last poll (the slope of
//!    the oldest stuck age turned down) and no operator record is active
//!    within `L`: healing;
//! 4. the application's heartbeat index (where the profile names one) says
//!    no instance beat within its timeout: not running;
//! 5. the oldest stuck transaction has waited for `L` past its window with
//!    no recovery seen: stalled since the later of then and the last
//!    recovery seen;
//! 6. otherwise unknown, saying what is missing (the loop still has time,
//!    an undated oldest, evidence that could not be read).

use crate::protocol::time::{format_timestamp, human_age};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::time::Duration;

/// How many recovery windows the verdict looks back for recoveries, and
/// lets the oldest stuck transaction wait past its own window before the
/// loop is called stalled: a loop that runs at least once a window has
/// had two chances. So a stopped loop reads stalled within three windows.
pub const LOOKBACK_WINDOWS: u32 = 2;

/// What the application's heartbeat index says (where a profile names one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(tag = "heartbeat", rename_all = "snake_case")]
pub enum AppHeartbeat {
    /// No heartbeat index is configured.
    #[default]
    NotConfigured,
    /// Configured but not read (an error, a field it cannot sort on).
    Unreadable,
    /// Configured, and no instance ever beat there.
    NoneSeen,
    /// The newest heartbeat of any instance, and how old one may be.
    Seen {
        /// When.
        at: DateTime<Utc>,
        /// The liveness timeout: older, the instance is dead.
        #[serde(skip)]
        timeout: Duration,
    },
}

/// Transactions that left a stuck state within the lookback, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Recoveries {
    /// Left a stuck state with no operator record: the application's.
    pub by_application: u64,
    /// The newest of those (its `modification_time`).
    pub last: Option<DateTime<Utc>>,
    /// Left a stuck state under an operator's record (not counted as healing).
    pub by_operator: u64,
    /// Operator records active within the lookback, whatever they touched:
    /// while any is, the oldest stuck transaction leaving is no evidence of
    /// healing (the operator may have moved it, and the recoveries' search
    /// cannot see every transaction: one without a creation time, say).
    pub operator_records: u64,
}

/// What one reading (a poll, a `check`) knows, and what the previous
/// reading of the same watcher knew.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HealingEvidence {
    /// Stuck transactions now (`None`: not counted).
    pub stuck: Option<u64>,
    /// The oldest dated stuck transaction's `modification_time` (`None`:
    /// none, or only undated ones).
    pub oldest_stuck: Option<DateTime<Utc>>,
    /// Recoveries within the lookback (`None`: could not be read).
    pub recoveries: Option<Recoveries>,
    /// The application's heartbeats.
    pub heartbeat: AppHeartbeat,
    /// What the same watcher's previous reading knew (the dashboard and
    /// the exporter keep it; a one-shot `check` has none).
    pub previous: Option<Previous>,
}

/// What a watcher remembers of its previous reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Previous {
    /// The oldest stuck transaction's `modification_time` then.
    pub oldest_stuck: Option<DateTime<Utc>>,
    /// The last recovery by the application seen so far.
    pub last_recovery: Option<DateTime<Utc>>,
}

impl Previous {
    /// What a watcher remembers after a reading on `e`, `before` what it
    /// remembered: the oldest stuck now, the last recovery seen ever.
    pub fn after(before: Option<Previous>, e: &HealingEvidence) -> Previous {
        let seen = e.recoveries.and_then(|r| r.last);
        Previous {
            oldest_stuck: e.oldest_stuck,
            last_recovery: before.and_then(|b| b.last_recovery).max(seen),
        }
    }
}

/// Why the verdict is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Unknown {
    /// Nothing was read yet.
    NotRead,
    /// The stuck transactions could not be counted (dates the cluster
    /// cannot compare, a missing index).
    NotCounted,
    /// The recoveries (or the operator records that tell them from the
    /// application's) could not be read.
    RecoveriesUnread,
    /// The only stuck transactions carry no usable modification time.
    Undated,
    /// Stuck, no recovery seen yet, but the loop still has time.
    TooSoon {
        /// When the oldest became stuck.
        stuck_since: DateTime<Utc>,
        /// When it will be called stalled if nothing moves.
        stalled_at: DateTime<Utc>,
    },
}

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Healing {
    /// Nothing is stuck.
    Idle,
    /// The application is recovering what is stuck.
    Healing {
        /// How the verdict knows.
        #[serde(flatten)]
        sign: HealingSign,
        /// Stuck transactions still waiting.
        stuck: u64,
    },
    /// Stuck transactions wait and the application recovers none of them.
    Stalled {
        /// Since when (the later of when the oldest became stuck and the
        /// last recovery seen).
        since: DateTime<Utc>,
        /// Stuck transactions waiting.
        stuck: u64,
        /// The last recovery by the application seen, if any.
        last_recovery: Option<DateTime<Utc>>,
    },
    /// The application's heartbeats say no instance of it runs.
    NotRunning {
        /// The newest heartbeat, if any.
        last_beat: DateTime<Utc>,
        /// Stuck transactions waiting.
        stuck: u64,
    },
    /// Not enough evidence.
    Unknown(Unknown),
}

impl Default for Healing {
    fn default() -> Self {
        Healing::Unknown(Unknown::NotRead)
    }
}

/// How a healing verdict knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "sign", rename_all = "snake_case")]
pub enum HealingSign {
    /// Transactions left stuck states within the lookback with no operator
    /// record.
    Recovered {
        /// How many.
        count: u64,
        /// The newest.
        last: DateTime<Utc>,
    },
    /// The oldest stuck transaction left since the previous reading.
    OldestLeft,
}

/// The lookback under recovery window `window`.
pub fn lookback(window: Duration) -> Duration {
    window * LOOKBACK_WINDOWS
}

/// The verdict on `e` at `now` under recovery window `window` (see the
/// module for the rules).
pub fn judge(e: &HealingEvidence, now: DateTime<Utc>, window: Duration) -> Healing {
    let stuck = match e.stuck {
        Some(0) => return Healing::Idle,
        Some(n) => n,
        None => return Healing::Unknown(Unknown::NotCounted),
    };
    if let Some(Recoveries {
        by_application: count @ 1..,
        last: Some(last),
        ..
    }) = e.recoveries
    {
        let sign = HealingSign::Recovered { count, last };
        return Healing::Healing { sign, stuck };
    }
    let no_operator = e
        .recoveries
        .is_some_and(|r| r.by_operator == 0 && r.operator_records == 0);
    let oldest_left = e
        .previous
        .and_then(|p| p.oldest_stuck)
        .is_some_and(|before| e.oldest_stuck.is_none_or(|now_oldest| now_oldest > before));
    if oldest_left && no_operator {
        let sign = HealingSign::OldestLeft;
        return Healing::Healing { sign, stuck };
    }
    if let AppHeartbeat::Seen { at, timeout } = e.heartbeat {
        let timeout = chrono::Duration::from_std(timeout).unwrap_or(chrono::Duration::MAX);
        if now - at >= timeout {
            return Healing::NotRunning {
                last_beat: at,
                stuck,
            };
        }
    }
    if e.recoveries.is_none() {
        return Healing::Unknown(Unknown::RecoveriesUnread);
    }
    let Some(oldest) = e.oldest_stuck else {
        return Healing::Unknown(Unknown::Undated);
    };
    let stuck_since = oldest + chrono::Duration::from_std(window).unwrap_or_default();
    let stalled_at = stuck_since + chrono::Duration::from_std(lookback(window)).unwrap_or_default();
    if now < stalled_at {
        return Healing::Unknown(Unknown::TooSoon {
            stuck_since,
            stalled_at,
        });
    }
    let last_recovery = e.previous.and_then(|p| p.last_recovery);
    Healing::Stalled {
        since: last_recovery.map_or(stuck_since, |l| l.max(stuck_since)),
        stuck,
        last_recovery,
    }
}

/// The verdict of a watcher's reading (`e`, its evidence at `now`), judged
/// again with what the watcher remembers of its `previous` readings.
pub fn rejudge(
    e: &HealingEvidence,
    previous: Option<Previous>,
    now: DateTime<Utc>,
    window: Duration,
) -> Healing {
    let e = HealingEvidence { previous, ..*e };
    judge(&e, now, window)
}

impl Healing {
    /// Whether an operator should be told the application's recovery is
    /// not working (`check`'s `recovery_stalled`): stalled or not running.
    pub fn is_alarm(&self) -> bool {
        matches!(self, Healing::Stalled { .. } | Healing::NotRunning { .. })
    }

    /// The verdict's word (`healing`, `stalled`, `not running`, `idle`,
    /// `unknown`).
    pub fn word(&self) -> &'static str {
        match self {
            Healing::Idle => "idle",
            Healing::Healing { .. } => "healing",
            Healing::Stalled { .. } => "stalled",
            Healing::NotRunning { .. } => "not running",
            Healing::Unknown(_) => "unknown",
        }
    }

    /// The last recovery by the application this verdict saw, if any.
    pub fn last_recovery(&self) -> Option<DateTime<Utc>> {
        match self {
            Healing::Healing {
                sign: HealingSign::Recovered { last, .. },
                ..
            } => Some(*last),
            Healing::Stalled { last_recovery, .. } => *last_recovery,
            _ => None,
        }
    }

    /// The verdict in short (`stalled since 2026-…`), for a header.
    pub fn short(&self) -> String {
        match self {
            Healing::Stalled { since, .. } => format!("stalled since {}", format_timestamp(*since)),
            other => other.word().to_string(),
        }
    }

    /// The evidence in words, at `now` (ages are said from it).
    pub fn evidence(&self, now: DateTime<Utc>) -> String {
        let ago = |t: DateTime<Utc>| human_age((now - t).num_seconds());
        match self {
            Healing::Idle => "nothing is stuck".into(),
            Healing::Healing {
                sign: HealingSign::Recovered { count, last },
                stuck,
            } => format!(
                "{count} transaction(s) left a stuck state with no operator record, \
                 the last {} ago; {stuck} still stuck",
                ago(*last)
            ),
            Healing::Healing {
                sign: HealingSign::OldestLeft,
                stuck,
            } => format!(
                "the oldest stuck transaction left since the last poll and no operator \
                 acted; {stuck} still stuck"
            ),
            Healing::Stalled {
                since,
                stuck,
                last_recovery,
            } => {
                let last = last_recovery.map_or_else(
                    || "no recovery by the application seen".to_string(),
                    |l| format!("the last recovery seen {} ago", ago(l)),
                );
                format!(
                    "{stuck} stuck, none recovered by the application for {} ({last})",
                    ago(*since)
                )
            }
            Healing::NotRunning { last_beat, stuck } => format!(
                "{stuck} stuck, and the application's newest heartbeat is {} old",
                ago(*last_beat)
            ),
            Healing::Unknown(u) => match u {
                Unknown::NotRead => "not read yet".into(),
                Unknown::NotCounted => "the stuck transactions could not be counted".into(),
                Unknown::RecoveriesUnread => {
                    "the recent recoveries or the operator records could not be read".into()
                }
                Unknown::Undated => "the stuck transactions carry no modification time".into(),
                Unknown::TooSoon {
                    stuck_since,
                    stalled_at,
                } => format!(
                    "stuck for {}, no recovery seen yet; stalled if nothing moves by {}",
                    ago(*stuck_since),
                    format_timestamp(*stalled_at)
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(60);

    fn at(secs_ago: i64, now: DateTime<Utc>) -> DateTime<Utc> {
        now - chrono::Duration::seconds(secs_ago)
    }

    fn stuck_since(secs_ago: i64, now: DateTime<Utc>) -> HealingEvidence {
        HealingEvidence {
            stuck: Some(3),
            oldest_stuck: Some(at(secs_ago, now)),
            recoveries: Some(Recoveries::default()),
            ..HealingEvidence::default()
        }
    }

    /// Nothing stuck is idle, whatever the heartbeats or recoveries say:
    /// never a false alarm.
    #[test]
    fn nothing_stuck_is_idle_never_an_alarm() {
        let now = Utc::now();
        let e = HealingEvidence {
            stuck: Some(0),
            heartbeat: AppHeartbeat::Seen {
                at: at(3600, now),
                timeout: W,
            },
            ..HealingEvidence::default()
        };
        assert_eq!(judge(&e, now, W), Healing::Idle);
        assert!(!judge(&e, now, W).is_alarm());
    }

    /// A stopped loop reads stalled once the oldest has waited its window
    /// plus the lookback (three windows in all), unknown before; a
    /// recovery by the application reads healing at once.
    #[test]
    fn stalled_after_three_windows_healing_on_a_recovery() {
        let now = Utc::now();
        let early = judge(&stuck_since(179, now), now, W);
        assert!(
            matches!(early, Healing::Unknown(Unknown::TooSoon { .. })),
            "{early:?}"
        );
        let late = judge(&stuck_since(180, now), now, W);
        assert_eq!(
            late,
            Healing::Stalled {
                since: at(120, now),
                stuck: 3,
                last_recovery: None
            }
        );
        assert!(late.is_alarm());
        let mut e = stuck_since(600, now);
        e.recoveries = Some(Recoveries {
            by_application: 2,
            last: Some(at(5, now)),
            by_operator: 1,
            operator_records: 1,
        });
        let v = judge(&e, now, W);
        assert_eq!(v.word(), "healing");
        assert_eq!(v.last_recovery(), Some(at(5, now)));
        assert!(v
            .evidence(now)
            .contains("2 transaction(s) left a stuck state"));
    }

    /// Recoveries by operators are no healing; the oldest leaving between
    /// two polls is, unless an operator recovered something or any
    /// operator record is active (it may be the operator's own act on a
    /// transaction the recoveries' search does not see).
    #[test]
    fn operator_recoveries_are_not_healing_the_slope_is() {
        let now = Utc::now();
        let mut e = stuck_since(600, now);
        e.recoveries = Some(Recoveries {
            by_application: 0,
            last: None,
            by_operator: 4,
            operator_records: 1,
        });
        assert!(judge(&e, now, W).is_alarm());
        e.previous = Some(Previous {
            oldest_stuck: Some(at(900, now)),
            last_recovery: Some(at(700, now)),
        });
        let v = judge(&e, now, W);
        assert!(v.is_alarm(), "an operator was at work: {v:?}");
        assert_eq!(v.last_recovery(), Some(at(700, now)));
        e.recoveries = Some(Recoveries {
            operator_records: 1,
            ..Recoveries::default()
        });
        let v = judge(&e, now, W);
        assert!(v.is_alarm(), "an operator's record is active: {v:?}");
        e.recoveries = Some(Recoveries::default());
        assert_eq!(
            judge(&e, now, W),
            Healing::Healing {
                sign: HealingSign::OldestLeft,
                stuck: 3
            }
        );
    }

    /// An old heartbeat says not running; unread evidence says unknown,
    /// never stalled.
    #[test]
    fn heartbeats_and_missing_evidence() {
        let now = Utc::now();
        let mut e = stuck_since(30, now);
        e.heartbeat = AppHeartbeat::Seen {
            at: at(61, now),
            timeout: W,
        };
        assert_eq!(judge(&e, now, W).word(), "not running");
        e.heartbeat = AppHeartbeat::Seen {
            at: at(1, now),
            timeout: W,
        };
        assert_eq!(judge(&e, now, W).word(), "unknown");
        let mut e = stuck_since(6000, now);
        e.recoveries = None;
        assert_eq!(
            judge(&e, now, W),
            Healing::Unknown(Unknown::RecoveriesUnread)
        );
        e.stuck = None;
        assert_eq!(judge(&e, now, W), Healing::Unknown(Unknown::NotCounted));
        let mut e = stuck_since(6000, now);
        e.oldest_stuck = None;
        assert_eq!(judge(&e, now, W), Healing::Unknown(Unknown::Undated));
    }
}
