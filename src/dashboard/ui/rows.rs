//! How a transaction row reads by the screen's clock: its severity, the
//! mark in its first column (`!` stuck, `!!` investigate, `?` odd), its
//! colour and its age.

use crate::dashboard::app::App;
use crate::protocol::time::human_age;
use crate::protocol::transaction::Transaction;
use ratatui::style::Style;

/// How a transaction row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Nothing to worry about (yet).
    Normal,
    /// Older than the recovery window (`!`).
    Stuck,
    /// Older than `investigate_after` (`!!`).
    Investigate,
    /// Malformed or in an unknown state (`?`).
    Odd,
}

/// The severity of a transaction by the screen's clock.
pub fn severity(app: &App, t: &Transaction) -> Severity {
    if !t.problems.is_empty() {
        Severity::Odd
    } else if app.needs_investigation(t) {
        Severity::Investigate
    } else if app.is_stuck(t) {
        Severity::Stuck
    } else {
        Severity::Normal
    }
}

/// The mark in the first column of a transaction row.
pub fn mark(s: Severity) -> &'static str {
    match s {
        Severity::Normal => "",
        Severity::Stuck => "!",
        Severity::Investigate => "!!",
        Severity::Odd => "?",
    }
}

/// The style of a transaction row. Odd rows that are also old take the age colour.
pub fn txn_style(app: &App, t: &Transaction) -> Style {
    let theme = &app.theme;
    let fg = match severity(app, t) {
        Severity::Normal => return Style::new(),
        Severity::Stuck => theme.warn,
        Severity::Investigate => theme.danger,
        Severity::Odd if app.needs_investigation(t) => theme.danger,
        Severity::Odd if app.is_stuck(t) => theme.warn,
        Severity::Odd => theme.odd,
    };
    Style::new().fg(fg)
}

/// Age of a transaction (`-` when its modification time is unknown).
pub fn txn_age(app: &App, t: &Transaction) -> String {
    app.age_of(t).map(human_age).unwrap_or_else(|| "-".into())
}
