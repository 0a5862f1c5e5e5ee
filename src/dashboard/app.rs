//! The dashboard's state, and what is derived from it (the visible rows,
//! the selected transaction, its preview). Nothing here does I/O; the
//! renderer reads it, `update` changes it.

use super::event::{Action, PollFailure};
use super::snapshot::{AccountEntry, Snapshot};
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::views::{preview, Preview, TransactionDetail};
use crate::protocol::{decide::Fencing, Procedure};
use chrono::{DateTime, Utc};
use std::collections::VecDeque;
use std::time::Duration;

/// The panes focus moves between with Tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Transaction table.
    Transactions,
    /// Detail of the selected transaction.
    Detail,
    /// Accounts.
    Accounts,
    /// Locks.
    Locks,
    /// Event log.
    Log,
}

impl Pane {
    /// Tab order.
    pub const ORDER: [Pane; 5] = [
        Pane::Transactions,
        Pane::Detail,
        Pane::Accounts,
        Pane::Locks,
        Pane::Log,
    ];
}

/// Transaction table sort keys (`o` cycles, `O` reverses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    /// Oldest modification first.
    Age,
    /// By state in protocol order.
    State,
    /// By amount.
    Amount,
    /// By id.
    Id,
}

impl SortKey {
    /// Column name shown in the title.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Age => "age",
            SortKey::State => "state",
            SortKey::Amount => "amount",
            SortKey::Id => "id",
        }
    }

    fn next(self) -> SortKey {
        match self {
            SortKey::Age => SortKey::State,
            SortKey::State => SortKey::Amount,
            SortKey::Amount => SortKey::Id,
            SortKey::Id => SortKey::Age,
        }
    }
}

/// The state filters `s` cycles through (`None` = all).
pub const STATE_FILTERS: [Option<TxnState>; 5] = [
    None,
    Some(TxnState::Created),
    Some(TxnState::Pending),
    Some(TxnState::Committed),
    Some(TxnState::Terminating),
];

/// A confirmation dialog.
#[derive(Debug, Clone)]
pub struct Dialog {
    /// What it confirms.
    pub action: Action,
    /// On which transaction.
    pub txn: String,
    /// The freshly re-read documents (`None` while loading).
    pub detail: Option<Result<Box<TransactionDetail>, String>>,
    /// `false`: Cancel has focus (the default); `true`: Confirm has.
    pub confirm_focused: bool,
}

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Neutral information.
    Info,
    /// A write happened / an action succeeded.
    Updated,
    /// Nothing needed doing.
    Noop,
    /// Something failed or was refused.
    Error,
}

/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// When.
    pub at: DateTime<Utc>,
    /// How it reads.
    pub level: LogLevel,
    /// What.
    pub text: String,
}

/// Fixed settings of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Cluster URL (shown in the header).
    pub url: String,
    /// The recovery window.
    pub recovery_window: Duration,
    /// When a transaction needs investigation.
    pub investigate_after: Duration,
    /// Actions disabled.
    pub read_only: bool,
    /// `estx-tui init` hint uses these.
    pub transactions_index: String,
    /// The config profile in use (shown in the header).
    pub profile: Option<String>,
}

/// Most log lines kept.
pub const LOG_CAPACITY: usize = 500;

/// Everything the screen shows.
#[derive(Debug, Clone)]
pub struct App {
    /// Fixed settings.
    pub settings: Settings,
    /// The clock the screen uses (from ticks and polls).
    pub now: DateTime<Utc>,
    /// Last good snapshot.
    pub snapshot: Option<Snapshot>,
    /// The last poll's failure, if the last poll failed.
    pub poll_error: Option<PollFailure>,
    /// A poll is running.
    pub polling: bool,
    /// Polling paused by the operator.
    pub paused: bool,
    /// Poll interval.
    pub interval: Duration,
    /// Focused pane.
    pub focus: Pane,
    /// Selected transaction (by id, so a poll does not move the selection).
    pub selected: Option<String>,
    /// Text filter (`/`).
    pub filter: String,
    /// Typing into the filter.
    pub editing_filter: bool,
    /// Index into [`STATE_FILTERS`].
    pub state_filter: usize,
    /// Sort key.
    pub sort: SortKey,
    /// Reverse order.
    pub sort_desc: bool,
    /// Scroll offsets of the accounts, locks and log panes.
    pub scroll: [usize; 3],
    /// Open confirmation dialog.
    pub dialog: Option<Dialog>,
    /// Help overlay shown.
    pub help: bool,
    /// Event log, newest last.
    pub log: VecDeque<LogEntry>,
    /// The action running, if any (one at a time).
    pub running: Option<(Action, String)>,
    /// Terminal size.
    pub size: (u16, u16),
    /// Set when the operator quits.
    pub should_quit: bool,
}

impl App {
    /// A fresh dashboard before the first poll.
    pub fn new(settings: Settings, interval: Duration, now: DateTime<Utc>) -> App {
        App {
            settings,
            now,
            snapshot: None,
            poll_error: None,
            polling: false,
            paused: false,
            interval,
            focus: Pane::Transactions,
            selected: None,
            filter: String::new(),
            editing_filter: false,
            state_filter: 0,
            sort: SortKey::Age,
            sort_desc: false,
            scroll: [0; 3],
            dialog: None,
            help: false,
            log: VecDeque::new(),
            running: None,
            size: (80, 24),
            should_quit: false,
        }
    }

