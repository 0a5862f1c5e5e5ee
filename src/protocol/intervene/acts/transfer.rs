//! A new transfer started by an operator: its target (what to move), its
//! plan (the recovery's steps from `created`), its run, and its result
//! (the procedure's [`ProcedureReport`]).

use super::super::build::labels_from;
use super::super::{Done, Plan, Started};
use super::{Act, Subject};
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
    type Result = ProcedureReport;

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

    async fn plan(&self, _: &Protocol) -> Result<Plan> {
        let t = &self.transfer;
        Ok(Plan {
            transactions: t.id.iter().cloned().collect(),
            targets: vec![t.src.clone(), t.dest.clone()],
            steps: labels_from(Procedure::Recover, &TxnState::Created),
            ..Plan::default()
        })
    }

    async fn preview(&self, p: &Protocol) -> Result<Plan> {
        self.plan(p).await
    }

    async fn run(started: Started<Transfer>, p: &Protocol) -> Done<ProcedureReport> {
        let a = &started.intervention().act;
        let report = p.transfer(&a.transfer, a.locks, RunLimits::default()).await;
        started.finish(p, report).await
    }
}
