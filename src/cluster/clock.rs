//! The cluster's clock, and where the tool's idea of it comes from.
//!
//! Times the protocol writes and judges (`modification_time`, the recovery
//! window, lock leases, the age of data) are compared across processes on
//! different machines; they must all come from one clock, and the only one
//! every process sees is the cluster's. Two kinds of evidence bound the
//! offset between the cluster's clock and ours:
//!
//! - **The cluster's own `now`** (`clock_probe`): a search whose
//!   date math echoes the time the cluster took the request, in
//!   milliseconds. It was taken at some local instant between sending and
//!   receiving, so `now - received ≤ offset ≤ now + 1 ms - sent`. This is the
//!   source the tool trusts: it works on every product and version.
//! - **`Date` headers** (one-second resolution): Elasticsearch before
//!   elastic/elasticsearch#157382 and OpenSearch send none; a fronting proxy
//!   adds its own, from its own clock. Used only while no probe has answered.
//!
//! Intersecting the bounds of each kind over answers narrows the estimate to
//! about one round trip. When they contradict each other (a clock was
//! stepped), that estimate restarts from the latest answer. With no evidence
//! at all the local clock is used, and [`ClockSource::Local`] says so.

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
        write!(
            f,
            "local clock is {}; times are taken from the cluster",
            offset_words(self.offset)
        )
    }
}

/// "1.500s behind the cluster's" / "0.020s ahead of the cluster's".
fn offset_words(offset: ChronoDuration) -> String {
    let ms = offset.num_milliseconds();
    let (dir, ms) = if ms > 0 {
        ("behind", ms)
    } else {
        ("ahead of", -ms)
    };
    format!("{}.{:03}s {dir} the cluster's", ms / 1000, ms % 1000)
}

/// Where `Cluster::now` comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockSource {
    /// The cluster's own `now`, echoed by a search, within `uncertainty`
    /// (about one round trip).
    Cluster {
        /// Width of the bounds on the offset.
        uncertainty: ChronoDuration,
    },
    /// `Date` headers of the answers (the cluster's or a fronting proxy's
    /// clock, one-second resolution), the cluster's `now` being unavailable.
    DateHeader {
        /// Width of the bounds on the offset.
        uncertainty: ChronoDuration,
        /// Why the cluster's own `now` is not used.
        why: Option<String>,
    },
    /// Nothing from the cluster: this machine's clock, unchecked.
    Local {
        /// Why (the probe's failure), when something was tried.
        why: Option<String>,
    },
}

/// The clock in force and the local clock's offset from it, for the
/// dashboard header and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockStatus {
    /// Where the time comes from.
    pub source: ClockSource,
    /// Estimated cluster minus local time (zero for [`ClockSource::Local`]).
    pub offset: ChronoDuration,
}

impl ClockStatus {
    /// Whether the time comes from the cluster at all.
    pub fn is_from_cluster(&self) -> bool {
        !matches!(self.source, ClockSource::Local { .. })
    }

    /// Short form for the dashboard header.
    pub fn short(&self) -> String {
        match &self.source {
            ClockSource::Cluster { uncertainty } => format!(
                "clock: cluster ±{}ms, local {}",
                uncertainty.num_milliseconds(),
                signed_secs(self.offset)
            ),
            ClockSource::DateHeader { .. } => {
                format!("clock: Date header, local {}", signed_secs(self.offset))
            }
            ClockSource::Local { .. } => "clock: LOCAL (cluster time unknown)".into(),
        }
    }
}

/// `+600.0s` (the local clock is behind) / `-0.2s`.
fn signed_secs(offset: ChronoDuration) -> String {
    format!("{:+.1}s", offset.num_milliseconds() as f64 / -1000.0)
}

