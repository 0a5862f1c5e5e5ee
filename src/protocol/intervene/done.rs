//! What a performed act did: a [`Done`] holds the act's own result (its
//! [`Report`]: a rollback's [`ProcedureReport`], a bulk act's
//! [`super::BulkDone`], ...), how the audit record says it ended, the
//! record's id and whether it could be completed, its receipts verified,
//! and one sentence for people ([`fmt::Display`]).

use super::Planned;
use crate::error::Error;
use crate::protocol::trail::receipts::{self, Verification};
use crate::protocol::trail::{ActOutcome, ActionKind, Ending, RecordId, TrailStep};
use crate::protocol::{ProcedureReport, Protocol};
use std::fmt;

/// An act's own result, as each act's file defines it: how the audit
/// record ends for it, whether it did what was asked, and what it did in
/// words. Written once per result type, so no caller matches on which act
/// it was.
pub trait Report: fmt::Debug + Send + 'static {
    /// How the record ends for it: outcome, summary, counts (a bulk
    /// run's) and steps. `plan` is the plan the record was begun with.
    fn ending(&self, p: &Protocol, plan: &dyn Planned) -> Ending;

    /// Whether it did what was asked (and nothing was refused or failed);
    /// `outcome` is how the record says it ended.
    fn ok(&self, outcome: ActOutcome) -> bool;

    /// What it did, in one line (without the record).
    fn what(&self) -> String;
}

/// Whichever act's result, for a front end that holds any act
/// ([`super::AnyAct`]).
impl Report for Box<dyn Report> {
    fn ending(&self, p: &Protocol, plan: &dyn Planned) -> Ending {
        (**self).ending(p, plan)
    }

    fn ok(&self, outcome: ActOutcome) -> bool {
        (**self).ok(outcome)
    }

    fn what(&self) -> String {
        (**self).what()
    }
}

/// The result of a rollback, a recovery and a transfer: the procedure's
/// report.
impl Report for ProcedureReport {
    fn ending(&self, _: &Protocol, _: &dyn Planned) -> Ending {
        Ending::of(
            ActOutcome::from(&self.verdict),
            self.verdict.to_string(),
            self.steps.iter().map(TrailStep::from).collect(),
        )
    }

    fn ok(&self, _: ActOutcome) -> bool {
        self.verdict.is_done()
    }

    fn what(&self) -> String {
        self.verdict.to_string()
    }
}

/// A performed, recorded act with its own result `R`.
#[derive(Debug)]
pub struct Done<R = Box<dyn Report>> {
    /// What the record calls it.
    pub action: ActionKind,
    /// How it ended, as recorded.
    pub outcome: ActOutcome,
    /// The record's summary.
    pub summary: String,
    /// The audit record written before it.
    pub record: RecordId,
    /// Why the record could not be completed (it stays unfinished).
    pub record_error: Option<Error>,
    /// Its balance writes' receipts verified, as `audit --receipts`
    /// verifies its record (the same pure check, over the steps this run
    /// made): what a front end says after each act.
    pub receipts: Verification,
    /// What it did: the act's own result.
    pub value: R,
}

/// The receipts of the steps one run of record `record` made, verified
/// ([`receipts::verify_steps`]).
pub(super) fn receipts_of(record: &RecordId, steps: &[TrailStep]) -> Verification {
    receipts::verify_steps([(record.0.as_str(), steps)])
}

impl<R: Report> Done<R> {
    /// Whether it did what was asked (and nothing was refused or failed).
    pub fn ok(&self) -> bool {
        self.value.ok(self.outcome)
    }

    /// What it did, in one line (without the record).
    pub fn what(&self) -> String {
        self.value.what()
    }

    /// The same, its result held as any act's.
    pub fn boxed(self) -> Done<Box<dyn Report>> {
        Done {
            action: self.action,
            outcome: self.outcome,
            summary: self.summary,
            record: self.record,
            record_error: self.record_error,
            receipts: self.receipts,
            value: Box::new(self.value),
        }
    }
}

/// What it did, then its audit record (and whether that was left
/// unfinished).
impl<R: Report> fmt::Display for Done<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.record_error {
            None => write!(f, "{} · audit record {}", self.what(), self.record),
            Some(e) => write!(
                f,
                "{} · audit record {} left UNFINISHED: {e}",
                self.what(),
                self.record
            ),
        }
    }
}
