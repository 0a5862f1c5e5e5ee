//! A new transfer started by an operator: its target (what to move), its
//! plan (the recovery's steps from `created`), its run, and its result
//! (the procedure's [`ProcedureReport`]).

use super::super::build::labels_from;
use super::super::{Done, PlanStep, Planned, Started};
use super::{Act, Runs, Subject};
use crate::error::Result;
use crate::protocol::trail::ActionKind;
use crate::protocol::{NewTransfer, Procedure, ProcedureReport, Protocol, RunLimits, TxnState};

/// A new transfer started by an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// What to move (its id set).
    pub transfer: NewTransfer,
    /// Hold locks on both accounts while it runs.
    pub locks: bool,
}

impl Act for Transfer {
    type Plan = TransferPlan;

    fn action(&self) -> ActionKind {
        ActionKind::Transfer
    }

    fn title(&self) -> &'static str {
        "Transfer"
    }

    fn subject(&self) -> Subject {
        Subject::Transfer {
            src: self.transfer.src.clone(),
            dest: self.transfer.dest.clone(),
        }
    }

    fn destructive(&self) -> bool {
        false
    }

    async fn plan(&self, _: &Protocol) -> Result<TransferPlan> {
        Ok(TransferPlan {
            transfer: self.transfer.clone(),
        })
    }

    async fn preview(&self, p: &Protocol) -> Result<TransferPlan> {
        self.plan(p).await
    }
}

impl Runs for Transfer {
    type Result = ProcedureReport;

    async fn run(started: Started<Transfer>, p: &Protocol) -> Done<ProcedureReport> {
        let a = &started.intervention().act;
        let report = p.transfer(&a.transfer, a.locks, RunLimits::default()).await;
        started.finish(p, report).await
    }
}

/// A new transfer's plan: the recovery's steps from `created`, filed
/// under its id (if set) and its two accounts; nothing to re-read.
#[derive(Debug, Clone)]
pub struct TransferPlan {
    /// What to move.
    pub transfer: NewTransfer,
}

impl Planned for TransferPlan {
    fn transactions(&self) -> Vec<String> {
        self.transfer.id.iter().cloned().collect()
    }

    fn targets(&self) -> Vec<String> {
        vec![self.transfer.src.clone(), self.transfer.dest.clone()]
    }

    fn steps(&self) -> Vec<PlanStep> {
        labels_from(Procedure::Recover, &TxnState::Created)
    }
}
