//! The polling task: loads a snapshot every interval, one poll at a time (a
//! poll never overlaps the previous one: they run in sequence in this one
//! task). On failure the last snapshot stays on screen while it retries with
//! exponential backoff; a refused login stops retrying until the operator
//! asks (`r`), so a bad password never turns into a retry storm.

use super::event::{Event, PollFailure};
use crate::error::Error;
use crate::protocol::read::poll::PollMemory;
use crate::protocol::read::TableFilter;
use crate::protocol::Protocol;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

/// Instructions to the poller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollControl {
    /// Poll as soon as the current poll (if any) ends; resets backoff.
    Now,
    /// Stop or resume periodic polls (`Now` still polls).
    Pause(bool),
    /// New interval.
    Interval(Duration),
    /// List this page of the table's filter (run by the cluster over every
    /// document); polls at once.
    Listing(TableFilter),
}

/// Longest wait between retries after failures.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Classifies an error for retrying: the library's one transient rule
/// ([`Error::is_transient`]), a refused login apart.
pub fn classify(e: &Error) -> PollFailure {
    match e {
        Error::Auth { .. } => PollFailure::Auth(e.clone()),
        _ if e.is_transient() => PollFailure::Transient(e.clone()),
        _ => PollFailure::Other(e.clone()),
    }
}

/// Next wait after a failure: doubles from the interval up to [`MAX_BACKOFF`].
pub fn next_backoff(previous: Option<Duration>, interval: Duration) -> Duration {
    match previous {
        None => interval,
        Some(d) => (d * 2).min(MAX_BACKOFF).max(interval),
    }
}

/// The poller's state between polls: what the controls set.
struct Steering {
    interval: Duration,
    paused: bool,
    backoff: Option<Duration>,
    blocked: bool,
    due: Option<Instant>,
    listing: TableFilter,
}

impl Steering {
    fn apply(&mut self, c: PollControl) {
        match c {
            PollControl::Now => {
                self.blocked = false;
                self.backoff = None;
                self.due = Some(Instant::now());
            }
            PollControl::Pause(p) => {
                self.paused = p;
                self.due = if p || self.blocked {
                    None
                } else {
                    Some(Instant::now())
                };
            }
            PollControl::Listing(table) => {
                self.listing = table;
                if !self.blocked {
                    self.due = Some(Instant::now());
                }
            }
            PollControl::Interval(d) => {
                self.interval = d;
                if !self.paused && !self.blocked && self.backoff.is_none() {
                    self.due = Some(Instant::now() + d);
                }
            }
        }
    }
}

/// Runs until the control channel closes.
pub async fn run(
    proto: Protocol,
    cap: usize,
    interval: Duration,
    events: UnboundedSender<Event>,
    mut control: UnboundedReceiver<PollControl>,
) {
    // What the polls read once and keep (others' job lists, finished
    // records, acts): this poller's, for as long as it runs.
    let memory = PollMemory::default();
    let mut st = Steering {
        interval,
        paused: false,
        backoff: None,
        blocked: false,
        due: Some(Instant::now()),
        listing: TableFilter::default(),
    };
    loop {
        // Controls that queued up during the last poll are applied
        // together: a filter typed key by key is polled once, as it stands.
        while let Ok(c) = control.try_recv() {
            st.apply(c);
        }
        if st.due.is_some_and(|d| d <= Instant::now()) {
            if events.send(Event::PollStarted).is_err() {
                return;
            }
            let result = proto.poll_snapshot_listing(cap, &st.listing, &memory).await;
            let event = match result {
                Ok(s) => {
                    st.backoff = None;
                    Event::Polled(Ok(Box::new(s)))
                }
                Err(e) => {
                    let failure = classify(&e);
                    tracing::warn!(error = %e, "poll failed");
                    if matches!(failure, PollFailure::Auth(_)) {
                        st.blocked = true;
                    } else {
                        // A throttled cluster's `Retry-After` is honoured (up to the cap).
                        let asked = e.retry_after().unwrap_or_default().min(MAX_BACKOFF);
                        st.backoff = Some(next_backoff(st.backoff, st.interval).max(asked));
                    }
                    Event::Polled(Err(failure))
                }
            };
            if events.send(event).is_err() {
                return;
            }
            st.due = if st.blocked || (st.paused && st.backoff.is_none()) {
                None
            } else {
                Some(Instant::now() + st.backoff.unwrap_or(st.interval))
            };
        }
        let due = st.due;
        let sleep = async {
            match due {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            ctrl = control.recv() => match ctrl {
                None => return,
                Some(c) => st.apply(c),
            },
            _ = sleep => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::dashboard::poller::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let i = Duration::from_secs(2);
        let b1 = next_backoff(None, i);
        let b2 = next_backoff(Some(b1), i);
        assert_eq!((b1, b2), (Duration::from_secs(2), Duration::from_secs(4)));
        assert_eq!(next_backoff(Some(Duration::from_secs(25)), i), MAX_BACKOFF);
    }

    #[test]
    fn transient_means_what_it_means_for_the_executor() {
        for status in 400..600 {
            let e = Error::Cluster {
                status,
                reason: "x".into(),
                retry_after: None,
            };
            let transient = matches!(classify(&e), PollFailure::Transient(_));
            assert_eq!(transient, e.is_transient(), "HTTP {status}");
        }
        let internal = Error::Cluster {
            status: 500,
            reason: "null_pointer_exception".into(),
            retry_after: None,
        };
        assert!(matches!(classify(&internal), PollFailure::Other(_)));
    }

    #[test]
    fn auth_failures_are_not_retried() {
        let e = Error::Auth {
            status: 401,
            reason: "bad".into(),
        };
        assert!(matches!(classify(&e), PollFailure::Auth(_)));
        assert!(matches!(
            classify(&Error::Unreachable("x".into())),
            PollFailure::Transient(_)
        ));
    }

    #[test]
    fn a_blocked_index_does_not_stop_the_poller() {
        // A 403 `cluster_block_exception` is read as a block, not a refused
        // login: the poller keeps polling (with backoff) until it is lifted.
        let e = crate::cluster::error_of_answer(
            403,
            &serde_json::json!({"error": {"type": "cluster_block_exception",
                "reason": "index [a] blocked by: [FORBIDDEN/12/index read-only / allow delete (api)];"},
                "status": 403}),
            "a",
        );
        assert!(matches!(e, Error::Blocked { .. }), "{e:?}");
        assert!(matches!(classify(&e), PollFailure::Other(_)));
    }
}
