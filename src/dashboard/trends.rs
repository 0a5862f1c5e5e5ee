//! Trends over the session, for the header's sparklines: in flight, stuck,
//! needing investigation, the oldest in-flight age and finishes per minute,
//! one sample per good poll, kept in memory in bounded rings
//! ([`TREND_CAPACITY`] samples each, the oldest dropped), each with whether
//! it is rising or falling. Recorded when a snapshot arrives (`update`),
//! never while drawing.
//!
//! The counts are the poll's, counted on the cluster (the header's own).
//! Finishes per minute are derived from the count of `finished`
//! transactions, which the poll counts over every document: the increase
//! since the previous poll over the time between the two snapshots (by
//! their `taken_at`, the cluster's clock), per minute; a count that fell
//! (documents deleted or archived) counts as no finishes.

use super::view::Attention;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::transaction::TxnState;
use chrono::{DateTime, Utc};
use std::collections::VecDeque;

/// Samples kept per series (at the default 2 s interval, 8 minutes).
pub const TREND_CAPACITY: usize = 240;

/// How many samples back the rising/falling marker compares with.
pub const TREND_SPAN: usize = 10;

/// One series of the header's trends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// Transactions in flight (counted on the cluster).
    InFlight,
    /// Stuck, those needing investigation included.
    Stuck,
    /// Needing investigation.
    Investigate,
    /// Age of the oldest in-flight transaction, in seconds.
    OldestAge,
    /// `finished` transactions per minute between two polls.
    FinishesPerMinute,
}

impl Series {
    /// Every series, in the order the header shows them.
    pub const ALL: [Series; 5] = [
        Series::InFlight,
        Series::Stuck,
        Series::Investigate,
        Series::OldestAge,
        Series::FinishesPerMinute,
    ];

    /// Which to keep when the header is narrow, most wanted first.
    pub const BY_PRIORITY: [Series; 5] = [
        Series::Stuck,
        Series::FinishesPerMinute,
        Series::Investigate,
        Series::OldestAge,
        Series::InFlight,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// Whether a rise is bad news (stuck, investigate, oldest), good news
    /// (finishes) or neither (in flight).
    pub fn rise_is(self) -> Outlook {
        match self {
            Series::InFlight => Outlook::Neutral,
            Series::Stuck | Series::Investigate | Series::OldestAge => Outlook::Bad,
            Series::FinishesPerMinute => Outlook::Good,
        }
    }
}

/// What a rise of a series means for the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outlook {
    /// More is better.
    Good,
    /// More is worse.
    Bad,
    /// Neither.
    Neutral,
}

/// Where a series is heading: its latest sample against the one
/// [`TREND_SPAN`] samples before (or the oldest kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Higher than then.
    Rising,
    /// Lower than then.
    Falling,
    /// The same.
    Steady,
}

/// The trends of the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trends {
    series: [VecDeque<u64>; 5],
    /// The previous poll's time and `finished` count (finishes per minute).
    finished: Option<(DateTime<Utc>, u64)>,
}

impl Trends {
    /// Records one good poll: `snap`, with its stuck and investigate
    /// counts (`attention`, as the header shows them).
    pub fn record(&mut self, snap: &Snapshot, attention: Attention) {
        self.push(Series::InFlight, snap.in_flight_total);
        self.push(Series::Stuck, attention.stuck);
        self.push(Series::Investigate, attention.needs_investigation);
        let oldest = snap
            .state_counts
            .iter()
            .filter(|c| c.state.as_ref().is_some_and(TxnState::is_in_flight))
            .filter_map(|c| c.oldest)
            .min();
        let age = oldest.map_or(0, |o| (snap.taken_at - o).num_seconds().max(0) as u64);
        self.push(Series::OldestAge, age);
        let finished = snap
            .state_counts
            .iter()
            .find(|c| c.state == Some(TxnState::Finished))
            .map(|c| c.count);
        if let Some(now) = finished {
            if let Some((then, before)) = self.finished {
                let secs = (snap.taken_at - then).num_milliseconds();
                if secs > 0 {
                    let per_min = now.saturating_sub(before) * 60_000 / secs as u64;
                    self.push(Series::FinishesPerMinute, per_min);
                }
            }
            self.finished = Some((snap.taken_at, now));
        }
    }

    fn push(&mut self, s: Series, value: u64) {
        let ring = &mut self.series[s.index()];
        if ring.len() == TREND_CAPACITY {
            ring.pop_front();
        }
        ring.push_back(value);
    }

    /// The samples of `s`, oldest first.
    pub fn samples(&self, s: Series) -> &VecDeque<u64> {
        &self.series[s.index()]
    }

    /// The latest sample of `s`.
    pub fn latest(&self, s: Series) -> Option<u64> {
        self.samples(s).back().copied()
    }

    /// Whether `s` has enough samples to draw a trend (two).
    pub fn has_trend(&self, s: Series) -> bool {
        self.samples(s).len() >= 2
    }

    /// Where `s` is heading ([`Direction`]).
    pub fn direction(&self, s: Series) -> Direction {
        let ring = self.samples(s);
        let (Some(last), Some(then)) = (
            ring.back(),
            ring.get(ring.len().saturating_sub(TREND_SPAN + 1)),
        ) else {
            return Direction::Steady;
        };
        match last.cmp(then) {
            std::cmp::Ordering::Greater => Direction::Rising,
            std::cmp::Ordering::Less => Direction::Falling,
            std::cmp::Ordering::Equal => Direction::Steady,
        }
    }
}
