//! A wait that ends early when a job is stopped, so Ctrl-C is heard within
//! a fraction of a second whatever the job waits on. A leaf: the executor
//! waits on a job's pace, which waits here.

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
