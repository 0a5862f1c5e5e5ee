//! Bulk interventions, the protocol side: which transactions a selection
//! (`--all-stuck`, `--state`, `--older-than`, `--ids-from`) names, read
//! through the one read side (so "stuck" means what it means everywhere),
//! and running a procedure over them a few at a time, each through the same
//! protocol procedure as one intervention, with a stop flag that keeps new
//! items from starting while the running ones finish (so every transaction
//! is left in a protocol state). Recording the bulk act is the
//! intervention's (`intervene::run`).

use crate::error::Result;
use crate::protocol::read::ListScope;
use crate::protocol::time::human_age;
use crate::protocol::{ProcedureReport, Protocol, RunLimits, Transaction};
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
    /// Acknowledged transactions too (`--include-acked`); else they are
    /// left out, each named with who acknowledged it and until when
    /// ([`crate::protocol::acks`]).
    pub include_acked: bool,
    /// Transactions another live job holds too (a forced act, which its
    /// record says it overrode); else they are left out, each named with
    /// the job holding it ([`crate::protocol::jobs::LiveJobs`]).
    pub include_held: bool,
}

/// A transaction a selection named but that will not be acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The id as given.
    pub txn: String,
    /// Why, in words.
    pub why: String,
    /// Left out because it is acknowledged (its ack): set aside on
    /// purpose, which refuses nothing.
    pub acked: Option<Box<crate::protocol::acks::Ack>>,
}

impl LeftOut {
    /// `txn` left out because of `why` (refused).
    pub fn refused(txn: impl Into<String>, why: impl Into<String>) -> LeftOut {
        LeftOut {
            txn: txn.into(),
            why: why.into(),
            acked: None,
        }
    }
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
    /// Every stuck transaction (`--all-stuck` alone).
    pub fn all_stuck() -> Selection {
        Selection {
            all_stuck: true,
            ..Selection::default()
        }
    }

    /// Exactly the transactions `ids`, in this order (unknown ones left
    /// out).
    pub fn ids(ids: Vec<String>) -> Selection {
        Selection {
            ids: Some(ids),
            ..Selection::default()
        }
    }

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
        let mut out = self.describe_filters();
        if let Some(ids) = &self.ids {
            let from = ids_source.unwrap_or("a list");
            out.push(format!("--ids-from={from} ({} ids)", ids.len()));
        }
        out
    }

    /// The filters alone, as [`Self::describe`] words them (what a listed
    /// id the filters do not match was not selected by).
    pub fn describe_filters(&self) -> Vec<String> {
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

/// The transactions the filters of `sel` match, oldest first.
pub(crate) async fn select_by_filters(
    p: &Protocol,
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
    let summary = p
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
