//! The library's error type: what can go wrong talking to the cluster or
//! reading its documents, typed so callers can tell "refused" from "broken".

use crate::protocol::problem::Problem;
use std::time::Duration;
use thiserror::Error;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything the library can fail with.
///
/// The split matters to operators: a [`Error::Unreachable`] or
/// [`Error::Cluster`] means "we could not talk to the cluster; nothing is known
/// to have changed", while [`Error::Malformed`] and [`Error::NotFound`] are
/// facts about the data.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// The cluster could not be reached (connection refused, DNS, TLS, timeout).
    #[error("cluster unreachable: {0}")]
    Unreachable(String),
    /// The cluster (or a proxy in front of it) answered with an error
    /// status. 429, 502, 503 and 504 are transient ([`Error::is_transient`]);
    /// every other status is final.
    #[error("cluster error (HTTP {status}): {reason}")]
    Cluster {
        /// HTTP status code of the answer.
        status: u16,
        /// The error reason the cluster gave (or a summary of a non-JSON body).
        reason: String,
        /// The answer's `Retry-After`, when it sent one: wait at least this
        /// long before trying again.
        retry_after: Option<Duration>,
    },
    /// Credentials were refused (HTTP 401/403); retrying would not help.
    #[error("authentication or authorisation failed (HTTP {status}): {reason}")]
    Auth {
        /// HTTP status code of the answer.
        status: u16,
        /// The error reason the cluster gave.
        reason: String,
    },
    /// The cluster refused because of a block (HTTP 403
    /// `cluster_block_exception`): the index is read-only
    /// (`index.blocks.write`, `index.blocks.read_only`, a frozen index) or
    /// unreadable (`index.blocks.read`). Not a credentials problem; retrying
    /// does not help until the block is lifted.
    #[error("blocked (HTTP {status}): {reason}; the index carries a block (index.blocks.write / read_only / read, or it is frozen): lift it with `PUT <index>/_settings` or ask its owner")]
    Blocked {
        /// HTTP status code of the answer.
        status: u16,
        /// The cluster's reason (it names the index and the block).
        reason: String,
    },
    /// A circuit breaker tripped with `"durability": "PERMANENT"` (HTTP 429
    /// `circuit_breaking_exception`; Elasticsearch's
    /// `CircuitBreakingException` answers 429 whatever its durability, and
    /// its own retries only retry `TRANSIENT`): the node will not free the
    /// memory by waiting, so nothing is retried and the run stops.
    #[error("the cluster's circuit breaker tripped for good (HTTP 429 circuit_breaking_exception, durability PERMANENT): {reason}; not retried, since waiting does not free it: ask the cluster's owner (node memory, the breaker limits)")]
    Breaker {
        /// The cluster's reason (the breaker, bytes wanted and the limit).
        reason: String,
    },
    /// The index exists but is closed: nothing can be read or written in it.
    #[error("index `{0}` is closed: open it (`POST {0}/_open`) before using the tool on it")]
    IndexClosed(String),
    /// A 404 that neither Elasticsearch nor OpenSearch wrote (no error type
    /// of theirs): a proxy or gateway in front of the cluster does not know
    /// the path. It says nothing about the index.
    #[error("HTTP 404 from something other than the cluster ({0}): check --url (a proxy's path prefix?)")]
    UnknownResource(String),
    /// Some shards failed to answer a read whose result must be whole (a
    /// count, a history): the answer would silently miss documents.
    #[error("partial answer from `{index}`: {failed} of {total} shards failed; not shown, since documents on them would be missing (retry when the shards are back)")]
    Partial {
        /// The index read.
        index: String,
        /// Shards that failed.
        failed: u64,
        /// Shards asked.
        total: u64,
    },
    /// An index the tool needs does not exist.
    #[error("index `{0}` does not exist")]
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
        /// What is wrong with it.
        problems: crate::protocol::problem::Problems,
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
    /// The product refused a partial update (`_update`, alone or in
    /// `_bulk`) because field- or document-level security applies to these
    /// credentials on the index: Elasticsearch and OpenSearch both refuse
    /// it to such a role, before anything is written. The tool writes only
    /// through partial updates (a whole document read through field-level
    /// security would delete the fields hidden from it), so it cannot act
    /// on those documents with these credentials.
    #[error("the cluster refuses partial updates on `{index}` to these credentials: field or document level security applies to them ({reason}); nothing was written by this step. Act with credentials whose role has no field or document level security on the protocol's indices")]
    UpdateRefused {
        /// The index written.
        index: String,
        /// The product's reason.
        reason: String,
    },
    /// The cluster refuses an index named in the body of a multi-index
    /// request (`_bulk`, `_msearch`, `_mget`): it runs with
    /// `rest.action.multi.allow_explicit_index: false`, as Amazon
    /// OpenSearch Service advises for index-level access policies. Nothing
    /// of the request was processed (the products refuse it while parsing
    /// the body); the same items sent with the index in the path go
    /// through, which the cluster layer then does (see `cluster::scope`).
    #[error("the cluster refuses an index named in a multi-request body ({reason}): it runs with rest.action.multi.allow_explicit_index: false; requests name one index in the path instead")]
    ExplicitIndexRefused {
        /// The product's reason ("explicit index in bulk is not allowed").
        reason: String,
    },
    /// A secret or user name from the environment cannot be sent (control
    /// characters, a `:` in a user name, an API key that is not base64);
    /// nothing was sent to the cluster.
    #[error("invalid {var}: {problem}")]
    Credentials {
        /// The environment variable (or option) it came from.
        var: &'static str,
        /// What is wrong with it (never the secret itself).
        problem: String,
    },
    /// The deployment cannot be read as a reader needs it (an index with
    /// required routing, an alias over several indices): not a finding
    /// about the data, so a reader (`audit`) exits as `check` (UNKNOWN)
    /// and `doctor` do, with the cluster-side code, never with "findings".
    #[error("{0}")]
    Unreadable(String),
    /// The writes an act is made of would be refused (mappings, blocks, a
    /// lossy source, index names, time formats): found before the first
    /// write, so nothing was written (`protocol::read::writes`).
    #[error("{0}")]
    WritesRefused(WriteRefusal),
    /// Invalid input from the caller (bad duration, bad amount, ...).
    #[error("{0}")]
    Invalid(String),
    /// A response body could not be decoded.
    #[error("unexpected response from the cluster: {0}")]
    Decode(String),
}

