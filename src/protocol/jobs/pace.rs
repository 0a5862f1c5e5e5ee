//! The one write-rate limiter of a job: `--max-rate N` admits at most N
//! document writes a second (a token bucket kept as the time the next
//! write may go, so a `_bulk` of many items waits for all of them), and
//! the rate backs off when the cluster sheds load, the way AIMD does: a
//! share of throttled writes (HTTP 429, `es_rejected_execution_exception`,
//! for the whole request or per `_bulk` item) cuts the rate by half that
//! share, at most once a second, and every second of answers without
//! throttles adds back a quarter of the admitted rate. Without `--max-rate`
//! nothing waits until the first throttle, which starts the limit at half
//! the rate seen so far.
//!
//! Elasticsearch documents the rejection and asks clients to back off and
//! retry (<https://www.elastic.co/guide/en/elasticsearch/reference/current/docs-bulk.html>,
//! "429 Too Many Requests ... retry with exponential backoff"); its own
//! clients' bulk helpers retry rejected items, never reporting them failed.

use super::wait::wait_unless;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The lowest rate the back-off goes down to (writes a second).
const MIN_RATE: f64 = 1.0;
/// Throttles cut the rate at most once per epoch.
const EPOCH: Duration = Duration::from_secs(1);
/// Share of the reference rate added back per second without throttles.
const INCREASE_PER_SEC: f64 = 0.25;
/// How often a paused job looks whether it was resumed or stopped.
const PAUSE_POLL: Duration = Duration::from_millis(50);
/// A limited run sends requests of at most this much time's writes.
const REQUEST_TIME: f64 = 0.25;

/// The write-rate limiter of one job (shared by its workers).
#[derive(Debug)]
pub struct Pace {
    admitted: Option<f64>,
    state: Mutex<State>,
    /// Paused by the operator: no write is admitted until resumed.
    paused: AtomicBool,
}

#[derive(Debug)]
struct State {
    /// The rate now (`None`: unlimited).
    rate: Option<f64>,
    /// What the rate grows back towards per second (the admitted rate, or
    /// the rate seen at the first throttle).
    reference: f64,
    /// When the next write may go.
    next_free: Instant,
    /// When the rate was last cut.
    last_cut: Option<Instant>,
    /// When the last answer came.
    last_answer: Option<Instant>,
    first: Option<Instant>,
    written: u64,
    throttled: u64,
}

/// What a job's writes did, for its report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaceStats {
    /// `--max-rate` (writes a second), if given.
    pub admitted: Option<f64>,
    /// The rate the back-off allows now.
    pub rate: Option<f64>,
    /// Writes that landed or conflicted (answered, not throttled).
    pub written: u64,
    /// Writes the cluster refused as throttled (each retried).
    pub throttled: u64,
    /// From the first admitted write to the last answer.
    pub elapsed: Duration,
}

impl PaceStats {
    /// Writes answered (not throttled) a second over the run.
    pub fn achieved(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs <= 0.0 {
            0.0
        } else {
            self.written as f64 / secs
        }
    }
}

