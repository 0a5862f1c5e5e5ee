//! A running job's heartbeat: while its run goes on, its record's
//! `alive_at` is rewritten every period (`Trail::beat`: one conditional
//! write, at most one every `--job-heartbeat`), so whoever reads the record
//! can tell a live job from one whose process died ([`super::job_life`]).
//! A heartbeat that cannot be written is logged and tried at the next
//! period; the run never waits on it.

use crate::protocol::trail::{RecordId, Trail};
use tokio::sync::oneshot;

/// Beats for run `record` until `over` fires (or its sender is dropped):
/// first at once when `now` (a resumed run says it lives again), else
/// after one period (a new record was begun with its first heartbeat).
/// Stops early when the record is no longer running.
pub async fn keep_alive(
    trail: Trail,
    record: RecordId,
    now: bool,
    mut over: oneshot::Receiver<()>,
) {
    let every = trail.heartbeat();
    let first = tokio::time::Instant::now()
        + if now {
            std::time::Duration::ZERO
        } else {
            every
        };
    let mut tick = tokio::time::interval_at(first, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = &mut over => return,
            _ = tick.tick() => {}
        }
        tokio::select! {
            _ = &mut over => return,
            beat = trail.beat(&record) => match beat {
                Ok(true) => {}
                Ok(false) => {
                    tracing::info!(record = %record, "the record is finished: heartbeat stopped");
                    return;
                }
                Err(e) => tracing::warn!(record = %record, error = %e,
                    "cannot write the job's heartbeat; trying again"),
            },
        }
    }
}
