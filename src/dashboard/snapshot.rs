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
use crate::protocol::lock::LockInfo;
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

/// Loads a snapshot; `cap` bounds the listed transactions; locks are
/// judged stale with the `recovery_window` (the one stuck rule).
pub async fn load(
    cluster: &Cluster,
    ix: &Indices,
    cap: usize,
    recovery_window: Duration,
) -> Result<Snapshot> {
    let started = Instant::now();
    // Health runs alongside the searches and waits at most a few seconds
    // for the master: it can never hold the poll up.
    let health = cluster.start_health();
    let taken_at = cluster.now();
    let mut requests = 0u32;
    let mut missing = BTreeSet::new();

    let by_state = json!({"states": {
        "terms": {"field": "transaction_state", "size": 100, "missing": MISSING_KEY},
        "aggs": {"oldest": {"min": {"field": "modification_time"}}}}});
    let count_of = |state: &str| json!({"size": 0, "track_total_hits": true, "query": {"term": {"transaction_state": state}}});
    let searches = vec![
        // In flight: the listed rows plus counts and oldest per state; the
        // aggregation only walks the (few) non-terminal documents.
        (
            ix.transactions.clone(),
            json!({"size": cap, "track_total_hits": true,
                "query": {"terms": {"transaction_state": TxnState::NON_TERMINAL_NAMES}},
                "sort": [{"modification_time": {"order": "asc", "unmapped_type": "date"}}],
                "aggs": by_state.clone()}),
        ),
        // Terminal states and the grand total are plain counts (the index,
        // not the documents, answers them).
        (ix.transactions.clone(), count_of("finished")),
        (ix.transactions.clone(), count_of("rolled-back")),
        (
            ix.transactions.clone(),
            json!({"size": 0, "track_total_hits": true}),
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
    let in_flight = next(&mut missing)?;
    let finished = next(&mut missing)?;
    let rolled_back = next(&mut missing)?;
    let total = next(&mut missing)?;
    let pending_accounts = next(&mut missing)?;
    let locks = next(&mut missing)?;

    let mut buckets = in_flight.as_ref().map(buckets).unwrap_or_default();
    for (state, v) in [
        (TxnState::Finished, &finished),
        (TxnState::RolledBack, &rolled_back),
    ] {
        if let Some(v) = v {
            buckets.push(StateCount {
                state: Some(state),
                count: total_hits(v),
                oldest: None,
            });
        }
    }
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
    // Documents in unknown states or with no state: whatever the counts do
    // not explain. Fetched (with their own counts) only when there are some,
    // so a healthy cluster pays nothing for them.
    let known: u64 = buckets.iter().map(|c| c.count).sum();
    if total.as_ref().map(total_hits).unwrap_or(0) > known {
        requests += 1;
        let names: Vec<&str> = TxnState::KNOWN.iter().map(TxnState::as_str).collect();
        let query = json!({"size": 100,
            "query": {"bool": {"must_not": {"terms": {"transaction_state": names}}}},
            "aggs": by_state});
        let odd = cluster.search(&ix.transactions, query).await?;
        buckets.extend(self::buckets(&odd));
        transactions.extend(
            crate::cluster::hits(&odd)?
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source)),
        );
    }
    let state_counts = ordered(buckets);

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
    if !unknown_owners.is_empty() && !missing.contains(&ix.transactions) {
        requests += 1;
        for (id, doc) in unknown_owners
            .iter()
            .zip(cluster.mget(&ix.transactions, &unknown_owners).await?)
        {
            if let Some(d) = doc {
                owner_states.insert(id.clone(), Transaction::from_source(id, &d.source));
            }
        }
    }
    let locks = infos
        .into_iter()
        .map(|info| LockView::judge(info, &owner_states, taken_at, recovery_window))
        .collect();

    requests += 1;
    let health = match health.finish().await {
        Ok(h) => Some(h.label().to_string()),
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

/// Key the aggregation gives documents without a state.
const MISSING_KEY: &str = "\u{0}missing";

fn buckets(v: &Value) -> Vec<StateCount> {
    v.pointer("/aggregations/states/buckets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|b| {
            let name = b.get("key").and_then(Value::as_str).unwrap_or_default();
            StateCount {
                state: (name != MISSING_KEY).then(|| TxnState::parse(name)),
                count: b.get("doc_count").and_then(Value::as_u64).unwrap_or(0),
                oldest: b
                    .pointer("/oldest/value")
                    .and_then(Value::as_f64)
                    .and_then(|ms| DateTime::from_timestamp_millis(ms as i64)),
            }
        })
        .collect()
}

/// Known states in protocol order (zero where absent), then unknown ones,
/// then "no state".
fn ordered(mut found: Vec<StateCount>) -> Vec<StateCount> {
    let mut out: Vec<StateCount> = TxnState::KNOWN
        .iter()
        .map(
            |s| match found.iter().position(|c| c.state.as_ref() == Some(s)) {
                Some(i) => found.remove(i),
                None => StateCount {
                    state: Some(s.clone()),
                    count: 0,
                    oldest: None,
                },
            },
        )
        .collect();
    found.sort_by(|a, b| (a.state.is_none(), &a.state).cmp(&(b.state.is_none(), &b.state)));
    out.extend(found);
    out
}
