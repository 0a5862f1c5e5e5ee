//! How far a job is: of its transactions, how many ended done (completed,
//! done by another process, nothing to do), refused, failed or stopped, how
//! many are left, and the rate and time left at that rate. Shared between
//! the run (which counts each transaction as it ends) and whoever shows it
//! (the CLI's progress line, the dashboard), so it is all atomics.

use crate::protocol::Verdict;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The counters of one job.
#[derive(Debug)]
pub struct Progress {
    total: AtomicUsize,
    done: AtomicUsize,
    refused: AtomicUsize,
    failed: AtomicUsize,
    stopped: AtomicUsize,
    started: Instant,
}

/// The counters at one instant, with the rate and ETA derived from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressView {
    /// Transactions the job runs.
    pub total: usize,
    /// Ended terminal (completed, by another process, or nothing to do).
    pub done: usize,
    /// Refused before writing.
    pub refused: usize,
    /// Failed.
    pub failed: usize,
    /// Stopped part-way (left for recovery, in a protocol state).
    pub stopped: usize,
    /// Not ended yet.
    pub left: usize,
    /// Transactions ended a second since the start.
    pub rate: f64,
    /// At that rate, the time the rest takes (unknown before any ended).
    pub eta: Option<Duration>,
    /// Since the start.
    pub elapsed: Duration,
}

impl Progress {
    /// A job of `total` transactions, starting now.
    pub fn new(total: usize) -> Progress {
        Progress {
            total: AtomicUsize::new(total),
            done: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
            stopped: AtomicUsize::new(0),
            started: Instant::now(),
        }
    }

    /// Counts one transaction's verdict.
    pub fn ended(&self, v: &Verdict) {
        let counter = match v {
            Verdict::Completed(_) | Verdict::EndedElsewhere(_) | Verdict::NothingToDo(_) => {
                &self.done
            }
            Verdict::Refused(_) => &self.refused,
            Verdict::Failed(_) => &self.failed,
            Verdict::Stopped(_) => &self.stopped,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn view(&self) -> ProgressView {
        let get = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        let total = get(&self.total);
        let (done, refused, failed, stopped) = (
            get(&self.done),
            get(&self.refused),
            get(&self.failed),
            get(&self.stopped),
        );
        let ended = done + refused + failed + stopped;
        let left = total.saturating_sub(ended);
        let elapsed = self.started.elapsed();
        let secs = elapsed.as_secs_f64();
        let rate = if secs > 0.0 { ended as f64 / secs } else { 0.0 };
        let eta = (rate > 0.0).then(|| Duration::from_secs_f64(left as f64 / rate));
        ProgressView {
            total,
            done,
            refused,
            failed,
            stopped,
            left,
            rate,
            eta,
            elapsed,
        }
    }
}

impl ProgressView {
    /// Transactions ended, whatever their verdict.
    pub fn ended(&self) -> usize {
        self.total - self.left
    }
}

/// `1200/5000 · 240/s · ETA 16s · 1190 done, 4 refused, 6 failed`.
impl fmt::Display for ProgressView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} · {:.0}/s", self.ended(), self.total, self.rate)?;
        match self.eta {
            Some(eta) if self.left > 0 => write!(f, " · ETA {}", short(eta))?,
            None if self.left > 0 => write!(f, " · ETA unknown")?,
            _ => {}
        }
        write!(f, " · {} done", self.done)?;
        for (n, what) in [
            (self.refused, "refused"),
            (self.failed, "failed"),
            (self.stopped, "stopped"),
        ] {
            if n > 0 {
                write!(f, ", {n} {what}")?;
            }
        }
        Ok(())
    }
}

/// `45s`, `3m05s`, `2h10m`.
fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TxnState;

    #[test]
    fn counts_each_verdict_and_what_is_left() {
        let p = Progress::new(4);
        p.ended(&Verdict::Completed(TxnState::Finished));
        p.ended(&Verdict::NothingToDo(TxnState::Finished));
        p.ended(&Verdict::Stopped("x".into()));
        let v = p.view();
        assert_eq!((v.done, v.stopped, v.left, v.ended()), (2, 1, 1, 3));
        let text = v.to_string();
        assert!(text.starts_with("3/4 · "), "{text}");
        assert!(text.ends_with("2 done, 1 stopped"), "{text}");
        assert_eq!(short(Duration::from_secs(185)), "3m05s");
    }
}
