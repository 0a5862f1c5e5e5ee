//! One poll of the cluster, the read model the dashboard shows: loaded with a
//! fixed, small number of requests whatever the number of finished
//! transactions, every query built by [`Queries`] from the discovered
//! fields — per-state counts (one aggregation where the state has an exact
//! field, counts by search where it does not), the stuck, needing
//! investigation and odd transactions counted over every document (the
//! queries `check` counts with: [`super::rules::urgency_count_queries`]),
//! the table's page of transactions (the dashboard's filter, run over every
//! document: [`super::table`]; by default those in flight, oldest first),
//! the accounts with pending entries and the locks (all in one `_msearch`,
//! with their totals, so caps are shown), one multi-get for the accounts
//! those transactions name, and the cluster health. Documents in unknown
//! states cost one more search, only when the counts show there are some.
//! Every answer's shard coverage is kept: a partial poll says so.

use super::by_id::by_ids;
use super::coverage::Coverage;
use super::discovery::{Discovery, Refresh};
use super::queries::Queries;
use super::scan::total_hits;
use super::state_counts::{buckets, count_listed};
pub use super::state_counts::{ordered, AttentionCounts, StateCount};
use super::table::{TableFilter, TablePage};
use crate::cluster::{ClockStatus, Cluster, HealthProbe};
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
            Some(Refresh::ServerlessDefault) => Some(since + super::discovery::SERVERLESS_REFRESH),
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
    /// The table's page (by default those in flight, oldest first,
    /// undated first of all), then, unfiltered, odd ones.
    pub transactions: Vec<Transaction>,
    /// How many transactions are in flight in all.
    pub in_flight_total: u64,
    /// The filter and page the transactions answer, with how many match
    /// it in all.
    pub table: TablePage,
    /// Accounts named by the listed transactions or carrying pending entries.
    pub accounts: BTreeMap<String, AccountEntry>,
    /// Every lock (capped), oldest first.
    pub locks: Vec<LockView>,
    /// Indices that do not exist.
    pub missing_indices: Vec<String>,
    /// Completeness, totals behind caps, freshness, warnings.
    pub read: ReadStatus,
}

/// Most transactions one poll lists (a page of the table).
pub const DEFAULT_CAP: usize = 500;
/// Most locks one poll lists.
pub const LOCKS_CAP: usize = 500;
/// Most accounts with pending entries one poll lists.
pub const PENDING_ACCOUNTS_CAP: usize = 200;

/// Loads a snapshot with a fresh discovery under the article's names
/// (tests, the demo's summary),
/// judging locks with the default windows; the dashboard goes through
/// [`crate::protocol::Protocol::poll_snapshot`], which discovers once and
/// uses the configured ones.
pub async fn load(cluster: &Cluster, ix: &Indices, cap: usize) -> Result<Snapshot> {
    let d = super::fetch::discover(cluster, ix, &Default::default()).await?;
    let table = TableFilter::default();
    load_with(cluster, ix, &d, cap, &ProtocolConfig::default(), &table).await
}

