//! Counting the requests one piece of work sends: a metered handle
//! ([`Cluster::metered`](super::Cluster::metered)) counts every request it (and its clones) sends,
//! so a background job such as the audit can say what it cost the cluster
//! while the poll and the operator's acts go on beside it on other handles.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The count of requests sent through a metered handle (cheap to clone;
/// every clone reads the same count).
#[derive(Debug, Clone, Default)]
pub struct RequestMeter(Arc<AtomicU64>);

impl RequestMeter {
    /// Requests sent so far (retries of a read included: each reached the
    /// cluster).
    pub fn requests(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(super) fn count_one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}
