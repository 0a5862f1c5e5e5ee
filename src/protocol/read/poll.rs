//! One poll of the cluster, the read model the dashboard shows: loaded with a
//! fixed, small number of requests whatever the number of finished
//! transactions, every query built by [`Queries`] from the discovered
//! fields — per-state counts (one aggregation where the state has an exact
//! field, counts by search where it does not), the stuck, needing
//! investigation and odd transactions counted over every document (the
//! queries `check` counts with: [`super::rules::urgency_count_queries`]),
//! the transactions in flight,
//! the accounts with pending entries and the locks (all in one `_msearch`,
//! with their totals, so caps are shown), one multi-get for the accounts
//! those transactions name, and the cluster health. Documents in unknown
//! states cost one more search, only when the counts show there are some.
//! Every answer's shard coverage is kept: a partial poll says so.

use super::coverage::Coverage;
use super::discovery::{Discovery, Refresh};
use super::queries::Queries;
use super::scan::total_hits;
use super::state_counts::{buckets, count_listed};
pub use super::state_counts::{ordered, AttentionCounts, StateCount};
use crate::cluster::{ClockStatus, Cluster};
use crate::error::{Error, Result};
use crate::protocol::account::AccountState;
use crate::protocol::lock::liveness::read_heartbeats;
use crate::protocol::lock::LockInfo;
use crate::protocol::locks::LockView;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::{Indices, ProtocolConfig};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

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

/// How complete and how fresh a poll's data is, and what discovery warns
/// about the cluster (shown in short in the dashboard's header).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadStatus {
    /// Shards behind the poll's searches; partial when some failed.
    pub coverage: Coverage,
    /// Locks in all (the locks list is capped at [`LOCKS_CAP`]).
    pub locks_total: u64,
    /// Accounts with pending entries in all (capped at [`PENDING_ACCOUNTS_CAP`]).
    pub pending_accounts_total: u64,
    /// In-flight transactions with no usable `modification_time`.
    pub undated_in_flight: u64,
    /// Stuck, needing investigation and odd, over every document (`None`
    /// when the transactions index is missing).
    pub attention: Option<AttentionCounts>,
    /// The transactions index's refresh interval: searches lag writes by up
    /// to this (`None` before discovery).
    pub refresh: Option<Refresh>,
    /// Discovery's warnings (aliases, fields without an exact form, ...).
    pub warnings: Vec<String>,
    /// Where the poll's clock came from and how far the local clock is off.
    pub clock: Option<ClockStatus>,
}

impl ReadStatus {
    /// The data's age bound at `now`: time since the poll plus the refresh
    /// lag; `None` when the index never refreshes by itself.
    pub fn data_age(&self, taken_at: DateTime<Utc>, now: DateTime<Utc>) -> Option<Duration> {
        let since = (now - taken_at).to_std().unwrap_or_default();
        match self.refresh {
            Some(Refresh::Never) => None,
            Some(Refresh::Every(d)) => Some(since + d),
            None => Some(since),
        }
    }
}

/// Everything one poll loaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// When the poll started (searches show writes up to one refresh older:
    /// see [`ReadStatus::data_age`]).
    pub taken_at: DateTime<Utc>,
    /// How long the poll took.
    pub duration: Duration,
    /// Requests it made.
    pub requests: u32,
    /// Cluster health colour (`green`, `yellow`, `red`) if known.
    pub health: Option<String>,
    /// Per-state counts, protocol order first, then unknown states.
    pub state_counts: Vec<StateCount>,
    /// Transactions in flight (oldest first, undated first of all, capped)
    /// then odd ones.
    pub transactions: Vec<Transaction>,
    /// How many transactions are in flight in all (the list may be capped).
    pub in_flight_total: u64,
    /// The terminal state also listed (the dashboard's state filter), with
    /// how many are in it in all: its newest rows follow the in-flight
    /// ones in `transactions`, capped like them.
    pub terminal: Option<TerminalListing>,
    /// Accounts named by the listed transactions or carrying pending entries.
    pub accounts: BTreeMap<String, AccountEntry>,
    /// Every lock (capped), oldest first.
    pub locks: Vec<LockView>,
    /// Indices that do not exist.
    pub missing_indices: Vec<String>,
    /// Completeness, totals behind caps, freshness, warnings.
    pub read: ReadStatus,
}

/// A terminal state's transactions listed by a poll, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalListing {
    /// The state (finished or rolled-back).
    pub state: TxnState,
    /// Rows of it in the snapshot's `transactions`.
    pub listed: usize,
    /// Documents in it in all (more than `listed` when capped).
    pub total: u64,
}

/// Most in-flight transactions one poll lists.
pub const DEFAULT_CAP: usize = 500;
/// Most locks one poll lists.
pub const LOCKS_CAP: usize = 500;
/// Most accounts with pending entries one poll lists.
pub const PENDING_ACCOUNTS_CAP: usize = 200;

