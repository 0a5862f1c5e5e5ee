//! Durable bulk jobs: what makes a rollback or recovery over thousands of
//! transactions a job an operator can steer. A job is the bulk act's run
//! record (its id is the record's id); here are the pieces around it:
//!
//! - [`Pace`]: the one write-rate limiter (`--max-rate`), a token bucket
//!   both the batched and the one-at-a-time paths wait on before a write,
//!   which backs off (AIMD) when the cluster sheds load (429,
//!   `es_rejected_execution_exception`), so a throttle slows the job and is
//!   never a failed item;
//! - [`Progress`]: done, refused, failed and left, with rate and ETA;
//! - [`wait_unless`]: a wait that ends early when the job is stopped, so
//!   Ctrl-C is heard within a fraction of a second whatever the job waits on.
//!
//! Checkpoints (the steps of ended transactions written as the run goes)
//! and resuming a run from its record are the trail's and the act's
//! (`trail::checkpoint`, `intervene::resume`).

mod checkpoint;
mod pace;
mod progress;

pub use checkpoint::{Checkpoints, Ended, MIN_TRANSACTIONS};
pub use pace::{Pace, PaceStats};
pub use progress::{Progress, ProgressView};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// How often a stoppable wait looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Waits `d`, or less once `stop` is set; returns whether it was stopped.
pub async fn wait_unless(d: Duration, stop: Option<&AtomicBool>) -> bool {
    let Some(stop) = stop else {
        tokio::time::sleep(d).await;
        return false;
    };
    let end = Instant::now() + d;
    loop {
        if stop.load(Ordering::SeqCst) {
            return true;
        }
        let now = Instant::now();
        if now >= end {
            return false;
        }
        tokio::time::sleep((end - now).min(STOP_POLL)).await;
    }
}
