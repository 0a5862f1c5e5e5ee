//! The one write-rate limiter of a job: `--max-rate N` caps the document
//! writes the cluster **accepts** a second, and the rate backs off when the
//! cluster sheds load (HTTP 429, `es_rejected_execution_exception`, for the
//! whole request or per `_bulk` item), the way AIMD does.
//!
//! # The bucket
//!
//! A token bucket kept as the time the next write may go, so a `_bulk` of
//! many items waits for all of them. It holds at most [`BURST`] of unused
//! time (as Guava's `RateLimiter` stores up to a second of permits): the
//! time a job spends reading between its writes is not lost, while over any
//! window the writes stay within the rate plus one burst. A write the
//! cluster throttles is given its token back when its answer comes — it was
//! not written, it is retried, and the retry is charged when it goes — so a
//! cluster that sheds a steady fifth of the items still accepts the
//! admitted rate. The refunds of an epoch never exceed the writes that
//! landed in it, so attempts stay below twice the rate however much is
//! throttled.
//!
//! # The back-off
//!
//! Answers are weighed per epoch (a second). A cluster may shed a steady
//! share of writes at any rate (a hot shard, a small queue); cutting the
//! rate does not lower that share, so cutting for it only loses writes. The
//! limiter learns the share that persists (a moving average over epochs,
//! [`STEADY_WEIGHT`]), tolerating at most [`MAX_STEADY`] of it: an epoch
//! whose throttled share rises more than [`MARGIN`] above it cuts the rate
//! by half the excess; a cluster throttling whole requests (share 1) is cut
//! by at least three eighths a second, down to [`MIN_RATE`]. Every other
//! epoch adds back a quarter of the reference rate a second (capped at
//! `--max-rate`). Without `--max-rate` nothing waits until the first such
//! epoch, which limits the job from the rate it was writing at.
//!
//! Elasticsearch documents the rejection and asks clients to back off and
//! retry (<https://www.elastic.co/guide/en/elasticsearch/reference/current/docs-bulk.html>,
//! "429 Too Many Requests ... retry with exponential backoff"); its own
//! clients' bulk helpers retry rejected items, never reporting them failed.
//! A `Retry-After` the cluster sends is waited for by the executors
//! (`batch::round`'s back-off), besides this pace.

use super::wait::wait_unless;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The lowest rate the back-off goes down to (writes a second).
const MIN_RATE: f64 = 1.0;
/// Answers are weighed per epoch: the rate changes at most once in one.
const EPOCH: Duration = Duration::from_secs(1);
/// Share of the reference rate added back per second of an epoch without
/// a rise in throttles.
const INCREASE_PER_SEC: f64 = 0.25;
/// How often a paused job looks whether it was resumed or stopped.
const PAUSE_POLL: Duration = Duration::from_millis(50);
/// A limited run sends requests of at most this much time's writes.
const REQUEST_TIME: f64 = 0.25;
/// The unused time the bucket keeps (writes it may catch up on after a
/// pause in writing, e.g. a batch's reads).
pub const BURST: Duration = Duration::from_secs(1);
/// Weight of the last epoch in the steady throttled share.
pub const STEADY_WEIGHT: f64 = 0.5;
/// The most of a steady throttled share tolerated without cutting.
pub const MAX_STEADY: f64 = 0.25;
/// How far above the steady share an epoch's share may be without a cut.
pub const MARGIN: f64 = 0.05;

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
    /// the rate seen at the first cut).
    reference: f64,
    /// When the next write may go (`None`: before the first write).
    next_free: Option<Instant>,
    /// The answers of the epoch under way.
    epoch: Epoch,
    /// The throttled share that persisted over the epochs so far.
    steady: f64,
    /// When the last answer came.
    last_answer: Option<Instant>,
    first: Option<Instant>,
    written: u64,
    throttled: u64,
}

/// The answers of one epoch.
#[derive(Debug, Default, Clone, Copy)]
struct Epoch {
    start: Option<Instant>,
    written: u64,
    throttled: u64,
    /// Throttled writes whose token was given back.
    refunded: u64,
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

impl State {
    /// Gives `throttled` writes their tokens back, as many as landed in
    /// the epoch so far allow.
    fn refund(&mut self, throttled: u64) {
        let (Some(rate), Some(next)) = (self.rate, self.next_free) else {
            return;
        };
        let n = throttled.min(self.epoch.written.saturating_sub(self.epoch.refunded));
        self.epoch.refunded += n;
        let back = Duration::from_secs_f64(n as f64 / rate);
        self.next_free = Some(next.checked_sub(back).unwrap_or(next));
    }

