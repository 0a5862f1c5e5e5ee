//! One poll of the cluster: what the dashboard shows, loaded with a fixed,
//! small number of requests whatever the number of finished transactions —
//! an aggregation for the per-state counts, filtered queries for the
//! transactions in flight, the accounts with pending entries and the locks
//! (all in one `_msearch`), one multi-get for the accounts those
//! transactions name, and the cluster health; documents in unknown states
//! cost one more search, only when the aggregation shows there are some.

use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::protocol::account::AccountState;
use crate::protocol::lock::{LockInfo, Owner};
use crate::protocol::locks::LockView;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::Indices;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// Count and age of one state.
#[derive(Debug, Clone, PartialEq)]
pub struct StateCount {
    /// The state (unknown ones verbatim; `None` = field missing).
    pub state: Option<TxnState>,
    /// Documents in it.
    pub count: u64,
    /// Oldest modification time in it.
    pub oldest: Option<DateTime<Utc>>,
}

/// An account as the dashboard knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum AccountEntry {
    /// Readable.
    Ok(AccountState),
    /// Present but unreadable, with the problems.
    Malformed(Vec<String>),
    /// Named by a transaction but absent.
    Missing,
}

/// Everything one poll loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// When the poll started (the data is "as of" this time).
    pub taken_at: DateTime<Utc>,
    /// How long the poll took.
    pub duration: Duration,
    /// Requests it made.
    pub requests: u32,
    /// Cluster health colour (`green`, `yellow`, `red`) if known.
    pub health: Option<String>,
    /// Per-state counts, protocol order first, then unknown states.
    pub state_counts: Vec<StateCount>,
    /// Transactions in flight (oldest first, capped) then odd ones.
    pub transactions: Vec<Transaction>,
    /// How many transactions are in flight in all (the list may be capped).
    pub in_flight_total: u64,
    /// Accounts named by the listed transactions or carrying pending entries.
    pub accounts: BTreeMap<String, AccountEntry>,
    /// Every lock (capped), oldest first.
    pub locks: Vec<LockView>,
    /// Indices that do not exist.
    pub missing_indices: Vec<String>,
}

/// Most in-flight transactions one poll lists.
pub const DEFAULT_CAP: usize = 500;

