//! The audit of invariants: what fencing would have prevented, and what an
//! operator must look at.
//!
//! Findings: pending entries whose transaction is finished, rolled-back or
//! missing (a late apply; `--repair` undoes it where that is unambiguous);
//! transactions naming accounts that do not exist; unknown states and
//! malformed documents; stale locks; and the sum of balances, checked against
//! an expected total when one is given (corrected for transfers in flight).

use super::account::{AccountState, SettledOutcome};
use super::decide;
use super::executor::Outcome;
use super::steps;
use super::transaction::{Transaction, TxnState};
use super::Protocol;
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One thing the audit found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Machine-readable kind, e.g. `dangling_pending`, `stale_lock`.
    pub kind: String,
    /// The document it is about (account, transaction or lock id).
    pub id: String,
    /// What is wrong, and what to do about it, in words.
    pub detail: String,
}

/// Result of an audit.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditReport {
    /// Sum of all balances (from an aggregation; exact below 2^53).
    pub total_balance: i64,
    /// Net change that transfers still in flight (pending/terminating with
    /// only some of their applies done) contribute to `total_balance`.
    pub in_flight_delta: i64,
    /// Everything found, in a stable order.
    pub findings: Vec<Finding>,
    /// Repairs made (with `repair`), in words.
    pub repairs: Vec<String>,
}

fn finding(kind: &str, id: &str, detail: String) -> Finding {
    Finding {
        kind: kind.to_string(),
        id: id.to_string(),
        detail,
    }
}

