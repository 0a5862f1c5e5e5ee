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
//! in flight (`audit_view.rs`: which accounts had applied each transfer)
//! come from one point-in-time view where the server has one (otherwise the
//! report says the total is approximate); and a finding is reported only after the documents involved
//! were re-read by id (realtime), in an order that cannot mistake a transfer
//! in progress for a dangling entry: the transaction first (terminal states
//! are final), then the account again.

use super::account::{AccountState, SettledOutcome};
use super::decide;
use super::executor::Outcome;
use super::read::rules::within_window;
use super::read::{Coverage, Queries, Scan};
use super::steps;
use super::transaction::{read_integer, Transaction, TxnState};
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
    /// Sum of all balances, exact.
    pub total_balance: i64,
    /// Net change that transfers still in flight (pending/terminating with
    /// only some of their applies done) contribute to `total_balance`.
    pub in_flight_delta: i64,
    /// Everything found, in a stable order.
    pub findings: Vec<Finding>,
    /// Repairs made (with `repair`), in words.
    pub repairs: Vec<String>,
    /// Whether the total and the accounts scan came from one point-in-time
    /// view; when not, the total is approximate while transfers run.
    pub consistent_view: bool,
    /// Shards behind the audit's searches.
    pub coverage: Coverage,
}

fn finding(kind: &str, id: &str, detail: String) -> Finding {
    Finding {
        kind: kind.to_string(),
        id: id.to_string(),
        detail,
    }
}

