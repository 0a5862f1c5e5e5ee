//! The one task module: every read, plan and run the dashboard starts, as
//! tasks spawned off the UI loop (after gitui's asyncgit), each reporting
//! back on the one event channel. [`Tasks::start`] turns the
//! [`IoRequest`]s `update` returns into tasks; nothing here changes the
//! state, and the UI never awaits any of it.
//!
//! - Dialogs: re-read a transaction, a lock, the audit or a reversal and
//!   ask the protocol what an unforced run would meet; preview the one bulk
//!   act on the marked transactions of a bulk dialog.
//! - Runs: a confirmed act through [`crate::protocol::intervene`] (which
//!   records it, as for the command line), each step reported as it ends.
//!   A rollback or recovery of the marked set is ONE act with one audit
//!   record, as `rollback --ids-from` / `recover --ids-from` are
//!   (recoveries in batches); a stop keeps new items from starting while
//!   started ones run their procedure to the end.
//! - Reads: a transaction by id, its audit records, the audit, the export.
//!
//! Safety: the recovery window and lock staleness are the protocol's; an
//! action runs forced only when the operator pressed the dialog's force key,
//! and a confirmed run first re-reads its target and stops if it is no
//! longer what the dialog showed.

use super::event::{
    ActionOutcome, BulkReread, Event, Expected, IoRequest, Marked, NoPlan, OnMarks, Run,
    BULK_CONCURRENCY,
};
use super::job_tasks::{run_reporting, RunEnded};
use super::poller::PollControl;
use crate::error::Error;
use crate::protocol::intervene::{
    self, Act, AnyAct, AnyPlan, Choices, Intervention, LeftOut, LocksOfActPlan, LocksOfPlan,
    Planned, Previewed, ReleaseLocksOf, Stop, Subject,
};
use crate::protocol::jobs::Pace;
use crate::protocol::report::StepReport;
use crate::protocol::trail::receipts::Verification;
use crate::protocol::trail::{ActOutcome, Interface, Trail};
use crate::protocol::Protocol;
use futures::StreamExt;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// What the tasks need: the protocol, the event channel, the poller's
/// control channel and the stop of the bulk run in progress.
pub struct Tasks {
    proto: Protocol,
    events: UnboundedSender<Event>,
    poll: UnboundedSender<PollControl>,
    expect_total: Option<i64>,
    bulk_stop: Option<Arc<Stop>>,
    bulk_pace: Option<Arc<Pace>>,
}

impl Tasks {
    /// Tasks on `proto` reporting to `events`, steering the poller
    /// through `poll`; the audit expects `expect_total` when given.
    pub fn new(
        proto: Protocol,
        events: UnboundedSender<Event>,
        poll: UnboundedSender<PollControl>,
        expect_total: Option<i64>,
    ) -> Tasks {
        Tasks {
            proto,
            events,
            poll,
            expect_total,
            bulk_stop: None,
            bulk_pace: None,
        }
    }

