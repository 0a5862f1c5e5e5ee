//! The event log's lines: what happened, when, and how it reads.

use chrono::{DateTime, Utc};

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

/// Most log lines kept.
pub const LOG_CAPACITY: usize = 500;
