//! Paging through every hit of a query from one consistent view: a
//! point-in-time where the server has one (Elasticsearch `_pit`, OpenSearch
//! `_search/point_in_time`) whose `_shard_doc` tiebreak it accepts, a scroll
//! otherwise (no point-in-time, or OpenSearch before 3.3, which refuses the
//! sort: opensearch-project/OpenSearch#17064, or a role granted on alias
//! names whose point-in-time search is refused: elastic/elasticsearch#61547,
//! the point-in-time is authorised on the concrete indices). Each page is handed to the
//! caller as it arrives (so `list` prints while it pages), the total comes
//! from the same view as the hits, and every page's shard coverage is read.

use super::coverage::Coverage;
use crate::cluster::{hits, root_causes, Cluster, Hit, Paging};
use crate::error::{is_transient_status, Error, Result};
use elasticsearch::http::Method;
use serde::Serialize;
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
/// with each page; stops early if it returns `false`. Uses a point-in-time
/// where the cluster has one whose `_shard_doc` tiebreak it accepts, else a
/// scroll (remembered on the handle, see [`Paging`]).
pub async fn scan<F>(
    cluster: &Cluster,
    index: &str,
    what: Scan,
    mut on_page: F,
) -> Result<ScanSummary>
where
    F: FnMut(Vec<Hit>) -> bool,
{
    // Every page's documents cross the schema boundary here, once.
    let mut on_page = |batch: Vec<Hit>| on_page(cluster.read_hits(index, batch));
    if cluster.paging() != Some(Paging::Scroll) {
        if let Some(pit) = open_pit(cluster, index).await? {
            let r = scan_pit(cluster, &pit, what.clone(), &mut on_page).await;
            close_pit(cluster, &pit).await;
            match r? {
                PitScan::Done(summary) => return Ok(summary),
                PitScan::ShardDocRefused => {
                    tracing::info!(
                        "the cluster refuses the point-in-time tiebreak `_shard_doc` \
                         (OpenSearch before 3.3): scans scroll instead"
                    );
                    cluster.remember_paging(Paging::Scroll);
                }
                // Per index (a role may cover one index's concrete indices
                // and not another's), so not remembered.
                PitScan::Forbidden(e) => tracing::info!(
                    "the point-in-time search on `{index}` is refused ({e}): the role is \
                     granted on the alias, a point-in-time is authorised on the concrete \
                     indices; this scan scrolls on the alias instead"
                ),
            }
        }
    }
    scan_scroll(cluster, index, what, &mut on_page).await
}

/// How scans page on a cluster, and why: what `doctor` tells a user of
/// the product (OpenSearch before 3.3 scrolls, which its role must allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PagingReport {
    /// A point-in-time with the `_shard_doc` tiebreak (`opensearch`: the
    /// `_search/point_in_time` dialect).
    PointInTime {
        /// Whether the OpenSearch dialect answered.
        opensearch: bool,
    },
    /// A scroll: the point-in-time refuses the `_shard_doc` tiebreak
    /// (OpenSearch before 3.3.0, opensearch-project/OpenSearch#17064).
    ScrollShardDocRefused,
    /// A scroll: the cluster opens no point-in-time.
    ScrollNoPointInTime,
    /// A scroll: opening a point-in-time is refused to this role (HTTP
    /// 403) though the cluster has them: the role lacks the privilege to
    /// create one (OpenSearch's `indices:data/read/point_in_time/create`,
    /// Elasticsearch's `indices:data/read/open_point_in_time`, both in
    /// `read`).
    ScrollPointInTimeOpenForbidden,
    /// A scroll: searching the point-in-time is refused (403) while the
    /// plain search works: the role is granted on the alias, and a
    /// point-in-time is authorised on the concrete indices behind it
    /// (elastic/elasticsearch#61547, #75810).
    ScrollPointInTimeForbidden,
}

