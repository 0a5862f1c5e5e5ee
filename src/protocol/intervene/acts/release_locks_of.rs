//! Releasing every lock one transaction owns: its target (the owner), its
//! plan and preview on the transaction's documents and locks, and its run;
//! its result is a lock release's ([`super::Released`]).

use super::super::build::detail_preview;
use super::super::{Done, Plan, PlanStep, Started};
use super::{Act, Released, Subject};
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
    type Result = Released;

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

    async fn plan(&self, _: &Protocol) -> Result<Plan> {
        Ok(Plan {
            transactions: vec![self.txn.clone()],
            steps: vec![PlanStep::ReleaseLocksOf],
            ..Plan::default()
        })
    }

    async fn preview(&self, p: &Protocol) -> Result<Plan> {
        detail_preview(p, None, &self.txn).await
    }

    async fn run(started: Started<ReleaseLocksOf>, p: &Protocol) -> Done<Released> {
        let i = started.intervention();
        let released = p
            .release_transaction_locks_allowing(&i.act.txn, i.choices.force, i.act.allow_partial)
            .await;
        started.finish(p, released).await
    }
}
