//! Bulk interventions, the protocol side: which transactions a selection
//! (`--all-stuck`, `--state`, `--older-than`, `--ids-from`) names, read
//! through the one read side (so "stuck" means what it means everywhere),
//! and running a procedure over them a few at a time, each through the same
//! protocol procedure as one intervention, with a stop flag that keeps new
//! items from starting while the running ones finish (so every transaction
//! is left in a protocol state). Recording the bulk act is the
//! intervention's (`intervene::run`).

use crate::error::{Error, Result};
use crate::protocol::batch::BatchOptions;
use crate::protocol::read::ListScope;
use crate::protocol::time::human_age;
use crate::protocol::{Procedure, ProcedureReport, Protocol, RunLimits, Transaction};
use futures::stream::{self, StreamExt};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Which transactions a bulk action is about. The filters intersect
/// (`--all-stuck --state pending --older-than 1h`: stuck, pending and older
/// than an hour); `ids` is its own set, narrowed by the filters if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only stuck transactions ([`crate::protocol::read::rules`]).
    pub all_stuck: bool,
    /// Only these states (any when empty).
    pub states: Vec<String>,
    /// Only transactions last modified longer ago than this.
    pub older_than: Option<Duration>,
    /// Exactly these ids (in this order), unknown ones left out.
    pub ids: Option<Vec<String>>,
}

/// A transaction a selection named but that will not be acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The id as given.
    pub txn: String,
    /// Why, in words.
    pub why: String,
}

/// What a selection resolved to.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The transactions to act on, as read (oldest first for filters, in
    /// the given order for ids).
    pub transactions: Vec<Transaction>,
    /// Ids given that are not acted on (unknown, or not matching the filters).
    pub left_out: Vec<LeftOut>,
}

impl Selected {
    /// The ids to act on.
    pub fn ids(&self) -> Vec<String> {
        self.transactions.iter().map(|t| t.id.clone()).collect()
    }
}

impl Selection {
    /// Whether any filter (as opposed to only a list of ids) is given.
    pub fn has_filters(&self) -> bool {
        self.all_stuck || !self.states.is_empty() || self.older_than.is_some()
    }

    /// Whether it selects anything at all (else it is a usage error).
    pub fn is_empty(&self) -> bool {
        !self.has_filters() && self.ids.is_none()
    }

    /// The selection as the options that made it (the audit record's targets).
    pub fn describe(&self, ids_source: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        if self.all_stuck {
            out.push("--all-stuck".to_string());
        }
        if !self.states.is_empty() {
            out.push(format!("--state={}", self.states.join(",")));
        }
        if let Some(d) = self.older_than {
            out.push(format!("--older-than={}", human_age(d.as_secs() as i64)));
        }
        if let Some(ids) = &self.ids {
            let from = ids_source.unwrap_or("a list");
            out.push(format!("--ids-from={from} ({} ids)", ids.len()));
        }
        out
    }
}

/// How a bulk run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkOptions {
    /// Transactions run at once (at least 1).
    pub concurrency: usize,
    /// Limits of each run (tests: a worker that dies after some steps).
    pub limits: RunLimits,
}

/// What a bulk run did.
#[derive(Debug, Default)]
pub struct BulkRun {
    /// One report per transaction that ran, in the order they ended.
    pub reports: Vec<ProcedureReport>,
    /// The transactions not started because the run was stopped.
    pub not_started: Vec<String>,
}