impl std::fmt::Display for PagingReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PagingReport::PointInTime { opensearch: false } => {
                f.write_str("point-in-time (`_pit`) with the `_shard_doc` tiebreak")
            }
            PagingReport::PointInTime { opensearch: true } => f.write_str(
                "point-in-time (`_search/point_in_time`) with the `_shard_doc` tiebreak",
            ),
            PagingReport::ScrollShardDocRefused => f.write_str(
                "scroll: the point-in-time refuses the `_shard_doc` tiebreak (OpenSearch before \
                 3.3.0); scans are consistent per scroll, and the role must allow scroll pages",
            ),
            PagingReport::ScrollNoPointInTime => {
                f.write_str("scroll: no point-in-time could be opened on this cluster")
            }
            PagingReport::ScrollPointInTimeOpenForbidden => f.write_str(
                "scroll: opening a point-in-time is refused to this role (HTTP 403), though the \
                 cluster has them; scans are consistent per scroll; grant the role \
                 `indices:data/read/point_in_time/create` (OpenSearch) or \
                 `indices:data/read/open_point_in_time` (Elasticsearch; both come with `read`) on \
                 the concrete indices to page with a point-in-time",
            ),
            PagingReport::ScrollPointInTimeForbidden => f.write_str(
                "scroll: searching a point-in-time is refused (HTTP 403) while plain searches \
                 work, as for a role granted on alias names only (a point-in-time is authorised \
                 on the concrete indices behind the alias); scans are consistent per scroll; \
                 grant read on the concrete indices to page with a point-in-time",
            ),
        }
    }
}

/// Finds how scans page on `index` with one page of a search for nothing
/// (a point-in-time opened, searched and closed, or nothing at all), and
/// remembers it on the handle as a scan would.
pub async fn probe_paging(cluster: &Cluster, index: &str) -> Result<PagingReport> {
    let dialects = [Paging::ElasticsearchPit, Paging::OpenSearchPit];
    let pit = match open_pit_in(cluster, index, &dialects).await? {
        Opened::Pit(pit) => pit,
        Opened::Unavailable => return Ok(PagingReport::ScrollNoPointInTime),
        Opened::Forbidden => return Ok(PagingReport::ScrollPointInTimeOpenForbidden),
    };
    let nothing = Scan::new(json!({"bool": {"must_not": {"match_all": {}}}}), Vec::new());
    let r = scan_pit(cluster, &pit, nothing, &mut |_| false).await;
    close_pit(cluster, &pit).await;
    Ok(match r? {
        PitScan::Done(_) => PagingReport::PointInTime {
            opensearch: pit.opensearch,
        },
        PitScan::ShardDocRefused => {
            cluster.remember_paging(Paging::Scroll);
            PagingReport::ScrollShardDocRefused
        }
        PitScan::Forbidden(_) => PagingReport::ScrollPointInTimeForbidden,
    })
}

/// A point-in-time, in the dialect the server spoke.
struct Pit {
    id: String,
    opensearch: bool,
    /// The shards the creation reached: a point-in-time opened without
    /// some (`_shards.failed`) pages only through the others, each page
    /// reporting none failed, so the scan's coverage starts from this.
    opened: Coverage,
}

/// What opening a point-in-time gave.
enum Opened {
    /// One, open.
    Pit(Pit),
    /// None: the cluster has none (or none in the dialects tried).
    Unavailable,
    /// None: the cluster refused to open one to this role (HTTP 403).
    Forbidden,
}

/// Opens a point-in-time in the dialect the cluster speaks (trying
/// Elasticsearch's, then OpenSearch's, until one is known). `None` when the
/// cluster has none (remembered when both dialects are unknown routes), or
/// refuses to open one to this role (403: the scan scrolls, not
/// remembered). A busy cluster's answer (after the read retries) is an
/// error.
async fn open_pit(cluster: &Cluster, index: &str) -> Result<Option<Pit>> {
    let dialects: &[Paging] = match cluster.paging() {
        Some(p @ (Paging::ElasticsearchPit | Paging::OpenSearchPit)) => &[p][..],
        Some(Paging::Scroll) => return Ok(None),
        None => &[Paging::ElasticsearchPit, Paging::OpenSearchPit],
    };
    Ok(match open_pit_in(cluster, index, dialects).await? {
        Opened::Pit(pit) => Some(pit),
        Opened::Unavailable | Opened::Forbidden => None,
    })
}