/// Loads a snapshot with queries built from `d`; the transactions listed
/// are page `table.page` (of `cap` rows) of `table`'s matches (in the same
/// `_msearch`); locks are judged stale by the stuck rule under `windows`'
/// recovery window and investigation threshold.
pub async fn load_with(
    cluster: &Cluster,
    ix: &Indices,
    d: &Discovery,
    cap: usize,
    windows: &ProtocolConfig,
    table: &TableFilter,
) -> Result<Snapshot> {
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
    let mut p = Poll {
        cluster,
        ix,
        d,
        q,
        requests: 0,
        missing: BTreeSet::new(),
        coverage: Coverage::default(),
        aggregate: q.states_aggregatable(),
    };
    // What needs an operator, counted over every document (the listing
    // is capped): the queries `check` counts with.
    let urgency = super::rules::urgency_count_queries(&q, &d.fields, windows);
    let page = table.page_search(&q, &d.fields, windows, cap);
    let searches = p.searches(page, urgency.as_ref());
    p.requests += 1;
    let answers = cluster.msearch(&searches).await?;
    let a = p.answers(answers, urgency.iter().flatten().count())?;
    let (mut transactions, in_flight_total, table_page) =
        listed(table, cap, a.in_flight.as_ref(), a.page.as_ref())?;
    if !d.fields.ages_queryable() {
        // The cluster could not judge ages: the page is judged here.
        transactions.retain(|t| table.keeps(t, taken_at, windows));
    }
    let buckets = p.state_buckets(&a, &transactions);
    let total = a.total.as_ref().map(total_hits).unwrap_or(0);
    let odd_rows = table.is_unfiltered() && table.page == 0;
    let state_counts = ordered(
        p.add_odd(buckets, total, odd_rows.then_some(&mut transactions))
            .await?,
    );
    let (accounts, pending_accounts_total) = p
        .accounts(a.pending_accounts.as_ref(), &transactions)
        .await?;
    let (locks, locks_total) = p
        .locks(a.locks.as_ref(), &transactions, windows, taken_at)
        .await?;

    p.requests += 1;
    let health = health_label(health).await;

    Ok(Snapshot {
        taken_at,
        duration: started.elapsed(),
        requests: p.requests,
        health,
        state_counts,
        transactions,
        in_flight_total,
        table: table_page,
        accounts,
        locks,
        missing_indices: p.missing.into_iter().collect(),
        read: ReadStatus {
            coverage: p.coverage,
            locks_total,
            pending_accounts_total,
            undated_in_flight: a.undated.as_ref().map(total_hits).unwrap_or(0),
            attention: a.attention,
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

/// The cluster's health as the snapshot shows it, once the probe started
/// with the searches ends (none when it could not be read).
async fn health_label(probe: HealthProbe) -> Option<String> {
    match probe.finish().await {
        Ok(h) => Some(h.label().to_string()),
        Err(e) => {
            tracing::debug!(error = %e, "health unavailable");
            None
        }
    }
}

/// One poll under way: where it reads, and what it has counted so far
/// (requests, missing indices, shards behind the answers).
struct Poll<'a> {
    cluster: &'a Cluster,
    ix: &'a Indices,
    d: &'a Discovery,
    q: Queries<'a>,
    requests: u32,
    missing: BTreeSet<String>,
    coverage: Coverage,
    /// The state field aggregates (else one count per in-flight state).
    aggregate: bool,
}

/// The answers of the poll's one `_msearch`, in the order asked
/// (`None`: the index is missing).
struct Answers {
    in_flight: Option<Value>,
    page: Option<Value>,
    finished: Option<Value>,
    rolled_back: Option<Value>,
    total: Option<Value>,
    undated: Option<Value>,
    pending_accounts: Option<Value>,
    locks: Option<Value>,
    attention: Option<AttentionCounts>,
    per_state: Vec<(TxnState, u64)>,
}

impl Poll<'_> {
    /// The searches of the poll's one `_msearch`, in the order
    /// [`Self::answers`] reads them.
    fn searches(&self, page: Value, urgency: Option<&[Value; 2]>) -> Vec<(String, Value)> {
        let (ix, q) = (self.ix, &self.q);
        let count = |query: Value| json!({"size": 0, "track_total_hits": true, "query": query});
        let mut in_flight_body = count(q.in_flight());
        if self.aggregate {
            in_flight_body["aggs"] = q.by_state_aggregation();
        }
        let mut searches = vec![
            (ix.transactions.clone(), in_flight_body),
            (ix.transactions.clone(), page),
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
        searches.push((ix.transactions.clone(), count(q.odd_states())));
        for query in urgency.into_iter().flatten() {
            searches.push((ix.transactions.clone(), count(query.clone())));
        }
        if !self.aggregate {
            // No exact state field: one count per in-flight state instead.
            for s in TxnState::NON_TERMINAL_NAMES {
                searches.push((ix.transactions.clone(), count(q.state_in(&[s]))));
            }
        }
        searches
    }

    /// Reads the `_msearch` answers in the order [`Self::searches`] asked
    /// (`urgent`: how many urgency counts were asked).
    fn answers(&mut self, answers: Vec<Result<Value>>, urgent: usize) -> Result<Answers> {
        let mut answers = answers.into_iter();
        let (coverage, missing) = (&mut self.coverage, &mut self.missing);
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
        let page = next()?;
        let finished = next()?;
        let rolled_back = next()?;
        let total = next()?;
        let undated = next()?;
        let pending_accounts = next()?;
        let locks = next()?;
        let odd = next()?;
        let mut urgent_counts = Vec::new();
        for _ in 0..urgent {
            urgent_counts.push(next()?.as_ref().map(total_hits));
        }
        let attention = odd.as_ref().map(|v| AttentionCounts {
            odd: total_hits(v),
            stuck: urgent_counts.first().copied().flatten(),
            needs_investigation: urgent_counts.get(1).copied().flatten(),
        });
        let mut per_state = Vec::new();
        if !self.aggregate {
            for s in TxnState::NON_TERMINAL_NAMES {
                if let Some(v) = next()? {
                    per_state.push((TxnState::parse(s), total_hits(&v)));
                }
            }
        }
        Ok(Answers {
            in_flight,
            page,
            finished,
            rolled_back,
            total,
            undated,
            pending_accounts,
            locks,
            attention,
            per_state,
        })
    }

    /// The count of each state: from the aggregation (or the per-state
    /// counts), then the terminal states' counts.
    fn state_buckets(&self, a: &Answers, transactions: &[Transaction]) -> Vec<StateCount> {
        let mut buckets = if self.aggregate {
            a.in_flight
                .as_ref()
                .map(|v| buckets(v, self.q.schema()))
                .unwrap_or_default()
        } else {
            a.per_state
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(state, count)| StateCount {
                    // Listed oldest first: the first row of a state is its oldest.
                    oldest: transactions
                        .iter()
                        .find(|t| t.state.as_ref() == Some(state))
                        .and_then(|t| t.modification_time),
                    state: Some(state.clone()),
                    count: *count,
                })
                .collect()
        };
        for (state, v) in [
            (TxnState::Finished, &a.finished),
            (TxnState::RolledBack, &a.rolled_back),
        ] {
            if let Some(v) = v {
                buckets.push(StateCount {
                    state: Some(state),
                    count: total_hits(v),
                    oldest: None,
                });
            }
        }
        buckets
    }

    /// Documents in unknown states or with no state: whatever the counts
    /// (`buckets`, of `total` documents) do not explain, fetched (and their
    /// states counted) only when there are some; listed after the page
    /// in `transactions` when given.
    async fn add_odd(
        &mut self,
        mut buckets: Vec<StateCount>,
        total: u64,
        transactions: Option<&mut Vec<Transaction>>,
    ) -> Result<Vec<StateCount>> {
        let known: u64 = buckets.iter().map(|c| c.count).sum();
        if total > known {
            self.requests += 1;
            let mut query =
                json!({"size": 100, "track_total_hits": true, "query": self.q.odd_states()});
            if self.aggregate {
                query["aggs"] = self.q.by_state_aggregation();
            }
            let odd = self.cluster.search(&self.ix.transactions, query).await?;
            self.coverage.add(Coverage::of(&odd));
            let odd_txns: Vec<Transaction> = crate::cluster::hits(&odd)?
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source))
                .collect();
            if self.aggregate {
                buckets.extend(super::state_counts::buckets(&odd, self.q.schema()));
            } else {
                buckets.extend(count_listed(&odd_txns));
            }
            if let Some(t) = transactions {
                t.extend(odd_txns);
            }
        }
        Ok(buckets)
    }

    /// The accounts carrying pending entries (from the `_msearch`), and
    /// every other account the listed transactions name, read by id; with
    /// how many carry pending entries in all.
    async fn accounts(
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
    async fn locks(
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
        let holders = super::locks::holders_to_ask(&infos, &owner_states);
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

/// The listed transactions (the table's page), with the in-flight total
/// and what the page holds.
fn listed(
    table: &TableFilter,
    page_size: usize,
    in_flight: Option<&Value>,
    page: Option<&Value>,
) -> Result<(Vec<Transaction>, u64, TablePage)> {
    let in_flight_total = in_flight.map(total_hits).unwrap_or(0);
    let mut transactions = Vec::new();
    let mut total = 0;
    if let Some(v) = page {
        total = total_hits(v);
        transactions.extend(
            crate::cluster::hits(v)?
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source)),
        );
    }
    let table = TablePage {
        filter: table.clone(),
        listed: transactions.len(),
        total,
        page_size,
    };
    Ok((transactions, in_flight_total, table))
}

fn entry(src: &serde_json::Map<String, Value>) -> AccountEntry {
    match AccountState::from_source(src) {
        Ok(s) => AccountEntry::Ok(s),
        Err(p) => AccountEntry::Malformed(p),
    }
}
