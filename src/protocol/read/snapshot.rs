//! The read model one poll loads and the dashboard shows: the
//! [`Snapshot`] (per-state counts, the table's page, the accounts and locks
//! it names) and its [`ReadStatus`] (shard coverage, totals behind the caps,
//! how fresh the data is, discovery's warnings). Loaded by [`super::poll`].

use super::coverage::Coverage;
use super::groups::Groups;
use super::index_info::Refresh;
use super::state_counts::{AttentionCounts, StateCount};
use super::table::TablePage;
use super::verdict::cause::{self, Cause, CauseEvidence, CauseKind};
use super::verdict::{Healing, HealingEvidence};
use crate::cluster::ClockStatus;
use crate::protocol::account::AccountState;
use crate::protocol::locks::LockView;
use crate::protocol::transaction::Transaction;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::time::Duration;

/// An account as the dashboard knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum AccountEntry {
    /// Readable.
    Ok(AccountState),
    /// Present but unreadable, with the problems.
    Malformed(crate::protocol::problem::Problems),
    /// Named by a transaction but absent.
    Missing,
}

/// How complete and how fresh a poll's data is, and what discovery warns
/// about the cluster (shown in short in the dashboard's header).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadStatus {
    /// Shards behind the poll's searches; partial when some failed.
    pub coverage: Coverage,
    /// Locks in all (the locks list is capped at [`super::poll::LOCKS_CAP`]).
    pub locks_total: u64,
    /// Accounts with pending entries in all (capped at [`super::poll::PENDING_ACCOUNTS_CAP`]).
    pub pending_accounts_total: u64,
    /// In-flight transactions with no usable `modification_time`.
    pub undated_in_flight: u64,
    /// Stuck, needing investigation and odd, over every document (`None`
    /// when the transactions index is missing).
    pub attention: Option<AttentionCounts>,
    /// The transactions index's refresh interval: searches lag writes by up
    /// to this (`None` before discovery).
    pub refresh: Option<Refresh>,
    /// Discovery's warnings (aliases, fields without an exact form, ...),
    /// and what the poll could not read and went on without.
    pub warnings: Vec<String>,
    /// Some locks were judged without their evidence (owners or heartbeats
    /// the poll could not read): unknown where they may be stale, so their
    /// stale count is a lower bound.
    pub locks_judged_blind: bool,
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
            Some(Refresh::ServerlessDefault) => Some(since + super::index_info::SERVERLESS_REFRESH),
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
    /// Indices that do not exist (an absent locks index is not one).
    pub missing_indices: Vec<String>,
    /// The deployment has no locks index ([`super::Target::Absent`]): the
    /// locks pane says so; no lock is held, none will be released.
    pub locks_absent: bool,
    /// Whether the application's own recovery is working, judged on this
    /// poll alone (a watcher judges again with its previous poll: see
    /// [`super::verdict::healing`]).
    pub healing: Healing,
    /// What `healing` was judged on.
    pub healing_evidence: HealingEvidence,
    /// The live acknowledgements ([`crate::protocol::acks`]): the header
    /// counts them, the table marks their rows.
    pub acks: crate::protocol::acks::Acks,
    /// The write check's refusal, when the mappings would reject the
    /// protocol's writes (judged on discovery, no request): every stuck
    /// transaction's cause is then refused.
    pub writes_refused: Option<crate::error::WriteRefusal>,
    /// The jobs running with a fresh heartbeat (any operator's, this one's
    /// too) and the transactions they hold: the table marks those rows.
    pub live_jobs: crate::protocol::jobs::LiveJobs,
    /// The acts finished in the last minutes (any operator's), oldest
    /// first: the dashboard logs those that are not its own, once.
    pub others_acts: Vec<crate::protocol::jobs::SeenAct>,
    /// Completeness, totals behind caps, freshness, warnings.
    pub read: ReadStatus,
}

impl Snapshot {
    /// Why `t` is stuck and what is safe for it
    /// ([`super::verdict::cause`]), judged on this poll alone: its locks,
    /// its healing verdict (as the watcher judged it again), and the stuck
    /// per account ([`Snapshot::stuck_by_account`]). `None` when `t` is not
    /// stuck under `window`.
    pub fn cause_of(&self, t: &Transaction, window: Duration) -> Option<Cause> {
        let by = self.stuck_by_account(window);
        cause::judge(t, &self.cause_evidence(&by), self.taken_at, window)
    }

    /// [`Snapshot::cause_of`] of each of `ts`, in order, the stuck per
    /// account counted once (the table's rows: `dashboard::panes::transactions`).
    pub fn causes_of<'a>(
        &'a self,
        ts: impl IntoIterator<Item = &'a Transaction>,
        window: Duration,
    ) -> Vec<Option<Cause>> {
        let by = self.stuck_by_account(window);
        cause::judge_each(ts, &self.cause_evidence(&by), self.taken_at, window)
    }

    /// The stuck transactions this poll lists (the oldest, acknowledged
    /// ones left out, as `check` counts), by cause: what the exporter
    /// publishes (`estx_stuck_by_cause`).
    pub fn stuck_by_cause(&self, window: Duration) -> BTreeMap<CauseKind, u64> {
        let unacked = self
            .transactions
            .iter()
            .filter(|t| self.acks.get(&t.id).is_none());
        let mut out = BTreeMap::new();
        for c in self.causes_of(unacked, window).into_iter().flatten() {
            *out.entry(c.kind()).or_insert(0) += 1;
        }
        out
    }

    /// Stuck transactions per account on this poll: the stuck rows of the
    /// page, or an account's pending list where longer.
    fn stuck_by_account(&self, window: Duration) -> BTreeMap<String, u64> {
        let stuck = self
            .transactions
            .iter()
            .filter(|x| super::rules::urgency_with(x, self.taken_at, window, window).is_stuck());
        let mut by = cause::stuck_by_account(stuck);
        for (id, entry) in &self.accounts {
            if let AccountEntry::Ok(a) = entry {
                let n = by.entry(id.clone()).or_insert(0);
                *n = (*n).max(a.pending.len() as u64);
            }
        }
        by
    }

    fn cause_evidence<'a>(&'a self, by: &'a BTreeMap<String, u64>) -> CauseEvidence<'a> {
        CauseEvidence {
            locks: &self.locks,
            healing: &self.healing,
            stuck_by_account: by,
            writes: self.writes_refused.as_ref(),
        }
    }

    /// Judges each by-cause group's cause on this poll's locks and healing
    /// verdict (a group's own count says whether its account is hot), the
    /// actionable groups first ([`Groups::judge`]).
    pub fn judge_groups(&self, groups: &mut Groups) {
        groups.judge(&self.cause_evidence(&BTreeMap::new()));
    }
}