/// Loads a snapshot with a fresh discovery (tests, the demo's summary),
/// judging locks with the default windows; the dashboard goes through
/// [`crate::protocol::Protocol::poll_snapshot`], which discovers once and
/// uses the configured ones.
pub async fn load(cluster: &Cluster, ix: &Indices, cap: usize) -> Result<Snapshot> {
    let d = super::discovery::discover(cluster, ix).await?;
    load_with(cluster, ix, &d, cap, &ProtocolConfig::default(), None).await
}

/// Loads a snapshot with queries built from `d`; `cap` bounds the listed
/// transactions; locks are judged stale by the stuck rule under `windows`'
/// recovery window and investigation threshold. With a terminal state in
/// `terminal`, the newest `cap` transactions in it are listed too (in the
/// same `_msearch`).
pub async fn load_with(
    cluster: &Cluster,
    ix: &Indices,
    d: &Discovery,
    cap: usize,
    windows: &ProtocolConfig,
    terminal: Option<&TxnState>,
) -> Result<Snapshot> {
    let terminal = terminal.filter(|s| s.is_terminal());
    let started = Instant::now();
    // Health runs alongside the searches and waits at most a few seconds
    // for the master: it can never hold the poll up.
    let health = cluster.start_health();
    // Ages are judged on the cluster's own clock (asked once a minute).
    cluster
        .sync_clock(&[&ix.transactions, &ix.accounts, &ix.locks])
        .await;
    let taken_at = cluster.now();
    let q = Queries::new(&d.fields);
    let mut requests = 0u32;
    let mut missing = BTreeSet::new();
    let mut coverage = Coverage::default();
    let aggregate = q.states_aggregatable();

    let count = |query: Value| json!({"size": 0, "track_total_hits": true, "query": query});
    let mut in_flight_body = json!({"size": cap, "track_total_hits": true,
        "query": q.in_flight(), "sort": q.oldest_first()});
    if aggregate {
        in_flight_body["aggs"] = q.by_state_aggregation();
    }
    let mut searches = vec![
        (ix.transactions.clone(), in_flight_body),
        (ix.transactions.clone(), count(q.state_in(&["finished"]))),
        (ix.transactions.clone(), count(q.state_in(&["rolled-back"]))),
        (
            ix.transactions.clone(),
            json!({"size": 0, "track_total_hits": true}),
        ),
        (
            ix.transactions.clone(),
            count(json!({"bool": {"filter": [q.in_flight(), q.undated()]}})),
        ),
        (
            ix.accounts.clone(),
            json!({"size": PENDING_ACCOUNTS_CAP, "track_total_hits": true,
                "query": q.accounts_with_pending()}),
        ),
        (
            ix.locks.clone(),
            json!({"size": LOCKS_CAP, "track_total_hits": true, "sort": q.locks_sort()}),
        ),
    ];
    // What needs an operator, counted over every document (the listing
    // is capped): the queries `check` counts with.
    let urgency = super::rules::urgency_count_queries(&q, &d.fields, windows);
    searches.push((ix.transactions.clone(), count(q.odd_states())));
    for query in urgency.iter().flatten() {
        searches.push((ix.transactions.clone(), count(query.clone())));
    }
    if let Some(s) = terminal {
        let mut listing = json!({"size": cap, "track_total_hits": true,
            "query": q.state_in(&[s.as_str()])});
        let sort = q.newest_first();
        if !sort.is_empty() {
            listing["sort"] = json!(sort);
        }
        searches.push((ix.transactions.clone(), listing));
    }
    if !aggregate {
        // No exact state field: one count per in-flight state instead.
        for s in TxnState::NON_TERMINAL_NAMES {
            searches.push((ix.transactions.clone(), count(q.state_in(&[s]))));
        }
    }
    requests += 1;
    let mut answers = cluster.msearch(&searches).await?.into_iter();
    let mut next = || -> Result<Option<Value>> {
        match answers.next() {
            Some(Ok(v)) => {
                coverage.add(Coverage::of(&v));
                Ok(Some(v))
            }
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
    let in_flight = next()?;
    let finished = next()?;
    let rolled_back = next()?;
    let total = next()?;
    let undated = next()?;
    let pending_accounts = next()?;
    let locks = next()?;
    let odd = next()?;
    let mut urgent = Vec::new();
    for _ in urgency.iter().flatten() {
        urgent.push(next()?.as_ref().map(total_hits));
    }
    let attention = odd.as_ref().map(|v| AttentionCounts {
        odd: total_hits(v),
        stuck: urgent.first().copied().flatten(),
        needs_investigation: urgent.get(1).copied().flatten(),
    });
    let terminal_rows = match terminal {
        Some(_) => next()?,
        None => None,
    };
    let mut per_state = Vec::new();
    if !aggregate {
        for s in TxnState::NON_TERMINAL_NAMES {
            if let Some(v) = next()? {
                per_state.push((TxnState::parse(s), total_hits(&v)));
            }
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
    let mut terminal_listing = None;
    if let (Some(state), Some(v)) = (terminal, &terminal_rows) {
        let before = transactions.len();
        transactions.extend(
            crate::cluster::hits(v)?
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source)),
        );
        terminal_listing = Some(TerminalListing {
            state: state.clone(),
            listed: transactions.len() - before,
            total: total_hits(v),
        });
    }
    let mut buckets = if aggregate {
        in_flight
            .as_ref()
            .map(|v| buckets(v, q.schema()))
            .unwrap_or_default()
    } else {
        per_state
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(state, count)| StateCount {
                // Listed oldest first: the first row of a state is its oldest.
                oldest: transactions
                    .iter()
                    .find(|t| t.state.as_ref() == Some(&state))
                    .and_then(|t| t.modification_time),
                state: Some(state),
                count,
            })
            .collect()
    };
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
    // Documents in unknown states or with no state: whatever the counts do
    // not explain. Fetched only when there are some.
    let known: u64 = buckets.iter().map(|c| c.count).sum();
    if total.as_ref().map(total_hits).unwrap_or(0) > known {
        requests += 1;
        let mut query = json!({"size": 100, "track_total_hits": true, "query": q.odd_states()});
        if aggregate {
            query["aggs"] = q.by_state_aggregation();
        }
        let odd = cluster.search(&ix.transactions, query).await?;
        coverage.add(Coverage::of(&odd));
        let odd_txns: Vec<Transaction> = crate::cluster::hits(&odd)?
            .iter()
            .map(|h| Transaction::from_source(&h.id, &h.source))
            .collect();
        if aggregate {
            buckets.extend(super::state_counts::buckets(&odd, q.schema()));
        } else {
            buckets.extend(count_listed(&odd_txns));
        }
        transactions.extend(odd_txns);
    }
    let state_counts = ordered(buckets);

    let mut accounts: BTreeMap<String, AccountEntry> = BTreeMap::new();
    let mut pending_accounts_total = 0;
    if let Some(v) = &pending_accounts {
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
    if !named.is_empty() && !missing.contains(&ix.accounts) {
        requests += 1;
        let by_search = d.accounts.id_problem().is_some();
        for (id, doc) in named
            .iter()
            .zip(by_ids(cluster, &ix.accounts, &named, by_search, &mut coverage).await?)
        {
            accounts.insert(
                id.clone(),
                doc.map(|src| entry(&src)).unwrap_or(AccountEntry::Missing),
            );
        }
    }

    let mut locks_total = 0;
    let infos: Vec<LockInfo> = match &locks {
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
    if !unknown_owners.is_empty() && !missing.contains(&ix.transactions) {
        requests += 1;
        let by_search = d.transactions.id_problem().is_some();
        for (id, doc) in unknown_owners.iter().zip(
            by_ids(
                cluster,
                &ix.transactions,
                &unknown_owners,
                by_search,
                &mut coverage,
            )
            .await?,
        ) {
            if let Some(src) = doc {
                owner_states.insert(id.clone(), Transaction::from_source(id, &src));
            }
        }
    }
    let holders = super::locks::holders_to_ask(&infos, &owner_states);
    let beats = match &windows.liveness {
        Some(source) if !holders.is_empty() => {
            requests += 1;
            // Without them the holders' locks are judged unknown: never acted on.
            read_heartbeats(cluster, source, &holders)
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
        terminal: terminal_listing,
        accounts,
        locks,
        missing_indices: missing.into_iter().collect(),
        read: ReadStatus {
            coverage,
            locks_total,
            pending_accounts_total,
            undated_in_flight: undated.as_ref().map(total_hits).unwrap_or(0),
            attention,
            refresh: d.transactions.exists().then_some(d.transactions.refresh),
            warnings: {
                let mut w = super::writes::short_warnings(ix, d);
                w.extend(d.warnings());
                w
            },
            clock: Some(cluster.clock_status()),
        },
    })
}

/// Documents by id: a realtime multi-get, or (behind an alias over several
/// indices, which a multi-get cannot read) an `ids` search.
pub(super) async fn by_ids(
    cluster: &Cluster,
    index: &str,
    ids: &[String],
    by_search: bool,
    coverage: &mut Coverage,
) -> Result<Vec<Option<serde_json::Map<String, Value>>>> {
    if !by_search {
        return Ok(cluster
            .mget(index, ids)
            .await?
            .into_iter()
            .map(|d| d.map(|d| d.source))
            .collect());
    }
    let answer = cluster
        .search(
            index,
            json!({"size": ids.len(), "query": {"ids": {"values": ids}}}),
        )
        .await?;
    coverage.add(Coverage::of(&answer));
    let found: HashMap<String, serde_json::Map<String, Value>> = crate::cluster::hits(&answer)?
        .into_iter()
        .map(|h| (h.id, h.source))
        .collect();
    Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
}

fn entry(src: &serde_json::Map<String, Value>) -> AccountEntry {
    match AccountState::from_source(src) {
        Ok(s) => AccountEntry::Ok(s),
        Err(p) => AccountEntry::Malformed(p),
    }
}