    /// Weighs the epoch's answers: a throttled share above the steady one
    /// cuts the rate, any other epoch lets it grow back; then a new epoch.
    fn end_epoch(&mut self, now: Instant, admitted: Option<f64>) {
        let e = std::mem::take(&mut self.epoch);
        self.epoch.start = Some(now);
        let secs = e
            .start
            .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
        let share = e.throttled as f64 / (e.written + e.throttled).max(1) as f64;
        let excess = share - self.steady.min(MAX_STEADY);
        self.steady += STEADY_WEIGHT * (share - self.steady);
        if excess > MARGIN {
            let base = match self.rate {
                Some(r) => r,
                None => {
                    // First cut of an unlimited job: from what it did.
                    let secs = self.first.map_or(1.0, |f| {
                        now.saturating_duration_since(f).as_secs_f64().max(1.0)
                    });
                    let seen = (self.written as f64 / secs).max(MIN_RATE);
                    self.reference = seen;
                    seen
                }
            };
            self.rate = Some((base * (1.0 - excess / 2.0)).max(MIN_RATE));
            tracing::info!(
                rate = self.rate,
                share,
                steady = self.steady,
                "cluster throttled more writes: slowing down"
            );
        } else if let Some(r) = self.rate {
            let grown = r + INCREASE_PER_SEC * self.reference * secs.min(1.0);
            self.rate = Some(admitted.map_or(grown, |cap| grown.min(cap)));
        }
    }
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
                next_free: None,
                epoch: Epoch::default(),
                steady: 0.0,
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

    /// Takes `n` writes' room at `now`: when they may go. The bucket keeps
    /// at most [`BURST`] of unused time.
    fn reserve(&self, now: Instant, n: usize) -> Instant {
        let mut s = self.state();
        s.first.get_or_insert(now);
        let Some(rate) = s.rate else {
            return now;
        };
        let kept = now.checked_sub(BURST).unwrap_or(now);
        let start = s.next_free.map_or(now, |t| t.max(kept));
        s.next_free = Some(start + Duration::from_secs_f64(n as f64 / rate));
        start.max(now)
    }

    /// The most writes one request should carry now (`None`: any number),
    /// so a limited job writes steadily rather than in bursts.
    pub fn request_size(&self) -> Option<usize> {
        self.state()
            .rate
            .map(|r| ((r * REQUEST_TIME).floor() as usize).max(1))
    }

    /// Takes in the answer to writes admitted before: `written` answered
    /// (landed or conflicted), `throttled` refused as throttled. Gives the
    /// throttled writes their tokens back and, once an epoch is over,
    /// adjusts the rate (see the module docs).
    pub fn answered(&self, written: usize, throttled: usize) {
        self.answered_at(Instant::now(), written, throttled);
    }