impl std::fmt::Display for ClockStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            ClockSource::Cluster { uncertainty } => write!(
                f,
                "the cluster's own clock (`now` of a search, ±{} ms); local clock is {}",
                uncertainty.num_milliseconds(),
                offset_words(self.offset)
            ),
            ClockSource::DateHeader { uncertainty, why } => {
                write!(
                    f,
                    "the answers' `Date` header (±{} ms; a fronting proxy's clock if one adds it); \
                     local clock is {}",
                    uncertainty.num_milliseconds(),
                    offset_words(self.offset)
                )?;
                match why {
                    Some(why) => write!(f, "; the cluster's own `now` is unavailable: {why}"),
                    None => Ok(()),
                }
            }
            ClockSource::Local { why } => {
                write!(
                    f,
                    "this machine's clock, unchecked: the cluster told no time"
                )?;
                match why {
                    Some(why) => write!(f, " ({why})"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Bounds on the offset (cluster minus local), in milliseconds.
#[derive(Debug, Clone, Copy, Default)]
struct Bounds {
    low: i64,
    high: i64,
    samples: u64,
}

impl Bounds {
    /// Narrows with one answer's bounds, or restarts from them when they
    /// contradict the estimate (a clock was stepped).
    fn observe(&mut self, low: i64, high: i64, what: &'static str) {
        if self.samples == 0 || low.max(self.low) > high.min(self.high) {
            if self.samples > 0 {
                tracing::info!(
                    low,
                    high,
                    was_low = self.low,
                    was_high = self.high,
                    what,
                    "clock offset estimate restarted (a clock was stepped)"
                );
            }
            *self = Bounds {
                low,
                high,
                samples: 1,
            };
        } else {
            self.low = self.low.max(low);
            self.high = self.high.min(high);
            self.samples += 1;
        }
    }

    fn is_set(&self) -> bool {
        self.samples > 0
    }

    fn middle(&self) -> i64 {
        self.low + (self.high - self.low) / 2
    }

    fn width(&self) -> ChronoDuration {
        ChronoDuration::milliseconds(self.high - self.low)
    }
}

/// Everything known about the cluster's clock.
#[derive(Debug, Clone, Default)]
struct State {
    /// From the cluster's own `now` (preferred).
    probe: Bounds,
    /// From `Date` headers.
    header: Bounds,
    /// Local time of the last probe attempt, successful or not.
    probed_at: Option<DateTime<Utc>>,
    /// Why the last probe failed (cleared by a success).
    probe_error: Option<String>,
    warned: bool,
}

impl State {
    /// The estimate in force.
    fn best(&self) -> Option<&Bounds> {
        [&self.probe, &self.header].into_iter().find(|b| b.is_set())
    }

    fn warn_once(&mut self) {
        if !self.warned {
            if let Some(skew) = self.best().and_then(skew_of) {
                self.warned = true;
                tracing::warn!(offset_ms = skew.offset.num_milliseconds(), "{skew}");
            }
        }
    }
}

/// The shared estimate; clones of a `Cluster` share it.
#[derive(Debug, Clone, Default)]
pub(super) struct Clock {
    state: Arc<Mutex<State>>,
    /// Held while the cluster's `now` is asked, so that concurrent callers
    /// wait for one probe instead of each sending their own.
    pub(super) probing: Arc<tokio::sync::Mutex<()>>,
    /// Added to the machine's clock: lets tests play a machine whose clock is wrong.
    local_skew: ChronoDuration,
    /// Read from another cluster's estimate ([`Clock::borrowed`]): this
    /// handle's answers and probes do not move it.
    borrowed: bool,
}

impl Clock {
    /// A clock whose "local" time is the machine's plus `skew`.
    pub(super) fn with_local_skew(&self, skew: ChronoDuration) -> Clock {
        Clock {
            local_skew: skew,
            ..Clock::default()
        }
    }

    /// The same estimate, read only: a handle on another cluster (a
    /// rehearsal's local copy) judges times by this cluster's clock, and
    /// what that other cluster answers never moves it.
    pub(super) fn borrowed(&self) -> Clock {
        Clock {
            borrowed: true,
            ..self.clone()
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// This process's idea of now.
    pub(super) fn local_now(&self) -> DateTime<Utc> {
        Utc::now() + self.local_skew
    }

    /// Records an answer sent at `sent` and received at `received` (local
    /// times) carrying `date` (a `Date` header).
    pub(super) fn observe(&self, date: &str, sent: DateTime<Utc>, received: DateTime<Utc>) {
        if self.borrowed {
            return;
        }
        let Ok(date) = httpdate::parse_http_date(date) else {
            return;
        };
        let date_ms = DateTime::<Utc>::from(date).timestamp_millis();
        let low = date_ms - received.timestamp_millis();
        let high = date_ms + 1000 - sent.timestamp_millis();
        let mut s = self.state();
        s.header.observe(low, high, "Date header");
        s.warn_once();
    }

    /// Records the cluster's own `now` (epoch milliseconds) read from a
    /// request sent at `sent` and answered at `received` (local times).
    pub(super) fn observe_now(&self, now_ms: i64, sent: DateTime<Utc>, received: DateTime<Utc>) {
        if self.borrowed {
            return;
        }
        let low = now_ms - received.timestamp_millis();
        let high = now_ms + 1 - sent.timestamp_millis();
        let mut s = self.state();
        s.probe.observe(low, high, "cluster now");
        s.probed_at = Some(sent);
        s.probe_error = None;
        s.warn_once();
    }

    /// Records that asking the cluster's `now` failed, and why.
    pub(super) fn probe_failed(&self, at: DateTime<Utc>, why: String) {
        if self.borrowed {
            return;
        }
        let mut s = self.state();
        s.probed_at = Some(at);
        s.probe_error = Some(why);
    }

    /// Whether the cluster's `now` should be asked (again): never asked, or
    /// last asked longer than `every` ago.
    pub(super) fn probe_due(&self, every: ChronoDuration) -> bool {
        if self.borrowed {
            return false;
        }
        let now = self.local_now();
        self.state()
            .probed_at
            .is_none_or(|at| now - at >= every || now < at)
    }

    /// Estimated cluster minus local time; zero before any evidence.
    pub(super) fn offset(&self) -> ChronoDuration {
        ChronoDuration::milliseconds(self.state().best().map_or(0, Bounds::middle))
    }

    /// The cluster's time now, as estimated.
    pub(super) fn now(&self) -> DateTime<Utc> {
        self.local_now() + self.offset()
    }

    /// Whether the local clock is provably more than a second off.
    pub(super) fn skew(&self) -> Option<ClockSkew> {
        self.state().best().and_then(skew_of)
    }

    /// Where the time comes from, and the local clock's offset.
    pub(super) fn status(&self) -> ClockStatus {
        let s = self.state();
        let why = s.probe_error.clone();
        let (source, offset) = if s.probe.is_set() {
            let uncertainty = s.probe.width();
            (ClockSource::Cluster { uncertainty }, s.probe.middle())
        } else if s.header.is_set() {
            let uncertainty = s.header.width();
            (
                ClockSource::DateHeader { uncertainty, why },
                s.header.middle(),
            )
        } else {
            (ClockSource::Local { why }, 0)
        };
        ClockStatus {
            source,
            offset: ChronoDuration::milliseconds(offset),
        }
    }
}

fn skew_of(b: &Bounds) -> Option<ClockSkew> {
    let provably_off = b.low > SKEW_WARNING_MS || b.high < -SKEW_WARNING_MS;
    (b.is_set() && provably_off).then(|| ClockSkew {
        offset: ChronoDuration::milliseconds(b.middle()),
    })
}

#[cfg(test)]
mod tests {
    use crate::cluster::clock::*;
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
        assert!(clock.status().is_from_cluster());
    }

    #[test]
    fn the_clusters_own_now_wins_over_a_proxys_date() {
        let clock = Clock::default();
        assert!(matches!(
            clock.status().source,
            ClockSource::Local { why: None }
        ));
        let base = 1_800_000_000_000i64;
        // A fronting proxy's clock is an hour ahead; the cluster's is 600 s
        // ahead of ours, within the 12 ms round trip.
        clock.observe(&http_date(at(base + 3_600_000)), at(base), at(base + 12));
        assert!(matches!(
            clock.status().source,
            ClockSource::DateHeader { .. }
        ));
        clock.observe_now(base + 600_000 + 5, at(base), at(base + 12));
        let status = clock.status();
        assert_eq!(
            status.source,
            ClockSource::Cluster {
                uncertainty: ChronoDuration::milliseconds(13)
            }
        );
        let err = (clock.offset().num_milliseconds() - 600_000).abs();
        assert!(err <= 12, "estimate off by {err} ms");
        assert!(status.to_string().contains("599.99"), "{status}");
        assert!(status.to_string().contains("behind"), "{status}");
        assert!(status.short().contains("-600."), "{}", status.short());
    }

    #[test]
    fn a_failed_probe_says_why_and_is_retried_later() {
        let clock = Clock::default();
        assert!(clock.probe_due(ChronoDuration::seconds(60)));
        clock.probe_failed(clock.local_now(), "HTTP 403".into());
        assert!(!clock.probe_due(ChronoDuration::seconds(60)));
        assert!(clock.probe_due(ChronoDuration::zero()));
        let status = clock.status();
        assert!(!status.is_from_cluster());
        assert!(status.to_string().contains("HTTP 403"), "{status}");
    }

    #[test]
    fn a_borrowed_clock_reads_the_lenders_estimate_and_never_moves_it() {
        let clock = Clock::default();
        let base = 1_800_000_000_000i64;
        clock.observe_now(base + 600_000 + 5, at(base), at(base + 12));
        let borrowed = clock.borrowed();
        assert_eq!(borrowed.offset(), clock.offset());
        // The copy's own answers (a local server, no offset) are ignored.
        borrowed.observe_now(base + 5, at(base), at(base + 12));
        borrowed.observe(&http_date(at(base + 5)), at(base), at(base + 12));
        borrowed.probe_failed(at(base), "refused".into());
        assert!(!borrowed.probe_due(ChronoDuration::zero()));
        let err = (borrowed.offset().num_milliseconds() - 600_000).abs();
        assert!(err <= 12, "estimate off by {err} ms");
        assert_eq!(clock.offset(), borrowed.offset());
        // The lender's later evidence is read through.
        clock.observe_now(base + 700_000 + 5, at(base + 100_000), at(base + 100_012));
        assert_eq!(borrowed.offset(), clock.offset());
    }
}
