//! Product personalities: making the [`FaultProxy`] answer as a named
//! product and version answers, where osmem-server (an OpenSearch 3 look-alike
//! that accepts both dialects and every sort) is more permissive.
//!
//! [`TABLE`] (in `products`) is the single list of differences: one row per
//! difference, the personalities it applies to, and the upstream reference
//! (documentation, source path or issue) it was written from. The request
//! and response rewriting below only looks rows up; it has no product
//! knowledge of its own.
//!
//! What a personality does to the traffic:
//! - `GET /` answers the product's banner ([`Personality::banner`]);
//! - `Date` is stripped from every answer unless the row says the product
//!   sends one ([`FaultProxy::strip_date`] switches that alone, for tests of
//!   the cluster clock);
//! - `X-Elastic-Product` only on Elasticsearch;
//! - point-in-time: Elasticsearch's `POST /{index}/_pit` (answer `id`,
//!   closed with `DELETE /_pit {"id"}`) is translated to osmem's OpenSearch
//!   dialect; the other product's endpoint answers "no handler found";
//! - a search sorting on `_shard_doc` fails on every shard where the product
//!   does not know it;
//! - `_cluster/health` is gone on serverless, and neither `refresh_interval`
//!   nor `number_of_shards` is an index setting shown there;
//! - a request body over the product's limit is refused (413) before it
//!   reaches the cluster;
//! - a multi request naming an index in its body is refused (400) where
//!   `rest.action.multi.allow_explicit_index` is false;
//! - a point-in-time search is refused (403) to a role granted on alias
//!   names only.

pub use super::products::{Difference, Personality, TABLE};
use super::{lock, rewrite::Canned, security::body_bytes, FaultProxy, Request, Shared};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use Difference::*;
use Personality::*;

impl FaultProxy {
    /// From now on, answers as `p` does.
    pub fn personality(&self, p: Personality) {
        *lock(&self.shared.personality) = Some(p);
        self.strip_date(p.has(NoDateHeader));
    }

    /// Whether `Date` is removed from every answer (a personality sets it;
    /// this switches it alone, e.g. to test the cluster clock without it).
    pub fn strip_date(&self, strip: bool) {
        self.shared.strip_date.store(strip, Ordering::SeqCst);
    }
}

/// What the personality makes of one request.
pub(super) enum Plan {
    /// Answer this without forwarding.
    Answer(Canned),
    /// Forward (the request may have been rewritten), then fix the answer.
    Forward(Fix),
}

/// A change to the upstream's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fix {
    /// Nothing beyond the headers.
    Headers,
    /// osmem's `{"pit_id"}` becomes Elasticsearch's `{"id"}`.
    PitIdAsElasticsearch,
    /// The settings the product does not show removed from a settings answer.
    HiddenSettings,
}

/// The personality in force, if any.
pub(super) fn current(shared: &Shared) -> Option<Personality> {
    *lock(&shared.personality)
}

/// Decides what `p` does with `request` (rewriting it in place when it is
/// translated to osmem's dialect).
pub(super) fn before(p: Personality, request: &mut Request) -> Plan {
    let path = request.target.clone();
    let bare = path.split('?').next().unwrap_or(&path).to_string();
    let method = request.method.clone();
    let body = body_bytes(request);
    if let Some(limit) = p.body_limit().filter(|l| body.len() > *l) {
        return Plan::Answer(too_large(p, limit));
    }
    if let Some(api) = p
        .has(ExplicitIndexRefused)
        .then(|| explicit_index(&bare, &body))
        .flatten()
    {
        return Plan::Answer(explicit_index_refused(api));
    }
    if p.has(AliasOnlyRole) && bare == "/_search" && names_a_pit(&body) {
        return Plan::Answer(pit_search_unauthorized());
    }
    if method == "GET" && bare == "/" {
        return Plan::Answer(Canned::json(200, p.banner()));
    }
    if p.has(NoClusterHealth) && bare.starts_with("/_cluster/health") {
        return Plan::Answer(not_available(&bare, &method));
    }
    if bare.ends_with("/_pit") || bare == "/_pit" {
        if !p.has(ElasticsearchPit) {
            return Plan::Answer(no_handler(&path, &method));
        }
        return translate_es_pit(request, &bare, &method, &body);
    }
    if bare.ends_with("/_search/point_in_time") && !p.has(OpenSearchPit) {
        return Plan::Answer(no_handler(&path, &method));
    }
    if p.has(ShardDocUnknown) && bare.ends_with("/_search") && sorts_on_shard_doc(&body) {
        return Plan::Answer(shard_doc_unknown());
    }
    if p.has(NoRefreshIntervalSetting) && bare.ends_with("/_settings") {
        if method == "PUT" && String::from_utf8_lossy(&body).contains("refresh_interval") {
            return Plan::Answer(serverless_setting());
        }
        return Plan::Forward(Fix::HiddenSettings);
    }
    Plan::Forward(Fix::Headers)
}

