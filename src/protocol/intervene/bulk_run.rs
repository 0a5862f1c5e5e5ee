//! Planning and running a rollback or recovery over a selection, as ONE act with one audit
//! record (the run record plus its bounded parts), whichever front end
//! starts it: the selection resolved through the read side, each
//! transaction run through the same procedure as one act (rollbacks a few
//! at a time, recoveries in batches), a [`Stop`] that keeps new ones from
//! starting while the running ones finish, and for `recover --all-stuck`
//! alone the sweep of the locks stale on evidence.

use super::bulk::{BulkAct, Runner, Stop};
use super::bulk_done::BulkDone;
use super::plan::{Plan, PlanStep};
use super::selection::{BulkOptions, BulkRun, Selected};
use super::{Done, Started, Value};
use crate::error::Result;
use crate::protocol::{ProcedureReport, Protocol, RunLimits};

impl BulkAct {
    /// Resolves the selection: each transaction with its planned steps.
    pub(super) async fn plan(&self, p: &Protocol) -> Result<Plan> {
        let selected = p.select(&self.selection, self.allow_partial).await?;
        let mut steps: Vec<PlanStep> = selected
            .transactions
            .iter()
            .map(|t| PlanStep::Item {
                txn: t.id.clone(),
                steps: t
                    .state
                    .as_ref()
                    .and_then(|s| crate::protocol::steps::plan(self.procedure, s).ok())
                    .unwrap_or_default(),
            })
            .collect();
        if self.sweeps() {
            steps.push(PlanStep::Sweep);
        }
        Ok(Plan {
            transactions: selected.ids(),
            targets: self.selection.describe(self.ids_source.as_deref()),
            steps,
            selected: Some(selected),
            ..Plan::default()
        })
    }
}

impl Started {
    /// Runs a bulk act on `p`, calling `on_done` as each transaction ends;
    /// once `stop` is set no new transaction (or batch) starts. Completes
    /// the one record with every transaction's steps.
    pub async fn run_bulk<F>(self, p: &Protocol, stop: &Stop, on_done: F) -> Done
    where
        F: FnMut(&ProcedureReport),
    {
        let b = match &self.intervention().act {
            super::Act::Bulk(b) => b.clone(),
            _ => return self.run_single(p).await,
        };
        let selected = self.plan().selected.clone().unwrap_or_else(|| Selected {
            transactions: Vec::new(),
            left_out: Vec::new(),
        });
        let ids = selected.ids();
        let ran = match b.runner {
            Runner::OneByOne(concurrency) => {
                let opts = BulkOptions {
                    concurrency,
                    limits: RunLimits::default(),
                };
                Ok(p.run_many(&ids, b.procedure, opts, &stop.flag, on_done)
                    .await)
            }
            Runner::Batched(opts) => {
                p.recover_many_batched(&ids, opts, &stop.flag, on_done)
                    .await
            }
        };
        let mut done = BulkDone {
            left_out: selected.left_out,
            sweep: b.sweeps(),
            stopped_by: stop.by(),
            ..BulkDone::default()
        };
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
        // The sweep is a new start: not after a stop or a failure.
        if done.sweep && done.stopped_by.is_none() && done.failed.is_none() {
            match p.release_abandoned_locks_allowing(b.allow_partial).await {
                Ok(s) => {
                    done.locks_partial = s.coverage.describe();
                    done.swept = s.swept;
                }
                Err(e) => done.failed = Some(e),
            }
        }
        let value = Value::Bulk(done);
        let (outcome, summary, steps) = super::run::fold(p, self.plan(), &value);
        self.finish(value, outcome, summary, steps).await
    }
}
