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
//! with their totals, so caps are shown), one multi-get (of two indices)
//! for the accounts those transactions name and the locks' owners not
//! listed, and the cluster health; the live acknowledgements ride in the
//! same `_msearch` (`acks.rs`), as do the running jobs and the acts
//! finished lately (`others.rs`) and the documents in unknown states (the
//! first [`ODD_CAP`], listed after the page). At most four requests: the
//! `_msearch`, the `_mget`, the health, and the holders' heartbeats where
//! a liveness source is configured and a lock's owner names no
//! transaction (`tests/protocol/poll_requests.rs` counts them at a proxy).
//! Every answer's shard coverage is kept: a partial poll says so. What
//! does not change once read (a running job's list of transactions, a
//! finished operator record's, an act's) is read once and kept by the
//! poller ([`PollMemory`], which the dashboard's poller owns), so that the
//! answer a poll parses stays small while other operators run big jobs.

mod acks;
mod msearch;
mod named;
mod others;

use acks::AcksSearch;
use others::{Known, Others, OthersSearch};

use super::coverage::Coverage;
use super::discovery::Discovery;
use super::queries::Queries;
use super::scan::total_hits;
pub use super::snapshot::{AccountEntry, ReadStatus, Snapshot};
use super::state_counts::{buckets, count_listed};
pub use super::state_counts::{ordered, AttentionCounts, StateCount};
use super::table::{TableFilter, TablePage};
use super::verdict::evidence::{FileMarks, FinishedMarks, Sources};
use super::verdict::{self, HealingEvidence, HealingSearch};
use crate::cluster::{Cluster, HealthProbe};
use crate::error::Result;
use crate::protocol::acks::Acks;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::{Indices, ProtocolConfig};

use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Instant;

/// Most transactions one poll lists (a page of the table).
pub const DEFAULT_CAP: usize = 500;
/// Most locks one poll lists.
pub const LOCKS_CAP: usize = 500;
/// Most documents in unknown states (or with no state) one poll lists.
pub const ODD_CAP: usize = 100;
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
    let config = ProtocolConfig::default();
    load_with(
        cluster,
        ix,
        &d,
        cap,
        &config,
        &table,
        &PollMemory::default(),
    )
    .await
}

/// What one poller's polls keep from one poll to the next: what no longer
/// changes once read (a running job's list of transactions, a finished
/// operator record's, an act finished lately), so each is read once, not
/// every poll.
#[derive(Debug, Default)]
pub struct PollMemory {
    kept: std::sync::Mutex<Kept>,
}

/// [`PollMemory`]'s contents, taken out for a poll and put back after it
/// (a poll that fails leaves it empty: the next reads every list again).
#[derive(Debug, Default)]
struct Kept {
    others: Known,
    records: FinishedMarks,
}