/// Elasticsearch's `_pit` as osmem's `_search/point_in_time`.
fn translate_es_pit(request: &mut Request, bare: &str, method: &str, body: &[u8]) -> Plan {
    let query = request
        .target
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    match method {
        "POST" => {
            let index = bare.trim_end_matches("/_pit");
            request.target = format!("{index}/_search/point_in_time{query}");
            Plan::Forward(Fix::PitIdAsElasticsearch)
        }
        "DELETE" => {
            let id = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .unwrap_or(Value::Null);
            request.target = format!("/_search/point_in_time{query}");
            set_body(request, json!({"pit_id": [id]}).to_string().into_bytes());
            Plan::Forward(Fix::Headers)
        }
        _ => Plan::Answer(no_handler(&request.target, method)),
    }
}

pub(super) fn set_body(request: &mut Request, body: Vec<u8>) {
    request.headers.retain(|(n, _)| {
        !n.eq_ignore_ascii_case("content-length") && !n.eq_ignore_ascii_case("transfer-encoding")
    });
    request
        .headers
        .push(("Content-Length".into(), body.len().to_string()));
    request.body = body;
}

/// Whether a search body sorts on `_shard_doc` (as a string or a key).
fn sorts_on_shard_doc(body: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let sort = match v.get("sort") {
        Some(Value::Array(a)) => a.clone(),
        Some(other) => vec![other.clone()],
        None => return false,
    };
    sort.iter().any(|s| match s {
        Value::String(f) => f == "_shard_doc",
        Value::Object(o) => o.contains_key("_shard_doc"),
        _ => false,
    })
}

/// The multi-request API whose body names an index (`bulk`, `multi
/// search`, `multi get`, as the products word their refusal), if any.
fn explicit_index(bare: &str, body: &[u8]) -> Option<&'static str> {
    let api = bare.rsplit('/').next()?;
    let lines = || {
        body.split(|b| *b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .map(|l| serde_json::from_slice::<Value>(l).unwrap_or(Value::Null))
    };
    match api {
        "_bulk" => {
            // Action lines; `delete` has no source line after it.
            let mut source_next = false;
            for line in lines() {
                if std::mem::take(&mut source_next) {
                    continue;
                }
                let Some((action, meta)) = line.as_object().and_then(|o| o.iter().next()) else {
                    continue;
                };
                if meta.get("_index").is_some() {
                    return Some("bulk");
                }
                source_next = action != "delete";
            }
            None
        }
        "_msearch" => lines()
            .step_by(2)
            .any(|h| h.get("index").is_some() || h.get("indices").is_some())
            .then_some("multi search"),
        "_mget" => serde_json::from_slice::<Value>(body)
            .ok()?
            .get("docs")?
            .as_array()?
            .iter()
            .any(|d| d.get("_index").is_some())
            .then_some("multi get"),
        _ => None,
    }
}

/// `rest.action.multi.allow_explicit_index: false`: the parser's
/// IllegalArgumentException, 400.
fn explicit_index_refused(api: &str) -> Canned {
    let reason = format!("explicit index in {api} is not allowed");
    let e = json!({"type": "illegal_argument_exception", "reason": reason});
    Canned::json(
        400,
        json!({"error": {"root_cause": [e], "type": "illegal_argument_exception",
            "reason": reason}, "status": 400}),
    )
}

/// Whether a search body carries a point-in-time.
fn names_a_pit(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body).is_ok_and(|v| v.get("pit").is_some())
}

/// x-pack security refusing a point-in-time search on the concrete indices
/// a role granted on the alias does not cover.
fn pit_search_unauthorized() -> Canned {
    let reason = "action [indices:data/read/search] is unauthorized for user [estx] with \
        effective roles [estx_alias_reader] on indices [compat-000001], this action is granted \
        by the index privileges [read,all]";
    let e = json!({"type": "security_exception", "reason": reason});
    Canned::json(
        403,
        json!({"error": {"root_cause": [e], "type": "security_exception", "reason": reason},
            "status": 403}),
    )
}

/// Both products' answer to a route they do not have (RestController).
fn no_handler(path: &str, method: &str) -> Canned {
    Canned::json(
        400,
        json!({"error": format!("no handler found for uri [{path}] and method [{method}]")}),
    )
}

/// OpenSearch before 3.3: every shard fails, the search fails with 400.
fn shard_doc_unknown() -> Canned {
    let cause = json!({"type": "query_shard_exception",
        "reason": "No mapping found for [_shard_doc] in order to sort on",
        "index": "compat", "index_uuid": "c0mpat"});
    Canned::json(
        400,
        json!({"error": {"root_cause": [cause.clone()], "type": "search_phase_execution_exception",
            "reason": "all shards failed", "phase": "query", "grouped": true,
            "failed_shards": [{"shard": 0, "index": "compat", "node": "n1", "reason": cause}]},
            "status": 400}),
    )
}

