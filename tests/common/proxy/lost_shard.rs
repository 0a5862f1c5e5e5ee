//! Making the [`FaultProxy`] answer as an OpenSearch index with one shard
//! lost (a relocation, a yellow or red index) answers point-in-time
//! creation:
//!
//! - `allow_partial_pit_creation` "Specifies whether to create a PIT with
//!   partial failures. Optional. Default is `true`" (documentation-website
//!   `_search-plugins/searching-data/point-in-time-api.md`). With it absent
//!   or true, `CreatePitController` opens the contexts of the shards that
//!   answered and reports the rest in `_shards.failed`
//!   (server/src/main/java/org/opensearch/action/search/CreatePitController.java);
//!   the pages of that point-in-time cover only those contexts, so their
//!   `_shards.failed` is 0 and the lost shard's hits are simply absent.
//! - With it false the creation's search runs with
//!   `allowPartialSearchResults(false)` and fails: 503
//!   `search_phase_execution_exception` ("Partial shards failure"), the
//!   status of its `no_shard_available_action_exception`
//!   (`SearchPhaseExecutionException.status()`).
//!
//! The lost shard holds the documents whose id's bytes sum to an odd number.

use super::{lock, FaultProxy, Request, Shared};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

impl FaultProxy {
    /// From now on, every index has a shard lost, as above (false: none).
    pub fn lose_a_shard(&self, lost: bool) {
        self.shared.lost_shard.store(lost, Ordering::SeqCst);
    }
}

/// What the rule does with one request.
pub(super) enum Plan {
    /// Not concerned.
    Pass,
    /// Refuse the creation of a point-in-time that may not be partial.
    Refuse(Vec<u8>),
    /// Forward, then report the lost shard in the creation's answer.
    PartialCreation,
    /// Forward, then drop the lost shard's hits from the page.
    Page,
}

/// Whether the shard is lost and what that does to `request`.
pub(super) fn before(shared: &Shared, request: &Request) -> Plan {
    if !shared.lost_shard.load(Ordering::SeqCst) || request.method != "POST" {
        return Plan::Pass;
    }
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((&request.target, ""));
    if path.ends_with("/_search/point_in_time") && path != "/_search/point_in_time" {
        let refused = query
            .split('&')
            .any(|kv| kv == "allow_partial_pit_creation=false");
        if !refused {
            return Plan::PartialCreation;
        }
        lock(&shared.log).push(format!("POST {} -> 503 (a shard is lost)", request.target));
        shared.canned.fetch_add(1, Ordering::SeqCst);
        let failure = json!({"shard": 1, "index": path.trim_start_matches('/').split('/').next(),
            "reason": {"type": "no_shard_available_action_exception",
                "reason": "[node-2][127.0.0.1:9300] no shard available"}});
        let body = json!({"error": {"root_cause": [failure["reason"].clone()],
            "type": "search_phase_execution_exception", "reason": "Partial shards failure",
            "phase": "query", "grouped": true, "failed_shards": [failure]}, "status": 503});
        return Plan::Refuse(super::Canned::json(503, body).bytes(0));
    }
    let body = super::security::body_bytes(request);
    if path == "/_search" && String::from_utf8_lossy(&body).contains("\"pit\"") {
        return Plan::Page;
    }
    Plan::Pass
}

/// Whether `id` lives on the lost shard.
fn on_lost_shard(id: &str) -> bool {
    id.bytes().map(u32::from).sum::<u32>() % 2 == 1
}

/// The upstream answer as the plan says.
pub(super) fn after(plan: &Plan, response: Vec<u8>) -> Vec<u8> {
    match plan {
        Plan::PartialCreation => super::personality::rebody(response, |mut v| {
            let total = v
                .pointer("/_shards/total")
                .and_then(Value::as_u64)
                .unwrap_or(1);
            v["_shards"]["total"] = json!(total + 1);
            v["_shards"]["failed"] = json!(1);
            v
        }),
        Plan::Page => super::personality::rebody(response, |mut v| {
            if let Some(hits) = v.pointer_mut("/hits/hits").and_then(Value::as_array_mut) {
                let before = hits.len();
                hits.retain(|h| !on_lost_shard(h.get("_id").and_then(Value::as_str).unwrap_or("")));
                let dropped = (before - hits.len()) as u64;
                if let Some(t) = v.pointer_mut("/hits/total/value") {
                    *t = json!(t.as_u64().unwrap_or(0).saturating_sub(dropped));
                }
            }
            v
        }),
        _ => response,
    }
}
