//! Reversing a finished transaction by a compensating transfer: its target
//! (the original), its plan and preview on the original and whatever sits
//! under its reversal's id, its run, and its result ([`ReverseReport`]).

use super::super::reverse_plan::{reverse_preview, ReversalPlan};
use super::super::{Done, Planned, Report, Started};
use super::{Act, Runs, Subject};
use crate::error::Result;
use crate::protocol::reverse::{reversal_id, ReverseOptions, ReverseReport, ReverseVerdict};
use crate::protocol::trail::{ActOutcome, ActionKind, Ending, TrailStep};
use crate::protocol::Protocol;

/// Reverse a finished transaction by a compensating transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reverse {
    /// The original.
    pub txn: String,
    /// Let recovery finish a committed original first.
    pub finish_committed: bool,
}

impl Act for Reverse {
    type Plan = ReversalPlan;

    fn action(&self) -> ActionKind {
        ActionKind::Reverse
    }

    fn title(&self) -> &'static str {
        "Reverse"
    }

    fn subject(&self) -> Subject {
        Subject::Transaction(self.txn.clone())
    }

    fn reports_on(&self, txn: &str) -> bool {
        txn == self.txn || txn == reversal_id(&self.txn)
    }

    async fn plan(&self, p: &Protocol) -> Result<ReversalPlan> {
        Ok(reverse_preview(p, &self.txn, self.finish_committed)
            .await
            .unwrap_or_else(|_| ReversalPlan::Unread(self.txn.clone())))
    }

    async fn preview(&self, p: &Protocol) -> Result<ReversalPlan> {
        reverse_preview(p, &self.txn, self.finish_committed).await
    }
}

impl Runs for Reverse {
    type Result = ReverseReport;

    async fn run(started: Started<Reverse>, p: &Protocol) -> Done<ReverseReport> {
        let i = started.intervention();
        let opts = ReverseOptions {
            finish_committed: i.act.finish_committed,
            force: i.choices.force,
            ..ReverseOptions::default()
        };
        let report = p.reverse(&i.act.txn, opts).await;
        started.finish(p, report).await
    }
}

impl Report for ReverseReport {
    fn ending(&self, _: &Protocol, _: &dyn Planned) -> Ending {
        Ending::of(
            ActOutcome::from(&self.verdict),
            self.verdict.to_string(),
            self.steps.iter().map(TrailStep::from).collect(),
        )
    }

    fn ok(&self, _: ActOutcome) -> bool {
        matches!(self.verdict, ReverseVerdict::Reversed)
    }

    fn what(&self) -> String {
        match &self.verdict {
            ReverseVerdict::Reversed => self.reversed_by(),
            v @ ReverseVerdict::Refused(_) => v.to_string(),
            v => format!("{v}; reversing it again carries on with the same reversal"),
        }
    }
}