/// Loads a snapshot; `cap` bounds the listed transactions.
pub async fn load(cluster: &Cluster, ix: &Indices, cap: usize) -> Result<Snapshot> {
    let started = Instant::now();
    let taken_at = Utc::now();
    let mut requests = 0u32;
    let mut missing = BTreeSet::new();

    let searches = vec![
        (
            ix.transactions.clone(),
            json!({"size": 0, "track_total_hits": true, "aggs": {"states": {
                "terms": {"field": "transaction_state", "size": 100, "missing": "\u{0}missing"},
                "aggs": {"oldest": {"min": {"field": "modification_time"}}}}}}),
        ),
        (
            ix.transactions.clone(),
            json!({"size": cap, "track_total_hits": true,
                "query": {"terms": {"transaction_state": TxnState::NON_TERMINAL_NAMES}},
                "sort": [{"modification_time": {"order": "asc", "unmapped_type": "date"}}]}),
        ),
        (
            ix.accounts.clone(),
            json!({"size": 200, "query": {"exists": {"field": "pending_transactions"}}}),
        ),
        (
            ix.locks.clone(),
            json!({"size": 500, "sort": [{"created_at": {"order": "asc", "unmapped_type": "date"}}]}),
        ),
    ];
    requests += 1;
    let mut answers = cluster.msearch(&searches).await?.into_iter();
    let mut next = |missing: &mut BTreeSet<String>| -> Result<Option<Value>> {
        match answers.next() {
            Some(Ok(v)) => Ok(Some(v)),
            Some(Err(Error::IndexMissing(i))) => {
                missing.insert(i);
                Ok(None)
            }
            Some(Err(e)) => Err(e),
            None => Err(Error::Decode(
                "msearch returned fewer answers than asked".into(),
            )),
        }
    };
    let counts = next(&mut missing)?;
    let in_flight = next(&mut missing)?;
    let pending_accounts = next(&mut missing)?;
    let locks = next(&mut missing)?;

    let state_counts = counts.as_ref().map(state_counts).unwrap_or_default();
    let mut transactions = Vec::new();
    let mut in_flight_total = 0;
    if let Some(v) = &in_flight {
        in_flight_total = total_hits(v);
        transactions.extend(
            crate::cluster::hits(v)?
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source)),
        );
    }
    // Documents in unknown states or with no state: fetched only when the
    // aggregation says there are some, so a healthy cluster pays nothing.
    let odd_states: Vec<&str> = state_counts
        .iter()
        .filter(|c| c.count > 0)
        .filter_map(|c| match &c.state {
            Some(TxnState::Unknown(s)) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    let stateless = state_counts
        .iter()
        .any(|c| c.state.is_none() && c.count > 0);
    if !odd_states.is_empty() || stateless {
        requests += 1;
        let query = json!({"size": 100, "query": {"bool": {"should": [
            {"terms": {"transaction_state": odd_states}},
            {"bool": {"must_not": {"exists": {"field": "transaction_state"}}}}
        ], "minimum_should_match": 1}}});
        let odd = cluster.search(&ix.transactions, query).await?;
        transactions.extend(
            crate::cluster::hits(&odd)?
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source)),
        );
    }

    let mut accounts: BTreeMap<String, AccountEntry> = BTreeMap::new();
    if let Some(v) = &pending_accounts {
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
    if !named.is_empty() && !missing.contains(&ix.accounts) {
        requests += 1;
        for (id, doc) in named.iter().zip(cluster.mget(&ix.accounts, &named).await?) {
            accounts.insert(
                id.clone(),
                doc.map(|d| entry(&d.source))
                    .unwrap_or(AccountEntry::Missing),
            );
        }
    }

    let infos: Vec<LockInfo> = match &locks {
        Some(v) => crate::cluster::hits(v)?
            .iter()
            .map(|h| LockInfo::from_source(&h.id, &h.source))
            .collect(),
        None => Vec::new(),
    };
    let mut owner_states: HashMap<String, Option<TxnState>> = transactions
        .iter()
        .map(|t| (t.id.clone(), t.state.clone()))
        .collect();
    let unknown_owners: Vec<String> = infos
        .iter()
        .filter_map(|l| l.owner.clone())
        .filter(|o| !owner_states.contains_key(o))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !unknown_owners.is_empty() && !missing.contains(&ix.transactions) {
        requests += 1;
        for (id, doc) in unknown_owners
            .iter()
            .zip(cluster.mget(&ix.transactions, &unknown_owners).await?)
        {
            if let Some(d) = doc {
                owner_states.insert(id.clone(), Transaction::from_source(id, &d.source).state);
            }
        }
    }
    let locks = infos
        .into_iter()
        .map(|info| {
            let found = info.owner.as_ref().and_then(|o| owner_states.get(o));
            let staleness = info.staleness(Owner::from_lookup(found.map(Option::as_ref)), taken_at);
            let owner_state = found.cloned().flatten();
            LockView {
                info,
                owner_state,
                staleness,
            }
        })
        .collect();

    requests += 1;
    let health = match cluster.health().await {
        Ok(h) => h.get("status").and_then(Value::as_str).map(str::to_string),
        Err(e) => {
            tracing::debug!(error = %e, "health unavailable");
            None
        }
    };

    Ok(Snapshot {
        taken_at,
        duration: started.elapsed(),
        requests,
        health,
        state_counts,
        transactions,
        in_flight_total,
        accounts,
        locks,
        missing_indices: missing.into_iter().collect(),
    })
}

fn entry(src: &serde_json::Map<String, Value>) -> AccountEntry {
    match AccountState::from_source(src) {
        Ok(s) => AccountEntry::Ok(s),
        Err(p) => AccountEntry::Malformed(p),
    }
}

fn total_hits(v: &Value) -> u64 {
    v.pointer("/hits/total/value")
        .or_else(|| v.pointer("/hits/total"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn state_counts(v: &Value) -> Vec<StateCount> {
    let mut by_name: BTreeMap<String, StateCount> = BTreeMap::new();
    for b in v
        .pointer("/aggregations/states/buckets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = b
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let count = b.get("doc_count").and_then(Value::as_u64).unwrap_or(0);
        let oldest = b
            .pointer("/oldest/value")
            .and_then(Value::as_f64)
            .and_then(|ms| DateTime::from_timestamp_millis(ms as i64));
        let state = if name == "\u{0}missing" {
            None
        } else {
            Some(TxnState::parse(&name))
        };
        by_name.insert(
            name,
            StateCount {
                state,
                count,
                oldest,
            },
        );
    }
    let mut out: Vec<StateCount> = TxnState::KNOWN
        .iter()
        .map(|s| {
            by_name.remove(s.as_str()).unwrap_or(StateCount {
                state: Some(s.clone()),
                count: 0,
                oldest: None,
            })
        })
        .collect();
    out.extend(by_name.into_values());
    out
}
