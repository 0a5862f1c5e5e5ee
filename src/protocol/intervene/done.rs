//! What a performed act did: its own result ([`Value`]), how the audit
//! record says it ended, the record's id and whether it could be
//! completed, and one sentence for people ([`fmt::Display`]).

use super::BulkDone;
use crate::error::{Error, Result};
use crate::protocol::audit::AuditReport;
use crate::protocol::locks::{ReleaseOutcome, TxnLocksRelease};
use crate::protocol::reverse::{ReverseReport, ReverseVerdict};
use crate::protocol::trail::{ActOutcome, ActionKind, RecordId};
use crate::protocol::ProcedureReport;
use std::fmt;

/// The act's own result.
#[derive(Debug)]
pub enum Value {
    /// A rollback, recovery or transfer.
    Procedure(ProcedureReport),
    /// A lock release: each resource and what its release did, or why the
    /// release failed before any.
    Released(Result<TxnLocksRelease>),
    /// The audit's repair, or why it failed.
    Repaired(Result<AuditReport>),
    /// A reversal.
    Reversed(ReverseReport),
    /// A bulk rollback or recovery.
    Bulk(BulkDone),
}

/// A performed, recorded act.
#[derive(Debug)]
pub struct Done {
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
    /// What it did.
    pub value: Value,
}

impl Done {
    /// Whether it did what was asked (and nothing was refused or failed).
    pub fn ok(&self) -> bool {
        match &self.value {
            Value::Procedure(r) => r.verdict.is_done(),
            Value::Released(Ok(r)) => r
                .released
                .iter()
                .all(|(_, o)| !matches!(o, ReleaseOutcome::Refused(_))),
            Value::Released(Err(_)) | Value::Repaired(Err(_)) => false,
            Value::Repaired(Ok(_)) => true,
            Value::Reversed(r) => matches!(r.verdict, ReverseVerdict::Reversed),
            Value::Bulk(_) => matches!(
                self.outcome,
                ActOutcome::Completed | ActOutcome::NothingToDo
            ),
        }
    }

    /// What it did, in one line (without the record).
    pub fn what(&self) -> String {
        match &self.value {
            Value::Procedure(r) => r.verdict.to_string(),
            Value::Released(Ok(r)) if r.released.is_empty() => "no locks held".into(),
            Value::Released(Ok(r)) => r
                .released
                .iter()
                .map(|(resource, o)| format!("{resource} {o}"))
                .collect::<Vec<_>>()
                .join(", "),
            Value::Released(Err(e)) | Value::Repaired(Err(e)) => format!("failed: {e}"),
            Value::Repaired(Ok(r)) if r.repairs.is_empty() => "nothing was repairable".into(),
            Value::Repaired(Ok(r)) => format!("repaired: {}", r.repairs.join("; ")),
            Value::Reversed(r) => match &r.verdict {
                ReverseVerdict::Reversed => r.reversed_by(),
                v @ ReverseVerdict::Refused(_) => v.to_string(),
                v => format!("{v}; reversing it again carries on with the same reversal"),
            },
            Value::Bulk(b) => match &b.failed {
                Some(e) => format!("failed: {e}"),
                None => super::Tally::of(&b.reports).brief(),
            },
        }
    }
}

/// What it did, then its audit record (and whether that was left
/// unfinished).
impl fmt::Display for Done {
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
