//! The event log's lines: what happened, when, and how it reads.

use crate::protocol::trail::receipts::Verification;
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

/// What the receipts of an act prove (`v`, the same check as `audit
/// --receipts`), in words without the act's title: "receipts verified: N
/// writes" (info: it rides on the act's own line where there is one), or
/// the first mismatch and how many more there are (an error line).
pub fn receipts_words(v: &Verification) -> (LogLevel, String) {
    let writes = if v.writes == 1 { "write" } else { "writes" };
    match v.mismatches.first() {
        None if v.no_receipts > 0 => (
            LogLevel::Error,
            "receipts missing: its balance writes kept none".to_string(),
        ),
        None => (
            LogLevel::Info,
            format!("receipts verified: {} {writes}", v.writes),
        ),
        Some(m) => {
            let more = match v.mismatches.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            (
                LogLevel::Error,
                format!("receipts do NOT verify: {m}{more}"),
            )
        }
    }
}
