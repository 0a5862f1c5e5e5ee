//! The reversal's one admission rule, a pure decision over the documents as
//! read: the original (finished, or committed and to be finished first)
//! and whatever already sits under the reversal's id. `Protocol::reverse`
//! applies it before its first write; the dashboard's dialog applies it to
//! its re-read, so both refuse with the same words.

use super::link::reversal_id;
use super::verdict::ReverseRefusal;
use crate::protocol::steps::ProcedureRefusal;
use crate::protocol::transaction::{Transaction, Transfer, TxnState};

/// What the rule admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The original as a transfer (the reversal moves it back).
    pub transfer: Transfer,
    /// The original is committed: recovery finishes it first.
    pub finish_first: bool,
    /// The reversal exists from an earlier attempt: carried on, not created.
    pub resumed: bool,
}

/// Whether `doc` (read under the reversal's id) is the reversal of `t`: it
/// says so and moves the same amount the other way.
pub fn is_reversal(doc: &Transaction, t: &Transfer) -> bool {
    doc.reverses.as_deref() == Some(t.id.as_str())
        && doc.src.as_deref() == Some(t.dest.as_str())
        && doc.dest.as_deref() == Some(t.src.as_str())
        && doc.amount == Some(t.amount)
}

/// Decides whether `original` may be reversed, `existing` being the
/// document under its reversal's id (if any). A committed original not yet
/// linked is refused unless `finish_committed` (then it is judged as it
/// will be once recovery finished it).
pub fn admit(
    original: &Transaction,
    existing: Option<&Transaction>,
    finish_committed: bool,
) -> Result<Admitted, ReverseRefusal> {
    let rev = reversal_id(&original.id);
    let mut finish_first = false;
    match &original.state {
        Some(TxnState::Finished) => {}
        Some(TxnState::Committed) if original.reversed_by.is_none() && finish_committed => {
            finish_first = true;
        }
        Some(TxnState::RolledBack) => return Err(ReverseRefusal::RolledBack),
        Some(TxnState::Committed) => return Err(ReverseRefusal::Committed),
        Some(TxnState::Unknown(s)) => {
            return Err(ReverseRefusal::Protocol(ProcedureRefusal::UnknownState(
                s.clone(),
            )))
        }
        Some(s) => return Err(ReverseRefusal::InFlight(s.clone())),
        None => {
            return Err(ReverseRefusal::Protocol(ProcedureRefusal::Malformed(
                original.problems.clone(),
            )))
        }
    }
    let transfer = original.transfer().map_err(|_| {
        ReverseRefusal::Protocol(ProcedureRefusal::Malformed(original.problems.clone()))
    })?;
    let resumed = match (&original.reversed_by, existing) {
        (Some(by), _) if *by != rev => {
            return Err(ReverseRefusal::AlreadyReversed { by: by.clone() })
        }
        (_, Some(d)) if !is_reversal(d, &transfer) => return Err(ReverseRefusal::IdTaken(rev)),
        (_, Some(r)) if r.state == Some(TxnState::RolledBack) => {
            return Err(ReverseRefusal::ReversalRolledBack(rev))
        }
        (Some(_), Some(r)) if r.state == Some(TxnState::Finished) => {
            return Err(ReverseRefusal::AlreadyReversed { by: rev })
        }
        (_, existing) => existing.is_some(),
    };
    Ok(Admitted {
        transfer,
        finish_first,
        resumed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn txn(id: &str, v: Value) -> Transaction {
        Transaction::from_source(id, v.as_object().unwrap())
    }

    fn original(state: &str, by: Option<&str>) -> Transaction {
        let mut v = json!({"src_acct":"A","dest_acct":"B","amount":5,"transaction_state":state,
                           "modification_time":"2020-01-01T00:00:00Z"});
        if let Some(by) = by {
            v["reversed_by"] = json!(by);
        }
        txn("t", v)
    }

    fn reversal(state: &str) -> Transaction {
        txn(
            "t-reversal",
            json!({"src_acct":"B","dest_acct":"A","amount":5,"transaction_state":state,
                   "reverses":"t","modification_time":"2020-01-01T00:00:00Z"}),
        )
    }

    #[test]
    fn refusals_in_the_protocols_words() {
        let done = reversal("finished");
        let cases: Vec<(Transaction, Option<&Transaction>, bool, &str)> = vec![
            (
                original("pending", None),
                None,
                true,
                "transaction is pending",
            ),
            (original("rolled-back", None), None, true, "rolled back"),
            (
                original("committed", None),
                None,
                false,
                "--finish-committed",
            ),
            (
                original("finished", Some("x")),
                None,
                true,
                "already reversed by `x`",
            ),
            (
                original("finished", Some("t-reversal")),
                Some(&done),
                true,
                "already reversed by `t-reversal`",
            ),
        ];
        for (o, e, finish, text) in cases {
            let r = admit(&o, e, finish).unwrap_err().to_string();
            assert!(r.contains(text), "{r}");
        }
    }

    #[test]
    fn admits_finished_committed_and_resumes() {
        let a = admit(&original("finished", None), None, false).unwrap();
        assert!(!a.finish_first && !a.resumed);
        assert_eq!(a.transfer.amount, 5);
        let a = admit(&original("committed", None), None, true).unwrap();
        assert!(a.finish_first);
        let created = reversal("created");
        let a = admit(
            &original("finished", Some("t-reversal")),
            Some(&created),
            false,
        )
        .unwrap();
        assert!(a.resumed);
        let mut other = reversal("created");
        other.amount = Some(6);
        assert!(matches!(
            admit(&original("finished", None), Some(&other), false),
            Err(ReverseRefusal::IdTaken(_))
        ));
    }
}