    /// Starts what `io` asks for.
    pub fn start(&mut self, io: IoRequest) {
        let (proto, tx) = (self.proto.clone(), self.events.clone());
        match io {
            IoRequest::PollNow => self.steer(PollControl::Now),
            IoRequest::SetPaused(p) => self.steer(PollControl::Pause(p)),
            IoRequest::SetInterval(d) => self.steer(PollControl::Interval(d)),
            IoRequest::SetListing(table) => self.steer(PollControl::Listing(table)),
            IoRequest::LoadPreview(act) => spawn_preview(proto, act, tx),
            IoRequest::LookUp(id) => spawn_lookup(proto, id, tx),
            IoRequest::Run(run) => spawn_action(proto, run, tx),
            IoRequest::Audit => spawn_audit(proto, self.expect_total, tx),
            IoRequest::LoadGroups => {
                tokio::spawn(async move {
                    let groups = proto.stuck_groups().await;
                    let _ = tx.send(Event::Grouped(groups.map(Box::new)));
                });
            }
            IoRequest::LoadHistory(id) => spawn_history(proto, id, tx),
            IoRequest::LoadBulkPreview(on, ids) => spawn_bulk_preview(proto, on, ids, tx),
            IoRequest::RunBulk(on, runs) => {
                let stop = Arc::new(Stop::default());
                self.bulk_stop = Some(stop.clone());
                // No rate cap from the dashboard, but the same back-off as
                // the CLI's jobs when the cluster throttles, and P's pause.
                let pace = Arc::new(Pace::new(None));
                self.bulk_pace = Some(pace.clone());
                spawn_bulk_run(proto, on, runs, stop, pace, tx)
            }
            IoRequest::StopBulk => {
                if let Some(stop) = &self.bulk_stop {
                    stop.stop("the operator (dashboard)");
                }
                // The writes under way finish.
                if let Some(pace) = &self.bulk_pace {
                    pace.pause(false);
                }
            }
            IoRequest::LoadJobs => super::job_tasks::spawn_jobs(proto, tx),
            IoRequest::LoadTimeline(window) => {
                tokio::spawn(async move {
                    let window =
                        chrono::Duration::from_std(window).unwrap_or(chrono::Duration::MAX);
                    let since = proto.now().await - window;
                    let entries = crate::protocol::trail::timeline(&proto, since).await;
                    let _ = tx.send(Event::Timeline { since, entries });
                });
            }
            IoRequest::ResumeJob {
                run,
                procedure,
                confirmed,
            } => {
                let stop = Arc::new(Stop::default());
                self.bulk_stop = Some(stop.clone());
                let pace = Arc::new(Pace::new(None));
                self.bulk_pace = Some(pace.clone());
                let job = super::job_tasks::Job {
                    run,
                    procedure,
                    confirmed,
                };
                super::job_tasks::spawn_resume(proto, job, stop, pace, tx)
            }
            IoRequest::PauseBulk(on) => {
                if let Some(pace) = &self.bulk_pace {
                    pace.pause(on);
                }
            }
            IoRequest::Export(table) => super::export::spawn(proto, table, tx),
            IoRequest::SavePlan(plan) => {
                tokio::spawn(async move {
                    let _ = tx.send(Event::PlanSaved(save_plan(&proto, &plan.0).await));
                });
            }
        }
    }

    fn steer(&self, c: PollControl) {
        let _ = self.poll.send(c);
    }
}

/// Writes the plan file of a bulk dialog's `plan`
/// ([`crate::protocol::intervene::plan_file`], what `--plan-out` writes)
/// under the state directory's `plans/`; the path and the plan's hash.
async fn save_plan(
    proto: &Protocol,
    plan: &crate::protocol::intervene::SelectionPlan,
) -> Result<(String, String), String> {
    let file = crate::protocol::intervene::plan_file(proto, plan)
        .await
        .map_err(|e| e.to_string())?;
    let name = file
        .body
        .planned_at
        .format("plan-%Y%m%dT%H%M%SZ.json")
        .to_string();
    let path = crate::local_files::state_dir_from_env()
        .ok_or("no state directory (set HOME)")?
        .join("plans");
    crate::local_files::private_dir(&path).map_err(|e| e.to_string())?;
    let path = path.join(name);
    std::fs::write(&path, file.to_text()).map_err(|e| e.to_string())?;
    Ok((path.display().to_string(), file.hash))
}

/// Previews the dialog's act: the protocol's plan with the documents it
/// was judged on ([`Intervention::preview`]), the same act `y` runs.
pub fn spawn_preview(proto: Protocol, act: AnyAct, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let plan = preview(&proto, &act).await;
        let _ = events.send(Event::Preview { act, plan });
    });
}

async fn preview(proto: &Protocol, act: &AnyAct) -> Result<AnyPlan, NoPlan> {
    open_trail(proto).await?;
    preview_act(proto, act).await
}

