//! The one event channel's vocabulary: what the terminal, the poller and
//! action tasks send to the UI loop (`Event`), and what the pure `update`
//! function asks the loop to do in return (`Command`).

use super::snapshot::Snapshot;
use crate::protocol::report::StepReport;
use crate::protocol::views::TransactionDetail;
use chrono::{DateTime, Utc};
use crossterm::event::{KeyEvent, MouseEvent};
use std::time::Duration;

/// The three interventions an operator can confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `R`: roll the transaction back.
    Rollback,
    /// `F`: forced recovery (ignores the recovery window).
    ForceRecover,
    /// `L`: release the transaction's locks.
    ReleaseLocks,
}

impl Action {
    /// Name for titles and logs.
    pub fn title(self) -> &'static str {
        match self {
            Action::Rollback => "Roll back",
            Action::ForceRecover => "Force recovery of",
            Action::ReleaseLocks => "Release the locks of",
        }
    }
}

/// Why a poll failed, as far as retrying is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollFailure {
    /// Could not reach the cluster, or it failed transiently: retry with backoff.
    Transient(String),
    /// Credentials refused: do not retry until the operator asks (`r`).
    Auth(String),
    /// Anything else (bad mapping, decode error): retry with backoff.
    Other(String),
}

impl PollFailure {
    /// The message to show.
    pub fn message(&self) -> &str {
        match self {
            PollFailure::Transient(m) | PollFailure::Auth(m) | PollFailure::Other(m) => m,
        }
    }
}

/// How an action ended, for the event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionOutcome {
    /// The action.
    pub action: Action,
    /// Transaction id.
    pub txn: String,
    /// One line: the verdict or what was released.
    pub summary: String,
    /// Whether it did what was asked.
    pub ok: bool,
}

/// Everything that can wake the UI loop.
#[derive(Debug, Clone)]
pub enum Event {
    /// A key press.
    Key(KeyEvent),
    /// A mouse event.
    Mouse(MouseEvent),
    /// The terminal was resized.
    Resize(u16, u16),
    /// Once a second with the wall clock, so ages and "stale since" tick on
    /// screen (the time travels in the event so `update` stays pure).
    Tick(DateTime<Utc>),
    /// A poll started.
    PollStarted,
    /// A poll finished.
    Polled(Result<Box<Snapshot>, PollFailure>),
    /// The documents behind a confirmation dialog were re-read.
    Preview {
        /// The action the dialog is for.
        action: Action,
        /// The transaction detail, or the error reading it.
        detail: Result<Box<TransactionDetail>, String>,
    },
    /// One step of a running action ended.
    Step(StepReport),
    /// An action ended.
    ActionDone(ActionOutcome),
}

/// What `update` asks the loop to do (the only way state turns into I/O).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Leave the dashboard.
    Quit,
    /// Poll now (resets backoff).
    PollNow,
    /// Stop or resume polling.
    SetPaused(bool),
    /// Change the poll interval.
    SetInterval(Duration),
    /// Re-read one transaction for a confirmation dialog.
    LoadPreview(Action, String),
    /// Run a confirmed action.
    Run(Action, String),
}
