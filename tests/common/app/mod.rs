//! An application the tool did not write, for live tests: it follows the
//! article (`two-phase-commit-protocol.md` in the shared reference) to the
//! letter, takes Kestra-style locks and keeps Kestra-like heartbeats.
//!
//! - [`names`]: every field name and state value it writes, in one place.
//! - [`scripts`]: the article's painless scripts, each emulated atomically
//!   with a realtime GET and a write conditional on `_seq_no`/`_primary_term`,
//!   and its timestamps (`SimpleDateFormat` `.SSSSSS`: milliseconds padded).
//! - [`flow`]: `_create`, core steps 1-7, the rollbacks, where recovery resumes.
//! - [`kestra`]: `LockService` (`{category, id, owner, createdAt}`, id
//!   `category_id`, `op_type=create`, no expiry, owner-checked unlock).
//! - [`instance`]: instances (one worker each, a heartbeat task), crashes
//!   injected before every write; a crashed instance stops heartbeating and
//!   leaves its transaction and its locks behind, and a new one replaces it.
//! - [`recovery`]: the article's recovery loop, plus Kestra's cleanup of the
//!   locks of instances its heartbeats say are dead.
//! - [`ledger`]: the live instances, the locks each holds, violations.
//! - [`verify`]: the end state (money, pending entries, states).
//!
//! The names are one constant per convention ([`names::ARTICLE`], and
//! [`names::JAVA`]: camelCase fields, upper-case states). The indices are
//! created with the article's mappings exactly (its `src_account`/
//! `dest_account` mapped while the documents carry `src_acct`/`dest_acct`;
//! the Java application maps what it writes); the locks and heartbeats indices are mapped
//! dynamically, as Kestra's would be on a cluster nobody prepared.

pub mod flow;
pub mod instance;
pub mod kestra;
pub mod ledger;
pub mod names;
pub mod recovery;
pub mod scripts;
pub mod verify;

use estx::cluster::{Cluster, ConnectOptions};
use ledger::Ledger;
use names::Names;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The application's indices.
#[derive(Debug, Clone)]
pub struct AppIndices {
    pub transactions: String,
    pub accounts: String,
    pub locks: String,
    pub heartbeats: String,
}

impl AppIndices {
    /// The tool's test indices, with the application's heartbeats beside
    /// them (`{prefix}instances`).
    pub fn of(ix: &crate::common::TestIndices) -> AppIndices {
        AppIndices {
            transactions: ix.transactions.clone(),
            accounts: ix.accounts.clone(),
            locks: ix.locks.clone(),
            heartbeats: format!("{}instances", ix.prefix),
        }
    }
}

/// How the application behaves.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Accounts `acct-00`.., each starting with `initial_balance`.
    pub accounts: usize,
    pub initial_balance: i64,
    /// Invoices `inv-00`.. one transfer in four also locks.
    pub invoices: usize,
    /// The maximum processing time of a transfer's steps: a worker that
    /// would write past it stops instead (the article's recovery relies on
    /// every live thread finishing within it).
    pub budget: Duration,
    /// Probability of a crash before each write.
    pub crash_rate: f64,
    /// How long `LockService.lock` waits for a held lock.
    pub lock_wait: Duration,
    pub heartbeat_every: Duration,
    /// The application's own liveness rule: an instance whose heartbeat is
    /// older than this is dead (its locks may be cleared).
    pub heartbeat_timeout: Duration,
    /// The application's recovery loop: transactions untouched this long.
    pub recovery_window: Duration,
    /// The application's recovery loop: one pass per period.
    pub recovery_every: Duration,
}

/// What the application did, counted.
#[derive(Debug, Default)]
pub struct Stats {
    pub created: AtomicUsize,
    pub finished: AtomicUsize,
    pub rolled_back: AtomicUsize,
    pub lock_busy: AtomicUsize,
    pub instances: AtomicUsize,
    pub recovered_finished: AtomicUsize,
    pub recovered_rolled_back: AtomicUsize,
    pub recovery_noops: AtomicUsize,
    pub locks_cleared: AtomicUsize,
    /// Threads stopped, by why and where (`crash core 3`, `over budget ...`).
    pub stops: Mutex<BTreeMap<String, usize>>,
}

