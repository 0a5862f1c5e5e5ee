//! The documents the poll's page names: the accounts its transactions
//! move money between (with those carrying pending entries), and its locks
//! judged on their owner transactions and their holders' heartbeats. The
//! accounts and the owners not on the page are read in one request (a
//! multi-index `_mget`: [`by_ids_across`]), each index's answer on its own:
//! an owners index the user may not read leaves those locks unknown (never
//! acted on) and the accounts shown.

use super::{Answers, Poll};
use crate::error::{Error, Result};
use crate::protocol::account::AccountState;
use crate::protocol::locks::liveness::read_heartbeats;
use crate::protocol::locks::LockInfo;
use crate::protocol::locks::LockView;
use crate::protocol::read::by_id::{by_ids_across, IdRead, ReadDocs};
use crate::protocol::read::scan::total_hits;
use crate::protocol::read::snapshot::AccountEntry;
use crate::protocol::transaction::Transaction;
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What the page names, read: the accounts and the judged locks, with
/// how many accounts carry pending entries and how many locks there are.
pub(super) struct Named {
    pub accounts: BTreeMap<String, AccountEntry>,
    pub pending_accounts_total: u64,
    pub locks: Vec<LockView>,
    pub locks_total: u64,
}

impl Poll<'_> {
    /// The accounts carrying pending entries and the locks (from the
    /// `_msearch`), every other account the listed `transactions` name and
    /// the locks' owners not listed, read by id in one request, and the
    /// locks judged under `windows` at `taken_at`.
    pub(super) async fn named(
        &mut self,
        a: &Answers,
        transactions: &[Transaction],
        windows: &ProtocolConfig,
        taken_at: DateTime<Utc>,
    ) -> Result<Named> {
        let (mut accounts, pending_accounts_total) = pending(a.pending_accounts.as_ref())?;
        let (infos, locks_total) = lock_infos(a.locks.as_ref())?;
        let mut owners: HashMap<String, Transaction> = transactions
            .iter()
            .map(|t| (t.id.clone(), t.clone()))
            .collect();
        let unlisted_accounts = self.unless_missing(
            &self.ix.accounts,
            transactions
                .iter()
                .flat_map(|t| [t.src.clone(), t.dest.clone()])
                .flatten()
                .filter(|id| !accounts.contains_key(id)),
        );
        let unlisted_owners = self.unless_missing(
            &self.ix.transactions,
            infos
                .iter()
                .filter_map(|l| l.owner.clone())
                .filter(|o| !owners.contains_key(o)),
        );
        let (accounts_read, owners_read) = self.read(&unlisted_accounts, &unlisted_owners).await?;
        for (id, doc) in unlisted_accounts.iter().zip(accounts_read?) {
            let found = doc.map(|src| entry(&src));
            accounts.insert(id.clone(), found.unwrap_or(AccountEntry::Missing));
        }
        self.owners_read(&unlisted_owners, owners_read, &mut owners)?;
        let locks = self.judge(infos, &owners, windows, taken_at).await;
        Ok(Named {
            accounts,
            pending_accounts_total,
            locks,
            locks_total,
        })
    }

    /// `ids`, sorted and deduplicated; none when the poll found `index`
    /// missing.
    fn unless_missing(&self, index: &str, ids: impl Iterator<Item = String>) -> Vec<String> {
        if self.missing.contains(index) {
            return Vec::new();
        }
        ids.collect::<BTreeSet<_>>().into_iter().collect()
    }

    /// The accounts and the owner transactions by id: one multi-index
    /// `_mget` (or a search for an index a multi-get cannot read: an alias
    /// over several indices), each index's answer on its own.
    async fn read(
        &mut self,
        accounts: &[String],
        owners: &[String],
    ) -> Result<(ReadDocs, ReadDocs)> {
        let reads = [
            IdRead {
                index: &self.ix.accounts,
                ids: accounts,
                by_search: self.d.accounts.id_problem().is_some(),
            },
            IdRead {
                index: &self.ix.transactions,
                ids: owners,
                by_search: self.d.transactions.id_problem().is_some(),
            },
        ];
        let answers = by_ids_across(self.cluster, &reads, &mut self.coverage).await?;
        let mut answers = answers.into_iter();
        let mut next = || {
            answers
                .next()
                .unwrap_or_else(|| Err(Error::Decode("a read by id went unanswered".into())))
        };
        Ok((next(), next()))
    }

    /// The owners read into `owners`. Their index gone since the search:
    /// noted missing (no owner found). Unreadable for another lasting reason
    /// (the user may not read it): each kept as an owner without a readable
    /// state, so its locks are judged unknown (never swept), and the poll
    /// warns. A transient failure fails the poll, which is retried.
    fn owners_read(
        &mut self,
        ids: &[String],
        read: ReadDocs,
        owners: &mut HashMap<String, Transaction>,
    ) -> Result<()> {
        match read {
            Ok(docs) => {
                for (id, src) in ids.iter().zip(docs) {
                    if let Some(src) = src {
                        owners.insert(id.clone(), Transaction::from_source(id, &src));
                    }
                }
            }
            Err(Error::IndexMissing(i)) => {
                self.missing.insert(i);
            }
            Err(e) if e.is_transient() => return Err(e),
            Err(e) => {
                tracing::warn!(error = %e, "lock owners unreadable");
                self.locks_judged_blind = true;
                self.warnings.push(format!(
                    "the owners of {} lock(s) could not be read ({e}): those locks are unknown",
                    ids.len()
                ));
                for id in ids {
                    owners.insert(id.clone(), Transaction::from_source(id, &Map::new()));
                }
            }
        }
        Ok(())
    }

    /// `infos` judged on their `owners` and their holders' heartbeats.
    async fn judge(
        &mut self,
        infos: Vec<LockInfo>,
        owners: &HashMap<String, Transaction>,
        windows: &ProtocolConfig,
        taken_at: DateTime<Utc>,
    ) -> Vec<LockView> {
        let holders = crate::protocol::locks::read::holders_to_ask(&infos, owners);
        let beats = match &windows.liveness {
            Some(source) if !holders.is_empty() => {
                // Without them the holders' locks are judged unknown: never acted on.
                read_heartbeats(self.cluster, source, &holders)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "heartbeats unreadable");
                        self.locks_judged_blind = true;
                        Default::default()
                    })
            }
            _ => Default::default(),
        };
        infos
            .into_iter()
            .map(|info| LockView::judge(info, owners, &beats, taken_at, windows))
            .collect()
    }
}

/// The accounts carrying pending entries (from the `_msearch`), with how
/// many there are in all.
fn pending(answer: Option<&Value>) -> Result<(BTreeMap<String, AccountEntry>, u64)> {
    let mut accounts = BTreeMap::new();
    let Some(v) = answer else {
        return Ok((accounts, 0));
    };
    for h in crate::cluster::hit_refs(v)? {
        accounts.insert(h.id.to_string(), entry(h.source));
    }
    Ok((accounts, total_hits(v)))
}

/// The locks (from the `_msearch`), with how many there are in all.
fn lock_infos(answer: Option<&Value>) -> Result<(Vec<LockInfo>, u64)> {
    let Some(v) = answer else {
        return Ok((Vec::new(), 0));
    };
    let infos = crate::cluster::hit_refs(v)?
        .iter()
        .map(|h| LockInfo::from_source(h.id, h.source))
        .collect();
    Ok((infos, total_hits(v)))
}

/// An account document as the dashboard knows it: readable, or its problems.
fn entry(src: &Map<String, Value>) -> AccountEntry {
    match AccountState::from_source(src) {
        Ok(s) => AccountEntry::Ok(s),
        Err(p) => AccountEntry::Malformed(p),
    }
}
