//! The one read side of the protocol module. Discovery ([`discovery`]) reads
//! the cluster's real mappings; every query ([`queries`]) is built from the
//! fields it resolved; the dashboard's poll ([`poll`]), the stuck query,
//! `list`, the audit and the locks all read through here, share the same
//! rules ([`rules`]: one "stuck", one "needs investigation", one state
//! order), page from one consistent view ([`scan`]), and report partial
//! results ([`coverage`]). Writes are checked against the mappings before
//! any procedure's first step ([`writes`]). Presentation (JSON shapes, exit
//! codes, human ages) is the CLI's and the dashboard's business.

pub(crate) mod by_id;
pub mod cache;
pub mod coverage;
pub mod discovery;
pub mod doctor;
pub mod fetch;
pub mod groups;
pub mod index_info;
pub mod poll;
pub mod progress;
pub mod queries;
pub mod rules;
pub mod scan;
pub mod schema_report;
pub mod snapshot;
pub mod source_mode;
pub mod state_counts;
mod string_array;
pub mod table;
pub mod times;
pub mod value_types;
pub mod writes;

pub use coverage::Coverage;
pub use discovery::{Discovery, Fields, IndexInfo, Refresh, ResolvedField, Target};
pub use groups::{Group, GroupKind, Groups};
pub use progress::{account_progress, AccountProgress};
pub use queries::Queries;
pub use rules::{urgency, Urgency};
pub use scan::{probe_paging, PagingReport, Scan, ScanSummary};
pub use snapshot::{AccountEntry, ReadStatus, Snapshot};
pub use state_counts::StateCount;
pub use table::{AgeRange, TableFilter, TablePage};
pub use times::{TimeField, TimeFields};

use super::transaction::Transaction;
use super::Protocol;
use crate::error::Result;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which transactions `list` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListScope {
    /// Everything not finished or rolled back (the default).
    NotFinished,
    /// The whole history.
    All,
    /// These states.
    States(Vec<String>),
    /// Stuck ones (see [`rules::urgency`]).
    Stuck,
    /// Ones needing investigation.
    NeedsInvestigation,
}

/// Transactions found by a scan, with what the scan saw.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The transactions, in the query's order.
    pub transactions: Vec<Transaction>,
    /// Total, coverage, consistency.
    pub summary: ScanSummary,
}

/// How old a discovery the write check before step 1 takes as it is: the
/// mappings it checks are those of moments ago (the same run's planning
/// discovered them), not re-read; a discovery older than this (a dashboard
/// open for a while) is made again. Discovery is three requests per index,
/// so a run that planned and then checked would otherwise make it twice.
const WRITE_CHECK_FRESH: Duration = Duration::from_secs(10);

impl Protocol {
    /// The cluster as discovered: cached once every index exists and every
    /// queried field is mapped; rediscovered on each call until then (an
    /// index the application auto-creates changes what fields resolve to).
    pub async fn discovery(&self) -> Result<Arc<Discovery>> {
        self.discovery_within(None).await
    }

    /// The cached discovery when it is settled and (with `fresh`) made
    /// within that time; otherwise a new one, cached.
    async fn discovery_within(&self, fresh: Option<Duration>) -> Result<Arc<Discovery>> {
        let mut cached = self.read_cache.discovery.lock().await;
        let usable = |(d, at): &(Arc<Discovery>, Instant)| {
            d.is_settled() && fresh.is_none_or(|f| at.elapsed() <= f)
        };
        if let Some((d, _)) = cached.as_ref().filter(|c| usable(c)) {
            return Ok(d.clone());
        }
        let d = Arc::new(
            fetch::discover(self.cluster(), &self.config.indices, &self.config.schema).await?,
        );
        *cached = Some((d.clone(), Instant::now()));
        Ok(d)
    }

    /// Discovers again, whatever is cached (after `init`, on operator request).
    pub async fn rediscover(&self) -> Result<Arc<Discovery>> {
        *self.read_cache.discovery.lock().await = None;
        self.discovery().await
    }

    /// The dashboard's poll, through the cached discovery.
    pub async fn poll_snapshot(&self, cap: usize) -> Result<Snapshot> {
        self.poll_snapshot_listing(cap, &TableFilter::default())
            .await
    }

