//! The library's error type: what can go wrong talking to the cluster or
//! reading its documents, typed so callers can tell "refused" from "broken".

use thiserror::Error;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything the library can fail with.
///
/// The split matters to operators: a [`Error::Unreachable`] or
/// [`Error::Cluster`] means "we could not talk to the cluster; nothing is known
/// to have changed", while [`Error::Malformed`] and [`Error::NotFound`] are
/// facts about the data.
#[derive(Debug, Error)]
pub enum Error {
    /// The cluster could not be reached (connection refused, DNS, TLS, timeout).
    #[error("cluster unreachable: {0}")]
    Unreachable(String),
    /// The cluster answered with an error we cannot retry our way out of.
    #[error("cluster error (HTTP {status}): {reason}")]
    Cluster {
        /// HTTP status code of the answer.
        status: u16,
        /// The error reason the cluster gave.
        reason: String,
    },
    /// Credentials were refused (HTTP 401/403); retrying would not help.
    #[error("authentication or authorisation failed (HTTP {status}): {reason}")]
    Auth {
        /// HTTP status code of the answer.
        status: u16,
        /// The error reason the cluster gave.
        reason: String,
    },
    /// An index the tool needs does not exist.
    #[error("index `{0}` does not exist (create it with `estx-tui init`)")]
    IndexMissing(String),
    /// A document the operation needs does not exist.
    #[error("{kind} `{id}` not found in index `{index}`")]
    NotFound {
        /// What kind of document (transaction, account, lock).
        kind: &'static str,
        /// The index searched.
        index: String,
        /// The document id.
        id: String,
    },
    /// A document exists but cannot be understood; nothing was changed.
    #[error("{kind} `{id}` is malformed: {problems}")]
    Malformed {
        /// What kind of document (transaction, account, lock).
        kind: &'static str,
        /// The document id.
        id: String,
        /// Human-readable list of what is wrong.
        problems: String,
    },
    /// A write kept failing with unknown outcome; the document was left where
    /// it was, as the protocol prescribes, for recovery to pick up later.
    #[error("gave up after {attempts} attempts on {index}/{id}: {last}")]
    GaveUp {
        /// Index of the document.
        index: String,
        /// Document id.
        id: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last error seen.
        last: String,
    },
    /// Invalid input from the caller (bad duration, bad amount, ...).
    #[error("{0}")]
    Invalid(String),
    /// A response body could not be decoded.
    #[error("unexpected response from the cluster: {0}")]
    Decode(String),
}

impl Error {
    /// True when the error means the cluster could not be talked to at all or
    /// failed in a way that a later retry may fix.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable(_) | Error::GaveUp { .. } => true,
            Error::Cluster { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}
