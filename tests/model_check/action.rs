//! The model's actions: what one process, or the network, does in one step.

use crate::model::{Flight, Who};
use estx::protocol::steps::Step;
use std::fmt;

#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    /// Read the transaction to plan.
    Read(Who),
    /// Read the step's document, decide, maybe send a write.
    Step(Who, Step),
    /// Apply: read the transaction and send the claim.
    Claim(Who, Step),
    /// The same, with the read answered by a lagging copy (one write behind).
    ClaimStale(Who, Step),
    /// The primary receives this write.
    Deliver(Flight),
    /// An orphan write never reaches the primary.
    Drop(Flight),
    /// The writer stops waiting for its answer (timeout, dropped connection).
    Lose(Who),
    /// Batched recovery reads both accounts (one `_mget`), starting a round.
    BatchReadAccounts(Who),
    /// Batched recovery reads the transaction (after the accounts).
    BatchReadTxn(Who),
    /// The same, answered by a lagging copy (one write behind).
    BatchReadTxnStale(Who),

    Crash(Who),
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Read(w) => write!(f, "{w:?} reads txn"),
            Action::Step(w, s) => write!(f, "{w:?} [{s}] reads+decides"),
            Action::Claim(w, s) => write!(f, "{w:?} [{s}] reads txn+claims"),
            Action::ClaimStale(w, s) => write!(f, "{w:?} [{s}] reads a stale txn+claims"),
            Action::Deliver(fl) => {
                write!(f, "deliver {:?}@{} from {:?}", fl.doc, fl.if_seq, fl.waiter)
            }
            Action::Drop(fl) => write!(f, "drop {:?}@{}", fl.doc, fl.if_seq),
            Action::Lose(w) => write!(f, "{w:?} loses its answer"),
            Action::BatchReadAccounts(w) => write!(f, "{w:?} reads A+B"),
            Action::BatchReadTxn(w) => write!(f, "{w:?} reads txn"),
            Action::BatchReadTxnStale(w) => write!(f, "{w:?} reads a stale txn"),
            Action::Crash(w) => write!(f, "{w:?} crashes"),
        }
    }
}