impl Protocol {
    /// Runs the audit; with `repair`, undoes dangling applies whose repair is
    /// unambiguous (rolled-back transaction, or a finished one the account had
    /// already settled) and reports the rest for an operator.
    pub async fn audit(&self, expect_total: Option<i64>, repair: bool) -> Result<AuditReport> {
        let ix = &self.config.indices;
        let mut findings = Vec::new();
        let mut repairs = Vec::new();

        // The sum of balances, read before any repair; repairs then adjust it
        // by exactly what they changed (a search may not see them yet).
        let sum = self
            .cluster()
            .search(
                &ix.accounts,
                json!({"size": 0, "aggs": {"total": {"sum": {"field": "balance"}}}}),
            )
            .await?;
        let mut total_balance = sum
            .pointer("/aggregations/total/value")
            .and_then(Value::as_f64)
            .map(|f| f.round() as i64)
            .ok_or_else(|| Error::Decode("sum aggregation without a value".into()))?;

        // Accounts carrying pending entries, and malformed accounts.
        let accounts = self
            .cluster()
            .scan(
                &ix.accounts,
                json!({"query": {"bool": {"should": [
                    {"exists": {"field": "pending_transactions"}},
                    {"bool": {"must_not": {"exists": {"field": "balance"}}}}
                ], "minimum_should_match": 1}}}),
            )
            .await?;
        let mut carried: BTreeMap<String, Vec<(String, AccountState)>> = BTreeMap::new();
        for hit in &accounts {
            match AccountState::from_source(&hit.source) {
                Ok(state) => {
                    for txn in &state.pending {
                        carried
                            .entry(txn.clone())
                            .or_default()
                            .push((hit.id.clone(), state.clone()));
                    }
                }
                Err(p) => findings.push(finding("malformed_account", &hit.id, p.join("; "))),
            }
        }
        let carried_ids: Vec<String> = carried.keys().cloned().collect();
        let carried_txns = self.transactions_by_id(&carried_ids).await?;
        let mut in_flight_delta = 0i64;
        for (txn_id, holders) in &carried {
            let txn = carried_txns.get(txn_id);
            for (acct, state) in holders {
                let role = txn.and_then(|t| {
                    if t.src.as_deref() == Some(acct) {
                        Some(true)
                    } else if t.dest.as_deref() == Some(acct) {
                        Some(false)
                    } else {
                        None
                    }
                });
                let Some(t) = txn else {
                    findings.push(finding("dangling_pending", acct, format!(
                        "carries `{txn_id}`, which does not exist; its amount is unknown, so repair by hand"
                    )));
                    continue;
                };
                let Some(on_source) = role else {
                    findings.push(finding(
                        "dangling_pending",
                        acct,
                        format!("carries `{txn_id}`, which names other accounts; repair by hand"),
                    ));
                    continue;
                };
                let signed = t.amount.map(|a| if on_source { -a } else { a });
                match &t.state {
                    Some(TxnState::Pending | TxnState::Terminating) => {
                        in_flight_delta += signed.unwrap_or(0)
                    }
                    Some(TxnState::Committed) => {}
                    Some(s @ (TxnState::Finished | TxnState::RolledBack)) => {
                        let settled_before = state.settled_of(txn_id).map(|r| r.outcome)
                            == Some(SettledOutcome::Applied);
                        let repairable = *s == TxnState::RolledBack || settled_before;
                        let what = if *s == TxnState::RolledBack {
                            "applied after its rollback".to_string()
                        } else if settled_before {
                            "applied again after it was committed and removed".to_string()
                        } else {
                            "still pending although finished (a second apply, or steps 5-6 skipped): \
                             check the balance history and repair by hand"
                                .to_string()
                        };
                        let detail = format!(
                            "carries `{txn_id}` ({s}, amount {}): {what}",
                            t.amount.unwrap_or(0)
                        );
                        if repair && repairable {
                            match self
                                .undo_dangling(t, acct, on_source, *s == TxnState::Finished)
                                .await
                            {
                                Ok((msg, delta)) => {
                                    total_balance += delta;
                                    repairs.push(format!("{acct}: {msg}"));
                                    continue;
                                }
                                Err(e) => findings.push(finding(
                                    "dangling_pending",
                                    acct,
                                    format!("{detail}; repair failed: {e}"),
                                )),
                            }
                        } else {
                            let hint = if repairable {
                                "; `audit --repair` undoes it"
                            } else {
                                ""
                            };
                            findings.push(finding(
                                "dangling_pending",
                                acct,
                                format!("{detail}{hint}"),
                            ));
                        }
                    }
                    Some(TxnState::Created) => findings.push(finding(
                        "dangling_pending",
                        acct,
                        format!(
                        "carries `{txn_id}`, which is still created (never pending); repair by hand"
                    ),
                    )),
                    Some(TxnState::Unknown(_)) | None => {}
                }
            }
        }

        // Unknown states and malformed transactions (non-terminal ones matter).
        let odd = self
            .cluster()
            .scan(
                &ix.transactions,
                json!({"query": {"bool": {"must_not": {"terms": {"transaction_state": TxnState::KNOWN.iter().map(TxnState::as_str).collect::<Vec<_>>()}}}}}),
            )
            .await?;
        for hit in &odd {
            let t = Transaction::from_source(&hit.id, &hit.source);
            let kind = if matches!(t.state, Some(TxnState::Unknown(_))) {
                "unknown_state"
            } else {
                "malformed_transaction"
            };
            findings.push(finding(kind, &t.id, t.problems.join("; ")));
        }
        let in_flight = self
            .cluster()
            .scan(
                &ix.transactions,
                json!({"query": {"terms": {"transaction_state": TxnState::NON_TERMINAL_NAMES}}}),
            )
            .await?;
        let mut named: BTreeSet<String> = BTreeSet::new();
        let in_flight: Vec<Transaction> = in_flight
            .iter()
            .map(|h| Transaction::from_source(&h.id, &h.source))
            .collect();
        for t in &in_flight {
            if !t.problems.is_empty() {
                findings.push(finding(
                    "malformed_transaction",
                    &t.id,
                    t.problems.join("; "),
                ));
            }
            named.extend(t.src.iter().cloned());
            named.extend(t.dest.iter().cloned());
        }
        let named: Vec<String> = named.into_iter().collect();
        let existing = self.cluster().mget(&ix.accounts, &named).await?;
        let missing: BTreeSet<&String> = named
            .iter()
            .zip(&existing)
            .filter(|(_, d)| d.is_none())
            .map(|(id, _)| id)
            .collect();
        for t in &in_flight {
            for acct in [&t.src, &t.dest].into_iter().flatten() {
                if missing.contains(acct) {
                    findings.push(finding(
                        "missing_account",
                        &t.id,
                        format!("names account `{acct}`, which does not exist"),
                    ));
                }
            }
        }

        // Stale locks.
        match self.list_locks().await {
            Ok(locks) => {
                for l in locks.iter().filter(|l| l.staleness.is_stale()) {
                    if let super::lock::Staleness::Stale(why) = &l.staleness {
                        findings.push(finding(
                            "stale_lock",
                            &l.info.resource,
                            format!("held by {}: {why}", l.info.holder_label()),
                        ));
                    }
                }
            }
            Err(Error::IndexMissing(_)) => {}
            Err(e) => return Err(e),
        }

        if let Some(expected) = expect_total {
            let settled_total = total_balance - in_flight_delta;
            if settled_total != expected {
                findings.push(finding(
                    "total_mismatch",
                    &ix.accounts,
                    format!(
                        "sum of balances is {total_balance} ({settled_total} with transfers in flight completed or undone), expected {expected}: {:+}",
                        settled_total - expected
                    ),
                ));
            }
        }
        findings.sort_by(|a, b| (&a.kind, &a.id).cmp(&(&b.kind, &b.id)));
        Ok(AuditReport {
            total_balance,
            in_flight_delta,
            findings,
            repairs,
        })
    }