    /// The dashboard's poll, listing page `table.page` (of `cap` rows) of
    /// the table's filter run over every document.
    pub async fn poll_snapshot_listing(&self, cap: usize, table: &TableFilter) -> Result<Snapshot> {
        let d = self.discovery().await?;
        let ix = &self.config.indices;
        poll::load_with(self.cluster(), ix, &d, cap, &self.config, table).await
    }

    /// Refuses (before any write) when the mappings would reject a field a
    /// procedure writes, or an index cannot be written by id; remembered
    /// once it passed.
    pub async fn check_writable(&self) -> Result<()> {
        if self.read_cache.writable.load(Ordering::Relaxed) {
            return Ok(());
        }
        let d = self.discovery_within(Some(WRITE_CHECK_FRESH)).await?;
        self.keep_times(&d);
        writes::check(&self.config.indices, &d, &[])?;
        self.read_cache.writable.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Refuses when the names in force do not fit the cluster (see
    /// [`Discovery::schema_problems`]): a selection made under the wrong
    /// names finds nothing, which must not read as "nothing to do".
    pub async fn check_schema(&self) -> Result<()> {
        let d = self.discovery().await?;
        let problems = d.schema_problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(crate::error::Error::Invalid(format!(
                "refused: {}",
                problems.join("; ")
            )))
        }
    }

    /// `e`, the failure of a read by id of a transaction, as the refusal
    /// discovery explains when the transactions cannot be read by id (an
    /// alias over several indices: the cluster's "can't execute a single
    /// index op" alone says neither why nor what to do); else `e` itself.
    pub(crate) async fn explain_by_id(&self, e: crate::error::Error) -> crate::error::Error {
        let problem = match self.discovery().await {
            Ok(d) => d.transactions.id_problem(),
            Err(_) => None,
        };
        match problem {
            Some(p) => crate::error::Error::Invalid(format!("refused: {p}")),
            None => e,
        }
    }

    /// Refuses (before any write) when lock documents cannot be written as
    /// the tool writes them: a `transfer --locks` checks it before step 1.
    pub async fn check_lockable(&self) -> Result<()> {
        let d = self.discovery().await?;
        writes::check_locks(&self.config.indices, &d)
    }

    /// The format each time field is written in: as of the last write check
    /// (every procedure makes one before step 1), else discovered now.
    pub async fn time_fields(&self) -> Result<Arc<TimeFields>> {
        let kept = self
            .read_cache
            .times
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(t) = kept {
            return Ok(t);
        }
        let d = self.discovery().await?;
        Ok(self.keep_times(&d))
    }

    fn keep_times(&self, d: &Discovery) -> Arc<TimeFields> {
        let t = Arc::new(d.times.clone());
        *self
            .read_cache
            .times
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(t.clone());
        t
    }

    /// [`Self::check_writable`] for a procedure that also writes some of the
    /// optional fields ([`writes::OPTIONAL_FIELDS`]), e.g. `reverse`'s links.
    pub async fn check_writable_with(&self, needed: &[&str]) -> Result<()> {
        let d = self.discovery_within(Some(WRITE_CHECK_FRESH)).await?;
        self.keep_times(&d);
        writes::check(&self.config.indices, &d, needed)
    }

    /// Adds to the live mappings every shipped field they lack; returns the
    /// requests applied (empty when nothing was missing).
    pub async fn upgrade_mappings(&self) -> Result<Vec<String>> {
        let d = self.rediscover().await?;
        let done = writes::upgrade(self.cluster(), &self.config.indices, &d).await?;
        self.read_cache.writable.store(false, Ordering::Relaxed);
        self.rediscover().await?;
        Ok(done)
    }

    /// Pages through the transactions matching `query` (oldest modification
    /// first) from one consistent view, handing each page to `on_page`
    /// (return `false` to stop).
    pub async fn scan_transactions<F>(&self, query: Value, on_page: F) -> Result<ScanSummary>
    where
        F: FnMut(Vec<Transaction>) -> bool,
    {
        self.scan_transactions_with(query, false, on_page).await
    }

    /// [`Self::scan_transactions`]; with `complete_only`, stops before the
    /// first page some shards failed to fill.
    pub async fn scan_transactions_with<F>(
        &self,
        query: Value,
        complete_only: bool,
        mut on_page: F,
    ) -> Result<ScanSummary>
    where
        F: FnMut(Vec<Transaction>) -> bool,
    {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let sort = q.oldest_first();
        scan::scan(
            self.cluster(),
            &self.config.indices.transactions,
            scan::Scan {
                query,
                sort,
                aggs: None,
                complete_only,
            },
            |hits| {
                let page: Vec<Transaction> = hits
                    .iter()
                    .map(|h| Transaction::from_source(&h.id, &h.source))
                    .collect();
                on_page(page)
            },
        )
        .await
    }

    /// Every transaction matching the dashboard table's `filter` (all its
    /// pages, from one consistent view), in the table's order, page by
    /// page: what `e` exports.
    pub async fn scan_table<F>(&self, filter: &TableFilter, mut on_page: F) -> Result<ScanSummary>
    where
        F: FnMut(Vec<Transaction>) -> bool,
    {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let scan = scan::Scan::new(filter.query(&q, &d.fields, &self.config), filter.sort(&q));
        let now = self.now().await;
        let c = &self.config;
        scan::scan(self.cluster(), &c.indices.transactions, scan, |hits| {
            let page: Vec<Transaction> = hits
                .iter()
                .map(|h| Transaction::from_source(&h.id, &h.source))
                .filter(|t| filter.keeps(t, now, c))
                .collect();
            on_page(page)
        })
        .await
    }

    /// Every stuck transaction (see [`rules::urgency`]), oldest first, with
    /// the scan's coverage. Undated in-flight transactions are included.
    pub async fn stuck(&self) -> Result<Listing> {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let query = q.stuck(self.config.recovery_window);
        let now = self.now().await;
        let mut transactions = Vec::new();
        let summary = self
            .scan_transactions(query, |page| {
                transactions.extend(
                    page.into_iter()
                        .filter(|t| urgency(t, now, &self.config).is_stuck()),
                );
                true
            })
            .await?;
        Ok(Listing {
            transactions,
            summary,
        })
    }

    /// `list`: the transactions of `scope` older than `older_than`, oldest
    /// first, page by page as they arrive; stops before a partial page
    /// unless `allow_partial` (the summary's coverage says so).
    pub async fn list_scope<F>(
        &self,
        scope: &ListScope,
        older_than: Option<Duration>,
        allow_partial: bool,
        mut on_page: F,
    ) -> Result<ScanSummary>
    where
        F: FnMut(Vec<Transaction>) -> bool,
    {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let c = &self.config;
        let mut filter = vec![match scope {
            ListScope::NotFinished => q.not_terminal(),
            ListScope::All => serde_json::json!({"match_all": {}}),
            ListScope::States(s) => q.state_in(s),
            ListScope::Stuck => q.stuck(c.recovery_window),
            ListScope::NeedsInvestigation => q.stuck(c.investigate_after),
        }];
        if let Some(age) = older_than {
            filter.extend(q.older_than(age));
        }
        let query = serde_json::json!({"bool": {"filter": filter}});
        let now = self.now().await;
        let keep = |t: &Transaction| {
            let u = urgency(t, now, c);
            let old_enough = older_than.is_none_or(|a| rules::is_older_than(t, now, a));
            old_enough
                && match scope {
                    ListScope::Stuck => u.is_stuck(),
                    ListScope::NeedsInvestigation => u.needs_investigation(),
                    _ => true,
                }
        };
        self.scan_transactions_with(query, !allow_partial, |page| {
            on_page(page.into_iter().filter(|t| keep(t)).collect())
        })
        .await
    }

    /// Transactions by state (all when `states` is empty) and age, oldest
    /// first, page by page.
    pub async fn list_pages<F>(
        &self,
        states: &[String],
        older_than: Option<Duration>,
        mut on_page: F,
    ) -> Result<ScanSummary>
    where
        F: FnMut(Vec<Transaction>) -> bool,
    {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let query = q.list(states, older_than);
        let client_age = older_than.filter(|_| !d.fields.ages_queryable());
        let now = self.now().await;
        self.scan_transactions(query, |page| {
            let page = match client_age {
                // The mapping cannot compare dates: filter here.
                Some(min) => page
                    .into_iter()
                    .filter(|t| rules::is_older_than(t, now, min))
                    .collect(),
                None => page,
            };
            on_page(page)
        })
        .await
    }
}
