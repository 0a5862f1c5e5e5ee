//! The audit's report and what its parts add to it: the kinds of finding,
//! a finding, the report itself and a repair's effect on a balance, and
//! `Found`, what the parts of a run collect ([`super`] runs them).

use crate::protocol::read::Coverage;
use crate::protocol::report::StepReport;
use crate::protocol::transaction::TxnState;
use serde::{Deserialize, Serialize};

/// What an audit finding is about. Serialised (in `audit --json`) and shown
/// as its snake_case name, e.g. `dangling_pending`; ordered by that name, the
/// order of a report's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// An account carries a transaction id whose transaction is finished,
    /// rolled back, missing or not yet started: a late apply.
    DanglingPending,
    /// An account document that cannot be read (balance, pending list).
    MalformedAccount,
    /// A transaction with no state or malformed fields.
    MalformedTransaction,
    /// A transaction naming an account that does not exist.
    MissingAccount,
    /// The locks could not all be read.
    PartialLocks,
    /// A lock stale on evidence.
    StaleLock,
    /// The sum of balances differs from the expected total.
    TotalMismatch,
    /// An in-flight transaction without a modification time.
    UndatedTransaction,
    /// A transaction in a state this tool does not know.
    UnknownState,
}

impl FindingKind {
    /// Every kind, in order.
    pub const ALL: [FindingKind; 9] = [
        FindingKind::DanglingPending,
        FindingKind::MalformedAccount,
        FindingKind::MalformedTransaction,
        FindingKind::MissingAccount,
        FindingKind::PartialLocks,
        FindingKind::StaleLock,
        FindingKind::TotalMismatch,
        FindingKind::UndatedTransaction,
        FindingKind::UnknownState,
    ];

    /// The machine-readable name (`audit`'s text and JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::DanglingPending => "dangling_pending",
            FindingKind::MalformedAccount => "malformed_account",
            FindingKind::MalformedTransaction => "malformed_transaction",
            FindingKind::MissingAccount => "missing_account",
            FindingKind::PartialLocks => "partial_locks",
            FindingKind::StaleLock => "stale_lock",
            FindingKind::TotalMismatch => "total_mismatch",
            FindingKind::UndatedTransaction => "undated_transaction",
            FindingKind::UnknownState => "unknown_state",
        }
    }
}

impl std::str::FromStr for FindingKind {
    type Err = String;

    /// The kind named `s` (its snake_case name).
    fn from_str(s: &str) -> std::result::Result<FindingKind, String> {
        FindingKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("no audit finding kind `{s}`"))
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing the audit found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// The document it is about (account, transaction or lock id).
    pub id: String,
    /// What is wrong, and what to do about it, in words.
    pub detail: String,
}

/// Result of an audit.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditReport {
    /// Sum of all balances, exact.
    pub total_balance: i64,
    /// Net change that transfers still in flight (pending/terminating with
    /// only some of their applies done) contribute to `total_balance`.
    pub in_flight_delta: i64,
    /// Everything found, in a stable order.
    pub findings: Vec<Finding>,
    /// Repairs made (with `repair`), in words.
    pub repairs: Vec<String>,
    /// Each repair's write as a step (the undo on its side, with the
    /// receipt of the balance it wrote): what the repair's record keeps,
    /// so `audit --receipts` proves it as any act's.
    pub repair_steps: Vec<StepReport>,
    /// Without `repair`: the balance change each unambiguous repair would
    /// make (what the repair's preview shows before it moves money).
    pub repair_effect: Vec<RepairEffect>,
    /// Whether the total and the accounts scan came from one point-in-time
    /// view; when not, the total is approximate while transfers run.
    pub consistent_view: bool,
    /// Shards behind the audit's searches.
    pub coverage: Coverage,
}

/// The balance change one repair of a dangling entry would make: the
/// entry's apply undone on its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairEffect {
    /// The account carrying the entry.
    pub account: String,
    /// The transaction whose apply is left there.
    pub txn: String,
    /// That transaction's (terminal) state.
    pub state: TxnState,
    /// The change the repair makes to the account's balance.
    pub delta: i64,
}

impl std::fmt::Display for RepairEffect {
    /// "undoes the debit of 90 left on A by t1 (rolled-back): credits A +90".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (acct, txn, state, d) = (&self.account, &self.txn, &self.state, self.delta);
        let (what, verb) = if d > 0 {
            ("debit", "credits")
        } else {
            ("credit", "debits")
        };
        write!(
            f,
            "undoes the {what} of {} left on {acct} by {txn} ({state}): {verb} {acct} {d:+}",
            d.unsigned_abs()
        )
    }
}

/// A finding of `kind` about the document `id`.
pub(super) fn finding(kind: FindingKind, id: &str, detail: String) -> Finding {
    Finding {
        kind,
        id: id.to_string(),
        detail,
    }
}

/// What the audit's parts have found so far.
#[derive(Default)]
pub(super) struct Found {
    /// Findings, in the order found (sorted at the end).
    pub findings: Vec<Finding>,
    /// Repairs made, in words.
    pub repairs: Vec<String>,
    /// Repairs made, as steps with their receipts.
    pub repair_steps: Vec<StepReport>,
    /// Repairs that would be made (without `repair`).
    pub repair_effect: Vec<RepairEffect>,
    /// Shards behind the searches so far.
    pub coverage: Coverage,
}

#[cfg(test)]
mod tests {
    use super::FindingKind;

    #[test]
    fn kinds_serialise_to_their_names_in_the_order_of_their_names() {
        for k in FindingKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(
                serde_json::from_value::<FindingKind>(k.as_str().into()).unwrap(),
                k
            );
            assert_eq!(k.as_str().parse::<FindingKind>(), Ok(k));
        }
        let mut by_name = FindingKind::ALL;
        by_name.sort_by_key(|k| k.as_str());
        let mut by_kind = FindingKind::ALL;
        by_kind.sort();
        assert_eq!(by_kind, by_name);
    }
}