/// Why an act's writes would be refused, found before the first one: the
/// moment it was found, and each problem in the words of the check that
/// found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteRefusal {
    /// Before a procedure's first write.
    BeforeFirstWrite(Vec<String>),
    /// Before taking a lock: the locks index does not exist (`index`), and
    /// writing a lock would create it with the cluster's defaults.
    LocksIndexMissing {
        /// The locks index.
        index: String,
    },
    /// Before taking a lock.
    BeforeTakingLock(Vec<String>),
}

impl std::fmt::Display for WriteRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteRefusal::BeforeFirstWrite(problems) => {
                write!(f, "refused before the first write: {}", problems.join("; "))
            }
            WriteRefusal::LocksIndexMissing { index } => write!(
                f,
                "refused before taking a lock (nothing written): the locks index `{index}` does not \
                 exist, and `transfer --locks` is the one command that writes lock documents; \
                 `estx-tui init` creates it (it needs the create_index privilege on `{index}`), or \
                 transfer without --locks"
            ),
            WriteRefusal::BeforeTakingLock(problems) => write!(
                f,
                "refused before taking a lock (nothing written): {}",
                problems.join("; ")
            ),
        }
    }
}

impl Error {
    /// The problem of another document an act needs, when this is the
    /// failure of its read: its malformation or its absence; `None` for any
    /// other error (the read failed, which says nothing about the document).
    pub fn document_problem(&self) -> Option<Problem> {
        match self {
            Error::Malformed { kind, id, problems } => Some(Problem::Document {
                kind,
                id: id.clone(),
                problems: problems.clone(),
            }),
            Error::NotFound { kind, index, id } => Some(Problem::NotFound {
                kind,
                index: index.clone(),
                id: id.clone(),
            }),
            _ => None,
        }
    }

    /// True when the error means the cluster could not be talked to at all or
    /// failed in a way that a later retry may fix: no answer, or HTTP 429,
    /// 502, 503, 504 (whatever their body). For a write this also means the
    /// outcome is unknown (a proxy's 502/504 may come after the cluster
    /// applied it), so the executor re-reads before deciding again. Every
    /// other status is final: 401/403 are [`Error::Auth`], other 4xx and 500
    /// would fail the same way again.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable(_) | Error::GaveUp { .. } => true,
            Error::Cluster { status, .. } => is_transient_status(*status),
            _ => false,
        }
    }

    /// Whether the cluster shed this request or item for load (HTTP 429,
    /// Elasticsearch's `es_rejected_execution_exception`): nothing was done,
    /// and the same request goes through once the load drops, so a job
    /// slows down and retries it (`protocol::jobs::Pace`) rather than
    /// counting it towards giving up.
    pub fn is_throttle(&self) -> bool {
        matches!(self, Error::Cluster { status: 429, .. })
    }

    /// How long the cluster asked us to wait (`Retry-After`) before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Cluster { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// The HTTP statuses that mean "busy or unreachable behind a proxy, try
/// again later": 429 (throttled), 502 (bad gateway), 503 (unavailable),
/// 504 (gateway timeout). The one transient rule (the executor, reads and
/// the dashboard's poller all use it), as Elastic's own clients retry
/// (elastic-transport-python's `retry_on_status=(429, 502, 503, 504)`); a
/// 500 is the cluster failing the request itself, which fails again.
pub fn is_transient_status(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}
