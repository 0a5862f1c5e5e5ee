//! Recovering one transaction: its target (the transaction), its plan and preview on the
//! transaction's documents, its run, and its result (the procedure's
//! [`ProcedureReport`]).

use super::super::build::{confirmable_preview, procedure_plan};
use super::super::{Done, ProcedurePlan, Started};
use super::{Act, Runs, Subject};
use crate::error::Result;
use crate::protocol::trail::ActionKind;
use crate::protocol::{Procedure, ProcedureReport, Protocol};

/// Recover a transaction (move it forward from where it stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recover {
    /// The transaction.
    pub txn: String,
}

impl Recover {
    /// Recover `txn`.
    pub fn new(txn: impl Into<String>) -> Recover {
        Recover { txn: txn.into() }
    }
}

impl Act for Recover {
    type Plan = ProcedurePlan;

    fn action(&self) -> ActionKind {
        ActionKind::Recover
    }

    fn title(&self) -> &'static str {
        "Recover"
    }

    fn subject(&self) -> Subject {
        Subject::Transaction(self.txn.clone())
    }

    fn destructive(&self) -> bool {
        false
    }

    async fn plan(&self, p: &Protocol) -> Result<ProcedurePlan> {
        Ok(procedure_plan(p, Procedure::Recover, &self.txn).await)
    }

    async fn preview(&self, p: &Protocol) -> Result<ProcedurePlan> {
        confirmable_preview(p, Procedure::Recover, &self.txn).await
    }
}

impl Runs for Recover {
    type Result = ProcedureReport;

    async fn run(started: Started<Recover>, p: &Protocol) -> Done<ProcedureReport> {
        let i = started.intervention();
        let report = p.recover(&i.act.txn, i.choices.force).await;
        started.finish(p, report).await
    }
}
