//! The dashboard's state, and what is derived from it (the visible rows,
//! the selected transaction, its preview). Nothing here does I/O; the
//! renderer reads it, `update` changes it.

use super::event::PollFailure;
pub use super::keymap::Keymap;
pub use super::layers::audit::AuditState;
pub use super::layers::dialog::{Dialog, Pending, RunChoice};
use super::layers::Overlays;
use super::layout::Areas;
pub use super::layout::Pane;
use super::load::Load;
pub use super::log::{LogEntry, LogLevel, LOG_CAPACITY};
pub use super::look::Theme;
use super::progress::BulkProgress;
pub use super::settings::{MarkColour, ProfileMark, Settings};
pub use super::sort::SortKey;
use super::view::View;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::read::verdict::Previous;
use crate::protocol::read::{Group, TableFilter, TablePage};
use crate::protocol::trail::Record;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::views::TransactionDetail;
use chrono::{DateTime, Utc};
use std::collections::VecDeque;
use std::time::Duration;

/// The state filter after `current` (`s` cycles): every state (`None`),
/// then each known state in the one state order ([`TxnState::KNOWN`]), the
/// terminal ones included (on a terminal state the poll lists that state's
/// newest transactions too), then every state again.
pub fn next_state_filter(current: Option<&TxnState>) -> Option<TxnState> {
    match current {
        None => TxnState::KNOWN.first().cloned(),
        Some(s) => TxnState::KNOWN
            .iter()
            .skip_while(|k| *k != s)
            .nth(1)
            .cloned(),
    }
}

/// The act running (one at a time) and what its dialog previewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// What (its title and subject are what the header shows).
    pub act: crate::protocol::intervene::AnyAct,
    /// Run with the dialog's force key.
    pub forced: bool,
    /// The lines the dialog previewed (`step: write|no-op`), in order.
    pub planned: Vec<String>,
    /// The steps reported so far, in the same form.
    pub seen: Vec<String>,
}

/// A transaction read by id: the id, and what the read found.
pub type LookedUp = (String, Result<Option<Box<TransactionDetail>>, String>);

/// How often a poll reads the selection's interventions again when its
/// document did not change (reading them at every poll cost two requests
/// a poll at any scale).
pub const HISTORY_EVERY: Duration = Duration::from_secs(30);

/// How a dashboard session ended, as far as its exit code goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The operator quit (nothing running, or a run that had ended).
    Quit,
    /// The operator quit during a bulk run, which was stopped first and
    /// left transactions (the command line's exit code for a stopped run).
    RunStopped,
}

/// The poller as the screen knows it.
#[derive(Debug, Clone)]
pub struct PollState {
    /// The snapshot a poll replaced, freed once the frame showing the new
    /// one is drawn ([`App::free_retired`]): freeing hundreds of rows,
    /// accounts and locks is no part of the frame.
    pub retired: Option<Snapshot>,
    /// The last poll's failure, if the last poll failed.
    pub error: Option<PollFailure>,
    /// A poll is running.
    pub running: bool,
    /// Polling paused by the operator.
    pub paused: bool,
    /// Poll interval.
    pub interval: Duration,
    /// What the healing verdict remembers of the polls before the last
    /// (the oldest stuck, the last recovery seen).
    pub healing_memory: Option<Previous>,
    /// What the dashboard remembers of the other operators: its own
    /// records, the others' acts logged ([`super::others`]).
    pub others: super::others::Others,
    /// The snapshot's stuck rows' causes, judged once per poll.
    pub causes: super::panes::transactions::RowCauses,
}