/// Serverless' answer to an API it does not offer.
fn not_available(path: &str, method: &str) -> Canned {
    let reason = format!(
        "Request for uri [{path}] with method [{method}] exists but is not available when running in serverless mode"
    );
    let e = json!({"type": "api_not_available_exception", "reason": reason});
    Canned::json(
        410,
        json!({"error": {"root_cause": [e], "type": "api_not_available_exception",
            "reason": reason}, "status": 410}),
    )
}

fn serverless_setting() -> Canned {
    let reason =
        "Settings [index.refresh_interval] are not available when running in serverless mode";
    let e = json!({"type": "illegal_argument_exception", "reason": reason});
    Canned::json(
        400,
        json!({"error": {"root_cause": [e], "type": "illegal_argument_exception",
            "reason": reason}, "status": 400}),
    )
}

/// 413: AWS's load balancer answers a JSON `Message`; the products answer
/// their own error.
fn too_large(p: Personality, limit: usize) -> Canned {
    if matches!(
        p,
        AwsOpenSearch2 | AwsOpenSearch2ExplicitIndexRefused | AwsOpenSearch2Fgac
    ) {
        return Canned::json(
            413,
            json!({"Message": format!("Request size exceeded {limit} bytes")}),
        );
    }
    let reason = format!("request content length exceeds the limit of [{limit}] bytes");
    Canned::json(
        413,
        json!({"error": {"root_cause": [{"type": "too_long_http_content_exception", "reason": reason}],
            "type": "too_long_http_content_exception", "reason": reason}, "status": 413}),
    )
}

/// Applies `fix` and the header rows to an upstream answer.
pub(super) fn after(p: Personality, fix: Fix, response: Vec<u8>) -> Vec<u8> {
    let response = match fix {
        Fix::Headers => response,
        Fix::PitIdAsElasticsearch => rebody(response, |mut v| {
            if let Some(id) = v.as_object_mut().and_then(|o| o.remove("pit_id")) {
                v["id"] = id;
            }
            v
        }),
        Fix::HiddenSettings => rebody(response, |mut v| {
            let hidden = [
                (NoRefreshIntervalSetting, "refresh_interval"),
                (NoShardCountSetting, "number_of_shards"),
            ];
            // Neither set nor among the defaults (`include_defaults=true`).
            let sections = v
                .as_object_mut()
                .into_iter()
                .flat_map(|o| o.values_mut())
                .filter_map(Value::as_object_mut)
                .flat_map(|o| o.iter_mut())
                .filter(|(k, _)| *k == "settings" || *k == "defaults");
            for (_, settings) in sections {
                let Some(s) = settings.as_object_mut() else {
                    continue;
                };
                for (_, key) in hidden.iter().filter(|(d, _)| p.has(*d)) {
                    s.remove(&format!("index.{key}"));
                    if let Some(index) = s.get_mut("index").and_then(Value::as_object_mut) {
                        index.remove(*key);
                    }
                }
            }
            v
        }),
    };
    product_header(p, response)
}

/// Adds or removes `X-Elastic-Product` as the product does.
fn product_header(p: Personality, response: Vec<u8>) -> Vec<u8> {
    let response = super::wire::without_header(&response, "x-elastic-product");
    if p.has(ElasticProductHeader) {
        super::wire::with_header(&response, "X-Elastic-Product", "Elasticsearch")
    } else {
        response
    }
}

/// The same answer with its JSON body changed by `f` (re-framed with a
/// `Content-Length`); unchanged when the body is not JSON.
pub(super) fn rebody(response: Vec<u8>, f: impl FnOnce(Value) -> Value) -> Vec<u8> {
    let Some(head_end) = super::super::find(&response, b"\r\n\r\n") else {
        return response;
    };
    let head = String::from_utf8_lossy(&response[..head_end]).into_owned();
    let raw = &response[head_end + 4..];
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        super::super::dechunk(raw).unwrap_or_default()
    } else {
        raw.to_vec()
    };
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return response;
    };
    let new_body = f(v).to_string();
    let mut out = String::new();
    for (i, line) in head.split("\r\n").enumerate() {
        let name = line
            .split_once(':')
            .map(|(n, _)| n.trim().to_ascii_lowercase());
        if i > 0
            && matches!(
                name.as_deref(),
                Some("content-length" | "transfer-encoding")
            )
        {
            continue;
        }
        if i > 0 {
            out.push_str("\r\n");
        }
        out.push_str(line);
    }
    out.push_str(&format!(
        "\r\nContent-Length: {}\r\n\r\n{new_body}",
        new_body.len()
    ));
    out.into_bytes()
}