    async fn transactions_by_id(&self, ids: &[String]) -> Result<HashMap<String, Transaction>> {
        let mut out = HashMap::new();
        for chunk in ids.chunks(500) {
            let docs = self
                .cluster()
                .mget(&self.config.indices.transactions, chunk)
                .await?;
            for (id, doc) in chunk.iter().zip(docs) {
                if let Some(d) = doc {
                    out.insert(id.clone(), Transaction::from_source(id, &d.source));
                }
            }
        }
        Ok(out)
    }

    /// Undoes a dangling apply of a terminal transaction on one account with
    /// a conditional write: for a rolled-back transaction with the same undo
    /// rollback uses; for a finished one (a duplicate apply after the account
    /// settled it) keeping the account's `applied` record. Returns what it
    /// did and the balance change it made.
    async fn undo_dangling(
        &self,
        t: &Transaction,
        acct: &str,
        on_source: bool,
        finished: bool,
    ) -> Result<(String, i64)> {
        let transfer = t.transfer()?;
        let applied = if on_source {
            -transfer.amount
        } else {
            transfer.amount
        };
        let now = self.cluster().now();
        let fencing = self.config.fencing;
        let ex = self
            .exec
            .run("account", &self.config.indices.accounts, acct, |src| {
                steps::account_doc(acct, src, |a| {
                    if finished {
                        decide::reverse_duplicate(a, &t.id, applied)
                    } else {
                        decide::undo(a, &t.id, applied, fencing, now)
                    }
                })
            })
            .await?;
        Ok(match ex.outcome {
            Outcome::Updated(e) => {
                let delta = match e {
                    decide::Effect::Undone { delta } => delta,
                    _ => 0,
                };
                (format!("`{}`: {e}", t.id), delta)
            }
            Outcome::Noop(r) => (format!("`{}`: {r}", t.id), 0),
        })
    }
}

/// The JSON of `audit --json`.
pub fn audit_json(r: &AuditReport) -> Value {
    json!({
        "total_balance": r.total_balance,
        "in_flight_delta": r.in_flight_delta,
        "findings": r.findings.iter().map(|f| json!({"kind": f.kind, "id": f.id, "detail": f.detail})).collect::<Vec<_>>(),
        "repairs": r.repairs,
    })
}
