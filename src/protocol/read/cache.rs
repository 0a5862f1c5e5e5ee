//! What the read side remembers between calls, kept apart from the
//! `Protocol` handle that owns it, so that the handle does not depend on the
//! read side's procedures.

use super::discovery::Discovery;
use super::times::TimeFields;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Mutex;

/// What the read side remembers between calls, shared by clones of a
/// `Protocol`: the last discovery (kept once settled) and whether the
/// mappings were found to accept every write.
#[derive(Debug, Default)]
pub struct ReadCache {
    /// The last discovery, and when it was made.
    pub(super) discovery: Mutex<Option<(Arc<Discovery>, Instant)>>,
    pub(super) writable: AtomicBool,
    /// The time formats of the last write check (or discovery).
    pub(super) times: std::sync::Mutex<Option<Arc<TimeFields>>>,
}
