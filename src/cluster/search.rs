//! Searches: one search, several in one round trip (`_msearch`), full scans
//! with the scroll API, counts, and reading hits.

use super::response::{check, error_from};
use super::{scope, Cluster, Hit};
use crate::error::{Error, Result};
use elasticsearch::{ClearScrollParts, CountParts, MsearchParts, ScrollParts, SearchParts};
use serde_json::{json, Map, Value};

/// Page size for scans.
const SCAN_PAGE: usize = 1000;

impl Cluster {
    /// One search request; returns the raw answer.
    pub async fn search(&self, index: &str, body: Value) -> Result<Value> {
        let answer = self.search_untranslated(index, body).await?;
        Ok(self.read_answer(index, answer))
    }

    /// [`Cluster::search`] with each hit's `_source` as stored (the
    /// application's names), for readers that translate later themselves.
    pub(super) async fn search_untranslated(&self, index: &str, body: Value) -> Result<Value> {
        let target = [index];
        let resp = self
            .send_read(|| {
                self.client
                    .search(SearchParts::Index(&target))
                    .body(body.clone())
                    .send()
            })
            .await?;
        check(resp, index).await
    }

    /// Several searches in one round trip (`_msearch`); one answer per body,
    /// in order. A failed sub-search becomes an `Err` in its slot. Searches
    /// of one index name it in the path only; searches of several go in one
    /// request naming each in its header, or one request per index where the
    /// cluster refuses that (see `scope`).
    pub async fn msearch(&self, searches: &[(String, Value)]) -> Result<Vec<Result<Value>>> {
        let groups = scope::by_index(searches, |(index, _)| index.as_str());
        if let [(index, _)] = groups[..] {
            return self.msearch_request(Some(index), searches).await;
        }
        if groups.is_empty() {
            return Ok(Vec::new());
        }
        if !self.scope.per_index() {
            match self.msearch_request(None, searches).await {
                Err(Error::ExplicitIndexRefused { .. }) => self.scope.refused(),
                answered => return answered,
            }
        }
        let mut out: Vec<Option<Result<Value>>> = vec![None; searches.len()];
        for (index, at) in groups {
            let part: Vec<(String, Value)> = at.iter().map(|&i| searches[i].clone()).collect();
            // Each index's answer is its own, as in one request: a request
            // that failed fails its own searches only.
            match self.msearch_request(Some(index), &part).await {
                Ok(answers) => {
                    for (i, answer) in at.into_iter().zip(answers) {
                        out[i] = Some(answer);
                    }
                }
                Err(e) => at.into_iter().for_each(|i| out[i] = Some(Err(e.clone()))),
            }
        }
        out.into_iter()
            .map(|a| a.ok_or_else(|| Error::Decode("msearch answered fewer searches".into())))
            .collect()
    }

    /// One `_msearch`: on `path`'s index with empty headers, or (`None`)
    /// naming each search's index in its header.
    async fn msearch_request(
        &self,
        path: Option<&str>,
        searches: &[(String, Value)],
    ) -> Result<Vec<Result<Value>>> {
        let target: Vec<&str> = path.into_iter().collect();
        let parts = || match path {
            Some(_) => MsearchParts::Index(&target),
            None => MsearchParts::None,
        };
        let busy =
            |a: &Value| a.get("error").is_some() && error_from(status_of(a), a, "").is_transient();
        // Searches answered busy (a per-item 429) are asked again on their own.
        let answers = self
            .per_item(searches.len(), busy, |at: Vec<usize>| async move {
                let headers: Vec<Value> = at
                    .iter()
                    .map(|&i| match path {
                        Some(_) => json!({}),
                        None => json!({ "index": searches[i].0 }),
                    })
                    .collect();
                // The searches are borrowed, not copied, at each try.
                let lines = || {
                    let mut lines: Vec<elasticsearch::http::request::JsonBody<&Value>> =
                        Vec::with_capacity(2 * at.len());
                    for (&i, header) in at.iter().zip(&headers) {
                        lines.push(header.into());
                        lines.push((&searches[i].1).into());
                    }
                    lines
                };
                let resp = self
                    .send_read(|| self.client.msearch(parts()).body(lines()).send())
                    .await?;
                let body = check(resp, path.unwrap_or("_msearch")).await?;
                // Taken out of the answer, not copied: the poll's answer is
                // its biggest read.
                match body {
                    Value::Object(mut answer) => match answer.remove("responses") {
                        Some(Value::Array(responses)) => Ok(responses),
                        _ => Err(Error::Decode("msearch answer without responses".into())),
                    },
                    _ => Err(Error::Decode("msearch answer without responses".into())),
                }
            })
            .await?;
        Ok(searches
            .iter()
            .zip(answers)
            .map(|((index, _), a)| {
                if a.get("error").is_some() {
                    Err(error_from(status_of(&a), &a, index))
                } else {
                    Ok(self.read_answer(index, a))
                }
            })
            .collect())
    }

