//! Planning and running a rollback or recovery over a selection, as ONE act with one audit
//! record (the run record plus its bounded parts), whichever front end
//! starts it: the selection resolved through the read side, each
//! transaction run through the same procedure as one act (rollbacks a few
//! at a time, recoveries in batches), a [`Stop`] that keeps new ones from
//! starting while the running ones finish, and for `recover --all-stuck`
//! alone the sweep of the locks stale on evidence.

use super::bulk::{BulkAct, Runner, SelectionPlan, Stop};
use super::bulk_done::BulkDone;
use super::done::receipts_of;
use super::selection::{BulkOptions, BulkRun};
use super::{Done, Report, Started};
use crate::error::{Error, Result};
use crate::protocol::jobs::{keep_alive, Checkpoints, Ended, MIN_TRANSACTIONS, SILENT_PERIODS};
use crate::protocol::trail::pages::EndedAs;
use crate::protocol::trail::{ActOutcome, TrailStep};
use crate::protocol::{ProcedureRefusal, ProcedureReport, Protocol, RunLimits, Verdict};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashSet};
use tokio::sync::{mpsc, oneshot};

impl BulkAct {
    /// Resolves the selection: each transaction with its planned steps.
    pub(super) async fn selection_plan(&self, p: &Protocol) -> Result<SelectionPlan> {
        let selected = p.select(&self.selection, self.allow_partial).await?;
        Ok(SelectionPlan {
            procedure: self.procedure,
            targets: self.selection.describe(self.ids_source.as_deref()),
            selected,
            sweeps: self.sweeps(),
            items: Vec::new(),
            sweep: Vec::new(),
            locks_absent: false,
            versions: BTreeMap::new(),
        })
    }
}