/// The preview of `act` (the audit trail already checked); a subject it
/// could not read is an error, in the refusal's words.
async fn preview_act(proto: &Protocol, act: &AnyAct) -> Result<AnyPlan, NoPlan> {
    let i = Intervention::new(act.clone(), Choices::new(Interface::Dashboard, None));
    let plan = unrefused(i.preview(proto).await.map_err(NoPlan::Failed)?)?;
    match plan.judged() {
        Some(_) => Ok(plan),
        None => Err(unjudged(&plan, act)),
    }
}

/// Why a plan judged on nothing cannot be confirmed: its refusal (the
/// subject does not exist), else its subject could not be read.
fn unjudged(plan: &impl Planned, act: &impl Act) -> NoPlan {
    match plan.refusal() {
        Some(r) => NoPlan::Refused(r),
        None => NoPlan::Unreadable(act.subject().to_string()),
    }
}

/// The release of transaction `id`'s locks previewed on its documents
/// (the audit trail already checked), as a marked set's item runs it.
async fn preview_locks_of(proto: &Protocol, id: String) -> Result<LocksOfPlan, NoPlan> {
    let act = ReleaseLocksOf {
        txn: id,
        allow_partial: true,
    };
    let i = Intervention::new(act, Choices::new(Interface::Dashboard, None));
    match unrefused(i.preview(proto).await.map_err(NoPlan::Failed)?)? {
        LocksOfActPlan::Judged(plan) => Ok(plan),
        plan => Err(unjudged(&plan, &i.act)),
    }
}

/// The previewed plan, unless the run would be refused before its first
/// write whatever the documents ([`Previewed::writes_refused`]): then that
/// refusal, in the run's words, and nothing to confirm.
fn unrefused<P>(preview: Previewed<P>) -> Result<P, NoPlan> {
    match preview.writes_refused {
        Some(e) => Err(NoPlan::Failed(e)),
        None => Ok(preview.plan),
    }
}

/// Runs the audit (read-only) for the audit pane, measuring its cost (it
/// sets the pace of the next one).
pub fn spawn_audit(proto: Protocol, expect_total: Option<i64>, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let (report, cost) = proto.audit_measured(expect_total).await;
        let report = report.map(Box::new);
        let _ = events.send(Event::Audited(report, cost));
    });
}

/// Reads one transaction by id (any state) for the detail pane.
pub fn spawn_lookup(proto: Protocol, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let detail = proto.transaction_detail(&id).await.map(|d| d.map(Box::new));
        let _ = events.send(Event::LookedUp { id, detail });
    });
}

/// Reads the audit trail's records of transaction `id` (detail pane).
pub fn spawn_history(proto: Protocol, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let records = crate::protocol::trail::history(&proto, &id).await;
        let _ = events.send(Event::History { id, records });
    });
}

/// Runs a confirmed action.
pub fn spawn_action(proto: Protocol, run: Run, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let step_events = events.clone();
        let proto = proto.with_observer(Arc::new(move |r: &StepReport| {
            let _ = step_events.send(Event::Step(r.clone()));
        }));
        let (summary, ok, receipts, record) = match changed_since_dialog(&proto, &run).await {
            Some(why) => (why, false, None, None),
            None => execute(&proto, &run).await,
        };
        let _ = events.send(Event::ActionDone(ActionOutcome {
            act: run.intervention.act,
            summary,
            ok,
            receipts,
            record,
        }));
    });
}