/// Opens a point-in-time trying `dialects` in order (see [`open_pit`]).
async fn open_pit_in(cluster: &Cluster, index: &str, dialects: &[Paging]) -> Result<Opened> {
    let mut unknown_routes = 0;
    let mut forbidden = false;
    for &dialect in dialects {
        let (path, key) = match dialect {
            Paging::ElasticsearchPit => (format!("/{index}/_pit?keep_alive={KEEP_ALIVE}"), "id"),
            // OpenSearch opens a partial point-in-time by default
            // (`allow_partial_pit_creation` "Default is `true`",
            // point-in-time-api.md); a scan must see every shard or say so.
            _ => (
                format!(
                    "/{index}/_search/point_in_time?keep_alive={KEEP_ALIVE}\
                     &allow_partial_pit_creation=false"
                ),
                "pit_id",
            ),
        };
        let (status, v) = cluster.raw_read(Method::Post, &path, None).await?;
        if status == 200 {
            if let Some(id) = v.get(key).and_then(Value::as_str) {
                cluster.remember_paging(dialect);
                return Ok(Opened::Pit(Pit {
                    id: id.into(),
                    opensearch: dialect == Paging::OpenSearchPit,
                    opened: Coverage::of(&v),
                }));
            }
        }
        if is_transient_status(status) {
            return Err(cluster.error_for(status, &v, index));
        }
        if matches!(status, 400 | 404 | 405) {
            unknown_routes += 1;
        }
        forbidden |= status == 403;
    }
    if unknown_routes == 2 {
        cluster.remember_paging(Paging::Scroll);
    }
    Ok(if forbidden {
        Opened::Forbidden
    } else {
        Opened::Unavailable
    })
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

/// Whether a failed search refused the `_shard_doc` sort (OpenSearch before
/// 3.3 knows no such field: "No mapping found for [_shard_doc] in order to
/// sort on", on every shard).
fn refuses_shard_doc(body: &Value) -> bool {
    root_causes(body)
        .iter()
        .any(|c| c.reason.contains("[_shard_doc]"))
}

/// How a scan through a point-in-time went.
enum PitScan {
    /// Every page read.
    Done(ScanSummary),
    /// The first page refused the `_shard_doc` tiebreak (nothing handed over).
    ShardDocRefused,
    /// The first page was refused 403 (nothing handed over): the role may
    /// search the alias but not the concrete indices the point-in-time
    /// holds. A scroll on the alias is authorised on the alias, as a plain
    /// search is.
    Forbidden(Error),
}

/// Pages through the point-in-time (see [`PitScan`] for the first page's
/// refusals, after which the caller scrolls instead).
async fn scan_pit<F>(cluster: &Cluster, pit: &Pit, what: Scan, on_page: &mut F) -> Result<PitScan>
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
    summary.coverage.add(pit.opened);
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
        // A page of a point-in-time is a pure read: asked again when busy.
        let (status, page) = cluster
            .raw_page(Method::Post, "/_search", Some(body))
            .await?;
        if status != 200 {
            if first && refuses_shard_doc(&page) {
                return Ok(PitScan::ShardDocRefused);
            }
            let e = cluster.error_for(status, &page, "_search");
            if first && matches!(e, Error::Auth { status: 403, .. }) {
                return Ok(PitScan::Forbidden(e));
            }
            return Err(e);
        }
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
    Ok(PitScan::Done(summary))
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
    // The first page opens the scroll: a pure read, asked again when busy
    // (a context left by a lost answer expires by itself).
    let path = format!("/{index}/_search?scroll={KEEP_ALIVE}");
    let (status, mut page) = cluster.raw_page(Method::Post, &path, Some(body)).await?;
    if status != 200 {
        return Err(cluster.error_for(status, &page, index));
    }
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
