//! How long to wait before asking a busy cluster again, and for how long in
//! all. A real cluster's thread-pool rejection (429
//! `es_rejected_execution_exception`) carries no `Retry-After`, so a fixed
//! handful of short retries gives up while the queue is still full; waiting
//! exponentially with jitter, within a bounded total per request, rides out
//! a busy spell without hammering the cluster that is shedding load (and
//! keeps several processes from retrying in lockstep). The same rule paces
//! the reads (`send`) and the writes whose outcome the executor resolves.
//! While a request waits, [`WaitState`] says so for the progress line.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Total time one read may spend being retried (attempts and waits), unless
/// configured (`--retry-budget`).
pub const DEFAULT_READ_BUDGET: Duration = Duration::from_secs(30);
/// A scan page may wait this many times the read budget: losing a page
/// loses the whole scan, and a point-in-time outlives the wait (its
/// keep-alive is renewed by each page, and is longer than this).
pub const SCAN_PAGE_FACTOR: u32 = 3;
/// Longest wait an answer may ask for (`Retry-After`) and still be waited
/// for; one asking for longer is returned at once, its wait in
/// [`crate::Error::retry_after`].
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// First wait when the answer names none; doubles per attempt.
const FIRST_WAIT: Duration = Duration::from_millis(200);
/// Longest wait between two attempts when the answer names none.
const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// The wait before attempt `attempt + 1` (1-based `attempt`) when the
/// answer named none: `FIRST_WAIT × 2^(attempt-1)`, capped, of which a
/// random half is kept ("equal jitter"), so it is never zero and processes
/// that were throttled together do not come back together.
pub fn jittered(attempt: u32) -> Duration {
    let ceiling = (FIRST_WAIT * (1u32 << attempt.saturating_sub(1).min(8))).min(LONGEST_WAIT);
    let half = ceiling.as_millis() as u64 / 2;
    Duration::from_millis(half + rand::random_range(0..=half))
}

/// The retries of one request: how many, and what is left of its budget.
#[derive(Debug)]
pub struct Backoff {
    started: Instant,
    budget: Duration,
    attempt: u32,
}

impl Backoff {
    /// A request starting now that may be retried for `budget` in all.
    pub fn new(budget: Duration) -> Backoff {
        Backoff {
            started: Instant::now(),
            budget,
            attempt: 0,
        }
    }

    /// The wait before asking again, `None` when the request must give up:
    /// its budget is spent, or the answer asked (`Retry-After`) for more
    /// than [`MAX_RETRY_WAIT`]. A wait the answer asked for is honoured;
    /// otherwise [`jittered`]. The last wait is cut to what is left.
    pub fn next(&mut self, asked: Option<Duration>) -> Option<Duration> {
        self.attempt += 1;
        let left = self.budget.checked_sub(self.started.elapsed())?;
        let wait = match asked {
            Some(asked) if asked > MAX_RETRY_WAIT => return None,
            Some(asked) => asked,
            None => jittered(self.attempt),
        };
        if left.is_zero() || (asked.is_some() && wait > left) {
            return None;
        }
        Some(wait.min(left))
    }

    /// Attempts that were answered busy so far.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }
}

/// Why a request is waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitCause {
    /// The cluster (or a proxy) answered this transient status.
    Status(u16),
    /// No answer: a timeout or a broken connection.
    NoAnswer,
}

impl std::fmt::Display for WaitCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaitCause::Status(s) => write!(f, "{s}"),
            WaitCause::NoAnswer => f.write_str("no answer"),
        }
    }
}

/// Whether, why and since when a handle's requests are waiting on a busy
/// cluster; shared by the clones of a handle so a progress line can show
/// "waiting on the cluster (429, 4.2 s)".
#[derive(Debug, Clone, Default)]
pub struct WaitState(Arc<Mutex<Option<(WaitCause, Instant)>>>);

impl WaitState {
    /// A request is waiting because of `cause` (the first cause's start is kept).
    pub fn waiting(&self, cause: WaitCause) {
        let mut s = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &mut *s {
            Some((c, _)) => *c = cause,
            None => *s = Some((cause, Instant::now())),
        }
    }

    /// The cluster answered: nothing is waiting any more.
    pub fn answered(&self) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// The cause and how long it has been waiting, if it is.
    pub fn current(&self) -> Option<(WaitCause, Duration)> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .map(|(c, since)| (c, since.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_with_jitter_and_never_vanish() {
        for attempt in 1..20 {
            let w = jittered(attempt);
            let ceiling = (FIRST_WAIT * (1u32 << (attempt - 1).min(8))).min(LONGEST_WAIT);
            assert!(w >= ceiling / 2 && w <= ceiling, "{attempt}: {w:?}");
        }
    }

    #[test]
    fn the_budget_bounds_the_total() {
        let mut b = Backoff::new(Duration::ZERO);
        assert_eq!(b.next(None), None);
        let mut b = Backoff::new(Duration::from_secs(30));
        assert!(b.next(None).is_some());
        assert_eq!(
            b.next(Some(Duration::from_secs(3))),
            Some(Duration::from_secs(3))
        );
        assert_eq!(b.next(Some(Duration::from_secs(120))), None);
        let mut b = Backoff::new(Duration::from_millis(50));
        assert!(b.next(None).unwrap() <= Duration::from_millis(50));
        assert_eq!(b.next(Some(Duration::from_secs(1))), None);
    }

    #[test]
    fn the_wait_state_says_why_and_since_when() {
        let s = WaitState::default();
        assert_eq!(s.current(), None);
        s.waiting(WaitCause::Status(429));
        assert_eq!(s.current().map(|c| c.0), Some(WaitCause::Status(429)));
        assert_eq!(WaitCause::Status(429).to_string(), "429");
        s.answered();
        assert_eq!(s.current(), None);
    }
}
