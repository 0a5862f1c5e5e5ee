//! The documents the poll's page names: the accounts its transactions
//! move money between (with those carrying pending entries), and its locks
//! judged on their owner transactions and their holders' heartbeats.

use super::Poll;
use crate::error::Result;
use crate::protocol::account::AccountState;
use crate::protocol::lock::liveness::read_heartbeats;
use crate::protocol::lock::LockInfo;
use crate::protocol::locks::LockView;
use crate::protocol::read::by_id::by_ids;
use crate::protocol::read::scan::total_hits;
use crate::protocol::read::snapshot::AccountEntry;
use crate::protocol::transaction::Transaction;
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

impl Poll<'_> {
    /// The accounts carrying pending entries (from the `_msearch`), and
    /// every other account the listed transactions name, read by id; with
    /// how many carry pending entries in all.
    pub(super) async fn accounts(
        &mut self,
        pending_accounts: Option<&Value>,
        transactions: &[Transaction],
    ) -> Result<(BTreeMap<String, AccountEntry>, u64)> {
        let mut accounts: BTreeMap<String, AccountEntry> = BTreeMap::new();
        let mut pending_accounts_total = 0;
        if let Some(v) = pending_accounts {
            pending_accounts_total = total_hits(v);
            for h in crate::cluster::hits(v)? {
                accounts.insert(h.id.clone(), entry(&h.source));
            }
        }
        let named: Vec<String> = transactions
            .iter()
            .flat_map(|t| [t.src.clone(), t.dest.clone()])
            .flatten()
            .filter(|id| !accounts.contains_key(id))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !named.is_empty() && !self.missing.contains(&self.ix.accounts) {
            self.requests += 1;
            let by_search = self.d.accounts.id_problem().is_some();
            let docs = by_ids(
                self.cluster,
                &self.ix.accounts,
                &named,
                by_search,
                &mut self.coverage,
            )
            .await?;
            for (id, doc) in named.iter().zip(docs) {
                accounts.insert(
                    id.clone(),
                    doc.map(|src| entry(&src)).unwrap_or(AccountEntry::Missing),
                );
            }
        }
        Ok((accounts, pending_accounts_total))
    }

    /// The locks (from the `_msearch`) judged on their owners (the listed
    /// transactions, others read by id) and their holders' heartbeats; with
    /// how many locks there are in all.
    pub(super) async fn locks(
        &mut self,
        locks: Option<&Value>,
        transactions: &[Transaction],
        windows: &ProtocolConfig,
        taken_at: DateTime<Utc>,
    ) -> Result<(Vec<LockView>, u64)> {
        let mut locks_total = 0;
        let infos: Vec<LockInfo> = match locks {
            Some(v) => {
                locks_total = total_hits(v);
                crate::cluster::hits(v)?
                    .iter()
                    .map(|h| LockInfo::from_source(&h.id, &h.source))
                    .collect()
            }
            None => Vec::new(),
        };
        let mut owner_states: HashMap<String, Transaction> = transactions
            .iter()
            .map(|t| (t.id.clone(), t.clone()))
            .collect();
        let unknown_owners: Vec<String> = infos
            .iter()
            .filter_map(|l| l.owner.clone())
            .filter(|o| !owner_states.contains_key(o))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !unknown_owners.is_empty() && !self.missing.contains(&self.ix.transactions) {
            self.requests += 1;
            let by_search = self.d.transactions.id_problem().is_some();
            let docs = by_ids(
                self.cluster,
                &self.ix.transactions,
                &unknown_owners,
                by_search,
                &mut self.coverage,
            )
            .await?;
            for (id, doc) in unknown_owners.iter().zip(docs) {
                if let Some(src) = doc {
                    owner_states.insert(id.clone(), Transaction::from_source(id, &src));
                }
            }
        }
        let holders = crate::protocol::read::locks::holders_to_ask(&infos, &owner_states);
        let beats = match &windows.liveness {
            Some(source) if !holders.is_empty() => {
                self.requests += 1;
                // Without them the holders' locks are judged unknown: never acted on.
                read_heartbeats(self.cluster, source, &holders)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "heartbeats unreadable");
                        Default::default()
                    })
            }
            _ => Default::default(),
        };
        let locks = infos
            .into_iter()
            .map(|info| LockView::judge(info, &owner_states, &beats, taken_at, windows))
            .collect();
        Ok((locks, locks_total))
    }
}

/// An account document as the dashboard knows it: readable, or its problems.
fn entry(src: &serde_json::Map<String, Value>) -> AccountEntry {
    match AccountState::from_source(src) {
        Ok(s) => AccountEntry::Ok(s),
        Err(p) => AccountEntry::Malformed(p),
    }
}
