//! What a confirmation dialog previews, line for line, in the form the log
//! compares with the steps a run reports ("ran as previewed"): a rollback's
//! or recovery's steps from the protocol's [`Plan`], and a reversal's
//! writes from what its dialog re-read ([`ReverseCheck`]: the original,
//! whatever sits under the reversal's id, and the protocol's admission
//! rule). Pure: built from documents already read.

use crate::protocol::decide::Fencing;
use crate::protocol::executor::StepOutcome;
use crate::protocol::intervene::{Plan, PlanStep};
use crate::protocol::reverse::{admit, reversal_id, Admitted, ReverseRefusal, REVERSES};
use crate::protocol::time::format_timestamp;
use crate::protocol::transaction::Transaction;
use crate::protocol::views::{preview, Preview, TransactionDetail};
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use serde_json::json;

/// The label of the create step, as the protocol reports it.
pub const CREATE_STEP: &str = "reverse: create reversal";
/// The label of the link step, as the protocol reports it.
pub const LINK_STEP: &str = "reverse: link original";

/// What the reverse dialog re-read when it opened, and the protocol's
/// decision on it.
#[derive(Debug, Clone)]
pub struct ReverseCheck {
    /// The original with its accounts (balances as of now), locks and
    /// recovery preview (the finish of a committed one).
    pub original: TransactionDetail,
    /// The reversal's (deterministic) id.
    pub reversal: String,
    /// What already sits under the reversal's id (an earlier attempt).
    pub existing: Option<Transaction>,
    /// The protocol's admission rule on these documents.
    pub admitted: Result<Admitted, ReverseRefusal>,
    /// What the reversal's own recovery would write (from `created`, or
    /// from where an earlier attempt left it).
    pub run: Option<Preview>,
}

impl ReverseCheck {
    /// Decides on the re-read documents (`now`: the creation time the new
    /// reversal's preview assumes).
    pub fn new(
        original: TransactionDetail,
        existing: Option<Transaction>,
        now: DateTime<Utc>,
    ) -> ReverseCheck {
        let reversal = reversal_id(&original.txn.id);
        let admitted = admit(&original.txn, existing.as_ref(), true);
        let run = admitted.as_ref().ok().map(|a| {
            let rev = existing
                .clone()
                .unwrap_or_else(|| new_reversal(&reversal, a, now));
            let state = |id: &str| {
                original
                    .accounts
                    .iter()
                    .find(|v| v.id == id)
                    .and_then(|v| v.state.as_ref())
            };
            preview(
                Procedure::Recover,
                &rev,
                state(&a.transfer.dest),
                state(&a.transfer.src),
                Fencing::On,
            )
        });
        ReverseCheck {
            original,
            reversal,
            existing,
            admitted,
            run,
        }
    }

    /// The balance change of the original's source and destination: the
    /// finish of a committed original, then the reversal.
    pub fn balance_change(&self) -> (i64, i64) {
        let finish = match &self.admitted {
            Ok(a) if a.finish_first => self.original.recover.balance_change,
            _ => (0, 0),
        };
        // The reversal's source is the original's destination.
        let (rev_src, rev_dest) = self.run.as_ref().map_or((0, 0), |p| p.balance_change);
        (finish.0 + rev_dest, finish.1 + rev_src)
    }
}

/// The reversal `reverse` would create (what `Protocol::reverse` writes).
fn new_reversal(id: &str, a: &Admitted, now: DateTime<Utc>) -> Transaction {
    let t = &a.transfer;
    let now = format_timestamp(now);
    let doc = json!({
        "src_acct": t.dest, "dest_acct": t.src, "amount": t.amount,
        "transaction_state": "created", "creation_time": now,
        "modification_time": now, REVERSES: t.id,
    });
    Transaction::from_source(id, &doc.as_object().cloned().unwrap_or_default())
}

/// The lines the dialog previews for a rollback or recovery, in order: each
/// step of the act's [`Plan`] with whether it writes, the lock releases
/// that follow when the transaction ends included (what the log will show,
/// line for line).
pub fn planned_steps(det: &TransactionDetail, procedure: Procedure) -> Vec<String> {
    Plan::on_transaction(Some(procedure), det.clone(), None)
        .steps
        .iter()
        .map(|s| line(s, s.writes()))
        .collect()
}

/// A step as the dialog and the log write it: `label: write|no-op`.
pub fn line(step: &PlanStep, writes: bool) -> String {
    format!("{step}: {}", if writes { "write" } else { "no-op" })
}

/// Every write the reversal would make, in order, as `label: write|no-op`
/// (the form the log compares with the steps reported).
pub fn planned(c: &ReverseCheck) -> Vec<String> {
    let Ok(a) = &c.admitted else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if a.finish_first {
        out.extend(planned_steps(&c.original, Procedure::Recover));
    }
    if !a.resumed {
        out.push(format!("{CREATE_STEP}: write"));
    }
    if c.original.txn.reversed_by.is_none() {
        out.push(format!("{LINK_STEP}: write"));
    }
    if let Some(p) = &c.run {
        out.extend(p.steps.iter().map(|s| {
            let what = match s.outcome {
                StepOutcome::Updated(_) => "write",
                StepOutcome::Noop(_) => "no-op",
            };
            format!("{}: {what}", s.step.label())
        }));
    }
    out
}
