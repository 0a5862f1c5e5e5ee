//! Holding requests until the test lets them go
//! ([`FaultProxy::hold_after`]): a bulk run that cannot end before the
//! test has done what it must while the run is under way (press a key,
//! read the screen), whatever the machine's load.

use super::lock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where the requests a [`FaultProxy::hold_after`](super::FaultProxy::hold_after)
/// rule matches wait, past the first few it lets through.
#[derive(Debug)]
pub struct Gate {
    /// How many matching requests go through before the gate holds.
    pass: usize,
    state: Mutex<GateState>,
    opened: Condvar,
}

/// What a [`Gate`] has seen.
#[derive(Debug, Default)]
struct GateState {
    /// Matching requests so far (passed or held).
    seen: usize,
    /// Requests waiting now.
    held: usize,
    /// Opened: nothing is held any more.
    open: bool,
}

impl Gate {
    pub(super) fn new(pass: usize) -> Gate {
        Gate {
            pass,
            state: Mutex::new(GateState::default()),
            opened: Condvar::new(),
        }
    }

    /// Lets every held request go on, and every later one.
    pub fn open(&self) {
        lock(&self.state).open = true;
        self.opened.notify_all();
    }

    /// How many requests wait at the gate now.
    pub fn held(&self) -> usize {
        lock(&self.state).held
    }

    /// Returns at once for the first `pass` matching requests; a later one
    /// waits until the gate opens, the proxy stops, or `limit` passes (so
    /// a failed test leaves no thread behind for ever).
    pub(super) fn pass_or_wait(&self, stopping: &AtomicBool, limit: Duration) {
        let mut state = lock(&self.state);
        state.seen += 1;
        if state.open || state.seen <= self.pass {
            return;
        }
        state.held += 1;
        let until = Instant::now() + limit;
        while !state.open && !stopping.load(Ordering::SeqCst) && Instant::now() < until {
            state = self
                .opened
                .wait_timeout(state, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        state.held -= 1;
    }
}
