//! The layers' shared contract: what a layer reads when it takes a key
//! ([`Context`]) or is drawn ([`DrawCx`]), what its key asks of the rest
//! of the dashboard ([`Outcome`], [`Effect`]) and its key hints
//! ([`Hint`]). Every layer imports it and the stack (`layers/mod.rs`)
//! re-exports it; it names no layer's state but what every layer reads
//! (the audit's, the dialog an effect opens), so no layer imports the
//! stack.

use super::audit::AuditState;
use super::dialog::Dialog;
use crate::dashboard::event::{IoRequest, ResumeConfirmed, Run};
use crate::dashboard::keymap::Keymap;
use crate::dashboard::log::LogLevel;
use crate::dashboard::look::Theme;
use crate::dashboard::progress::BulkProgress;
use crate::dashboard::settings::Settings;
use crate::protocol::intervene::AnyAct;
use crate::protocol::read::Group;
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};

/// What a layer reads of the shared state when it takes a key (it changes
/// only its own state; what else the key does it says in its [`Outcome`]).
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The key table in force.
    pub keys: &'a Keymap,
    /// Fixed settings (read-only mode, the production guard).
    pub settings: &'a Settings,
    /// The screen's clock.
    pub now: DateTime<Utc>,
    /// The invariant audit as last run.
    pub audit: &'a AuditState,
    /// Rows of the help's text, and how many the screen shows (so help
    /// bounds its scroll).
    pub help_rows: (usize, usize),
    /// The size of the screen the layers are drawn on (so a layer bounds
    /// its scroll by its own drawing).
    pub screen: (u16, u16),
    /// What the layers read when drawn (a layer measures its own text).
    pub draw: DrawCx<'a>,
}

/// What a layer reads of the shared state when it is drawn (a draw
/// function takes its layer's state and this, nothing else).
#[derive(Debug, Clone, Copy)]
pub struct DrawCx<'a> {
    /// The colours.
    pub theme: &'a Theme,
    /// The key table in force (the hints name the keys as bound).
    pub keys: &'a Keymap,
    /// Fixed settings.
    pub settings: &'a Settings,
    /// The screen's clock.
    pub now: DateTime<Utc>,
    /// The terminal's size.
    pub size: (u16, u16),
    /// The invariant audit as last run.
    pub audit: &'a AuditState,
    /// The bulk run in progress.
    pub bulk: Option<&'a BulkProgress>,
}

/// What a layer's key asks of the dashboard beyond its own state; the
/// stack applies it (`dashboard/key_ops.rs`).
#[derive(Debug, Clone)]
pub enum Effect {
    /// Start this I/O.
    Io(IoRequest),
    /// Add a log line.
    Log(LogLevel, String),
    /// Quit (during a bulk run: ask first).
    Quit,
    /// Run the audit now.
    AuditNow,
    /// Open the confirmation dialog for this act.
    Confirm(AnyAct),
    /// Open this resume dialog (the jobs view's Enter).
    ConfirmResume(Box<Dialog>),
    /// Select this transaction and show its detail; `pinned`: opened
    /// explicitly (a look-up), so the detail names it as the keys' target
    /// and it is read by id again.
    ShowTransaction {
        /// Its id.
        id: String,
        /// Opened by a look-up.
        pinned: bool,
    },
    /// Select this account and focus the accounts pane.
    ShowAccount(String),
    /// Change the text filter being typed.
    Filter(FilterEdit),
    /// Stop the bulk run in progress (`quit`: then quit).
    StopBulk {
        /// The stop was asked by quitting.
        quit: bool,
    },
    /// Run the act the dialog confirmed; `planned`: the lines its preview
    /// showed, compared with what the run reports.
    Start {
        /// The run.
        run: Run,
        /// The preview's lines (`step: write|no-op`).
        planned: Vec<String>,
    },
    /// Start the bulk run the bulk dialog confirmed.
    StartBulk(Box<Dialog>),
    /// Make this group the table's filter.
    OpenGroup(Group),
    /// Resume a job as this dashboard's bulk run.
    ResumeJob {
        /// Its audit record's id.
        run: String,
        /// Rollback or recover.
        procedure: Procedure,
        /// Transactions its record names.
        total: usize,
        /// How the operator confirmed it.
        confirmed: ResumeConfirmed,
    },
}

/// What a key did to a layer: whether the layer stays open, and what it
/// asks of the rest of the dashboard.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Close the layer.
    pub close: bool,
    /// What follows, in order.
    pub effects: Vec<Effect>,
}

impl Outcome {
    /// The layer stays, nothing else happens.
    pub fn stay() -> Outcome {
        Outcome::default()
    }

    /// The layer closes.
    pub fn close() -> Outcome {
        Outcome {
            close: true,
            effects: Vec::new(),
        }
    }

    /// The layer stays and `effect` follows.
    pub fn with(effect: Effect) -> Outcome {
        Outcome {
            close: false,
            effects: vec![effect],
        }
    }

    /// The same, closing the layer.
    pub fn closing(mut self) -> Outcome {
        self.close = true;
        self
    }

    /// The same, then `effect`.
    pub fn then(mut self, effect: Effect) -> Outcome {
        self.effects.push(effect);
        self
    }
}

/// How a key changes the text filter (the filter layer's [`Effect::Filter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterEdit {
    /// A character typed at its end.
    Push(char),
    /// Its last character erased.
    Pop,
    /// Dropped (Esc).
    Clear,
}

/// One hint of the key bar: its priority (0 kept longest), the key, what
/// it does.
pub type Hint = (u8, String, String);

/// A hint from borrowed words.
pub fn hint(priority: u8, key: &str, what: &str) -> Hint {
    (priority, key.to_string(), what.to_string())
}
