//! Bulk actions, the I/O side: re-reading the marked transactions for the
//! bulk dialog, and running the confirmed items. A rollback or recovery of
//! the marked set is one act with ONE audit record, as `rollback
//! --ids-from` / `recover --ids-from` are (recoveries in batches). A stop
//! keeps new items from starting; an item already started runs its
//! procedure to the end, so every transaction is left in a consistent
//! protocol state.

use super::actions::{changed_since_dialog, check_target, execute, open_trail};
use super::bulk::BULK_CONCURRENCY;
use super::event::{Action, Event, Run};
use crate::protocol::batch::BatchOptions;
use crate::protocol::intervene::{self, Act, BulkAct, Choices, Intervention, Runner, Stop, Value};
use crate::protocol::report::StepReport;
use crate::protocol::trail::bulk::Selection;
use crate::protocol::trail::Interface;
use crate::protocol::{Procedure, Protocol};
use futures::StreamExt;
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

/// Runs the confirmed items, reporting each step and each item's outcome;
/// once `stop` is set no new item starts. A rollback or recovery of the
/// marked set is ONE act with one audit record, run as the command line
/// runs `--ids-from` (recoveries in batches); a release of the marked
/// transactions' locks releases each one's as its own act.
pub fn spawn_run(proto: Protocol, runs: Vec<Run>, stop: Arc<Stop>, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let Some(first) = runs.first().cloned() else {
            return;
        };
        let step_events = events.clone();
        let proto = proto.with_observer(Arc::new(move |r: &StepReport| {
            let _ = step_events.send(Event::Step(r.clone()));
        }));
        let (not_started, summary) = match first.action.procedure() {
            Some(procedure) => {
                let ids = runs.into_iter().map(|r| r.target).collect();
                one_act(&proto, first.clone(), procedure, ids, &stop, &events).await
            }
            None => each_its_own(&proto, runs, &stop, &events).await,
        };
        let _ = events.send(Event::BulkDone {
            action: first.action,
            not_started,
            summary,
        });
    });
}

/// The rollback or recovery of `ids` as one recorded act; returns how many
/// never started and the act's sentence.
async fn one_act(
    proto: &Protocol,
    first: Run,
    procedure: Procedure,
    ids: Vec<String>,
    stop: &Stop,
    events: &UnboundedSender<Event>,
) -> (usize, String) {
    let n = ids.len();
    let runner = match procedure {
        Procedure::Rollback => Runner::OneByOne(BULK_CONCURRENCY),
        Procedure::Recover => Runner::Batched(BatchOptions::default()),
    };
    let act = BulkAct {
        procedure,
        selection: Selection {
            ids: Some(ids),
            ..Selection::default()
        },
        ids_source: Some(MARKS.into()),
        allow_partial: false,
        runner,
    };
    let choices = Choices::new(Interface::Dashboard, first.reason.clone());
    let started = match intervene::start(proto, Intervention::new(Act::Bulk(act), choices)).await {
        Ok(s) => s,
        Err(n_) => return (n, format!("not run: {n_}")),
    };
    let done = started
        .run_bulk(proto, stop, |r| {
            let _ = events.send(Event::BulkItem {
                action: first.action,
                id: r.txn.clone(),
                summary: r.verdict.to_string(),
                ok: r.verdict.is_done(),
            });
        })
        .await;
    let not_started = match &done.value {
        Value::Bulk(b) => b.not_started.len(),
        _ => 0,
    };
    (not_started, done.to_string())
}

/// What the record names as the source of a marked set's ids.
pub const MARKS: &str = "the dashboard's marks";

/// Each item as its own act, [`BULK_CONCURRENCY`] at a time; returns how
/// many never started.
async fn each_its_own(
    proto: &Protocol,
    runs: Vec<Run>,
    stop: &Stop,
    events: &UnboundedSender<Event>,
) -> (usize, String) {
    let started: Vec<bool> = futures::stream::iter(runs)
        .map(|run| async move {
            if stop.is_stopped() {
                return false;
            }
            let (summary, ok) = match changed_since_dialog(proto, &run).await {
                Some(why) => (why, false),
                None => execute(proto, &run).await,
            };
            let _ = events.send(Event::BulkItem {
                action: run.action,
                id: run.target,
                summary,
                ok,
            });
            true
        })
        .buffer_unordered(BULK_CONCURRENCY)
        .collect()
        .await;
    (started.iter().filter(|s| !**s).count(), String::new())
}
