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
pub mod kept_ids;
pub mod listing;
pub mod poll;
pub mod progress;
pub mod queries;
pub mod row_notes;
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
pub mod verdict;
pub mod writes;

pub use coverage::Coverage;
pub use discovery::{Discovery, Fields, IndexInfo, Refresh, ResolvedField, Target};
pub use groups::{Group, GroupKind, Groups};
pub use listing::{ListScope, Listing};
pub use progress::{account_progress, AccountProgress};
pub use queries::Queries;
pub use row_notes::{row_notes, NotesUnread, RowNotes};
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

use super::account::AccountState;
use super::executor::StepOutcome;
use super::intervene::{LeftOut, Selected, Selection};
use super::locks::liveness::LivenessReport;
use super::problem::{Problem, Problems};
use super::steps::Procedure;
use super::time::human_age;
use crate::error::Error;
use crate::protocol::check::{
    acked_stuck_counts, cause_reading, judge_causes, odd_count, set_apart_acked, stuck_ones,
    CauseReading, CheckCounts, CheckReading,
};
use crate::protocol::intervene::selection::select_by_filters;
use crate::protocol::read::doctor::audit_index_check;
use crate::protocol::read::doctor::check::Check;
use crate::protocol::read::doctor::check::Severity;
use crate::protocol::read::doctor::explicit_index_check;
use crate::protocol::read::doctor::explicit_index_of;
use crate::protocol::read::doctor::index_reports;
use crate::protocol::read::doctor::judge;
use crate::protocol::read::doctor::paging_of;
use crate::protocol::read::doctor::product_of;
use crate::protocol::read::doctor::ClockReport;
use crate::protocol::read::doctor::DoctorReport;
use crate::protocol::read::groups::account_groups;
use crate::protocol::read::groups::band_groups;
use crate::protocol::read::groups::exact;
use crate::protocol::read::groups::locks_groups;
use crate::protocol::read::groups::state_age_groups;
use crate::protocol::read::groups::transaction_aggs;
use crate::protocol::read::groups::TOP;
use crate::protocol::read::verdict::{rejudge, Previous};
use crate::protocol::views::locks_of;
use crate::protocol::views::preview;
use crate::protocol::views::AccountView;
use crate::protocol::views::TransactionDetail;
use crate::protocol::views::{DocKind, DocVersion};
use doctor::security::security;
use elasticsearch::http::Method;
use poll::{AttentionCounts, PollMemory, DEFAULT_CAP};
use scan::total_hits;
use serde_json::json;
use std::collections::HashSet;

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

    /// One poll, through the cached discovery, reading everything afresh
    /// (a caller that polls again and again keeps a [`PollMemory`] and
    /// calls [`Protocol::poll_snapshot_listing`]).
    pub async fn poll_snapshot(&self, cap: usize) -> Result<Snapshot> {
        let memory = PollMemory::default();
        self.poll_snapshot_listing(cap, &TableFilter::default(), &memory)
            .await
    }

    /// The dashboard's poll, listing page `table.page` (of `cap` rows) of
    /// the table's filter run over every document; what `memory` keeps
    /// from the poller's earlier polls is not read again.
    pub async fn poll_snapshot_listing(
        &self,
        cap: usize,
        table: &TableFilter,
        memory: &PollMemory,
    ) -> Result<Snapshot> {
        let d = self.discovery().await?;
        let ix = &self.config.indices;
        poll::load_with(self.cluster(), ix, &d, cap, &self.config, table, memory).await
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

    /// Reads a transaction, its two accounts and its locks (realtime).
    pub async fn transaction_detail(&self, id: &str) -> Result<Option<TransactionDetail>> {
        Ok(self.transaction_detail_versioned(id).await?.map(|(d, _)| d))
    }

    /// [`Protocol::transaction_detail`], with the version each of its
    /// transaction and account documents was read at (what a plan file
    /// binds its approval to).
    pub async fn transaction_detail_versioned(
        &self,
        id: &str,
    ) -> Result<Option<(TransactionDetail, Vec<DocVersion>)>> {
        let Some((txn, doc)) = self.read_transaction(id).await? else {
            return Ok(None);
        };
        let mut versions = vec![DocVersion {
            kind: DocKind::Transaction,
            id: id.to_string(),
            version: Some((doc.seq_no, doc.primary_term)),
        }];
        let mut accounts = Vec::new();
        for acct in [&txn.src, &txn.dest].into_iter().flatten() {
            let doc = self
                .cluster()
                .get(&self.config.indices.accounts, acct)
                .await?;
            versions.push(DocVersion {
                kind: DocKind::Account,
                id: acct.clone(),
                version: doc.as_ref().map(|d| (d.seq_no, d.primary_term)),
            });
            accounts.push(match doc {
                None => AccountView {
                    id: acct.clone(),
                    state: None,
                    carries: false,
                    settled: None,
                    problems: Problems::one(Problem::AccountMissing),
                },
                Some(d) => match AccountState::from_source(&d.source) {
                    Ok(s) => AccountView {
                        id: acct.clone(),
                        carries: s.carries(id),
                        settled: s.settled_of(id).map(|r| r.outcome),
                        state: Some(s),
                        problems: Problems::default(),
                    },
                    Err(p) => AccountView {
                        id: acct.clone(),
                        state: None,
                        carries: false,
                        settled: None,
                        problems: p,
                    },
                },
            });
        }
        let locks = locks_of(self, &txn).await?;
        let state_of = |k: usize| accounts.get(k).and_then(|a: &AccountView| a.state.as_ref());
        let fencing = self.config.fencing;
        let recover = preview(Procedure::Recover, &txn, state_of(0), state_of(1), fencing);
        let rollback = preview(Procedure::Rollback, &txn, state_of(0), state_of(1), fencing);
        let next_step = recover
            .steps
            .iter()
            .find(|s| matches!(s.outcome, StepOutcome::Updated(_)))
            .map(|s| s.step);
        let detail = TransactionDetail {
            txn,
            accounts,
            locks,
            next_step,
            recover,
            rollback,
        };
        Ok(Some((detail, versions)))
    }

    /// The stuck transactions grouped by cause (see the module).
    pub async fn stuck_groups(&self) -> Result<Groups> {
        let d = self.discovery().await?;
        let q = Queries::new(&d.fields);
        let f = &d.fields;
        let mut unavailable = Vec::new();
        let stuck = match rules::urgency_count_queries(&q, f, &self.config) {
            Some([stuck, _]) => stuck,
            None => {
                unavailable.push(format!(
                    "ages: `{}` is not a date the cluster can compare; groups count every \
                     transaction in flight",
                    f.modification_time.name
                ));
                q.in_flight()
            }
        };
        let aggs = transaction_aggs(f, &mut unavailable);
        let ix = &self.config.indices;
        let mut searches = vec![(
            ix.transactions.clone(),
            json!({"size": 0, "track_total_hits": true, "query": stuck, "aggs": aggs}),
        )];
        let process = exact(&f.lock_process, "lock holders", &mut unavailable);
        let owner = exact(&f.owner, "lock holders' transactions", &mut unavailable);
        if let (Some(p), Some(o)) = (&process, &owner) {
            searches.push((
                ix.locks.clone(),
                json!({"size": 0, "aggs": {"process": {"terms": {"field": p, "size": TOP},
                    "aggs": {"owners": {"terms": {"field": o, "size": 10_000}}}}}}),
            ));
        }
        let mut answers = self.cluster().msearch(&searches).await?.into_iter();
        let txns = answers.next().transpose()?.unwrap_or_default();
        let mut g = Groups {
            stuck: total_hits(&txns),
            unavailable,
            ..Groups::default()
        };
        let a = &txns["aggregations"];
        g.groups.extend(state_age_groups(&a["states"], q.schema()));
        g.groups
            .extend(locks_groups(answers.next().transpose().ok().flatten()));
        g.groups.extend(account_groups(a));
        g.groups.extend(band_groups(&a["bands"]));
        Ok(g)
    }

    /// Gathers the doctor's report (read-only).
    pub async fn doctor(&self) -> Result<DoctorReport> {
        let cluster = self.cluster();
        let (_, root) = cluster.raw(Method::Get, "/", None).await?;
        let product = product_of(&root);
        let d = self.rediscover().await?;
        let mut checks = Vec::new();
        let indices = index_reports(cluster, &self.config.indices, &d).await?;
        let paging = paging_of(cluster, &indices).await;
        let explicit_index_refused = explicit_index_of(cluster, &indices).await?;
        checks.extend(explicit_index_refused.as_deref().map(explicit_index_check));
        let audit = self.config.audit_file.is_none();
        let audit = audit.then_some(self.config.indices.audit.as_str());
        let acks = self.config.indices.acks.as_str();
        let security = security(cluster, &d, audit, acks).await?;
        judge(&d, &indices, &security, acks, &mut checks);
        checks.extend(audit_index_check(self).await?);
        self.sync_clock().await;
        let clock = ClockReport::of(&cluster.clock_status());
        checks.extend(clock.check());
        // A locks index that does not exist is judged once, in `judge`.
        let lockable = match d.locks.exists() {
            true => writes::check_locks(&self.config.indices, &d),
            false => Ok(()),
        };
        if let Err(e) = lockable {
            checks.push(Check {
                severity: Severity::Error,
                text: format!("`transfer --locks` {e}"),
            });
        }
        let liveness = self.liveness_report().await;
        if let Some(LivenessReport { error: Some(_), .. }) = &liveness {
            let text = format!(
                "liveness {}",
                liveness
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            );
            checks.push(Check {
                severity: Severity::Error,
                text,
            });
        }
        if let Err(e) = writes::check(&self.config.indices, &d, &[]) {
            checks.push(Check {
                severity: Severity::Error,
                text: e.to_string(),
            });
        }
        let schema = schema_report::report(cluster, &d, self.config.profile.as_deref()).await;
        checks.extend(
            schema_report::unmapped_states_warning(&d, &schema).map(|text| Check {
                severity: Severity::Warning,
                text,
            }),
        );
        checks.sort_by_key(|c| std::cmp::Reverse(c.severity));
        Ok(DoctorReport {
            schema,
            url: cluster.url().to_string(),
            credential: cluster.credential(),
            product,
            indices,
            security,
            clock,
            paging,
            explicit_index_refused,
            times: d.times.clone(),
            checks,
            liveness,
            audit_file: self.config.audit_file.clone(),
        })
    }

    /// Resolves `sel` through the read side: the filters by one scan (a
    /// partial view refused unless `allow_partial`), the ids by one
    /// realtime multi-get each thousand (unknown ones left out, as are ids
    /// the filters do not match), then, unless `sel.include_acked`, the
    /// acknowledged ones left out, each named with who acknowledged it and
    /// until when (their acks read by id: realtime, so an ack written a
    /// moment ago counts), and unless `sel.include_held` those another
    /// live job holds, each named with the job (its whose, id and
    /// heartbeat; the running records read by search, so as fresh as the
    /// audit index's refresh).
    pub async fn select(&self, sel: &Selection, allow_partial: bool) -> Result<Selected> {
        let mut selected = self.select_all(sel, allow_partial).await?;
        if !sel.include_acked {
            let now = self.now().await;
            let acks = crate::protocol::acks::acks_on(self, &selected.ids(), now).await?;
            if !acks.is_empty() {
                selected.transactions.retain(|t| match acks.get(&t.id) {
                    Some(ack) => {
                        selected.left_out.push(LeftOut {
                            txn: t.id.clone(),
                            why: format!("{ack} (--include-acked takes it)"),
                            acked: Some(Box::new(ack.clone())),
                        });
                        false
                    }
                    None => true,
                });
            }
        }
        if !sel.include_held && !selected.transactions.is_empty() {
            let held = crate::protocol::jobs::live_jobs_for_act(self).await;
            selected.transactions.retain(|t| match held.holding(&t.id) {
                Some(by) => {
                    selected.left_out.push(LeftOut::refused(
                        t.id.clone(),
                        format!("held by {by} (--force with a reason takes it)"),
                    ));
                    false
                }
                None => true,
            });
        }
        Ok(selected)
    }

    /// [`Protocol::select`] with the acknowledged ones still in.
    async fn select_all(&self, sel: &Selection, allow_partial: bool) -> Result<Selected> {
        if sel.is_empty() {
            return Err(Error::Invalid(
                "nothing selected: give --all-stuck, --state, --older-than or --ids-from".into(),
            ));
        }
        self.check_schema().await?;
        let filtered = if sel.has_filters() {
            Some(select_by_filters(self, sel, allow_partial).await?)
        } else {
            None
        };
        let Some(ids) = &sel.ids else {
            return Ok(Selected {
                transactions: filtered.unwrap_or_default(),
                left_out: Vec::new(),
            });
        };
        let matching: Option<HashSet<String>> = filtered
            .as_ref()
            .map(|f| f.iter().map(|t| t.id.clone()).collect());
        let mut seen = HashSet::new();
        let ids: Vec<String> = ids
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect();
        let index = &self.config.indices.transactions;
        let now = self.now().await;
        let mut out = Selected {
            transactions: Vec::new(),
            left_out: Vec::new(),
        };
        for chunk in ids.chunks(1000) {
            let docs = self.cluster().mget(index, chunk).await?;
            for (id, doc) in chunk.iter().zip(docs) {
                let Some(doc) = doc else {
                    out.left_out.push(LeftOut::refused(
                        id.clone(),
                        format!("no transaction `{id}` in `{index}`"),
                    ));
                    continue;
                };
                let t = Transaction::from_source(id, &doc.source);
                match &matching {
                    Some(m) if !m.contains(id) => {
                        let state = t.state.as_ref().map_or("without a state", |s| s.as_str());
                        let age = t.age_seconds(now).map_or("undated".to_string(), |a| {
                            format!("last modified {} ago", human_age(a))
                        });
                        out.left_out.push(LeftOut::refused(
                            id.clone(),
                            format!(
                                "not selected by {}: it is {state}, {age}",
                                sel.describe_filters().join(" ")
                            ),
                        ));
                    }
                    _ => out.transactions.push(t),
                }
            }
        }
        Ok(out)
    }

    /// What the causes of stuck transactions are judged on, read at once
    /// (every stuck transaction, every lock, the healing verdict: what
    /// `check` reads), and when: `list --json` gives each row its cause.
    pub async fn cause_reading(&self) -> Result<(chrono::DateTime<chrono::Utc>, CauseReading)> {
        let now = self.now().await;
        let stuck = stuck_ones(self, now).await?;
        let locks = self.list_locks().await?;
        let (healing, _) = crate::protocol::check::healing(self, now, &stuck).await?;
        let reading =
            cause_reading(self, stuck.iter().map(|s| &s.transaction), locks, healing).await?;
        Ok((now, reading))
    }

    /// Counts everything `check` reports. Any read that fails fails the
    /// whole check: a monitoring check must not report OK on half the data.
    pub async fn check_reading(&self) -> Result<CheckReading> {
        self.check_reading_with(None).await
    }

    /// Counts everything `check` reports, taking the audit's findings from
    /// `audit_findings` when given (a watcher that paces its audits by
    /// their cost, see [`super::audit::pace`]), else running the audit.
    pub async fn check_reading_with(&self, audit_findings: Option<u64>) -> Result<CheckReading> {
        let now = self.now().await;
        let (stuck, acked) = set_apart_acked(self, stuck_ones(self, now).await?, now).await?;
        let needs_investigation = stuck.iter().filter(|s| s.needs_investigation).count() as u64;
        let (mut stuck, mut acked) = (stuck, acked);
        let odd_documents = odd_count(self).await?;
        let locks = self.list_locks().await?;
        let stale_locks = locks.iter().filter(|l| l.staleness.is_stale()).count() as u64;
        let audit_findings = match audit_findings {
            Some(n) => n,
            None => self.audit(None, false).await?.findings.len() as u64,
        };
        let (healing, recovery_stalled) =
            crate::protocol::check::healing(self, now, &stuck).await?;
        let all = stuck.iter().chain(acked.iter().map(|(s, _)| s));
        let causes = cause_reading(self, all.map(|s| &s.transaction), locks, healing).await?;
        let window = self.config.recovery_window;
        let all = stuck.iter_mut().chain(acked.iter_mut().map(|(s, _)| s));
        judge_causes(all, &causes, now, window);
        let counts = CheckCounts {
            stuck: stuck.len() as u64,
            needs_investigation,
            acked: acked.len() as u64,
            odd_documents,
            stale_locks,
            audit_findings,
            recovery_stalled,
            as_of: now,
        };
        Ok(CheckReading {
            counts,
            healing,
            stuck,
            acked,
            runbooks: self.config.runbooks.clone(),
        })
    }

    /// The counts `check` reports, taken from one dashboard poll, which a
    /// watcher (the exporter) publishes with them: the poll counts the
    /// stuck, those needing investigation and the odd ones over every
    /// document with the same queries `check` counts with, and judges the
    /// locks by the same rule, so a reading costs the poll's few requests
    /// whatever the number of transactions. A count the poll could not take
    /// is read as `check` reads it: the stuck and odd ones when the cluster
    /// cannot compare dates (or the transactions index is missing), the
    /// stale locks when there are more than the poll lists or some were
    /// judged without their owners or heartbeats. `audit_findings` comes
    /// from the watcher's paced audit. The healing verdict is judged again
    /// with the watcher's `previous` poll (the snapshot carries it). A
    /// partial poll is an error.
    pub async fn watch_reading(
        &self,
        audit_findings: u64,
        previous: Option<Previous>,
    ) -> Result<(CheckCounts, Snapshot)> {
        let mut snap = self.poll_snapshot(DEFAULT_CAP).await?;
        if let Some(partial) = snap.read.coverage.describe() {
            return Err(Error::Invalid(format!(
                "a partial view ({partial}): no counts"
            )));
        }
        let now = snap.taken_at;
        let attention = snap.read.attention;
        // The acknowledged stuck ones are listed by `check`, not counted.
        let (stuck, needs_investigation, odd_documents, acked) = match attention {
            Some(AttentionCounts {
                stuck: Some(stuck),
                needs_investigation: Some(n),
                odd,
            }) => {
                let (acked, acked_n) = acked_stuck_counts(self, &snap.acks, now).await?;
                (
                    stuck.saturating_sub(acked),
                    n.saturating_sub(acked_n),
                    odd,
                    acked,
                )
            }
            _ => {
                let (stuck, acked) =
                    set_apart_acked(self, stuck_ones(self, now).await?, now).await?;
                let n = stuck.iter().filter(|s| s.needs_investigation).count() as u64;
                let odd = odd_count(self).await?;
                (stuck.len() as u64, n, odd, acked.len() as u64)
            }
        };
        let all_locks_judged =
            snap.locks.len() as u64 >= snap.read.locks_total && !snap.read.locks_judged_blind;
        let stale_locks = if all_locks_judged {
            snap.locks.iter().filter(|l| l.staleness.is_stale()).count() as u64
        } else {
            let locks = self.list_locks().await?;
            locks.iter().filter(|l| l.staleness.is_stale()).count() as u64
        };
        snap.healing = rejudge(
            &snap.healing_evidence,
            previous,
            now,
            self.config.recovery_window,
        );
        let counts = CheckCounts {
            stuck,
            needs_investigation,
            acked,
            odd_documents,
            stale_locks,
            audit_findings,
            recovery_stalled: u64::from(snap.healing.is_alarm()),
            as_of: now,
        };
        Ok((counts, snap))
    }
}