/// What is selected, in one place: the transaction, account and lock
/// (each by id, so a poll, a sort or a filter never moves the selection
/// to another one), where the detail and the log are scrolled, and the
/// marked rows a bulk act works on. How the selection follows what is
/// shown is [`super::selection::follow`]; what the keys act on, [`super::selection::target`].
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Selected transaction.
    pub txn: Option<String>,
    /// The transaction looked up with `#` (or opened from its lock with
    /// `Enter`), while it stays selected: the detail names it as the
    /// target of `R`/`F`/`L` even when it is not a row of the table (see
    /// the `target` module).
    pub pinned: Option<String>,
    /// Selected account.
    pub account: Option<String>,
    /// Selected lock (by resource).
    pub lock: Option<String>,
    /// The account drilled into (`Enter` in the accounts pane); the detail
    /// pane shows it until a transaction is selected or `Esc`.
    pub drill: Option<String>,
    /// Lines the detail pane is scrolled down.
    pub detail_scroll: usize,
    /// First log line shown; `None` follows the newest.
    pub log_top: Option<usize>,
    /// Marked transactions (by id), for bulk actions.
    pub marks: std::collections::BTreeSet<String>,
}

/// What the selected transaction's detail reads by id beyond the
/// snapshot: the transaction itself when it is not listed, and its audit
/// records.
#[derive(Debug, Clone, Default)]
pub struct ByIdReads {
    /// The selected transaction read by id when it is not in the snapshot.
    pub looked_up: Option<LookedUp>,
    /// The id a read by id was last asked for (so it is asked once).
    pub lookup_asked: Option<String>,
    /// The audit trail's records of a transaction (by id; the selected
    /// one's, once read), kept on screen while read again (one read at a
    /// time).
    pub history: Load<(String, Result<Vec<Record>, String>)>,
    /// The id whose records were last asked for (`None`: ask again).
    pub history_asked: Option<String>,
    /// When they were last asked for: a poll asks again only when the
    /// selection's document changed or after [`HISTORY_EVERY`].
    pub history_at: Option<DateTime<Utc>>,
}

/// What the table lists: the filter the cluster runs, its page, and the
/// order rows are shown in.
#[derive(Debug, Clone)]
pub struct TableQuery {
    /// Text filter (`/`).
    pub text: String,
    /// The state the table shows (`None`: every state); `s` moves it on
    /// ([`next_state_filter`]).
    pub state: Option<TxnState>,
    /// Only stuck transactions (older than the recovery window).
    pub stuck_only: bool,
    /// Only transactions older than `--investigate-after`.
    pub old_only: bool,
    /// The group opened from the view by cause: part of the table's filter
    /// until `Esc`.
    pub group: Option<Group>,
    /// The page of the table shown (0 first; a new filter starts at 0).
    pub page: usize,
    /// The page of the table's filter the poller was told to list
    /// ([`App::table_filter`] as last sent).
    pub listing: TableFilter,
    /// The listing changed: when its rows arrive, a selection they do not
    /// show moves to their first row (the operator moved, not the poll).
    pub select_on_arrival: bool,
    /// The text and state filters in place before the drill-down set the
    /// filter to the account: `Esc` puts them back (typing a filter with
    /// `/` forgets them).
    pub before_drill: Option<(String, Option<TxnState>)>,
    /// Sort key.
    pub sort: SortKey,
    /// Reverse order.
    pub sort_desc: bool,
}

impl Default for TableQuery {
    fn default() -> TableQuery {
        TableQuery {
            text: String::new(),
            state: None,
            stuck_only: false,
            old_only: false,
            group: None,
            page: 0,
            listing: TableFilter::default(),
            select_on_arrival: false,
            before_drill: None,
            sort: SortKey::Age,
            sort_desc: false,
        }
    }
}

/// The terminal as the screen knows it.
#[derive(Debug, Clone)]
pub struct TerminalState {
    /// Terminal size.
    pub size: (u16, u16),
    /// The terminal is smaller than the dashboard can be drawn in
    /// ([`super::layout::fits`]), derived when its size changes: every key
    /// but quit is then ignored ([`super::unseen`]).
    pub too_small: bool,
    /// Keys ignored since the terminal became too small (logged once it
    /// shows the dashboard again).
    pub ignored_keys: usize,
}