impl PollMemory {
    fn take(&self) -> Kept {
        std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn keep(&self, kept: Kept) {
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = kept;
    }
}

/// Loads a snapshot with queries built from `d`; the transactions listed
/// are page `table.page` (of `cap` rows) of `table`'s matches (in the same
/// `_msearch`); locks are judged stale by the stuck rule under `windows`'
/// recovery window and investigation threshold; the lists `memory` keeps
/// are not read again, and those read are kept there.
pub async fn load_with(
    cluster: &Cluster,
    ix: &Indices,
    d: &Discovery,
    cap: usize,
    windows: &ProtocolConfig,
    table: &TableFilter,
    memory: &PollMemory,
) -> Result<Snapshot> {
    let started = Instant::now();
    // Ages are judged on the cluster's own clock (asked once a minute, not
    // counted in the poll's cost).
    cluster
        .sync_clock(&[&ix.transactions, &ix.accounts, &ix.locks])
        .await;
    let taken_at = cluster.now();
    // The poll's cost is every request the cluster answered for it: a
    // multi request that goes one per index where the cluster refuses an
    // index in the body (`cluster::scope`) counts each.
    let (cluster, meter) = cluster.metered();
    let cluster = &cluster;
    // Health runs alongside the searches and waits at most a few seconds
    // for the master: it can never hold the poll up.
    let health = cluster.start_health();
    let mut p = Poll::new(cluster, ix, d);
    let q = p.q;
    // What needs an operator, counted over every document (the listing
    // is capped): the queries `check` counts with.
    let urgency = super::rules::urgency_count_queries(&q, &d.fields, windows);
    let page = table.page_search(&q, &d.fields, windows, cap);
    let mut kept = memory.take();
    let healing = verdict::evidence::searches(
        &d.fields,
        &healing_sources(windows),
        taken_at,
        &mut kept.records,
    );
    let acks_search = AcksSearch::new(taken_at);
    let audit = windows.audit_file.is_none().then_some(ix.audit.as_str());
    let others_search = OthersSearch::new(taken_at, audit, std::mem::take(&mut kept.others));
    let searches = p.searches(
        page,
        urgency.as_ref(),
        &healing,
        &others_search,
        &acks_search,
    );
    let answers = cluster.msearch(&searches).await?;
    let named_healing: Vec<HealingSearch> = healing.iter().map(|(s, _, _)| *s).collect();
    let mut a = p.answers(
        answers,
        urgency.iter().flatten().count(),
        &named_healing,
        others_search,
        &acks_search,
    )?;
    let (mut transactions, in_flight_total, table_page) =
        listed(table, cap, a.in_flight.as_ref(), a.page.as_ref())?;
    if !d.fields.ages_queryable() {
        // The cluster could not judge ages: the page is judged here.
        transactions.retain(|t| table.keeps(t, taken_at, windows));
    }
    let buckets = p.state_buckets(&a, &transactions);
    let total = a.total.as_ref().map(total_hits).unwrap_or(0);
    let odd_rows = table.is_unfiltered() && table.page == 0;
    let state_counts = ordered(p.add_odd(
        buckets,
        total,
        a.odd.as_ref(),
        odd_rows.then_some(&mut transactions),
    )?);
    let named = p.named(&a, &transactions, windows, taken_at).await?;

    let health = health_label(health).await;
    p.warnings.append(&mut a.others.warnings);
    let read = p.read_status(&a, named.locks_total, named.pending_accounts_total);
    let healing_evidence = healing_evidence(
        std::mem::take(&mut a.healing),
        &read,
        &state_counts,
        taken_at,
        windows,
        &mut kept.records,
    );
    kept.others = std::mem::take(&mut a.others.known);
    memory.keep(kept);
    // A locks index discovery found absent (not named) is no locks, not a
    // missing index.
    let locks_absent = d.locks.is_absent() && p.missing.remove(&ix.locks);

    Ok(Snapshot {
        taken_at,
        duration: started.elapsed(),
        requests: u32::try_from(meter.requests()).unwrap_or(u32::MAX),
        health,
        state_counts,
        transactions,
        in_flight_total,
        table: table_page,
        accounts: named.accounts,
        locks: named.locks,
        missing_indices: p.missing.into_iter().collect(),
        locks_absent,
        healing: verdict::judge(&healing_evidence, taken_at, windows.recovery_window),
        healing_evidence,
        acks: std::mem::take(&mut a.acks),
        writes_refused: super::writes::refusal(ix, d),
        live_jobs: std::mem::take(&mut a.others.jobs),
        others_acts: std::mem::take(&mut a.others.acts),
        read,
    })
}

/// Where the healing evidence is read under `config` (for the poll and
/// for `check`).
pub(crate) fn healing_sources(config: &ProtocolConfig) -> Sources<'_> {
    Sources {
        transactions: &config.indices.transactions,
        audit: config
            .audit_file
            .is_none()
            .then_some(config.indices.audit.as_str()),
        liveness: config.liveness.as_ref(),
        window: config.recovery_window,
    }
}

/// Under `--audit-trail file:PATH`, the operators' marks of the records in
/// that file started within the healing lookback at `taken_at`; none for a
/// trail in the audit index (searched in the `_msearch`).
pub(crate) fn file_marks(config: &ProtocolConfig, taken_at: DateTime<Utc>) -> FileMarks {
    match config.audit_file.as_deref() {
        None => FileMarks::NoFile,
        Some(path) => FileMarks::read(
            path,
            verdict::evidence::lookback_start(taken_at, config.recovery_window),
        ),
    }
}

