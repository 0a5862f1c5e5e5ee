//! Reversing a finished transfer from the dashboard (`V`), the state side:
//! which selection the key opens the dialog on (finished, or committed and
//! finished first; anything else is refused at once in the protocol's own
//! words), what the dialog's re-read holds, and the exact writes it
//! previews — finishing a committed original, creating the compensating
//! transfer, linking the original, the reversal's own steps — in the form
//! the log compares with what ran ("ran as previewed").

use super::app::{App, LogLevel};
use super::event::{Action, Command, Expected};
use crate::protocol::decide::Fencing;
use crate::protocol::executor::Outcome;
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

/// `V`: opens the reverse dialog on the selected transaction when the
/// protocol's rule admits it as it is on screen (finished, or committed:
/// finished first); otherwise logs the protocol's refusal.
pub fn open(app: &mut App) -> Vec<Command> {
    // Only a transaction the operator can see selected (the one rule of
    // [`super::target`]), before the protocol's judgement of it.
    if let Err(why) = super::target::transaction_target(app) {
        let text = format!("{}: {why}", Action::Reverse.title());
        app.push_log(LogLevel::Error, text);
        return vec![];
    }
    let Some(t) = app.selected_transaction().cloned() else {
        app.push_log(LogLevel::Info, "no transaction selected");
        return vec![];
    };
    if let Err(why) = admit(&t, None, true) {
        app.push_log(
            LogLevel::Error,
            format!("{} {}: refused: {why}", Action::Reverse.title(), t.id),
        );
        return vec![];
    }
    super::confirm::open_dialog(app, Action::Reverse)
}

/// What the confirmed run must still find (the original as re-read) and the
/// lines it previewed.
pub fn expected_and_planned(c: &ReverseCheck) -> (Expected, Vec<String>) {
    let expected = Expected {
        state: c.original.txn.state.clone(),
        modified: c.original.txn.modification_time,
    };
    (expected, planned(c))
}

/// Every write the reversal would make, in order, as `label: write|no-op`
/// (the form the log compares with the steps reported).
pub fn planned(c: &ReverseCheck) -> Vec<String> {
    let Ok(a) = &c.admitted else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if a.finish_first {
        out.extend(super::confirm::planned_steps(&c.original, Action::Recover));
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
                Outcome::Updated(_) => "write",
                Outcome::Noop(_) => "no-op",
            };
            format!("{}: {what}", s.step.label())
        }));
    }
    out
}

/// Whether a reported step belongs to the running action on `target`
/// (a reversal also reports the steps of its compensating transfer).
pub fn step_of(action: Action, target: &str, txn: &str) -> bool {
    txn == target || (action == Action::Reverse && txn == reversal_id(target))
}