/// Whether and how the session ends.
#[derive(Debug, Clone, Copy)]
pub struct Exit {
    /// Set when the operator quits.
    pub quit: bool,
    /// Set by `q` while a single act runs: the session ends when the act
    /// has ended (its record completed), not in the middle of it
    /// ([`super::stop::quit`]).
    pub after_act: bool,
    /// How the session ends, for the exit code: a plain quit, or a quit
    /// that stopped a bulk run first ([`super::stop`]).
    pub ending: Ending,
}

/// Everything the screen shows: what every part shares. What a layer over
/// the panes shows is its own, carried by the stack ([`App::overlays`]).
#[derive(Debug, Clone)]
pub struct App {
    /// Fixed settings.
    pub settings: Settings,
    /// The clock the screen uses (from ticks and polls).
    pub now: DateTime<Utc>,
    /// Last good snapshot.
    pub snapshot: Option<Snapshot>,
    /// The poller as the screen knows it.
    pub poll: PollState,
    /// Focused pane.
    pub focus: Pane,
    /// What is selected (transaction, account, lock, marks, scrolls).
    pub selection: Selection,
    /// What the selection's detail read by id.
    pub reads: ByIdReads,
    /// What the table lists and in which order.
    pub query: TableQuery,
    /// What is open over the panes (dialog, help, filter, look-up, audit,
    /// by cause, jobs, stop question), bottom first, each carrying its
    /// state; the top one takes the keys.
    pub overlays: Overlays,
    /// The invariant audit (background, and on demand).
    pub audit: AuditState,
    /// Event log, newest last.
    pub log: VecDeque<LogEntry>,
    /// The action running, if any (one at a time).
    pub running: Option<Running>,
    /// The bulk run in progress, if any.
    pub bulk: Option<BulkProgress>,
    /// The terminal's size, and whether it is too small.
    pub terminal: TerminalState,
    /// Whether and how the session ends.
    pub exit: Exit,
    /// What the screen shows, derived by [`App::refresh_view`].
    pub view: View,
    /// The colours (and ASCII-only drawing) the screen uses.
    pub theme: Theme,
    /// The key table in force (the defaults and the config's rebindings).
    pub keys: Keymap,
    /// The header's trends over the session, one sample per good poll.
    pub trends: super::trends::Trends,
}

impl App {
    /// A fresh dashboard before the first poll.
    pub fn new(settings: Settings, interval: Duration, now: DateTime<Utc>) -> App {
        App {
            settings,
            now,
            snapshot: None,
            poll: PollState {
                retired: None,
                error: None,
                running: false,
                paused: false,
                interval,
                healing_memory: None,
                others: Default::default(),
                causes: Default::default(),
            },
            focus: Pane::Transactions,
            selection: Selection::default(),
            reads: ByIdReads::default(),
            query: TableQuery::default(),
            overlays: Overlays::default(),
            audit: AuditState::default(),
            log: VecDeque::new(),
            running: None,
            bulk: None,
            terminal: TerminalState {
                size: (80, 24),
                too_small: false,
                ignored_keys: 0,
            },
            exit: Exit {
                quit: false,
                after_act: false,
                ending: Ending::Quit,
            },
            view: View::default(),
            theme: Theme::default(),
            keys: Keymap::default(),
            trends: Default::default(),
        }
    }

    /// Frees the snapshot the last poll replaced: the event loop calls it
    /// after drawing, so the frame does not wait for it.
    pub fn free_retired(&mut self) {
        self.poll.retired = None;
    }

    /// The live job of another operator (or another process) holding
    /// `txn`, as the last poll saw it; none for this dashboard's own job
    /// (the table's `@`, the detail's line).
    pub fn held_by(&self, txn: &str) -> Option<&crate::protocol::jobs::HeldBy> {
        self.poll.others.held_by(self.snapshot.as_ref(), txn)
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
        self.query.state.as_ref()
    }

