//! What a cluster turned out to support for paging, learnt by the first
//! scan and remembered by the handle (and its clones), so later scans do not
//! ask again: which point-in-time dialect it speaks, or that it has none
//! usable (no point-in-time, or its tiebreak sort refused) and scrolls.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// How the cluster pages through a consistent view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// Elasticsearch's `POST /{index}/_pit`, sorted with `_shard_doc`.
    ElasticsearchPit,
    /// OpenSearch's `POST /{index}/_search/point_in_time`, sorted with `_shard_doc` (3.3+).
    OpenSearchPit,
    /// A scroll: no point-in-time, or its `_shard_doc` tiebreak is refused
    /// (OpenSearch before 3.3).
    Scroll,
}

/// The remembered [`Paging`] (shared by clones of one handle).
#[derive(Debug, Clone, Default)]
pub(super) struct Caps(Arc<AtomicU8>);

impl Caps {
    pub(super) fn paging(&self) -> Option<Paging> {
        match self.0.load(Ordering::Relaxed) {
            1 => Some(Paging::ElasticsearchPit),
            2 => Some(Paging::OpenSearchPit),
            3 => Some(Paging::Scroll),
            _ => None,
        }
    }

    pub(super) fn remember(&self, p: Paging) {
        let v = match p {
            Paging::ElasticsearchPit => 1,
            Paging::OpenSearchPit => 2,
            Paging::Scroll => 3,
        };
        self.0.store(v, Ordering::Relaxed);
    }
}
