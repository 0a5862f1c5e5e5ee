//! Releasing every lock one transaction owns: its target (the owner), its
//! plan and preview on the transaction's documents and locks, and its run;
//! its result is a lock release's ([`super::Released`]).

use super::super::build::locks_of_preview;
use super::super::{ActRefusal, Done, LocksOfPlan, PlanStep, Planned, Started};
use super::{Act, Released, Runs, Subject};
use crate::error::Result;
use crate::protocol::trail::ActionKind;
use crate::protocol::Protocol;

/// Release every lock a transaction owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseLocksOf {
    /// The owner transaction.
    pub txn: String,
    /// Act even when the search for its locks saw only some shards.
    pub allow_partial: bool,
}

impl Act for ReleaseLocksOf {
    type Plan = LocksOfActPlan;

    fn action(&self) -> ActionKind {
        ActionKind::ReleaseLock
    }

    fn title(&self) -> &'static str {
        "Release the locks of"
    }

    fn subject(&self) -> Subject {
        Subject::Transaction(self.txn.clone())
    }

    fn updates_documents(&self) -> bool {
        false
    }

    async fn plan(&self, _: &Protocol) -> Result<LocksOfActPlan> {
        Ok(LocksOfActPlan::Unread(self.txn.clone()))
    }

    async fn preview(&self, p: &Protocol) -> Result<LocksOfActPlan> {
        Ok(match locks_of_preview(p, &self.txn).await? {
            Some(plan) => LocksOfActPlan::Judged(plan),
            None => LocksOfActPlan::Missing(self.txn.clone()),
        })
    }
}

impl Runs for ReleaseLocksOf {
    type Result = Released;

    async fn run(started: Started<ReleaseLocksOf>, p: &Protocol) -> Done<Released> {
        let i = started.intervention();
        let released = p
            .release_transaction_locks_allowing(&i.act.txn, i.choices.force, i.act.allow_partial)
            .await;
        started.finish(p, released).await
    }
}

/// The release of a transaction's locks, as planned or previewed.
#[derive(Debug, Clone)]
pub enum LocksOfActPlan {
    /// Judged on the transaction's documents (previewed).
    Judged(LocksOfPlan),
    /// The transaction does not exist: refused.
    Missing(String),
    /// Planned for the record without reading (the run finds its locks).
    Unread(String),
}

impl Planned for LocksOfActPlan {
    fn transactions(&self) -> Vec<String> {
        match self {
            LocksOfActPlan::Judged(p) => p.transactions(),
            LocksOfActPlan::Missing(id) | LocksOfActPlan::Unread(id) => vec![id.clone()],
        }
    }

    fn steps(&self) -> Vec<PlanStep> {
        vec![PlanStep::ReleaseLocksOf]
    }

    fn refusal(&self) -> Option<ActRefusal> {
        match self {
            LocksOfActPlan::Judged(p) => p.refusal(),
            LocksOfActPlan::Missing(id) => Some(ActRefusal::NoSuchTransaction(id.clone())),
            LocksOfActPlan::Unread(_) => None,
        }
    }
}
