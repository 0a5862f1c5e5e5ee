//! Asking the cluster for its own time, portably.
//!
//! No product has an endpoint that only tells the time to a user without
//! cluster privileges, and Elasticsearch (until elastic/elasticsearch#157382)
//! and OpenSearch send no `Date` header. What every one of them does is
//! evaluate date math: a `date_range` aggregation's `from: "now"` is parsed
//! on the cluster against the request's start time and echoed back in the
//! bucket's `from`, in epoch milliseconds. The field is one no mapping has
//! (an unmapped field is aggregated as a `date`, so any mapping works), the
//! search is `size: 0` on the tool's own indices (the `read` privilege it
//! needs anyway), and `request_cache=false` keeps a cached answer from
//! echoing an old `now` (Elasticsearch already refuses to cache a request
//! that used `now`: `DateRangeAggregationBuilder::innerBuild`). The request
//! takes about one round trip, which bounds the error ([`super::clock`]).

use super::response::check;
use super::Cluster;
use chrono::Duration as ChronoDuration;
use elasticsearch::SearchParts;
use serde_json::{json, Value};

/// How often the cluster's `now` is asked again (clocks drift, and are stepped).
pub const PROBE_EVERY: ChronoDuration = ChronoDuration::seconds(60);

/// A field name no application maps: aggregated as an unmapped `date`.
const PROBE_FIELD: &str = "estx_clock_probe_unmapped";

impl Cluster {
    /// Makes sure [`Cluster::now`] follows the cluster's own clock: asks its
    /// `now` through a search on `indices` (those that exist) unless that
    /// was done in the last [`PROBE_EVERY`]. A failure (no index yet, no
    /// privilege) is logged and kept for [`Cluster::clock_status`]; the
    /// `Date` header, else the local clock, stays in use.
    pub async fn sync_clock(&self, indices: &[&str]) {
        let _one_at_a_time = self.clock.probing.lock().await;
        if !self.clock.probe_due(PROBE_EVERY) {
            return;
        }
        let sent = self.clock.local_now();
        match self.ask_now(indices).await {
            Ok((now_ms, received)) => self.clock.observe_now(now_ms, sent, received),
            Err(why) => {
                tracing::info!(%why, "could not ask the cluster for its time");
                self.clock.probe_failed(sent, why);
            }
        }
    }

    /// The cluster's `now` in epoch milliseconds, and the local time the
    /// answer was read at.
    async fn ask_now(
        &self,
        indices: &[&str],
    ) -> std::result::Result<(i64, chrono::DateTime<chrono::Utc>), String> {
        let body = json!({
            "size": 0,
            "aggs": {"now": {"date_range": {
                "field": PROBE_FIELD,
                "format": "epoch_millis",
                "ranges": [{"from": "now"}],
            }}},
        });
        let resp = self
            .send(
                self.client
                    .search(SearchParts::Index(indices))
                    .ignore_unavailable(true)
                    .allow_no_indices(true)
                    .request_cache(false)
                    .body(body)
                    .send(),
            )
            .await
            .map_err(|e| e.to_string())?;
        let answer = check(resp, &indices.join(","))
            .await
            .map_err(|e| e.to_string())?;
        let received = self.clock.local_now();
        now_of(&answer).map(|ms| (ms, received))
    }
}

/// The echoed `now` of a probe's answer.
fn now_of(answer: &Value) -> std::result::Result<i64, String> {
    let bucket = answer.pointer("/aggregations/now/buckets/0");
    let Some(bucket) = bucket else {
        let shards = answer.pointer("/_shards/total").and_then(Value::as_u64);
        return Err(if shards == Some(0) {
            "none of the indices exists yet".into()
        } else {
            "the answer has no date_range bucket".into()
        });
    };
    // `from_as_string` is exact (`format: epoch_millis`); `from` is a double.
    let exact = bucket
        .get("from_as_string")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<i64>().ok());
    let double = bucket.get("from").and_then(Value::as_f64).map(|f| f as i64);
    exact
        .or(double)
        .ok_or_else(|| format!("the date_range bucket has no `from`: {bucket}"))
}

#[cfg(test)]
mod tests {
    use crate::cluster::clock_probe::*;

    #[test]
    fn reads_the_echoed_now_from_either_form() {
        let exact = json!({"aggregations": {"now": {"buckets": [
            {"from": 1.795540850873E12, "from_as_string": "1795540850873"}]}}});
        assert_eq!(now_of(&exact), Ok(1_795_540_850_873));
        let double = json!({"aggregations": {"now": {"buckets": [{"from": 1.795540850873E12}]}}});
        assert_eq!(now_of(&double), Ok(1_795_540_850_873));
        let none = json!({"_shards": {"total": 0}, "aggregations": {"now": {"buckets": []}}});
        assert!(now_of(&none).unwrap_err().contains("exists"));
    }
}
