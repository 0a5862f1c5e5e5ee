//! Reversing from the dashboard, the I/O side (an action task; the UI never
//! awaits it): the dialog's re-read (the original with its balances, and
//! whatever sits under the reversal's id, judged by the protocol's one
//! admission rule). The confirmed run is an act like any other
//! ([`crate::protocol::intervene`], through [`super::actions::execute`]).

use super::event::{Checked, Reread};
use super::reverse::ReverseCheck;
use crate::protocol::intervene::Refusal;
use crate::protocol::reverse::{reversal_id, ReverseRefusal};
use crate::protocol::Protocol;

/// Re-reads the original and its reversal's id for the dialog; `refusal` is
/// set when finishing a committed original would be refused unforced (the
/// recovery window: only the force key acts).
pub async fn check(proto: &Protocol, id: &str) -> Result<Checked, String> {
    let original = match proto.transaction_detail(id).await {
        Ok(Some(d)) => d,
        Ok(None) => return Err(format!("transaction `{id}` no longer exists")),
        Err(e) => return Err(e.to_string()),
    };
    let existing = proto
        .read_transaction(&reversal_id(id))
        .await
        .map_err(|e| e.to_string())?
        .map(|(t, _)| t);
    let c = ReverseCheck::new(original, existing, proto.now().await);
    let refusal = match &c.admitted {
        Ok(a) if a.finish_first => proto
            .check_actionable(&c.original.txn, false)
            .err()
            .map(|r| Refusal::Reverse(ReverseRefusal::Protocol(r))),
        _ => None,
    };
    Ok(Checked {
        reread: Reread::Reverse(Box::new(c)),
        refusal,
    })
}
