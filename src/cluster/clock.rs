//! The cluster's clock, estimated from the `Date` header of its answers.
//!
//! Times the protocol writes and judges (`modification_time`, the recovery
//! window, lock leases, the age of data) are compared across processes on
//! different machines; they must all come from one clock, and the only one
//! every process sees is the cluster's. Each answer's `Date` (one-second
//! resolution) bounds the offset between the cluster's clock and ours: the
//! cluster stamped it at some local instant between sending and receiving,
//! so `date - received < offset < date + 1 s - sent`. Intersecting those
//! bounds over answers narrows the estimate to about one round trip. When
//! the bounds contradict each other (a clock was stepped), the estimate
//! restarts from the latest answer.

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use std::sync::{Arc, Mutex, PoisonError};

/// A local clock provably further than this from the cluster's is warned about.
pub const SKEW_WARNING_MS: i64 = 1000;

/// The local clock is off from the cluster's by more than a second; a typed
/// warning the dashboard and `doctor` can show. Times the tool writes and
/// judges already use the cluster's clock; other clients on this machine may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSkew {
    /// Cluster time minus local time (positive: the local clock is behind).
    pub offset: ChronoDuration,
}

impl std::fmt::Display for ClockSkew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.offset.num_milliseconds();
        let (dir, ms) = if ms > 0 {
            ("behind", ms)
        } else {
            ("ahead of", -ms)
        };
        write!(
            f,
            "local clock is {}.{:03}s {dir} the cluster's; times are taken from the cluster",
            ms / 1000,
            ms % 1000
        )
    }
}

/// Bounds on the offset (cluster minus local), in milliseconds.
#[derive(Debug, Clone, Copy, Default)]
struct Bounds {
    low: i64,
    high: i64,
    samples: u64,
    warned: bool,
}

/// The shared estimate; clones of a [`super::Cluster`] share it.
#[derive(Debug, Clone, Default)]
pub(super) struct Clock {
    bounds: Arc<Mutex<Bounds>>,
    /// Added to the machine's clock: lets tests play a machine whose clock is wrong.
    local_skew: ChronoDuration,
}

impl Clock {
    /// A clock whose "local" time is the machine's plus `skew`.
    pub(super) fn with_local_skew(&self, skew: ChronoDuration) -> Clock {
        Clock {
            bounds: Arc::new(Mutex::new(Bounds::default())),
            local_skew: skew,
        }
    }

    /// This process's idea of now.
    pub(super) fn local_now(&self) -> DateTime<Utc> {
        Utc::now() + self.local_skew
    }

    /// Records an answer sent at `sent` and received at `received` (local
    /// times) carrying `date` (the cluster's `Date` header).
    pub(super) fn observe(&self, date: &str, sent: DateTime<Utc>, received: DateTime<Utc>) {
        let Ok(date) = httpdate::parse_http_date(date) else {
            return;
        };
        let date: DateTime<Utc> = date.into();
        let date_ms = date.timestamp_millis();
        let low = date_ms - received.timestamp_millis();
        let high = date_ms + 1000 - sent.timestamp_millis();
        let mut b = self.bounds.lock().unwrap_or_else(PoisonError::into_inner);
        if b.samples == 0 || low.max(b.low) > high.min(b.high) {
            if b.samples > 0 {
                tracing::info!(
                    low,
                    high,
                    was_low = b.low,
                    was_high = b.high,
                    "clock offset estimate restarted (a clock was stepped)"
                );
            }
            *b = Bounds {
                low,
                high,
                samples: 1,
                warned: b.warned,
            };
        } else {
            b.low = b.low.max(low);
            b.high = b.high.min(high);
            b.samples += 1;
        }
        if !b.warned {
            if let Some(skew) = skew_of(&b) {
                b.warned = true;
                tracing::warn!(offset_ms = skew.offset.num_milliseconds(), "{skew}");
            }
        }
    }

    /// Estimated cluster minus local time; zero before any answer.
    pub(super) fn offset(&self) -> ChronoDuration {
        let b = *self.bounds.lock().unwrap_or_else(PoisonError::into_inner);
        if b.samples == 0 {
            ChronoDuration::zero()
        } else {
            ChronoDuration::milliseconds(b.low + (b.high - b.low) / 2)
        }
    }

    /// The cluster's time now, as estimated.
    pub(super) fn now(&self) -> DateTime<Utc> {
        self.local_now() + self.offset()
    }

    /// Whether the local clock is provably more than a second off.
    pub(super) fn skew(&self) -> Option<ClockSkew> {
        skew_of(&self.bounds.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// True once at least one answer carried a `Date`.
    pub(super) fn is_synced(&self) -> bool {
        self.bounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .samples
            > 0
    }
}

fn skew_of(b: &Bounds) -> Option<ClockSkew> {
    let provably_off = b.low > SKEW_WARNING_MS || b.high < -SKEW_WARNING_MS;
    (b.samples > 0 && provably_off).then(|| ClockSkew {
        offset: ChronoDuration::milliseconds(b.low + (b.high - b.low) / 2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(ms: i64) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(ms).single().unwrap()
    }

    fn http_date(t: DateTime<Utc>) -> String {
        httpdate::fmt_http_date(t.into())
    }

    #[test]
    fn bounds_narrow_with_answers_and_follow_a_step() {
        let clock = Clock::default();
        assert_eq!(clock.offset(), ChronoDuration::zero());
        let base = 1_800_000_000_000i64;
        // The cluster is 3 600.4 s ahead; answers take 20 ms.
        let truth = 3_600_400i64;
        for i in 0..20 {
            let sent = base + i * 137;
            let stamped = sent + 10 + truth;
            clock.observe(&http_date(at(stamped)), at(sent), at(sent + 20));
        }
        let err = (clock.offset().num_milliseconds() - truth).abs();
        assert!(err <= 150, "estimate off by {err} ms");
        let skew = clock.skew().unwrap();
        assert!(skew.to_string().contains("behind"), "{skew}");
        // The local clock is stepped to the right time: the estimate follows.
        let later = base + 100_000;
        clock.observe(&http_date(at(later + 5)), at(later), at(later + 20));
        assert!(clock.offset().num_milliseconds().abs() <= 1000);
        assert_eq!(clock.skew(), None);
    }

    #[test]
    fn a_right_clock_is_not_warned_about() {
        let clock = Clock::default();
        let base = 1_800_000_000_300i64;
        clock.observe(&http_date(at(base + 5)), at(base), at(base + 10));
        assert_eq!(clock.skew(), None);
        assert!(clock.is_synced());
    }
}