/// Re-reads the act's subject (a transaction, a lock); says what changed
/// if it is no longer what the dialog showed (then nothing is done).
async fn changed_since_dialog(proto: &Protocol, run: &Run) -> Option<String> {
    let now = match run.subject() {
        Subject::Lock(resource) => match proto.lock_view(&resource).await {
            Ok(Some(v)) => Expected {
                state: v.owner_state,
                modified: v.info.created_at,
            },
            Ok(None) => return None, // released meanwhile: the release says "not held"
            Err(e) => return Some(format!("not run: could not re-read the lock: {e}")),
        },
        Subject::Transaction(id) => match proto.read_transaction(&id).await {
            Ok(Some((t, _))) => Expected {
                state: t.state,
                modified: t.modification_time,
            },
            Ok(None) => return Some("not run: the transaction no longer exists".into()),
            Err(e) => return Some(format!("not run: could not re-read it: {e}")),
        },
        // The audit's repair re-reads and re-decides every entry itself.
        Subject::Account(_) | Subject::Transfer { .. } | Subject::Selection => return None,
    };
    (now != run.expected).then(|| {
        let state = |s: &Option<crate::protocol::TxnState>| {
            s.as_ref()
                .map(ToString::to_string)
                .unwrap_or_else(|| "?".into())
        };
        format!(
            "not run: changed since the dialog opened (was {}, now {}); look again",
            state(&run.expected.state),
            state(&now.state)
        )
    })
}

/// Checks that the audit trail every act is recorded in can be opened;
/// says why not (nothing will run) when its index is missing or cannot be
/// checked.
async fn open_trail(proto: &Protocol) -> Result<(), NoPlan> {
    match Trail::open(proto).await {
        Ok(_) => Ok(()),
        Err(Error::IndexMissing(index)) => Err(NoPlan::TrailMissing(index)),
        Err(e) => Err(NoPlan::TrailUnusable(e)),
    }
}

/// Runs a confirmed act through [`Intervention::run_any`] (which records it):
/// its sentence for the log (with the audit record), whether it did what
/// was asked and was recorded, and its receipts verified (if it ran).
async fn execute(
    proto: &Protocol,
    run: &Run,
) -> (String, bool, Option<Verification>, Option<String>) {
    match run.intervention.clone().run_any(proto).await {
        Ok(done) => {
            let ok = done.ok() && done.record_error.is_none();
            let record = Some(done.record.0.clone());
            (done.to_string(), ok, Some(done.receipts), record)
        }
        Err(n) => (format!("not run: {n}"), false, None, None),
    }
}

/// Previews the bulk dialog's act on the marked rows `ids`: a rollback or
/// recovery is the one bulk act ([`OnMarks::bulk_intervention`]) previewed
/// by the protocol, as `--dry-run` prints it; a release of their locks is
/// each one's own act, their previews gathered as the items of one plan.
/// Nothing can run when the audit trail cannot be opened.
pub fn spawn_bulk_preview(
    proto: Protocol,
    on: OnMarks,
    ids: Vec<String>,
    events: UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let plan = bulk_preview(&proto, on, ids).await;
        let _ = events.send(Event::BulkPreview { on, plan });
    });
}

/// The plan the bulk dialog shows for `on` the marked rows `ids`
/// ([`spawn_bulk_preview`]).
pub async fn bulk_preview(proto: &Protocol, on: OnMarks, ids: Vec<String>) -> BulkReread {
    open_trail(proto).await?;
    let choices = Choices::new(Interface::Dashboard, None);
    if let Some(act) = on.bulk_intervention(ids.clone(), choices) {
        let plan = unrefused(act.preview(proto).await.map_err(NoPlan::Failed)?)?;
        return Ok(Marked::Bulk(plan));
    }
    let previews: Vec<_> = futures::stream::iter(ids)
        .map(|id| async move { (id.clone(), preview_locks_of(proto, id).await) })
        .buffered(BULK_CONCURRENCY)
        .collect()
        .await;
    let mut left_out = Vec::new();
    let mut items = Vec::new();
    for (txn, plan) in previews {
        match plan {
            Ok(p) => items.push(p),
            Err(e) => left_out.push(LeftOut::refused(txn, format!("unreadable: {e}"))),
        }
    }
    Ok(Marked::LocksOf { items, left_out })
}