    /// What the table shows, as the query the cluster runs: the text, the
    /// state, the urgency toggles and the page.
    pub fn table_filter(&self) -> TableFilter {
        let group = self.query.group.as_ref().map(|g| g.filter.clone());
        let mut f = group.unwrap_or_default();
        f.text = self.query.text.trim().to_string();
        if self.query.state.is_some() {
            f.state = self.query.state.clone();
        }
        f.stuck_only |= self.query.stuck_only;
        f.old_only |= self.query.old_only;
        f.page = self.query.page;
        f
    }

    /// The snapshot's page, when it answers the filter and page in force
    /// (`None` until the poll asked for them arrives).
    pub fn table_page(&self) -> Option<&TablePage> {
        self.snapshot
            .as_ref()
            .map(|s| &s.table)
            .filter(|t| t.filter == self.query.listing)
    }

    /// The transaction rows after filter and sort (as of the last [`App::refresh_view`]).
    pub fn visible(&self) -> Vec<&Transaction> {
        let Some(snap) = &self.snapshot else {
            return Vec::new();
        };
        self.view
            .table
            .rows
            .iter()
            .filter_map(|&i| snap.transactions.get(i))
            .collect()
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
        match (&self.poll.error, &self.snapshot) {
            (Some(_), Some(s)) => Some((self.now - s.taken_at).num_seconds()),
            _ => None,
        }
    }

    /// The id whose audit records to read now: the selection, when they
    /// were not asked for since it changed (or since a poll or an action
    /// asked again) and no read is running. Recorded as asked.
    pub fn take_history(&mut self) -> Option<String> {
        let id = self.selection.txn.clone()?;
        if self.reads.history.is_loading() || self.reads.history_asked.as_ref() == Some(&id) {
            return None;
        }
        self.reads.history_asked = Some(id.clone());
        self.reads.history_at = Some(self.now);
        self.reads.history.reload();
        Some(id)
    }

    /// The selected transaction's state and modification time in the
    /// snapshot (`None`: not listed): an act on it, by anyone, changes them.
    pub fn selected_version(&self) -> Option<(Option<TxnState>, Option<DateTime<Utc>>)> {
        let id = self.selection.txn.as_ref()?;
        let snap = self.snapshot.as_ref()?;
        let t = snap.transactions.iter().find(|t| &t.id == id)?;
        Some((t.state.clone(), t.modification_time))
    }

    /// Whether the selection's records were read longer than
    /// [`HISTORY_EVERY`] ago (a refused act is recorded without changing
    /// the transaction).
    pub fn history_is_old(&self) -> bool {
        let every = chrono::Duration::from_std(HISTORY_EVERY).unwrap_or_default();
        self.reads.history_at.is_none_or(|t| self.now - t >= every)
    }

    /// The selected transaction's records, if read.
    pub fn selected_history(&self) -> Option<&Result<Vec<Record>, String>> {
        match (self.reads.history.value(), &self.selection.txn) {
            (Some((id, r)), Some(s)) if id == s => Some(r),
            _ => None,
        }
    }

    /// The screen split into panes as it is now (what is drawn, what a
    /// click hits).
    pub fn areas(&self) -> Areas {
        super::layout::layout_for(self.screen(), self.focus)
    }

    /// Where the panes go: the whole terminal, or inside the profile's frame.
    pub fn screen(&self) -> ratatui::layout::Rect {
        super::layout::screen(self.terminal.size, self.settings.mark.is_some())
    }

    /// What the layers read when they are drawn.
    pub fn draw_cx(&self) -> super::layers::DrawCx<'_> {
        super::layers::DrawCx {
            theme: &self.theme,
            keys: &self.keys,
            settings: &self.settings,
            now: self.now,
            size: self.terminal.size,
            audit: &self.audit,
            bulk: self.bulk.as_ref(),
        }
    }

    /// Cycles the sort key.
    pub fn cycle_sort(&mut self) {
        self.query.sort = self.query.sort.next();
    }
}
