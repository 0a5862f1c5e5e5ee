//! The one key table: every key of the main screen and of the confirmation
//! dialog, what it does, how the help and the key bar name it. `update`
//! dispatches through it, the help lists it and the key bar shows its
//! short labels, so the three cannot disagree.

use crossterm::event::KeyCode;

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
    /// Cycle the sort key.
    Sort,
    /// Reverse the order.
    Reverse,
    /// Export the table as shown (CSV).
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
    /// Open / close the audit pane (and audit now).
    Audit,
    /// Pause / resume the bulk run in progress.
    PauseJob,
    /// The jobs view: unfinished bulk jobs, resumable.
    Jobs,
    /// Quit.
    Quit,
}

impl Op {
    /// Whether the key writes to the cluster (the repairs): these are the
    /// keys read-only mode disables.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::Rollback | Op::Recover | Op::Release | Op::ReverseTransfer
        )
    }
}

/// The keys that write, from [`MAIN`]: `R F L V`.
pub fn write_keys() -> String {
    writing().map(|b| b.label).collect::<Vec<_>>().join(" ")
}

/// The repairs in words, from [`MAIN`]: `R rollback, F recover, L release,
/// V reverse` (what read-only mode says it disables).
pub fn write_actions() -> String {
    writing()
        .map(|b| match b.bar {
            Some((_, word)) => format!("{} {word}", b.label),
            None => b.label.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn writing() -> impl Iterator<Item = &'static Binding<Op>> {
    MAIN.iter().filter(|b| b.op.writes())
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
}

/// Where a binding is listed in the help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Moving around.
    Navigate,
    /// Filters, sort, look-up, polling.
    Look,
    /// The repairs.
    Act,
}

/// One key binding.
#[derive(Debug, Clone, Copy)]
pub struct Binding<O: 'static> {
    /// What it does.
    pub op: O,
    /// The keys that trigger it.
    pub keys: &'static [KeyCode],
    /// How the help names the keys.
    pub label: &'static str,
    /// What the help says it does.
    pub help: &'static str,
    /// Key bar: priority (0 kept first when space is short) and word; `None`
    /// keeps it out of the bar.
    pub bar: Option<(u8, &'static str)>,
    /// Help section.
    pub group: Group,
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
        keys,
        label,
        help,
        bar,
        group,
    }
}

use Group::{Act, Look, Navigate};
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
        "back / clear filter / stop bulk",
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
        "export table CSV to the state dir",
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
        Op::PauseJob,
        &[KeyCode::Char('P')],
        "P",
        "pause / resume a bulk run",
        None,
        Act,
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
];

/// The binding a key triggers in `table`.
pub fn lookup<O: Copy>(table: &'static [Binding<O>], key: KeyCode) -> Option<O> {
    table.iter().find(|b| b.keys.contains(&key)).map(|b| b.op)
}

/// How the dashboard says its way past a refusal, from the key table: the
/// dialog's force key (the command line's is `--force`).
pub fn force_hint() -> String {
    let key = DIALOG
        .iter()
        .find(|b| b.op == DialogOp::Force)
        .map_or("!", |b| b.label);
    format!("the force key {key}")
}

#[cfg(test)]
mod tests {
    use crate::dashboard::keymap::*;

    #[test]
    fn the_write_keys_come_from_the_table() {
        assert_eq!(write_keys(), "R F L V");
        assert_eq!(
            write_actions(),
            "R rollback, F recover, L release, V reverse"
        );
    }

    #[test]
    fn no_key_is_bound_twice() {
        let mut seen = Vec::new();
        for b in MAIN {
            for k in b.keys {
                assert!(!seen.contains(k), "{k:?} bound twice");
                seen.push(*k);
            }
        }
        let mut seen = Vec::new();
        for b in DIALOG {
            for k in b.keys {
                assert!(!seen.contains(k), "{k:?} bound twice in the dialog");
                seen.push(*k);
            }
        }
    }
}
