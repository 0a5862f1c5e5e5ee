//! The default key table: what a key can do ([`Op`], [`DialogOp`]) and
//! how the config file names it, then every key of the main screen and of
//! the confirmation dialog, in help order, with how the help and the key
//! bar name it. A new key is added here only. The config file's `[keys]` and `[dialog_keys]` rebind actions
//! on top of it ([`super::overrides`]).

use super::{Binding, Group};
use crossterm::event::KeyCode;
use std::borrow::Cow;

/// What a key does on the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Show the help.
    Help,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Selection (or scroll) down one.
    Down,
    /// Selection (or scroll) up one.
    Up,
    /// Down ten.
    PageDown,
    /// Up ten.
    PageUp,
    /// First row.
    Top,
    /// Last row (the log: follow the newest).
    Bottom,
    /// Open: table → detail; account → its transactions.
    Open,
    /// Back out / clear the text filter.
    Back,
    /// Type a text filter.
    Filter,
    /// Type a transaction id to look up (any state).
    LookUp,
    /// Cycle the state filter.
    CycleState,
    /// Only stuck transactions.
    StuckOnly,
    /// Only transactions older than `--investigate-after`.
    OldOnly,
    /// The stuck transactions by cause.
    Groups,
    /// The next page of the filter's matches.
    NextPage,
    /// The previous page.
    PrevPage,
    /// Cycle the sort key.
    Sort,
    /// Reverse the order.
    Reverse,
    /// Export every match of the table's filter (CSV).
    Export,
    /// Poll now.
    Refresh,
    /// Pause / resume polling.
    Pause,
    /// Poll interval +1s.
    Slower,
    /// Poll interval -1s.
    Faster,
    /// Mark / unmark the selected transaction (bulk actions).
    Mark,
    /// Mark every row of the current filter.
    MarkAll,
    /// Clear every mark.
    ClearMarks,
    /// Roll the selected transaction (or the marked ones) back.
    Rollback,
    /// Recover the selected transaction.
    Recover,
    /// Release the selected lock, or the selected transaction's locks.
    Release,
    /// Reverse the selected finished transfer (compensating transfer).
    ReverseTransfer,
    /// Acknowledge the selected transaction (or the marked ones) for a
    /// while, or take the selected one's ack back.
    Ack,
    /// Open / close the audit pane (and audit now).
    Audit,
    /// Pause / resume the bulk run in progress.
    PauseJob,
    /// Stop the bulk run in progress (asks first; the only way to stop one).
    StopJob,
    /// The jobs view: unfinished bulk jobs, resumable.
    Jobs,
    /// The timeline: the last hour's interventions, newest first.
    Timeline,
    /// Quit.
    Quit,
}

impl Op {
    /// Whether the key writes to the cluster (the repairs): these are the
    /// keys read-only mode disables.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::Rollback | Op::Recover | Op::Release | Op::ReverseTransfer | Op::Ack
        )
    }
}

/// What a key does in the confirmation dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DialogOp {
    /// Run, unforced (the recovery window and lock staleness apply).
    Confirm,
    /// Run forced: the only way past the protocol's refusal.
    Force,
    /// Close without doing anything.
    Cancel,
    /// Move focus between the buttons.
    Focus,
    /// Press the focused button.
    Press,
    /// Scroll the dialog's text.
    ScrollDown,
    /// Scroll the dialog's text back.
    ScrollUp,
    /// Save a bulk dialog's plan to a file (for `estx-tui apply`).
    SavePlan,
}

/// An action as the config file names it.
pub(super) trait Named: Copy + PartialEq + 'static {
    fn name(self) -> &'static str;
}

impl Named for Op {
    fn name(self) -> &'static str {
        match self {
            Op::Help => "help",
            Op::NextPane => "next_pane",
            Op::PrevPane => "prev_pane",
            Op::Down => "down",
            Op::Up => "up",
            Op::PageDown => "page_down",
            Op::PageUp => "page_up",
            Op::Top => "top",
            Op::Bottom => "bottom",
            Op::Open => "open",
            Op::Back => "back",
            Op::Filter => "filter",
            Op::LookUp => "look_up",
            Op::CycleState => "cycle_state",
            Op::StuckOnly => "stuck_only",
            Op::OldOnly => "old_only",
            Op::Groups => "groups",
            Op::NextPage => "next_page",
            Op::PrevPage => "prev_page",
            Op::Sort => "sort",
            Op::Reverse => "reverse_order",
            Op::Export => "export",
            Op::Refresh => "refresh",
            Op::Pause => "pause",
            Op::Slower => "slower",
            Op::Faster => "faster",
            Op::Mark => "mark",
            Op::MarkAll => "mark_all",
            Op::ClearMarks => "clear_marks",
            Op::Rollback => "rollback",
            Op::Recover => "recover",
            Op::Release => "release",
            Op::ReverseTransfer => "reverse_transfer",
            Op::Ack => "ack",
            Op::Audit => "audit",
            Op::PauseJob => "pause_job",
            Op::StopJob => "stop_job",
            Op::Jobs => "jobs",
            Op::Timeline => "timeline",
            Op::Quit => "quit",
        }
    }
}