impl Stats {
    pub fn stopped(&self, why: String) {
        *self.stops.lock().unwrap().entry(why).or_default() += 1;
    }

    /// Threads stopped by an injected crash.
    pub fn crashes(&self) -> usize {
        let stops = self.stops.lock().unwrap();
        stops
            .iter()
            .filter(|(k, _)| k.starts_with("crash"))
            .map(|(_, v)| v)
            .sum()
    }

    fn get(c: &AtomicUsize) -> usize {
        c.load(Ordering::SeqCst)
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = Stats::get;
        writeln!(
            f,
            "application: {} instances, {} transfers created, {} finished and {} rolled back by their workers, {} skipped on a busy lock",
            g(&self.instances), g(&self.created), g(&self.finished), g(&self.rolled_back), g(&self.lock_busy)
        )?;
        writeln!(
            f,
            "application recovery: {} finished, {} rolled back, {} noops, {} locks of dead instances cleared",
            g(&self.recovered_finished), g(&self.recovered_rolled_back), g(&self.recovery_noops), g(&self.locks_cleared)
        )?;
        write!(f, "threads stopped: {} crashes", self.crashes())?;
        for (why, n) in self.stops.lock().unwrap().iter() {
            write!(f, "; {why}: {n}")?;
        }
        Ok(())
    }
}

/// The application's world: its cluster handle, indices, names, settings,
/// and what the test observes.
pub struct World {
    pub cluster: Cluster,
    pub ix: AppIndices,
    pub names: &'static Names,
    pub cfg: AppConfig,
    pub ledger: Ledger,
    pub stats: Stats,
    stop: AtomicBool,
}

impl World {
    /// Creates the indices (the article's mappings) and the accounts.
    pub async fn setup(url: &str, ix: AppIndices, names: &'static Names, cfg: AppConfig) -> World {
        let mut opts = ConnectOptions::new(url);
        opts.timeout = Duration::from_secs(10);
        let cluster = Cluster::connect(&opts).unwrap();
        let n = names;
        let accounts = json!({"mappings": {"properties": {
            n.balance: {"type": "long"}, n.pending: {"type": "keyword"}}}});
        let transactions = json!({"mappings": {"properties": {
            n.amount: {"type": "long"}, n.creation_time: {"type": "date"},
            n.modification_time: {"type": "date"}, n.mapped_accounts[1]: {"type": "keyword"},
            n.mapped_accounts[0]: {"type": "keyword"}, n.state: {"type": "keyword"}}}});
        cluster.create_index(&ix.accounts, accounts).await.unwrap();
        cluster
            .create_index(&ix.transactions, transactions)
            .await
            .unwrap();
        cluster.create_index(&ix.locks, json!({})).await.unwrap();
        cluster
            .create_index(&ix.heartbeats, json!({}))
            .await
            .unwrap();
        let w = World {
            cluster,
            ix,
            names,
            ledger: Ledger::new(cfg.heartbeat_timeout),
            cfg,
            stats: Stats::default(),
            stop: AtomicBool::new(false),
        };
        for a in w.account_ids() {
            let doc = json!({n.balance: w.cfg.initial_balance, n.pending: []});
            w.cluster.put(&w.ix.accounts, &a, &doc).await.unwrap();
        }
        w
    }

    /// The accounts' ids.
    pub fn account_ids(&self) -> Vec<String> {
        (0..self.cfg.accounts)
            .map(|i| format!("acct-{i:02}"))
            .collect()
    }

    /// Makes every write visible to searches (osmem never refreshes).
    pub async fn refresh(&self) {
        for index in [
            &self.ix.transactions,
            &self.ix.accounts,
            &self.ix.locks,
            &self.ix.heartbeats,
        ] {
            self.cluster.refresh(index).await.unwrap();
        }
    }

    /// Asks every worker and the recovery loop to stop after what they do.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}
