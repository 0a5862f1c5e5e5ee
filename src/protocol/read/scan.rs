//! Paging through every hit of a query from one consistent view: a
//! point-in-time where the server has one (Elasticsearch `_pit`, OpenSearch
//! `_search/point_in_time`), a scroll otherwise. Each page is handed to the
//! caller as it arrives (so `list` prints while it pages), the total comes
//! from the same view as the hits, and every page's shard coverage is read.

use super::coverage::Coverage;
use crate::cluster::{hits, Cluster, Hit};
use crate::error::Result;
use elasticsearch::http::Method;
use serde_json::{json, Value};

/// Documents per page.
pub const PAGE: usize = 1000;

/// How long the view is kept open between pages.
const KEEP_ALIVE: &str = "2m";

/// What a scan saw besides its hits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanSummary {
    /// Hits matching the query in the view (exact).
    pub total: u64,
    /// Hits handed to the caller.
    pub seen: u64,
    /// Shards behind the pages.
    pub coverage: Coverage,
    /// Whether total and hits came from one point-in-time view.
    pub point_in_time: bool,
    /// The first page's `aggregations` (asked with [`Scan::aggs`]): from the
    /// same view as the hits.
    pub aggregations: Option<Value>,
}

/// What to scan.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The query.
    pub query: Value,
    /// The order (a tie-breaker is added).
    pub sort: Vec<Value>,
    /// Aggregations computed on the first page, in the same view.
    pub aggs: Option<Value>,
    /// Stop before handing over a page some shards failed to fill (the
    /// summary's coverage says so), instead of acting on a partial view.
    pub complete_only: bool,
}

impl Scan {
    /// Every hit of `query` in `sort` order, partial pages included.
    pub fn new(query: Value, sort: Vec<Value>) -> Scan {
        Scan {
            query,
            sort,
            aggs: None,
            complete_only: false,
        }
    }
}

/// Pages through every hit of `query` sorted by `sort`, calling `on_page`
/// with each page; stops early if it returns `false`.
pub async fn scan<F>(
    cluster: &Cluster,
    index: &str,
    what: Scan,
    mut on_page: F,
) -> Result<ScanSummary>
where
    F: FnMut(Vec<Hit>) -> bool,
{
    match open_pit(cluster, index).await {
        Some(pit) => {
            let r = scan_pit(cluster, &pit, what, &mut on_page).await;
            close_pit(cluster, &pit).await;
            r
        }
        None => scan_scroll(cluster, index, what, &mut on_page).await,
    }
}

/// A point-in-time, in the dialect the server spoke.
struct Pit {
    id: String,
    opensearch: bool,
}

async fn open_pit(cluster: &Cluster, index: &str) -> Option<Pit> {
    let es = format!("/{index}/_pit?keep_alive={KEEP_ALIVE}");
    if let Ok((200, v)) = cluster.raw(Method::Post, &es, None).await {
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            return Some(Pit {
                id: id.into(),
                opensearch: false,
            });
        }
    }
    let os = format!("/{index}/_search/point_in_time?keep_alive={KEEP_ALIVE}");
    match cluster.raw(Method::Post, &os, None).await {
        Ok((200, v)) => v.get("pit_id").and_then(Value::as_str).map(|id| Pit {
            id: id.into(),
            opensearch: true,
        }),
        _ => None,
    }
}

async fn close_pit(cluster: &Cluster, pit: &Pit) {
    // Best effort: a point-in-time expires by itself after KEEP_ALIVE.
    let _ = if pit.opensearch {
        cluster
            .raw(
                Method::Delete,
                "/_search/point_in_time",
                Some(json!({"pit_id": [pit.id]})),
            )
            .await
    } else {
        cluster
            .raw(Method::Delete, "/_pit", Some(json!({"id": pit.id})))
            .await
    };
}

async fn scan_pit<F>(
    cluster: &Cluster,
    pit: &Pit,
    what: Scan,
    on_page: &mut F,
) -> Result<ScanSummary>
where
    F: FnMut(Vec<Hit>) -> bool,
{
    let Scan {
        query,
        mut sort,
        aggs,
        complete_only,
    } = what;
    sort.push(json!({"_shard_doc": "asc"}));
    let mut summary = ScanSummary {
        point_in_time: true,
        ..ScanSummary::default()
    };
    let mut pit_id = pit.id.clone();
    let mut after: Option<Value> = None;
    let mut first = true;
    loop {
        let mut body = json!({"size": PAGE, "query": query, "sort": sort,
            "pit": {"id": pit_id, "keep_alive": KEEP_ALIVE},
            "track_total_hits": first});
        if let Some(a) = &after {
            body["search_after"] = a.clone();
        }
        if let (true, Some(aggs)) = (first, &aggs) {
            body["aggs"] = aggs.clone();
        }
        let page = cluster
            .send_json(Method::Post, "/_search", body, "_search")
            .await?;
        summary.coverage.add(Coverage::of(&page));
        if complete_only && summary.coverage.is_partial() {
            break;
        }
        if first {
            summary.total = total_hits(&page);
            summary.aggregations = page.get("aggregations").cloned();
            first = false;
        }
        if let Some(id) = page.get("pit_id").and_then(Value::as_str) {
            pit_id = id.to_string();
        }
        after = page
            .pointer("/hits/hits")
            .and_then(Value::as_array)
            .and_then(|h| h.last())
            .and_then(|h| h.get("sort"))
            .cloned();
        let batch = hits(&page)?;
        let n = batch.len();
        summary.seen += n as u64;
        if n == 0 || !on_page(batch) || n < PAGE || after.is_none() {
            break;
        }
    }
    Ok(summary)
}

async fn scan_scroll<F>(
    cluster: &Cluster,
    index: &str,
    what: Scan,
    on_page: &mut F,
) -> Result<ScanSummary>
where
    F: FnMut(Vec<Hit>) -> bool,
{
    let mut body = json!({"size": PAGE, "query": what.query.clone(), "track_total_hits": true});
    if !what.sort.is_empty() {
        body["sort"] = Value::Array(what.sort.clone());
    }
    if let Some(aggs) = &what.aggs {
        body["aggs"] = aggs.clone();
    }
    let mut page = cluster
        .send_json(
            Method::Post,
            &format!("/{index}/_search?scroll={KEEP_ALIVE}"),
            body,
            index,
        )
        .await?;
    let mut summary = ScanSummary {
        total: total_hits(&page),
        aggregations: page.get("aggregations").cloned(),
        ..ScanSummary::default()
    };
    let mut scroll_id: Option<String> = None;
    loop {
        summary.coverage.add(Coverage::of(&page));
        if let Some(s) = page.get("_scroll_id").and_then(Value::as_str) {
            scroll_id = Some(s.to_string());
        }
        if what.complete_only && summary.coverage.is_partial() {
            break;
        }
        let batch = hits(&page)?;
        let n = batch.len();
        summary.seen += n as u64;
        if n == 0 || !on_page(batch) {
            break;
        }
        let Some(sid) = &scroll_id else { break };
        page = cluster
            .send_json(
                Method::Post,
                "/_search/scroll",
                json!({"scroll": KEEP_ALIVE, "scroll_id": sid}),
                index,
            )
            .await?;
    }
    if let Some(sid) = scroll_id {
        let _ = cluster
            .raw(
                Method::Delete,
                "/_search/scroll",
                Some(json!({"scroll_id": [sid]})),
            )
            .await;
    }
    Ok(summary)
}

/// `hits.total` of a search answer (either form).
pub fn total_hits(v: &Value) -> u64 {
    v.pointer("/hits/total/value")
        .or_else(|| v.pointer("/hits/total"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}