/// Runs the confirmed items, reporting each step and each item's outcome;
/// once `stop` is set no new item starts, and while `pace` is paused no
/// write goes (nor, for lock releases, a new item). A rollback or recovery of the
/// marked set is ONE act with one audit record, run as the command line
/// runs `--ids-from` (recoveries in batches); a release of the marked
/// transactions' locks releases each one's as its own act.
pub fn spawn_bulk_run(
    proto: Protocol,
    on: OnMarks,
    runs: Vec<Run>,
    stop: Arc<Stop>,
    pace: Arc<Pace>,
    events: UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let Some(first) = runs.first().cloned() else {
            return;
        };
        let choices = first.intervention.choices;
        let step_events = events.clone();
        let proto = proto
            .with_pace(pace.clone())
            .with_observer(Arc::new(move |r: &StepReport| {
                let _ = step_events.send(Event::Step(r.clone()));
            }));
        let ids = runs.iter().map(|r| r.subject().to_string()).collect();
        let ended = match on.bulk_intervention(ids, choices) {
            Some(act) => one_act(&proto, act, on, &stop, &events).await,
            None => each_its_own(&proto, runs, &stop, &pace, &events).await,
        };
        let _ = events.send(Event::BulkDone {
            on,
            not_started: ended.not_started,
            summary: ended.summary,
            record: ended.record,
            left: ended.left,
            receipts: ended.receipts,
        });
    });
}

/// The rollback or recovery of the marks as one recorded act
/// ([`OnMarks::bulk_intervention`]).
async fn one_act(
    proto: &Protocol,
    act: Intervention<intervene::BulkAct>,
    on: OnMarks,
    stop: &Stop,
    events: &UnboundedSender<Event>,
) -> RunEnded {
    let n = act.act.selection.ids.as_ref().map_or(0, Vec::len);
    // The run's pace (set on `proto` by `spawn_bulk_run`) backs off when
    // the cluster throttles, as the CLI's jobs do, and pauses on `P`.
    let started = match intervene::start(proto, act).await {
        Ok(s) => s,
        Err(n_) => return RunEnded::not_run(n, format!("not run: {n_}")),
    };
    let run = started.record().to_string();
    let _ = events.send(Event::BulkStarted {
        left_file: crate::local_files::left_ids_path(&run),
        run,
    });
    run_reporting(proto, started, on, stop, events).await
}

/// Each item as its own act, [`BULK_CONCURRENCY`] at a time (each its
/// own record: no ids file; a stop leaves the items not started as they
/// were).
async fn each_its_own(
    proto: &Protocol,
    runs: Vec<Run>,
    stop: &Stop,
    pace: &Pace,
    events: &UnboundedSender<Event>,
) -> RunEnded {
    let started: Vec<bool> = futures::stream::iter(runs)
        .map(|run| async move {
            // A paused run starts no item (its releases are not paced).
            if !pace.unpaused(Some(stop.flag())).await || stop.is_stopped() {
                return false;
            }
            let (summary, outcome) = match changed_since_dialog(proto, &run).await {
                Some(why) => (why, ActOutcome::Refused),
                None => match run.intervention.clone().run_any(proto).await {
                    Ok(done) => (done.to_string(), item_outcome(&done)),
                    Err(n) => (format!("not run: {n}"), ActOutcome::Refused),
                },
            };
            let _ = events.send(Event::BulkItem {
                act: run.intervention.act,
                summary,
                outcome,
            });
            true
        })
        .buffer_unordered(BULK_CONCURRENCY)
        .collect()
        .await;
    RunEnded::not_run(started.iter().filter(|s| !**s).count(), String::new())
}

/// How one item's own act ended, for the run's counts: as recorded, but
/// an act that did not do what was asked (or whose record could not be
/// completed) is not counted completed.
fn item_outcome(done: &intervene::Done) -> ActOutcome {
    let ok = done.ok() && done.record_error.is_none();
    match done.outcome {
        ActOutcome::Completed | ActOutcome::NothingToDo if !ok => ActOutcome::Failed,
        o => o,
    }
}
