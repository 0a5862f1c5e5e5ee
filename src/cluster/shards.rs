//! How many primary shards each index has, as discovery read it from the
//! index settings, remembered by the handle (and its clones) so that a read
//! by id knows whether its miss is final.
//!
//! A document lives on the shard its routing value hashes to:
//! `shard_num = hash(_routing) % num_primary_shards` (Elasticsearch's
//! `_routing` field reference, mapping-routing-field; OpenSearch's
//! mappings/metadata-fields/routing), and `index.routing_partition_size`
//! must be smaller than `number_of_shards`. With one primary shard every
//! routing value lands on it, so a GET or `_mget` by id that misses there
//! has looked everywhere: the `ids` search that confirms a miss (see `routed`)
//! is skipped. Every index not known to have one shard (never discovered,
//! more shards, a settings answer without `number_of_shards` as on
//! Serverless, an alias whose target may be swapped for a split index) keeps
//! the check.
//!
//! Learnt at each discovery: an index deleted and recreated under the same
//! name with more shards while a process runs is seen only at its next one.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Primary shard counts by index name (shared by clones of one handle).
#[derive(Debug, Clone, Default)]
pub(super) struct PrimaryShards(Arc<RwLock<HashMap<String, u32>>>);

impl PrimaryShards {
    /// Records `shards` for `index`; `None` forgets it.
    pub(super) fn remember(&self, index: &str, shards: Option<u32>) {
        let mut known = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match shards {
            Some(n) => known.insert(index.to_string(), n),
            None => known.remove(index),
        };
    }

    /// Whether `index` is known to have exactly one primary shard.
    pub(super) fn is_one(&self, index: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(index)
            == Some(&1)
    }
}
