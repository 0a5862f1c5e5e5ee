//! What a reversal will write, decided once on the documents as read, for
//! a fresh run and for one resumed after a crash alike: the rule of which
//! writes a run makes ([`writes`]: create the reversal unless an earlier
//! attempt left it, link the original unless it names it already), which
//! `Protocol::reverse` follows as it runs, and the reversal's own recovery
//! previewed from where it stands ([`decide`]). The operator's plan of a
//! reversal (`intervene`) is built from this, so it says what the run does.

use super::admit::{admit, Admitted};
use super::link::{reversal_id, REVERSES};
use super::verdict::ReverseRefusal;
use crate::protocol::decide::Fencing;
use crate::protocol::time::format_timestamp;
use crate::protocol::transaction::{Transaction, Transfer};
use crate::protocol::views::{preview, Preview, TransactionDetail};
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

/// The label the run reports for creating the reversal.
pub const CREATE_STEP: &str = "reverse: create reversal";
/// The label the run reports for linking the original to its reversal.
pub const LINK_STEP: &str = "reverse: link original";

/// The writes of the reversal itself a run makes, before the reversal's
/// own recovery: `(create, link)`.
pub fn writes(original: &Transaction, existing: Option<&Transaction>) -> (bool, bool) {
    (existing.is_none(), original.reversed_by.is_none())
}

/// What a run of the reversal of `original` will do.
#[derive(Debug, Clone)]
pub struct ReverseSteps {
    /// The admission rule's verdict (the transfer; whether the original is
    /// finished first; whether an earlier attempt is carried on).
    pub admitted: Admitted,
    /// The reversal: the one an earlier attempt left, or the one `create`
    /// writes.
    pub reversal: Transaction,
    /// Whether the run creates the reversal ([`writes`]).
    pub create: bool,
    /// Whether the run links the original ([`writes`]).
    pub link: bool,
    /// The reversal's own recovery, previewed from where it stands (the
    /// earlier attempt's, or the one `create` writes) on the accounts as
    /// read.
    pub run: Preview,
}

/// Decides the reversal of `original` (re-read with its accounts and the
/// recovery that would finish it), `existing` being the document under the
/// reversal's id; `now`: the creation time a new reversal is previewed
/// with.
pub fn decide(
    original: &TransactionDetail,
    existing: Option<&Transaction>,
    finish_committed: bool,
    now: DateTime<Utc>,
) -> Result<ReverseSteps, ReverseRefusal> {
    let admitted = admit(&original.txn, existing, finish_committed)?;
    let (create, link) = writes(&original.txn, existing);
    let t = &admitted.transfer;
    let reversal = match existing {
        Some(e) => e.clone(),
        None => {
            let now = Value::String(format_timestamp(now));
            let id = reversal_id(&original.txn.id);
            Transaction::from_source(&id, &source(t, now.clone(), now))
        }
    };
    let state = |id: &str| {
        original
            .accounts
            .iter()
            .find(|v| v.id == id)
            .and_then(|v| v.state.as_ref())
    };
    // The reversal moves the amount from the original's destination.
    let run = preview(
        Procedure::Recover,
        &reversal,
        state(&t.dest),
        state(&t.src),
        Fencing::On,
    );
    Ok(ReverseSteps {
        admitted,
        reversal,
        create,
        link,
        run,
    })
}

/// The reversal's document as created: `t` moved back, `created`, naming
/// the original it reverses (times in the application's format).
pub(super) fn source(t: &Transfer, created: Value, modified: Value) -> Map<String, Value> {
    json!({
        "src_acct": t.dest,
        "dest_acct": t.src,
        "amount": t.amount,
        "transaction_state": "created",
        "creation_time": created,
        "modification_time": modified,
        REVERSES: t.id,
    })
    .as_object()
    .cloned()
    .unwrap_or_default()
}
