//! The audit of invariants: what fencing would have prevented, and what an
//! operator must look at.
//!
//! Findings: pending entries whose transaction is finished, rolled-back or
//! missing (a late apply; `--repair` undoes it where that is unambiguous);
//! transactions naming accounts that do not exist; unknown states, malformed
//! documents and in-flight transactions without a modification time; stale
//! locks; and the sum of balances, checked against an expected total when one
//! is given (corrected for transfers in flight).
//!
//! Right under live traffic: every query comes from the read side (resolved
//! fields); the total, the accounts scan and the correction for transfers
//! in flight ([`view`]: which accounts had applied each transfer)
//! come from one point-in-time view where the server has one (otherwise the
//! report says the total is approximate); and a finding is reported only after the documents involved
//! were re-read by id (realtime), in an order that cannot mistake a transfer
//! in progress for a dangling entry: the transaction first (terminal states
//! are final), then the account again.
//!
//! The audit in one module: this file holds the report, the exact total and
//! the order of the parts: the accounts' pending entries and their repairs
//! ([`accounts`]), then the transactions and locks ([`documents`]); how often
//! the audit may run in the background is [`pace`].

mod accounts;
mod documents;
pub mod pace;
mod view;

use super::integer::read_integer;
use super::read::{Coverage, Queries, Scan, ScanSummary};
use super::transaction::TxnState;
use super::Protocol;
use crate::cluster::Hit;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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
    /// Repairs that would be made (without `repair`).
    pub repair_effect: Vec<RepairEffect>,
    /// Shards behind the searches so far.
    pub coverage: Coverage,
}

impl Protocol {
    /// Runs the audit, refusing a partial view (see [`Self::audit_with`]).
    pub async fn audit(&self, expect_total: Option<i64>, repair: bool) -> Result<AuditReport> {
        self.audit_with(expect_total, repair, false).await
    }

    /// Runs the audit; with `repair`, undoes dangling applies whose repair is
    /// unambiguous (rolled-back transaction, or a finished one the account had
    /// already settled) and reports the rest for an operator. Refuses when
    /// some shards failed, unless `allow_partial`.
    pub async fn audit_with(
        &self,
        expect_total: Option<i64>,
        repair: bool,
        allow_partial: bool,
    ) -> Result<AuditReport> {
        let ix = &self.config.indices;
        let d = self.discovery().await?;
        // Findings are confirmed by reads by id, which need one index each.
        if let Some(p) = d.indices().iter().find_map(|i| i.id_problem()) {
            return Err(Error::Unreadable(format!("cannot audit: {p}")));
        }
        let q = Queries::new(&d.fields);
        let mut found = Found::default();

        let view_at = self.now().await;
        let (accounts, exact, scanned) = self.scan_accounts().await?;
        found.coverage.add(scanned.coverage);
        let scanned_view = scanned.point_in_time;
        let mut total_balance = i64::try_from(exact).map_err(|_| {
            Error::Decode(format!("sum of balances {exact} does not fit in 64 bits"))
        })?;
        found.coverage.require_complete(allow_partial, "audit")?;

        // The accounts' pending entries, then the other documents.
        let pending = self
            .audit_pending_entries(&accounts, view_at, repair, &mut found)
            .await?;
        let in_flight_delta = pending.in_flight_delta;
        total_balance += pending.repaired;
        self.audit_transactions(&q, allow_partial, &mut found)
            .await?;
        self.audit_locks(&mut found).await?;

        if let Some(expected) = expect_total {
            let settled_total = total_balance - in_flight_delta;
            if settled_total != expected {
                found.findings.push(finding(
                    FindingKind::TotalMismatch,
                    &ix.accounts,
                    format!(
                        "sum of balances is {total_balance} ({settled_total} with transfers in flight completed or undone), expected {expected}: {:+}",
                        settled_total - expected
                    ),
                ));
            }
        }
        let Found {
            mut findings,
            repairs,
            repair_effect,
            coverage,
        } = found;
        findings.sort_by(|a, b| (&a.kind, &a.id).cmp(&(&b.kind, &b.id)));
        for f in &mut findings {
            f.detail = self.config.schema.localize(&f.detail);
        }
        Ok(AuditReport {
            total_balance,
            in_flight_delta,
            findings,
            repairs,
            repair_effect,
            consistent_view: scanned_view,
            coverage,
        })
    }

    /// Every account from one view: the sum of balances, summed exactly in
    /// integers as the pages go by (a `sum` aggregation is a double and
    /// rounds), keeping only the accounts that carry pending entries or are
    /// malformed. Repairs then adjust the total by exactly what they change
    /// (a search may not see them yet).
    async fn scan_accounts(&self) -> Result<(Vec<Hit>, i128, ScanSummary)> {
        let ix = &self.config.indices;
        let mut accounts = Vec::new();
        let mut exact: i128 = 0;
        let scanned = super::read::scan::scan(
            self.cluster(),
            &ix.accounts,
            Scan {
                query: json!({"match_all": {}}),
                sort: vec![],
                aggs: None,
                complete_only: false,
            },
            |page| {
                for hit in page {
                    let balance = hit.source.get("balance").and_then(read_integer);
                    exact += balance.map(i128::from).unwrap_or(0);
                    let carries = hit
                        .source
                        .get("pending_transactions")
                        .is_some_and(|p| !matches!(p, Value::Null) && p != &json!([]));
                    if balance.is_none() || carries {
                        accounts.push(hit);
                    }
                }
                true
            },
        )
        .await?;
        Ok((accounts, exact, scanned))
    }
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
