//! The audit's part on the documents themselves: transactions in unknown
//! states or malformed, in-flight ones without a modification time or
//! naming accounts that do not exist, and stale locks. Each finding is
//! confirmed by a read by id (realtime) before it is reported.

use super::{finding, FindingKind, Found};
use crate::error::{Error, Result};
use crate::protocol::read::rules::{is_only_undated, within_window};
use crate::protocol::read::{Queries, Scan};
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::Protocol;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};

impl Protocol {
    /// Finds the transactions in unknown states or malformed, the undated
    /// ones in flight, and those naming missing accounts. Refuses a partial
    /// view unless `allow_partial`.
    pub(super) async fn audit_transactions(
        &self,
        q: &Queries<'_>,
        allow_partial: bool,
        found: &mut Found,
    ) -> Result<()> {
        self.audit_odd_states(q, found).await?;
        let named = self.audit_in_flight(q, allow_partial, found).await?;
        self.audit_named_accounts(q, named, found).await
    }

    /// Unknown states and malformed transactions, confirmed by id.
    async fn audit_odd_states(&self, q: &Queries<'_>, found: &mut Found) -> Result<()> {
        let ix = &self.config.indices;
        let mut odd_hits = Vec::new();
        let odd = crate::protocol::read::scan::scan(
            self.cluster(),
            &ix.transactions,
            Scan::new(q.odd_states(), vec![]),
            |page| {
                odd_hits.extend(page.into_iter().map(|h| h.id));
                true
            },
        )
        .await?;
        found.coverage.add(odd.coverage);
        let odd_txns = self.transactions_by_id(&odd_hits).await?;
        for id in &odd_hits {
            let Some(t) = odd_txns.get(id) else { continue };
            let kind = match &t.state {
                Some(TxnState::Unknown(_)) => FindingKind::UnknownState,
                Some(_) => continue, // it has a known state after all
                None => FindingKind::MalformedTransaction,
            };
            found
                .findings
                .push(finding(kind, &t.id, t.problems.to_string()));
        }
        Ok(())
    }

    /// In-flight transactions, folded page by page (memory does not grow
    /// with their number): the malformed or undated ones are findings; the
    /// accounts they name come back, to be checked by id.
    async fn audit_in_flight(
        &self,
        q: &Queries<'_>,
        allow_partial: bool,
        found: &mut Found,
    ) -> Result<BTreeSet<String>> {
        let mut named: BTreeSet<String> = BTreeSet::new();
        let scanned = self
            .scan_transactions(q.in_flight(), |page| {
                for t in &page {
                    if is_only_undated(t) {
                        found.findings.push(finding(
                            FindingKind::UndatedTransaction,
                            &t.id,
                            format!("{}: its age is unknown, so it counts as stuck", t.problems),
                        ));
                    } else if !t.problems.is_empty() {
                        found.findings.push(finding(
                            FindingKind::MalformedTransaction,
                            &t.id,
                            t.problems.to_string(),
                        ));
                    }
                    named.extend(t.src.iter().cloned());
                    named.extend(t.dest.iter().cloned());
                }
                true
            })
            .await?;
        found.coverage.add(scanned.coverage);
        found.coverage.require_complete(allow_partial, "audit")?;
        Ok(named)
    }

    /// The accounts in-flight transactions name, checked by id; the
    /// transactions naming a missing one are found by a second query, only
    /// when there is one.
    async fn audit_named_accounts(
        &self,
        q: &Queries<'_>,
        named: BTreeSet<String>,
        found: &mut Found,
    ) -> Result<()> {
        let ix = &self.config.indices;
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
                            found.findings.push(finding(
                                FindingKind::MissingAccount,
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
        Ok(())
    }

    /// Finds the stale locks, each re-judged from a fresh read by id.
    pub(super) async fn audit_locks(&self, found: &mut Found) -> Result<()> {
        let ix = &self.config.indices;
        // Nothing is written from this listing, and repairs may already be
        // made: a partial one is a finding, not a refusal.
        match self.list_locks_with(false).await {
            Ok(listing) => {
                let locks = listing.locks;
                if let Some(partial) = listing.summary.coverage.describe() {
                    let detail =
                        format!("the locks listing was {partial}: stale locks may be missing");
                    found
                        .findings
                        .push(finding(FindingKind::PartialLocks, &ix.locks, detail));
                }
                // Confirmed by reading them again, all at once.
                let stale: Vec<String> = locks
                    .iter()
                    .filter(|l| l.staleness.is_stale())
                    .map(|l| l.info.resource.clone())
                    .collect();
                for fresh in self.lock_views(&stale).await? {
                    if self.owner_just_ended(&fresh).await? {
                        continue;
                    }
                    if let crate::protocol::locks::Staleness::Stale(why) = &fresh.staleness {
                        found.findings.push(finding(
                            FindingKind::StaleLock,
                            &fresh.info.resource,
                            format!("held by {}: {why}", fresh.info.holder_label()),
                        ));
                    }
                }
            }
            Err(Error::IndexMissing(_)) => {}
            Err(e) => return Err(e),
        }

        Ok(())
    }

    /// Whether the lock's owner ended within the recovery window: its
    /// worker releases its locks right after, so under live traffic such a
    /// lock is not (yet) a finding.
    async fn owner_just_ended(&self, lock: &crate::protocol::locks::LockView) -> Result<bool> {
        let Some(owner) = &lock.info.owner else {
            return Ok(false);
        };
        if !lock.owner_state.as_ref().is_some_and(TxnState::is_terminal) {
            return Ok(false);
        }
        let window = self.config.recovery_window;
        let now = self.now().await;
        Ok(match self.read_transaction(owner).await? {
            Some((t, _)) => t
                .modification_time
                .is_some_and(|m| within_window(m, now, window)),
            None => false,
        })
    }

    /// The transactions among `ids` that exist, read by id.
    pub(super) async fn transactions_by_id(
        &self,
        ids: &[String],
    ) -> Result<HashMap<String, Transaction>> {
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
}