impl Started<BulkAct> {
    /// Runs a bulk act on `p`, calling `on_done` as each transaction ends;
    /// once `stop` is set no new transaction (or batch) starts, and a
    /// running batch stops before its next write. The steps of the
    /// transactions that ended are written into the record's parts as the
    /// run goes (checkpoints: `protocol::jobs`), so a run that dies can be
    /// resumed ([`super::resume`]); completes the one record with the rest.
    pub async fn run_bulk<F>(self, p: &Protocol, stop: &Stop, on_done: F) -> Done<BulkDone>
    where
        F: FnMut(&ProcedureReport),
    {
        let b = self.intervention().act.clone();
        let selected = self.plan().selected.clone();
        let ids = selected.ids();
        // On a job's way back, its own last writes are not refused as recent.
        let with_own;
        let p = match &self.own {
            Some(own) => {
                with_own = p.clone().with_own_writes(own.clone());
                &with_own
            }
            None => p,
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Ended>();
        // The plan's ids as a set, once: the checkpoints and the completion
        // store those they list unindexed.
        let listed = self.listed();
        let checkpoints = Checkpoints::new(
            self.trail.clone(),
            self.record().clone(),
            self.parts,
            listed.clone(),
        );
        if ids.len() < MIN_TRANSACTIONS {
            rx.close();
        }
        // The heartbeat goes on until the run ends (its sender dropped).
        let (running_tx, running_rx) = oneshot::channel::<()>();
        let alive = keep_alive(
            self.trail.clone(),
            self.record().clone(),
            self.resumed.is_some(),
            running_rx,
        );
        let running = async {
            let (tx, mut on_done, _running) = (tx, on_done, running_tx);
            let each = |r: &ProcedureReport| {
                // One refused as recent has not ended: time lifts the
                // refusal, and a resume of the job reads it again.
                if recent(r).is_none() {
                    let how = EndedAs::from(ActOutcome::from(&r.verdict));
                    let steps = r.steps.iter().map(TrailStep::from).collect();
                    let _ = tx.send((r.txn.clone(), how, steps));
                }
                on_done(r);
            };
            run_selected(p, &b, &ids, stop, each).await
        };
        let (ran, checkpoints, ()) = tokio::join!(running, checkpoints.keep(rx), alive);
        let mut done = BulkDone {
            left_out: selected.left_out,
            // A plan's apply runs exactly its ids, and the sweep of the act
            // it planned (`recover --all-stuck`).
            sweep: b.sweeps()
                || self
                    .intervention()
                    .choices
                    .plan
                    .as_ref()
                    .is_some_and(|f| f.sweep),
            stopped_by: stop.by(),
            ..BulkDone::default()
        };
        ended(&mut done, ran);
        // The sweep is a new start: not after a stop or a failure, nor
        // after a run the cluster refused before its first write (the act
        // is refused whole: nothing of it is written).
        let refused = done.reports.iter().any(refused_before_writing);
        if done.sweep && done.stopped_by.is_none() && done.failed.is_none() && !refused {
            match p.release_abandoned_locks_allowing(b.allow_partial).await {
                Ok(s) => {
                    done.locks_partial = s.coverage.describe();
                    done.swept = s.swept;
                }
                Err(e) => done.failed = Some(e),
            }
        }
        if let Some(from) = self.resumable_from(p, &done) {
            return self.keep_resumable(p, checkpoints, done, from).await;
        }
        let mut ending = done.ending(p, self.plan());
        let receipts = receipts_of(self.record(), &ending.steps);
        ending.steps = unsaved(&done, ending.steps, &checkpoints.saved());
        ending.summary = self.resumed_summary(ending.summary);
        if let (Some(counts), Some(r)) = (&mut ending.counts, &self.resumed) {
            counts.add(&r.earlier);
        }
        self.finish_after(checkpoints.written, done, ending, receipts, &listed)
            .await
    }

    /// When a resume some of whose transactions were refused as recent
    /// can run again: once the recovery window has ended for each (the
    /// cluster's time) and the job, its heartbeat silent, is presumed dead.
    /// `None` for a run that is no resume, failed, or refused none so.
    fn resumable_from(&self, p: &Protocol, done: &BulkDone) -> Option<DateTime<Utc>> {
        if self.resumed.is_none() || done.failed.is_some() {
            return None;
        }
        let now = p.cluster().now();
        let window_ends = done
            .reports
            .iter()
            .filter_map(recent)
            .map(|(age, window)| {
                now + (chrono::Duration::from_std(window).unwrap_or_default() - age)
            })
            .max()?;
        let silent = chrono::Duration::from_std(self.trail.heartbeat() * (SILENT_PERIODS + 1))
            .unwrap_or_default();
        let from = window_ends.max(now + silent);
        // To the next whole second: a time an operator can wait for.
        let whole = from.timestamp() + i64::from(from.timestamp_subsec_nanos() > 0);
        Some(DateTime::from_timestamp(whole, 0).unwrap_or(from))
    }

    /// Leaves the job unfinished on purpose, resumable from `from`: what
    /// ended is written down as checkpoints (the transactions refused as
    /// recent are not: the next resume reads them again), and the record
    /// stays `running`, its heartbeat falling silent.
    async fn keep_resumable(
        self,
        p: &Protocol,
        checkpoints: Checkpoints,
        mut done: BulkDone,
        from: DateTime<Utc>,
    ) -> Done<BulkDone> {
        let saved = checkpoints.saved();
        let rest: Vec<Ended> = done
            .reports
            .iter()
            .filter(|r| recent(r).is_none() && !saved.contains(&r.txn))
            .map(|r| {
                let how = EndedAs::from(ActOutcome::from(&r.verdict));
                (
                    r.txn.clone(),
                    how,
                    r.steps.iter().map(TrailStep::from).collect(),
                )
            })
            .collect();
        let record_error = checkpoints.close(rest).await.err();
        done.resumable_from = Some(from);
        let ending = done.ending(p, self.plan());
        Done {
            action: self.intervention().action(),
            outcome: ending.outcome,
            receipts: receipts_of(self.record(), &ending.steps),
            summary: self.resumed_summary(ending.summary),
            record: self.record().clone(),
            record_error,
            value: done,
        }
    }

    /// A resumed run's summary says so, and how the resume was forced.
    fn resumed_summary(&self, summary: String) -> String {
        let Some(r) = &self.resumed else {
            return summary;
        };
        let forced = r.forced.as_ref().map_or(String::new(), |life| {
            let why = self.intervention().choices.reason_text().unwrap_or("");
            format!(" (forced while the job was {life}: {why})")
        });
        format!(
            "resumed{forced} after {} transaction(s) had ended: {summary}",
            r.ended
        )
    }
}

/// How long ago a transaction refused as recent was modified, and the
/// window it was judged by; `None` for any other verdict.
fn recent(r: &ProcedureReport) -> Option<(chrono::Duration, std::time::Duration)> {
    match &r.verdict {
        Verdict::Refused(ProcedureRefusal::Recent { age, window }) => Some((*age, *window)),
        _ => None,
    }
}

/// What the run itself left in `done`: its reports in id order and the
/// ids it never started, or its failure.
fn ended(done: &mut BulkDone, ran: Result<BulkRun>) {
    match ran {
        Ok(BulkRun {
            mut reports,
            not_started,
        }) => {
            reports.sort_by(|a, b| a.txn.cmp(&b.txn));
            done.reports = reports;
            done.not_started = not_started;
        }
        Err(e) => done.failed = Some(e),
    }
}

/// Whether the cluster refused `r`'s run before its first write: the
/// product refuses the act's writes to these credentials, an index it
/// writes is blocked, or the mappings or source cannot take them (the
/// pre-flights, `preflight.rs` and `read::writes`).
fn refused_before_writing(r: &ProcedureReport) -> bool {
    matches!(
        &r.verdict,
        Verdict::Failed(
            Error::UpdateRefused { .. }
                | Error::Blocked { .. }
                | Error::Auth { .. }
                | Error::WritesRefused(_)
        )
    ) && !r.wrote()
}

/// Runs `ids` as `b` says, calling `each` as each transaction ends.
async fn run_selected<F>(
    p: &Protocol,
    b: &BulkAct,
    ids: &[String],
    stop: &Stop,
    each: F,
) -> Result<BulkRun>
where
    F: FnMut(&ProcedureReport),
{
    match b.runner {
        Runner::OneByOne(concurrency) => {
            let opts = BulkOptions {
                concurrency,
                limits: RunLimits::default(),
            };
            Ok(p.run_many(ids, b.procedure, opts, &stop.flag, each).await)
        }
        Runner::Batched(opts) => p.recover_many_batched(ids, opts, &stop.flag, each).await,
    }
}

/// The record's steps less those a checkpoint already wrote: `steps` are
/// every report's, in report order, then the sweep's (`BulkDone::steps`).
fn unsaved(done: &BulkDone, steps: Vec<TrailStep>, saved: &HashSet<String>) -> Vec<TrailStep> {
    let mut all = steps.into_iter();
    let mut rest = Vec::new();
    for r in &done.reports {
        let these = all.by_ref().take(r.steps.len());
        if saved.contains(&r.txn) {
            these.for_each(drop);
        } else {
            rest.extend(these);
        }
    }
    rest.extend(all);
    rest
}