    /// Adds a log line, dropping the oldest past [`LOG_CAPACITY`].
    pub fn push_log(&mut self, level: LogLevel, text: impl Into<String>) {
        self.log.push_back(LogEntry {
            at: self.now,
            level,
            text: text.into(),
        });
        while self.log.len() > LOG_CAPACITY {
            self.log.pop_front();
        }
    }

    /// The state filter in force.
    pub fn state_filter(&self) -> Option<&TxnState> {
        STATE_FILTERS
            .get(self.state_filter)
            .and_then(Option::as_ref)
    }

    /// The transaction rows after filter and sort.
    pub fn visible(&self) -> Vec<&Transaction> {
        let Some(snap) = &self.snapshot else {
            return Vec::new();
        };
        let needle = self.filter.to_lowercase();
        let mut rows: Vec<&Transaction> = snap
            .transactions
            .iter()
            .filter(|t| {
                self.state_filter()
                    .is_none_or(|s| t.state.as_ref() == Some(s))
            })
            .filter(|t| needle.is_empty() || matches_text(t, &needle))
            .collect();
        match self.sort {
            SortKey::Age => rows.sort_by_key(|t| t.modification_time),
            SortKey::State => {
                rows.sort_by_key(|t| (state_rank(t.state.as_ref()), t.modification_time))
            }
            SortKey::Amount => rows.sort_by_key(|t| (t.amount, t.modification_time)),
            SortKey::Id => rows.sort_by(|a, b| a.id.cmp(&b.id)),
        }
        if self.sort_desc {
            rows.reverse();
        }
        rows
    }

    /// Position of the selection in the visible rows (first row if unset or gone).
    pub fn selected_index(&self) -> Option<usize> {
        let rows = self.visible();
        if rows.is_empty() {
            return None;
        }
        Some(
            self.selected
                .as_ref()
                .and_then(|id| rows.iter().position(|t| &t.id == id))
                .unwrap_or(0),
        )
    }

    /// The selected transaction, if any row is visible.
    pub fn selected_transaction(&self) -> Option<&Transaction> {
        let rows = self.visible();
        self.selected_index().and_then(|i| rows.get(i).copied())
    }

    /// Selects the visible row at `i` (clamped).
    pub fn select_index(&mut self, i: usize) {
        let id = {
            let rows = self.visible();
            if rows.is_empty() {
                return;
            }
            rows[i.min(rows.len() - 1)].id.clone()
        };
        self.selected = Some(id);
    }

    /// An account from the snapshot.
    pub fn account(&self, id: &str) -> Option<&AccountEntry> {
        self.snapshot.as_ref().and_then(|s| s.accounts.get(id))
    }

    /// What `procedure` would do to `t` according to the last snapshot (the
    /// confirmation dialog re-reads before anything runs).
    pub fn preview(&self, t: &Transaction, procedure: Procedure) -> Preview {
        let acct = |id: &Option<String>| match id.as_ref().and_then(|i| self.account(i)) {
            Some(AccountEntry::Ok(s)) => Some(s),
            _ => None,
        };
        preview(
            procedure,
            t,
            acct(&t.src),
            acct(&t.dest),
            Fencing::On,
            self.now,
        )
    }

    /// Seconds since `t` was modified, by the screen's clock.
    pub fn age_of(&self, t: &Transaction) -> Option<i64> {
        t.age_seconds(self.now)
    }

    /// Non-terminal and older than the recovery window.
    pub fn is_stuck(&self, t: &Transaction) -> bool {
        self.urgency(t).is_stuck()
    }

    /// Non-terminal and older than `--investigate-after` (or undated).
    pub fn needs_investigation(&self, t: &Transaction) -> bool {
        self.urgency(t).needs_investigation()
    }

    /// The protocol module's one rule ([`crate::protocol::read::urgency`]).
    fn urgency(&self, t: &Transaction) -> crate::protocol::read::Urgency {
        crate::protocol::read::rules::urgency_with(
            t,
            self.now,
            self.settings.recovery_window,
            self.settings.investigate_after,
        )
    }

    /// Seconds the data on screen is old when the last poll failed.
    pub fn stale_for(&self) -> Option<i64> {
        match (&self.poll_error, &self.snapshot) {
            (Some(_), Some(s)) => Some((self.now - s.taken_at).num_seconds()),
            _ => None,
        }
    }

    /// Cycles the sort key.
    pub fn cycle_sort(&mut self) {
        self.sort = self.sort.next();
    }
}

fn matches_text(t: &Transaction, needle: &str) -> bool {
    let state = t
        .state
        .as_ref()
        .map(|s| s.as_str().to_lowercase())
        .unwrap_or_default();
    t.id.to_lowercase().contains(needle)
        || state.contains(needle)
        || t.src
            .as_deref()
            .is_some_and(|s| s.to_lowercase().contains(needle))
        || t.dest
            .as_deref()
            .is_some_and(|s| s.to_lowercase().contains(needle))
}

fn state_rank(s: Option<&TxnState>) -> usize {
    match s {
        Some(s) => TxnState::KNOWN
            .iter()
            .position(|k| k == s)
            .unwrap_or(TxnState::KNOWN.len()),
        None => TxnState::KNOWN.len() + 1,
    }
}