/// Whether a transaction's only problem is its modification time.
fn only_undated(t: &Transaction) -> bool {
    super::read::rules::is_undated(t) && t.problems.iter().all(|p| p.contains("modification_time"))
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
            return Err(Error::Invalid(format!("cannot audit: {p}")));
        }
        let q = Queries::new(&d.fields);
        let mut findings = Vec::new();
        let mut repairs = Vec::new();
        let mut coverage = Coverage::default();

        // Every account from one view: the sum of balances, summed exactly in
        // integers as the pages go by (a `sum` aggregation is a double and
        // rounds), keeping only the accounts that carry pending entries or are
        // malformed. Repairs then adjust the total by exactly what they change
        // (a search may not see them yet).
        let mut accounts = Vec::new();
        let mut exact: i128 = 0;
        let view_at = self.cluster().now();
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
        coverage.add(scanned.coverage);
        let scanned_view = scanned.point_in_time;
        let mut total_balance = i64::try_from(exact).map_err(|_| {
            Error::Decode(format!("sum of balances {exact} does not fit in 64 bits"))
        })?;
        coverage.require_complete(allow_partial, "audit")?;

        let mut carried: BTreeMap<String, Vec<(String, AccountState)>> = BTreeMap::new();
        let mut malformed_accounts = Vec::new();
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
                Err(_) => malformed_accounts.push(hit.id.clone()),
            }
        }
        // Confirm malformed accounts by id.
        for (id, doc) in malformed_accounts.iter().zip(
            self.cluster()
                .mget(&ix.accounts, &malformed_accounts)
                .await?,
        ) {
            if let Some(Err(p)) = doc.map(|d| AccountState::from_source(&d.source)) {
                findings.push(finding("malformed_account", id, p.join("; ")));
            }
        }
        // Transactions by id first, then the accounts again: a transaction
        // seen terminal stays terminal, so an account still carrying it
        // after that read really is dangling.
        let carried_ids: Vec<String> = carried.keys().cloned().collect();
        let carried_txns = self.transactions_by_id(&carried_ids).await?;
        // The correction for transfers in flight, from the same view as the
        // total (see audit_view.rs).
        let in_flight_delta = super::audit_view::one_sided_delta(
            &carried,
            &carried_txns,
            view_at,
            self.config.fencing == super::decide::Fencing::On,
        );
        let holders: Vec<String> = carried
            .values()
            .flatten()
            .map(|(a, _)| a.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let fresh: HashMap<String, AccountState> = holders
            .iter()
            .zip(self.cluster().mget(&ix.accounts, &holders).await?)
            .filter_map(|(id, d)| {
                d.and_then(|d| AccountState::from_source(&d.source).ok())
                    .map(|s| (id.clone(), s))
            })
            .collect();
        for (txn_id, list) in carried.iter_mut() {
            list.retain_mut(|(acct, state)| match fresh.get(acct) {
                Some(now) if now.carries(txn_id) => {
                    *state = now.clone();
                    true
                }
                _ => false,
            });
        }
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
                match &t.state {
                    // In flight: counted from the view (see audit_view.rs).
                    Some(TxnState::Pending | TxnState::Terminating | TxnState::Committed) => {}
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

        // Unknown states and malformed transactions, confirmed by id.
        let mut odd_hits = Vec::new();
        let odd = super::read::scan::scan(
            self.cluster(),
            &ix.transactions,
            Scan::new(q.odd_states(), vec![]),
            |page| {
                odd_hits.extend(page.into_iter().map(|h| h.id));
                true
            },
        )
        .await?;
        coverage.add(odd.coverage);
        let odd_txns = self.transactions_by_id(&odd_hits).await?;
        for id in &odd_hits {
            let Some(t) = odd_txns.get(id) else { continue };
            let kind = match &t.state {
                Some(TxnState::Unknown(_)) => "unknown_state",
                Some(_) => continue, // it has a known state after all
                None => "malformed_transaction",
            };
            findings.push(finding(kind, &t.id, t.problems.join("; ")));
        }
        // In-flight transactions, folded page by page (memory does not grow
        // with their number): malformed or undated ones, and the accounts
        // they name, checked by id; the transactions naming a missing
        // account are found by a second query, only when there is one.
        let mut named: BTreeSet<String> = BTreeSet::new();
        let scanned = self
            .scan_transactions(q.in_flight(), |page| {
                for t in &page {
                    if only_undated(t) {
                        findings.push(finding(
                            "undated_transaction",
                            &t.id,
                            format!(
                                "{}: its age is unknown, so it counts as stuck",
                                t.problems.join("; ")
                            ),
                        ));
                    } else if !t.problems.is_empty() {
                        findings.push(finding(
                            "malformed_transaction",
                            &t.id,
                            t.problems.join("; "),
                        ));
                    }
                    named.extend(t.src.iter().cloned());
                    named.extend(t.dest.iter().cloned());
                }
                true
            })
            .await?;
        coverage.add(scanned.coverage);
        coverage.require_complete(allow_partial, "audit")?;
        let named: Vec<String> = named.into_iter().collect();
        let mut missing: BTreeSet<String> = BTreeSet::new();
        for chunk in named.chunks(1000) {
            let existing = self.cluster().mget(&ix.accounts, chunk).await?;
            missing.extend(
                chunk
                    .iter()
                    .zip(&existing)
                    .filter(|(_, d)| d.is_none())
                    .map(|(id, _)| id.clone()),
            );
        }
        if !missing.is_empty() {
            let ids: Vec<String> = missing.iter().cloned().collect();
            let query = json!({"bool": {"filter": [q.in_flight(), q.naming_accounts(&ids)]}});
            self.scan_transactions(query, |page| {
                for t in &page {
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
                true
            })
            .await?;
        }

        // Stale locks, each re-judged from a fresh read by id.
        // Nothing is written from this listing, and repairs may already be
        // made: a partial one is a finding, not a refusal.
        match self.list_locks_with(false).await {
            Ok(listing) => {
                let locks = listing.locks;
                if let Some(partial) = listing.summary.coverage.describe() {
                    let detail =
                        format!("the locks listing was {partial}: stale locks may be missing");
                    findings.push(finding("partial_locks", &ix.locks, detail));
                }
                for l in locks.iter().filter(|l| l.staleness.is_stale()) {
                    let Some(fresh) = self.lock_view(&l.info.resource).await? else {
                        continue;
                    };
                    if self.owner_just_ended(&fresh).await? {
                        continue;
                    }
                    if let super::lock::Staleness::Stale(why) = &fresh.staleness {
                        findings.push(finding(
                            "stale_lock",
                            &fresh.info.resource,
                            format!("held by {}: {why}", fresh.info.holder_label()),
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
            consistent_view: scanned_view,
            coverage,
        })
    }

    /// Whether the lock's owner ended within the recovery window: its
    /// worker releases its locks right after, so under live traffic such a
    /// lock is not (yet) a finding.
    async fn owner_just_ended(&self, lock: &super::locks::LockView) -> Result<bool> {
        let Some(owner) = &lock.info.owner else {
            return Ok(false);
        };
        if !lock.owner_state.as_ref().is_some_and(TxnState::is_terminal) {
            return Ok(false);
        }
        let window = self.config.recovery_window;
        Ok(match self.read_transaction(owner).await? {
            Some((t, _)) => t
                .modification_time
                .is_some_and(|m| within_window(m, self.cluster().now(), window)),
            None => false,
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
        let fencing = self.config.fencing;
        let ex = self
            .exec
            .run("account", &self.config.indices.accounts, acct, |src| {
                steps::account_doc(acct, src, |a| {
                    if finished {
                        decide::reverse_duplicate(a, &t.id, applied)
                    } else {
                        decide::undo(a, &t.id, applied, fencing)
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
