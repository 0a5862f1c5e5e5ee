//! Bulk actions, the I/O side: re-reading the marked transactions for the
//! bulk dialog, and running the confirmed items a few at a time, each as
//! its own recorded intervention (one audit record per transaction, as the
//! trail records procedures). A stop flag keeps new items from starting;
//! an item already started runs its procedure to the end, so every
//! transaction is left in a consistent protocol state.

use super::actions::{changed_since_dialog, check_target, execute, open_trail};
use super::bulk::BULK_CONCURRENCY;
use super::event::{Action, Event, Run};
use crate::protocol::report::StepReport;
use crate::protocol::Protocol;
use futures::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Re-reads every marked transaction (a few at a time) for the bulk dialog;
/// nothing can run when the audit trail cannot be opened.
pub fn spawn_preview(
    proto: Protocol,
    action: Action,
    ids: Vec<String>,
    events: UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let items = match open_trail(&proto).await {
            Err(e) => Err(e),
            Ok(_) => Ok(futures::stream::iter(ids)
                .map(|id| {
                    let proto = proto.clone();
                    async move {
                        let checked = check_target(&proto, action, &id).await;
                        (id, checked)
                    }
                })
                .buffered(BULK_CONCURRENCY)
                .collect::<Vec<_>>()
                .await),
        };
        let _ = events.send(Event::BulkPreview { action, items });
    });
}

/// Runs the confirmed items, [`BULK_CONCURRENCY`] at a time, reporting each
/// step and each item's outcome; once `stop` is set no new item starts.
pub fn spawn_run(
    proto: Protocol,
    runs: Vec<Run>,
    stop: Arc<AtomicBool>,
    events: UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let Some(action) = runs.first().map(|r| r.action) else {
            return;
        };
        let step_events = events.clone();
        let proto = proto.with_observer(Arc::new(move |r: &StepReport| {
            let _ = step_events.send(Event::Step(r.clone()));
        }));
        let started: Vec<bool> = futures::stream::iter(runs)
            .map(|run| {
                let (proto, stop, events) = (proto.clone(), stop.clone(), events.clone());
                async move {
                    if stop.load(Ordering::SeqCst) {
                        return false;
                    }
                    let (summary, ok) = match changed_since_dialog(&proto, &run).await {
                        Some(why) => (why, false),
                        None => execute(&proto, &run, true).await,
                    };
                    let _ = events.send(Event::BulkItem {
                        action: run.action,
                        id: run.target,
                        summary,
                        ok,
                    });
                    true
                }
            })
            .buffer_unordered(BULK_CONCURRENCY)
            .collect()
            .await;
        let not_started = started.iter().filter(|s| !**s).count();
        let _ = events.send(Event::BulkDone {
            action,
            not_started,
        });
    });
}