impl Protocol {
    /// Resolves `sel` through the read side: the filters by one scan (a
    /// partial view refused unless `allow_partial`), the ids by one
    /// realtime multi-get each thousand (unknown ones left out, as are ids
    /// the filters do not match).
    pub async fn select(&self, sel: &Selection, allow_partial: bool) -> Result<Selected> {
        if sel.is_empty() {
            return Err(Error::Invalid(
                "nothing selected: give --all-stuck, --state, --older-than or --ids-from".into(),
            ));
        }
        self.check_schema().await?;
        let filtered = if sel.has_filters() {
            Some(self.select_by_filters(sel, allow_partial).await?)
        } else {
            None
        };
        let Some(ids) = &sel.ids else {
            return Ok(Selected {
                transactions: filtered.unwrap_or_default(),
                left_out: Vec::new(),
            });
        };
        let matching: Option<HashSet<String>> = filtered
            .as_ref()
            .map(|f| f.iter().map(|t| t.id.clone()).collect());
        let mut seen = HashSet::new();
        let ids: Vec<String> = ids
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect();
        let index = &self.config.indices.transactions;
        let now = self.now().await;
        let mut out = Selected {
            transactions: Vec::new(),
            left_out: Vec::new(),
        };
        for chunk in ids.chunks(1000) {
            let docs = self.cluster().mget(index, chunk).await?;
            for (id, doc) in chunk.iter().zip(docs) {
                let Some(doc) = doc else {
                    out.left_out.push(LeftOut {
                        txn: id.clone(),
                        why: format!("no transaction `{id}` in `{index}`"),
                    });
                    continue;
                };
                let t = Transaction::from_source(id, &doc.source);
                match &matching {
                    Some(m) if !m.contains(id) => {
                        let state = t.state.as_ref().map_or("without a state", |s| s.as_str());
                        let age = t.age_seconds(now).map_or("undated".to_string(), |a| {
                            format!("last modified {} ago", human_age(a))
                        });
                        out.left_out.push(LeftOut {
                            txn: id.clone(),
                            why: format!(
                                "not selected by {}: it is {state}, {age}",
                                sel.describe(None)
                                    .into_iter()
                                    .filter(|d| !d.starts_with("--ids-from"))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                        });
                    }
                    _ => out.transactions.push(t),
                }
            }
        }
        Ok(out)
    }

    /// The transactions the filters of `sel` match, oldest first.
    async fn select_by_filters(
        &self,
        sel: &Selection,
        allow_partial: bool,
    ) -> Result<Vec<Transaction>> {
        let scope = if sel.all_stuck {
            ListScope::Stuck
        } else if !sel.states.is_empty() {
            ListScope::States(sel.states.clone())
        } else {
            ListScope::NotFinished
        };
        let mut found = Vec::new();
        let summary = self
            .list_scope(&scope, sel.older_than, allow_partial, |page| {
                found.extend(page);
                true
            })
            .await?;
        summary
            .coverage
            .require_complete(allow_partial, "act on the selected transactions")?;
        if sel.all_stuck && !sel.states.is_empty() {
            found.retain(|t: &Transaction| {
                t.state
                    .as_ref()
                    .is_some_and(|s| sel.states.iter().any(|w| w == s.as_str()))
            });
        }
        Ok(found)
    }

    /// Runs `procedure` on each of `ids`, `opts.concurrency` at a time,
    /// each as [`Protocol::run_procedure`] (unforced: the recovery window
    /// holds), calling `on_done` as each ends. Once `stop` is set no new
    /// transaction starts; those running finish their procedure.
    pub async fn run_many<F>(
        &self,
        ids: &[String],
        procedure: Procedure,
        opts: BulkOptions,
        stop: &AtomicBool,
        mut on_done: F,
    ) -> BulkRun
    where
        F: FnMut(&ProcedureReport),
    {
        let mut run = BulkRun::default();
        let mut items = stream::iter(ids.iter().cloned())
            .map(|id| async move {
                if stop.load(Ordering::SeqCst) {
                    return Err(id);
                }
                Ok(self.run_procedure(&id, procedure, false, opts.limits).await)
            })
            .buffer_unordered(opts.concurrency.max(1));
        while let Some(item) = items.next().await {
            match item {
                Ok(report) => {
                    on_done(&report);
                    run.reports.push(report);
                }
                Err(id) => run.not_started.push(id),
            }
        }
        run
    }

    /// Recovers `ids` in batches ([`Protocol::recover_batched`]),
    /// `opts.concurrency` batches at a time, calling `on_done` for each
    /// transaction as its batch ends. Once `stop` is set no new batch
    /// starts, and the running one stops before its next write (its
    /// transactions not at their end reported stopped). Refuses mappings that would reject the protocol's writes
    /// before anything is written.
    pub async fn recover_many_batched<F>(
        &self,
        ids: &[String],
        opts: BatchOptions,
        stop: &AtomicBool,
        mut on_done: F,
    ) -> Result<BulkRun>
    where
        F: FnMut(&ProcedureReport),
    {
        if !ids.is_empty() {
            self.check_writable().await?;
        }
        let one_batch = BatchOptions {
            concurrency: 1,
            ..opts
        };
        let mut run = BulkRun::default();
        // Owned chunks: a closure over borrowed slices is not general
        // enough for a task spawned by the dashboard.
        let chunks = ids.chunks(opts.batch_size.max(1)).map(<[String]>::to_vec);
        let mut batches = stream::iter(chunks)
            .map(|chunk: Vec<String>| async move {
                if stop.load(Ordering::SeqCst) {
                    return Err(chunk);
                }
                Ok(self.recover_batched_until(&chunk, one_batch, stop).await)
            })
            .buffer_unordered(opts.concurrency.max(1));
        while let Some(batch) = batches.next().await {
            match batch {
                Ok(reports) => {
                    for r in &reports {
                        on_done(r);
                    }
                    run.reports.extend(reports);
                }
                Err(ids) => run.not_started.extend(ids),
            }
        }
        Ok(run)
    }
}