impl Pace {
    /// A limiter admitting `max_rate` writes a second (unlimited: `None`).
    pub fn new(max_rate: Option<f64>) -> Pace {
        let max_rate = max_rate.filter(|r| r.is_finite() && *r > 0.0);
        Pace {
            admitted: max_rate,
            paused: AtomicBool::new(false),
            state: Mutex::new(State {
                rate: max_rate,
                reference: max_rate.unwrap_or(MIN_RATE),
                next_free: Instant::now(),
                last_cut: None,
                last_answer: None,
                first: None,
                written: 0,
                throttled: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Pauses the job (`true`) or resumes it: while paused every write
    /// waits at [`Pace::admit`], so the job stops writing within one write
    /// (a transaction part-way waits in the state it reached: the fence
    /// detects another process that moves it meanwhile). Stopping a paused
    /// job resumes it first, so the writes under way finish.
    pub fn pause(&self, on: bool) {
        self.paused.store(on, Ordering::SeqCst);
    }

    /// Whether the job is paused.
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Waits while the job is paused; `false` when `stop` was set meanwhile.
    pub async fn unpaused(&self, stop: Option<&AtomicBool>) -> bool {
        while self.is_paused() {
            if stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                return false;
            }
            tokio::time::sleep(PAUSE_POLL).await;
        }
        true
    }

    /// Waits until `n` more writes may go (and the job is not paused);
    /// `false` (nothing may be sent) when `stop` was set meanwhile.
    pub async fn admit(&self, n: usize, stop: Option<&AtomicBool>) -> bool {
        if !self.unpaused(stop).await {
            return false;
        }
        let now = Instant::now();
        let wait = self.reserve(now, n).saturating_duration_since(now);
        wait.is_zero() || !wait_unless(wait, stop).await
    }

    /// Takes `n` writes' room at `now`: when they may go.
    fn reserve(&self, now: Instant, n: usize) -> Instant {
        let mut s = self.state();
        s.first.get_or_insert(now);
        match s.rate {
            None => now,
            Some(rate) => {
                let start = s.next_free.max(now);
                s.next_free = start + Duration::from_secs_f64(n as f64 / rate);
                start
            }
        }
    }

    /// The most writes one request should carry now (`None`: any number),
    /// so a limited job writes steadily rather than in bursts.
    pub fn request_size(&self) -> Option<usize> {
        self.state()
            .rate
            .map(|r| ((r * REQUEST_TIME).floor() as usize).max(1))
    }

    /// Takes in the answer to writes admitted before: `written` answered
    /// (landed or conflicted), `throttled` refused as throttled. Adjusts
    /// the rate (see the module docs).
    pub fn answered(&self, written: usize, throttled: usize) {
        self.answered_at(Instant::now(), written, throttled);
    }

    fn answered_at(&self, now: Instant, written: usize, throttled: usize) {
        let total = written + throttled;
        if total == 0 {
            return;
        }
        let mut s = self.state();
        s.written += written as u64;
        s.throttled += throttled as u64;
        let since = s
            .last_answer
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t))
            .min(EPOCH);
        s.last_answer = Some(now);
        let share = throttled as f64 / total as f64;
        if throttled > 0
            && s.last_cut
                .is_none_or(|t| now.saturating_duration_since(t) >= EPOCH)
        {
            let base = match s.rate {
                Some(r) => r,
                None => {
                    // First throttle of an unlimited job: half what it did.
                    let secs = s.first.map_or(1.0, |f| {
                        now.saturating_duration_since(f).as_secs_f64().max(1.0)
                    });
                    let seen = (s.written as f64 / secs).max(MIN_RATE);
                    s.reference = seen;
                    seen
                }
            };
            s.rate = Some((base * (1.0 - share / 2.0)).max(MIN_RATE));
            s.last_cut = Some(now);
            tracing::info!(
                rate = s.rate,
                share,
                "cluster throttled writes: slowing down"
            );
        } else if let Some(r) = s.rate {
            let grown = r + INCREASE_PER_SEC * s.reference * since.as_secs_f64() * (1.0 - share);
            s.rate = Some(self.admitted.map_or(grown, |cap| grown.min(cap)));
        }
    }

    /// What the job's writes did so far.
    pub fn stats(&self) -> PaceStats {
        let s = self.state();
        let elapsed = match (s.first, s.last_answer) {
            (Some(f), Some(l)) => l.saturating_duration_since(f),
            _ => Duration::ZERO,
        };
        PaceStats {
            admitted: self.admitted,
            rate: s.rate,
            written: s.written,
            throttled: s.throttled,
            elapsed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_at_most_the_rate() {
        let pace = Pace::new(Some(10.0));
        let t0 = Instant::now();
        let starts: Vec<Instant> = (0..5).map(|_| pace.reserve(t0, 10)).collect();
        // 50 writes at 10/s: the fifth request of ten goes at 4 s.
        assert_eq!(starts[0], t0);
        assert_eq!(starts[4] - t0, Duration::from_secs(4));
        assert_eq!(pace.request_size(), Some(2));
    }

    #[tokio::test]
    async fn a_stopped_job_waits_for_nothing() {
        let pace = Pace::new(Some(1.0));
        let stop = AtomicBool::new(true);
        assert!(
            pace.admit(1, Some(&stop)).await,
            "the first write goes at once"
        );
        assert!(!pace.admit(100, Some(&stop)).await);
    }

    #[tokio::test]
    async fn a_paused_job_writes_nothing_until_resumed_or_stopped() {
        let pace = Pace::new(None);
        pace.pause(true);
        let held = tokio::time::timeout(Duration::from_millis(300), pace.admit(1, None)).await;
        assert!(held.is_err(), "admitted while paused");
        pace.pause(false);
        assert!(pace.admit(1, None).await);
        pace.pause(true);
        let stop = AtomicBool::new(true);
        assert!(!pace.admit(1, Some(&stop)).await, "a stop ends the pause");
    }

    #[test]
    fn throttles_cut_the_rate_once_an_epoch_and_clean_answers_restore_it() {
        let pace = Pace::new(Some(100.0));
        let t0 = Instant::now();
        pace.answered_at(t0, 80, 20);
        assert_eq!(pace.stats().rate, Some(90.0));
        // Within the epoch: no second cut.
        pace.answered_at(t0, 80, 20);
        assert!(pace.stats().rate.unwrap() >= 90.0);
        pace.answered_at(t0 + Duration::from_secs(1), 100, 0);
        assert_eq!(
            pace.stats().rate,
            Some(100.0),
            "capped at the admitted rate"
        );
        assert_eq!(pace.stats().throttled, 40);
        // All throttled: halved.
        pace.answered_at(t0 + Duration::from_secs(2), 0, 10);
        assert_eq!(pace.stats().rate, Some(50.0));
    }

    #[test]
    fn an_unlimited_job_is_limited_from_its_first_throttle() {
        let pace = Pace::new(None);
        let t0 = Instant::now();
        assert_eq!(pace.reserve(t0, 1000), t0);
        assert_eq!(pace.request_size(), None);
        pace.answered_at(t0 + Duration::from_secs(2), 1000, 0);
        assert_eq!(pace.stats().rate, None);
        pace.answered_at(t0 + Duration::from_secs(2), 0, 100);
        assert_eq!(pace.stats().rate, Some(250.0), "half of 500/s");
    }
}
