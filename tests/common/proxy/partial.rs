//! Making the [`FaultProxy`] answer a scan as a cluster with a red shard
//! does: the hits of the shards that answered, and `_shards.failed`.

use super::{Canned, FaultProxy};
use serde_json::{json, Value};

/// The answer of a search when one of two shards is red: `hits` (each with
/// `_index`, `_id`, `_source`) from the shard that answered, `total` of
/// them matching there, and the failure as Elasticsearch reports it.
pub fn partial_search(hits: Vec<Value>, total: u64) -> Value {
    json!({"_shards": {"total": 2, "successful": 1, "skipped": 0, "failed": 1,
            "failures": [{"shard": 1, "reason": {"type": "no_shard_available_action_exception"}}]},
        "timed_out": false,
        "hits": {"total": {"value": total, "relation": "eq"}, "hits": hits}})
}

impl FaultProxy {
    /// The next scan of `index` gets `answer` as its only page: its
    /// point-in-time is refused (Elasticsearch's and OpenSearch's), so it
    /// scrolls, and its first scrolling search is answered without reaching
    /// the cluster.
    pub fn answer_next_scan(&self, index: &str, answer: Value) {
        let none = Canned::json(404, json!({"error": "no handler found"}));
        self.answer("POST", &format!("/{index}/_pit"), 1, none.clone());
        self.answer("POST", &format!("/{index}/_search/point_in_time"), 1, none);
        self.answer(
            "POST",
            &format!("/{index}/_search?scroll"),
            1,
            Canned::json(200, answer),
        );
    }
}