    fn answered_at(&self, now: Instant, written: usize, throttled: usize) {
        if written + throttled == 0 {
            return;
        }
        let mut s = self.state();
        s.written += written as u64;
        s.throttled += throttled as u64;
        s.last_answer = Some(now);
        let start = *s.epoch.start.get_or_insert(now);
        s.epoch.written += written as u64;
        s.epoch.throttled += throttled as u64;
        s.refund(throttled as u64);
        if now.saturating_duration_since(start) >= EPOCH {
            s.end_epoch(now, self.admitted);
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

    /// One answer a second from `t0 + from` s on, each `(written,
    /// throttled)`; the rate after each.
    fn epochs(pace: &Pace, t0: Instant, from: u64, answers: &[(usize, usize)]) -> Vec<f64> {
        answers
            .iter()
            .zip(from..)
            .map(|(&(w, t), k)| {
                pace.answered_at(t0 + Duration::from_secs(k), w, t);
                pace.stats().rate.unwrap_or(f64::INFINITY)
            })
            .collect()
    }

    #[test]
    fn a_throttled_write_gives_its_token_back() {
        let pace = Pace::new(Some(100.0));
        let t0 = Instant::now();
        assert_eq!(pace.reserve(t0, 100), t0);
        pace.answered_at(t0, 80, 20);
        // The 20 shed writes are retried, charged when they go: the next
        // hundred start after the 80 that landed.
        assert_eq!(pace.reserve(t0, 100) - t0, Duration::from_millis(800));
    }

    #[test]
    fn refunds_never_exceed_the_writes_that_landed() {
        let pace = Pace::new(Some(100.0));
        let t0 = Instant::now();
        pace.reserve(t0, 100);
        // Everything throttled: nothing given back, so attempts never
        // outrun the rate when the cluster refuses all.
        pace.answered_at(t0, 0, 100);
        assert_eq!(pace.reserve(t0, 10) - t0, Duration::from_secs(1));
        // One at a time: a throttle is given back once a write has landed.
        let pace = Pace::new(Some(10.0));
        pace.reserve(t0, 1);
        pace.answered_at(t0, 0, 1);
        pace.reserve(t0, 1);
        pace.answered_at(t0, 1, 0);
        pace.reserve(t0, 1);
        pace.answered_at(t0, 0, 1);
        assert_eq!(
            pace.reserve(t0, 1) - t0,
            Duration::from_millis(200),
            "one of the two throttles given back"
        );
    }

    #[test]
    fn idle_time_is_kept_up_to_a_burst() {
        let pace = Pace::new(Some(100.0));
        let t0 = Instant::now();
        pace.reserve(t0, 100);
        // Five seconds without writing: one second of them is kept.
        let t5 = t0 + Duration::from_secs(5);
        assert_eq!(pace.reserve(t5, 100), t5);
        assert_eq!(pace.reserve(t5, 100), t5);
        assert_eq!(pace.reserve(t5, 100) - t5, Duration::from_secs(1));
    }

    #[test]
    fn a_steady_share_of_throttles_stops_cutting_the_rate() {
        let pace = Pace::new(Some(100.0));
        let t0 = Instant::now();
        // A fifth of every epoch's writes shed, whatever the rate.
        let rates = epochs(&pace, t0, 0, &[(80, 20); 12]);
        let cuts = rates.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(cuts <= 2, "cut {cuts} times: {rates:?}");
        assert_eq!(rates.last(), Some(&100.0), "{rates:?}");
        assert!(rates.iter().all(|&r| r >= 85.0), "{rates:?}");
    }

    #[test]
    fn a_rising_share_cuts_the_rate() {
        let pace = Pace::new(Some(100.0));
        let t0 = Instant::now();
        epochs(&pace, t0, 0, &[(80, 20); 8]);
        assert_eq!(pace.stats().rate, Some(100.0));
        // Half the writes shed now: cut by half the rise above a fifth.
        let after = epochs(&pace, t0, 8, &[(50, 50)]);
        assert!((after[0] - 85.0).abs() < 1.0, "{after:?}");
    }

    #[test]
    fn whole_request_throttles_back_off_to_the_minimum() {
        let pace = Pace::new(Some(1000.0));
        let t0 = Instant::now();
        epochs(&pace, t0, 0, &[(80, 20); 8]);
        // Every request throttled: cut every epoch, never learnt as steady.
        let rates = epochs(&pace, t0, 8, &[(0, 100); 20]);
        assert!(rates.windows(2).all(|w| w[1] < w[0] || w[1] == MIN_RATE));
        assert!(rates[0] <= 650.0, "{rates:?}");
        assert_eq!(rates.last(), Some(&MIN_RATE), "{rates:?}");
        // Clean answers again: it grows back towards the admitted rate.
        let back = epochs(&pace, t0, 28, &[(100, 0); 4]);
        assert_eq!(back.last(), Some(&1000.0), "{back:?}");
    }

    #[test]
    fn an_unlimited_job_is_limited_from_its_first_throttled_epoch() {
        let pace = Pace::new(None);
        let t0 = Instant::now();
        assert_eq!(pace.reserve(t0, 1000), t0);
        assert_eq!(pace.request_size(), None);
        pace.answered_at(t0 + Duration::from_secs(1), 500, 0);
        pace.answered_at(t0 + Duration::from_secs(2), 500, 0);
        assert_eq!(pace.stats().rate, None);
        pace.answered_at(t0 + Duration::from_secs(2), 0, 100);
        assert_eq!(pace.stats().rate, None, "the epoch is not over");
        pace.answered_at(t0 + Duration::from_secs(3), 0, 100);
        // 1000 written in 3 s; the epoch's share 1: half that rate.
        let rate = pace.stats().rate.unwrap();
        assert!((rate - 1000.0 / 3.0 / 2.0).abs() < 0.1, "{rate}");
        assert_eq!(pace.stats().throttled, 200);
    }
}