/// The healing verdict's evidence of one poll: its searches' answers
/// (`answers`), the stuck count (`read`) and the oldest in-flight
/// modification time (`counts`) when it is older than the recovery window.
fn healing_evidence(
    answers: Vec<(HealingSearch, Result<Value>)>,
    read: &ReadStatus,
    counts: &[StateCount],
    taken_at: DateTime<Utc>,
    windows: &ProtocolConfig,
    kept: &mut FinishedMarks,
) -> HealingEvidence {
    let file = file_marks(windows, taken_at);
    let a = verdict::evidence::read(answers, file, &healing_sources(windows), kept);
    let oldest = counts
        .iter()
        .filter(|c| c.state.as_ref().is_some_and(TxnState::is_in_flight))
        .filter_map(|c| c.oldest)
        .min()
        .filter(|m| !super::rules::within_window(*m, taken_at, windows.recovery_window));
    HealingEvidence {
        stuck: read.attention.and_then(|a| a.stuck),
        oldest_stuck: oldest,
        recoveries: a.recoveries,
        heartbeat: a.heartbeat,
        previous: None,
    }
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
/// (missing indices, shards behind the answers).
struct Poll<'a> {
    cluster: &'a Cluster,
    ix: &'a Indices,
    d: &'a Discovery,
    q: Queries<'a>,
    missing: BTreeSet<String>,
    coverage: Coverage,
    /// What the poll could not read and went on without.
    warnings: Vec<String>,
    /// Some locks judged without their owners or heartbeats.
    locks_judged_blind: bool,
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
    /// The documents in unknown states or with no state (the first
    /// [`ODD_CAP`], their states aggregated where the field allows).
    odd: Option<Value>,
    per_state: Vec<(TxnState, u64)>,
    /// The healing evidence's answers, each named.
    healing: Vec<(HealingSearch, Result<Value>)>,
    /// The live acknowledgements.
    acks: Acks,
    /// The other operators' live jobs and acts.
    others: Others,
}

impl Poll<'_> {
    /// A poll about to read `ix` with queries built from `d`.
    fn new<'a>(cluster: &'a Cluster, ix: &'a Indices, d: &'a Discovery) -> Poll<'a> {
        let q = Queries::new(&d.fields);
        Poll {
            cluster,
            ix,
            d,
            q,
            missing: BTreeSet::new(),
            coverage: Coverage::default(),
            warnings: Vec::new(),
            locks_judged_blind: false,
            aggregate: q.states_aggregatable(),
        }
    }

    /// How complete and fresh what the poll read is (`a`, with the totals
    /// behind the locks' and the pending accounts' caps).
    fn read_status(
        &self,
        a: &Answers,
        locks_total: u64,
        pending_accounts_total: u64,
    ) -> ReadStatus {
        let (ix, d) = (self.ix, self.d);
        ReadStatus {
            coverage: self.coverage,
            locks_total,
            pending_accounts_total,
            undated_in_flight: a.undated.as_ref().map(total_hits).unwrap_or(0),
            attention: a.attention,
            refresh: d.transactions.exists().then_some(d.transactions.refresh),
            warnings: {
                let mut w = super::writes::short_warnings(ix, d);
                w.extend(d.warnings());
                w.extend(self.warnings.iter().cloned());
                w
            },
            locks_judged_blind: self.locks_judged_blind,
            clock: Some(self.cluster.clock_status()),
        }
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
    /// (`buckets`, of `total` documents) do not explain, from the
    /// `_msearch`'s odd search (`odd`) and their states counted, only when
    /// there are some; listed after the page in `transactions` when given.
    fn add_odd(
        &self,
        mut buckets: Vec<StateCount>,
        total: u64,
        odd: Option<&Value>,
        transactions: Option<&mut Vec<Transaction>>,
    ) -> Result<Vec<StateCount>> {
        let known: u64 = buckets.iter().map(|c| c.count).sum();
        if let Some(odd) = odd.filter(|_| total > known) {
            let odd_txns: Vec<Transaction> = crate::cluster::hit_refs(odd)?
                .iter()
                .map(|h| Transaction::from_source(h.id, h.source))
                .collect();
            if self.aggregate {
                buckets.extend(super::state_counts::buckets(odd, self.q.schema()));
            } else {
                buckets.extend(count_listed(&odd_txns));
            }
            if let Some(t) = transactions {
                t.extend(odd_txns);
            }
        }
        Ok(buckets)
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
            crate::cluster::hit_refs(v)?
                .iter()
                .map(|h| Transaction::from_source(h.id, h.source)),
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
