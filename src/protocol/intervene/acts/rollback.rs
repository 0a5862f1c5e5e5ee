//! Rolling back one transaction: its target (the transaction), its plan and preview on the
//! transaction's documents, its run, and its result (the procedure's
//! [`ProcedureReport`]).

use super::super::build::{confirmable_preview, procedure_plan};
use super::super::{Done, ProcedurePlan, Started};
use super::{Act, Runs, Subject};
use crate::error::Result;
use crate::protocol::trail::ActionKind;
use crate::protocol::{Procedure, ProcedureReport, Protocol};

/// Roll back a transaction (undo whatever it applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollback {
    /// The transaction.
    pub txn: String,
}

impl Rollback {
    /// Roll back `txn`.
    pub fn new(txn: impl Into<String>) -> Rollback {
        Rollback { txn: txn.into() }
    }
}

impl Act for Rollback {
    type Plan = ProcedurePlan;

    fn action(&self) -> ActionKind {
        ActionKind::Rollback
    }

    fn title(&self) -> &'static str {
        "Roll back"
    }

    fn subject(&self) -> Subject {
        Subject::Transaction(self.txn.clone())
    }

    async fn plan(&self, p: &Protocol) -> Result<ProcedurePlan> {
        Ok(procedure_plan(p, Procedure::Rollback, &self.txn).await)
    }

    async fn preview(&self, p: &Protocol) -> Result<ProcedurePlan> {
        confirmable_preview(p, Procedure::Rollback, &self.txn).await
    }
}

impl Runs for Rollback {
    type Result = ProcedureReport;

    async fn run(started: Started<Rollback>, p: &Protocol) -> Done<ProcedureReport> {
        let i = started.intervention();
        let report = p.rollback(&i.act.txn, i.choices.force).await;
        started.finish(p, report).await
    }
}