impl Named for DialogOp {
    fn name(self) -> &'static str {
        match self {
            DialogOp::Confirm => "confirm",
            DialogOp::Force => "force",
            DialogOp::Cancel => "cancel",
            DialogOp::Focus => "focus",
            DialogOp::Press => "press",
            DialogOp::ScrollDown => "scroll_down",
            DialogOp::ScrollUp => "scroll_up",
            DialogOp::SavePlan => "save_plan",
        }
    }
}

const fn b<O>(
    op: O,
    keys: &'static [KeyCode],
    label: &'static str,
    help: &'static str,
    bar: Option<(u8, &'static str)>,
    group: Group,
) -> Binding<O> {
    Binding {
        op,
        keys: Cow::Borrowed(keys),
        label: Cow::Borrowed(label),
        help,
        bar,
        group,
    }
}

use Group::{Act, Look, Navigate, Run};
use KeyCode::{BackTab, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up};

/// The main screen's keys, in help order.
pub const MAIN: &[Binding<Op>] = &[
    b(
        Op::Help,
        &[KeyCode::Char('?')],
        "?",
        "this help",
        Some((0, "help")),
        Navigate,
    ),
    b(
        Op::NextPane,
        &[Tab],
        "Tab",
        "next pane",
        Some((1, "pane")),
        Navigate,
    ),
    b(
        Op::PrevPane,
        &[BackTab],
        "S-Tab",
        "previous pane",
        None,
        Navigate,
    ),
    b(
        Op::Down,
        &[Down, KeyCode::Char('j')],
        "↓ j",
        "down (select / scroll)",
        None,
        Navigate,
    ),
    b(
        Op::Up,
        &[Up, KeyCode::Char('k')],
        "↑ k",
        "up (select / scroll)",
        None,
        Navigate,
    ),
    b(
        Op::PageDown,
        &[PageDown],
        "PgDn",
        "down by 10",
        None,
        Navigate,
    ),
    b(Op::PageUp, &[PageUp], "PgUp", "up by 10", None, Navigate),
    b(
        Op::Top,
        &[KeyCode::Char('g'), Home],
        "g Home",
        "first row",
        None,
        Navigate,
    ),
    b(
        Op::Bottom,
        &[KeyCode::Char('G'), End],
        "G End",
        "last row / newest log",
        None,
        Navigate,
    ),
    b(
        Op::Open,
        &[Enter],
        "Enter",
        "open detail / account",
        None,
        Navigate,
    ),
    b(
        Op::Back,
        &[Esc],
        "Esc",
        "back / clear filter",
        None,
        Navigate,
    ),
    b(
        Op::Filter,
        &[KeyCode::Char('/')],
        "/",
        "filter by text",
        Some((0, "filter")),
        Look,
    ),
    b(
        Op::LookUp,
        &[KeyCode::Char('#')],
        "#",
        "look up any id",
        Some((1, "id")),
        Look,
    ),
    b(
        Op::CycleState,
        &[KeyCode::Char('s')],
        "s",
        "cycle the state filter",
        Some((0, "state")),
        Look,
    ),
    b(
        Op::StuckOnly,
        &[KeyCode::Char('x')],
        "x",
        "stuck only (toggle)",
        Some((2, "stuck")),
        Look,
    ),
    b(
        Op::OldOnly,
        &[KeyCode::Char('X')],
        "X",
        "over investigate-after",
        None,
        Look,
    ),
    b(
        Op::Groups,
        &[KeyCode::Char('c')],
        "c",
        "group the stuck by cause",
        Some((3, "causes")),
        Look,
    ),
    b(
        Op::NextPage,
        &[KeyCode::Char(']')],
        "]",
        "next page of matches",
        None,
        Look,
    ),
    b(
        Op::PrevPage,
        &[KeyCode::Char('[')],
        "[",
        "previous page",
        None,
        Look,
    ),
    b(
        Op::Sort,
        &[KeyCode::Char('o')],
        "o",
        "sort key",
        Some((2, "sort")),
        Look,
    ),
    b(
        Op::Reverse,
        &[KeyCode::Char('O')],
        "O",
        "reverse order",
        None,
        Look,
    ),
    b(
        Op::Audit,
        &[KeyCode::Char('A')],
        "A",
        "audit: findings, repairs",
        Some((1, "audit")),
        Look,
    ),
    b(
        Op::Export,
        &[KeyCode::Char('e')],
        "e",
        "export every match as CSV",
        Some((3, "export")),
        Look,
    ),
    b(
        Op::Refresh,
        &[KeyCode::Char('r')],
        "r",
        "refresh now",
        Some((2, "refresh")),
        Look,
    ),
    b(
        Op::Pause,
        &[KeyCode::Char('p')],
        "p",
        "pause / resume polling",
        Some((3, "pause")),
        Look,
    ),
    b(
        Op::Slower,
        &[KeyCode::Char('+'), KeyCode::Char('=')],
        "+",
        "poll interval +1s",
        None,
        Look,
    ),
    b(
        Op::Faster,
        &[KeyCode::Char('-')],
        "-",
        "poll interval -1s",
        None,
        Look,
    ),
    b(
        Op::Mark,
        &[KeyCode::Char(' ')],
        "Space",
        "mark row (R F L act on marks)",
        Some((1, "mark")),
        Act,
    ),
    b(
        Op::MarkAll,
        &[KeyCode::Char('*')],
        "*",
        "mark every row of the filter",
        Some((2, "mark all")),
        Act,
    ),
    b(
        Op::ClearMarks,
        &[KeyCode::Char('u')],
        "u",
        "clear the marks",
        None,
        Act,
    ),
    b(
        Op::Rollback,
        &[KeyCode::Char('R')],
        "R",
        "roll back",
        Some((0, "rollback")),
        Act,
    ),
    b(
        Op::Recover,
        &[KeyCode::Char('F')],
        "F",
        "recover",
        Some((0, "recover")),
        Act,
    ),
    b(
        Op::Release,
        &[KeyCode::Char('L')],
        "L",
        "release lock row/txn's",
        Some((0, "release")),
        Act,
    ),
    b(
        Op::ReverseTransfer,
        &[KeyCode::Char('V')],
        "V",
        "reverse a finished transfer",
        Some((3, "reverse")),
        Act,
    ),
    b(
        Op::Ack,
        &[KeyCode::Char('K')],
        "K",
        "acknowledge for a while",
        Some((3, "ack")),
        Act,
    ),
    b(
        Op::PauseJob,
        &[KeyCode::Char('P')],
        "P",
        "pause / resume its writes",
        None,
        Run,
    ),
    b(
        Op::StopJob,
        &[KeyCode::Char('S')],
        "S",
        "stop it (asks; ids left to a file)",
        None,
        Run,
    ),
    b(
        Op::Jobs,
        &[KeyCode::Char('J')],
        "J",
        "jobs: unfinished bulk runs, resume",
        None,
        Act,
    ),
    b(
        Op::Timeline,
        &[KeyCode::Char('T')],
        "T",
        "timeline of the last hour's acts",
        None,
        Act,
    ),
    b(
        Op::Quit,
        &[KeyCode::Char('q')],
        "q",
        "quit (also Ctrl-C)",
        Some((0, "quit")),
        Navigate,
    ),
];

/// The confirmation dialog's keys, in help order.
pub const DIALOG: &[Binding<DialogOp>] = &[
    b(
        DialogOp::Confirm,
        &[KeyCode::Char('y'), KeyCode::Char('Y')],
        "y",
        "confirm (never forces)",
        Some((0, "confirm")),
        Act,
    ),
    b(
        DialogOp::Force,
        &[KeyCode::Char('!')],
        "!",
        "force past a refusal",
        Some((0, "force")),
        Act,
    ),
    b(
        DialogOp::Cancel,
        &[
            KeyCode::Char('n'),
            KeyCode::Char('N'),
            Esc,
            KeyCode::Char('q'),
        ],
        "n Esc",
        "cancel (focused first)",
        Some((0, "cancel")),
        Act,
    ),
    b(
        DialogOp::Focus,
        &[
            Tab,
            BackTab,
            Left,
            Right,
            KeyCode::Char('h'),
            KeyCode::Char('l'),
        ],
        "Tab ← →",
        "move focus",
        Some((1, "focus")),
        Act,
    ),
    b(
        DialogOp::Press,
        &[Enter],
        "Enter",
        "press focused button",
        Some((1, "press")),
        Act,
    ),
    b(
        DialogOp::ScrollDown,
        &[Down, KeyCode::Char('j')],
        "↓ j",
        "scroll the preview",
        None,
        Act,
    ),
    b(
        DialogOp::ScrollUp,
        &[Up, KeyCode::Char('k')],
        "↑ k",
        "scroll back",
        None,
        Act,
    ),
    b(
        DialogOp::SavePlan,
        &[KeyCode::Char('p')],
        "p",
        "save the bulk plan to a file",
        Some((1, "save plan")),
        Act,
    ),
];