    /// Every hit of `body` (its `query`, `sort` and `_source`), paging with
    /// the scroll API so no result set is capped; [`Error::Partial`] when
    /// some shards failed to answer. Meant for operator-driven
    /// batch work (listing, recovery, audit), not for the dashboard's polls.
    pub async fn scan(&self, index: &str, mut body: Value) -> Result<Vec<Hit>> {
        if let Some(o) = body.as_object_mut() {
            o.entry("size").or_insert(json!(SCAN_PAGE));
        }
        let target = [index];
        let resp = self
            .send_read(|| {
                self.client
                    .search(SearchParts::Index(&target))
                    .scroll("2m")
                    .body(body.clone())
                    .send()
            })
            .await?;
        let mut page = self.read_answer(index, check(resp, index).await?);
        whole(&page, index)?;
        let mut hits = Vec::new();
        let mut scroll_ids: Vec<String> = Vec::new();
        loop {
            let batch = hits_of(&page)?;
            if let Some(sid) = page.get("_scroll_id").and_then(Value::as_str) {
                if scroll_ids.last().map(String::as_str) != Some(sid) {
                    scroll_ids.push(sid.to_string());
                }
            }
            if batch.is_empty() {
                break;
            }
            hits.extend(batch);
            let Some(sid) = scroll_ids.last().cloned() else {
                break;
            };
            // Not retried: a proxy's 502 may come after the cluster moved the
            // scroll on, and asking again would silently skip a page.
            let next = self
                .client
                .scroll(ScrollParts::None)
                .body(json!({ "scroll": "2m", "scroll_id": sid }))
                .send();
            let resp = self.send(next).await?;
            page = self.read_answer(index, check(resp, index).await?);
            whole(&page, index)?;
        }
        if !scroll_ids.is_empty() {
            let ids: Vec<&str> = scroll_ids.iter().map(String::as_str).collect();
            // Best effort: scroll contexts expire on their own anyway.
            let _ = self
                .client
                .clear_scroll(ClearScrollParts::None)
                .body(json!({ "scroll_id": ids }))
                .send()
                .await;
        }
        Ok(hits)
    }

    /// Number of documents matching `query`; [`Error::Partial`] when some
    /// shards failed to count.
    pub async fn count(&self, index: &str, query: Value) -> Result<u64> {
        let target = [index];
        let resp = self
            .send_read(|| {
                self.client
                    .count(CountParts::Index(&target))
                    .body(json!({ "query": query }))
                    .send()
            })
            .await?;
        let body = check(resp, index).await?;
        whole(&body, index)?;
        body.get("count")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::Decode("count answer without count".into()))
    }
}

/// [`Error::Partial`] when the answer's `_shards.failed` is not zero.
pub(super) fn whole(answer: &Value, index: &str) -> Result<()> {
    let n = |k: &str| {
        answer
            .pointer(&format!("/_shards/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    match n("failed") {
        0 => Ok(()),
        failed => Err(Error::Partial {
            index: index.to_string(),
            failed,
            total: n("total"),
        }),
    }
}

fn hits_of(page: &Value) -> Result<Vec<Hit>> {
    Ok(hit_refs(page)?
        .into_iter()
        .map(|h| Hit {
            id: h.id.to_string(),
            source: h.source.clone(),
        })
        .collect())
}

/// The hits of one search answer.
pub fn hits(page: &Value) -> Result<Vec<Hit>> {
    hits_of(page)
}

/// One hit of a search answer as it stands in the answer (not copied).
#[derive(Debug, Clone, Copy)]
pub struct HitRef<'a> {
    /// Document id.
    pub id: &'a str,
    /// `_source` (empty when not requested).
    pub source: &'a Map<String, Value>,
}

/// The hits of one search answer, borrowed from it: what a reader that
/// only looks at them needs (the poll reads hundreds each time; copying
/// each `_source` out cost as much as parsing it).
pub fn hit_refs(page: &Value) -> Result<Vec<HitRef<'_>>> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let hits = page
        .pointer("/hits/hits")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::Decode("search answer without hits".into()))?;
    Ok(hits
        .iter()
        .map(|h| HitRef {
            id: h.get("_id").and_then(Value::as_str).unwrap_or_default(),
            source: h
                .get("_source")
                .and_then(Value::as_object)
                .unwrap_or_else(|| EMPTY.get_or_init(Map::new)),
        })
        .collect())
}

/// The status of one `_msearch` answer (500 when it names none).
fn status_of(answer: &Value) -> u16 {
    answer
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(500)
}
