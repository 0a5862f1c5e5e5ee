//! Product personalities: making the [`FaultProxy`] answer as a named
//! product and version answers, where osmem-server (an OpenSearch 3 look-alike
//! that accepts both dialects and every sort) is more permissive.
//!
//! [`TABLE`] is the single list of differences: one row per difference, the
//! personalities it applies to, and the upstream reference (documentation,
//! source path or issue) it was written from. The request and response
//! rewriting below only looks rows up; it has no product knowledge of its own.
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
//!   reaches the cluster.

use super::{lock, rewrite::Canned, security::body_bytes, FaultProxy, Request, Shared};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

/// A product and version the proxy can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Personality {
    /// Elasticsearch 7.17 (self-managed).
    Elasticsearch717,
    /// Elasticsearch 8.x (self-managed or Elastic Cloud Hosted).
    Elasticsearch8,
    /// Elasticsearch 9.x before elastic/elasticsearch#157382 (no `Date`).
    Elasticsearch9,
    /// Elasticsearch 9.x with elastic/elasticsearch#157382 (sends `Date`).
    Elasticsearch9Dated,
    /// Elasticsearch Serverless (Elastic Cloud).
    ElasticsearchServerless,
    /// OpenSearch 2.11.
    OpenSearch2,
    /// OpenSearch 3.3.
    OpenSearch3,
    /// OpenSearch 3.0 to 3.2: point-in-time, but no `_shard_doc` yet.
    OpenSearch32,
    /// Amazon OpenSearch Service, OpenSearch 2.11 engine.
    AwsOpenSearch2,
    /// Amazon OpenSearch Service, OpenSearch 2.11 engine, with fine-grained
    /// access control (the OpenSearch security plugin: every request
    /// authenticated, permissions by action name).
    AwsOpenSearch2Fgac,
}

use Personality::*;

/// One way a product answers differently from osmem-server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    /// REST answers carry no `Date` header.
    NoDateHeader,
    /// Answers carry `X-Elastic-Product: Elasticsearch`.
    ElasticProductHeader,
    /// Point-in-time is `POST /{index}/_pit` / `DELETE /_pit` (`id`).
    ElasticsearchPit,
    /// Point-in-time is `POST /{index}/_search/point_in_time` /
    /// `DELETE /_search/point_in_time` (`pit_id`).
    OpenSearchPit,
    /// `_shard_doc` is no sort field: every shard fails "No mapping found
    /// for [_shard_doc] in order to sort on".
    ShardDocUnknown,
    /// `_cluster/health` answers 410 `api_not_available_exception`.
    NoClusterHealth,
    /// `refresh_interval` is not an index setting (not shown, not settable).
    NoRefreshIntervalSetting,
    /// `number_of_shards` is not shown in an index's settings (the service
    /// shards indices itself).
    NoShardCountSetting,
    /// Request bodies over 10 MiB are refused with 413.
    BodyLimit10MiB,
    /// Request bodies over 100 MB (`http.max_content_length`) are refused with 413.
    BodyLimit100Mb,
    /// Security is on, with the OpenSearch security plugin's answers: 401
    /// without credentials, 403 `security_exception` "no permissions for
    /// [action] and User [name=.., backend_roles=[..], requestedTenant=..]"
    /// for an action no role mapped to the user grants (the tests give the
    /// realm: [`FaultProxy::secure`]).
    FineGrainedAccessControl,
}

use Difference::*;

/// One row of [`TABLE`].
pub struct Row {
    /// The difference.
    pub difference: Difference,
    /// The personalities that have it.
    pub products: &'static [Personality],
    /// Where upstream says so.
    pub reference: &'static str,
}

const ALL_ES: &[Personality] = &[
    Elasticsearch717,
    Elasticsearch8,
    Elasticsearch9,
    Elasticsearch9Dated,
    ElasticsearchServerless,
];
const ALL_OS: &[Personality] = &[
    OpenSearch2,
    OpenSearch3,
    OpenSearch32,
    AwsOpenSearch2,
    AwsOpenSearch2Fgac,
];

/// Every difference, with the products that have it and the reference.
pub const TABLE: &[Row] = &[
    Row {
        difference: NoDateHeader,
        products: &[
            Elasticsearch717,
            Elasticsearch8,
            Elasticsearch9,
            ElasticsearchServerless,
            OpenSearch2,
            OpenSearch3,
            OpenSearch32,
            AwsOpenSearch2,
            AwsOpenSearch2Fgac,
        ],
        reference: "elastic/elasticsearch#157382 (adds Date to REST answers); \
            server/src/main/java/org/elasticsearch/http/DefaultRestChannel.java and \
            opensearch-project/OpenSearch server/src/main/java/org/opensearch/http/DefaultRestChannel.java \
            set no Date",
    },
    Row {
        difference: ElasticProductHeader,
        products: ALL_ES,
        reference: "elastic/elasticsearch#74365 (X-Elastic-Product on every answer from 7.14); \
            OpenSearch never sends it",
    },
    Row {
        difference: ElasticsearchPit,
        products: ALL_ES,
        reference: "https://www.elastic.co/guide/en/elasticsearch/reference/8.19/point-in-time-api.html \
            (POST /<index>/_pit, answer `id`; DELETE /_pit {\"id\"}); 7.10+",
    },
    Row {
        difference: OpenSearchPit,
        products: ALL_OS,
        reference: "https://docs.opensearch.org/latest/search-plugins/searching-data/point-in-time-api/ \
            (POST /<index>/_search/point_in_time, answer `pit_id`; \
            DELETE /_search/point_in_time {\"pit_id\": [..]}); 2.4+",
    },
    Row {
        difference: ShardDocUnknown,
        products: &[OpenSearch2, OpenSearch32, AwsOpenSearch2, AwsOpenSearch2Fgac],
        reference: "opensearch-project/OpenSearch#17064, PR #18924: `_shard_doc` sorts only from 3.3.0 \
            (3.0 to 3.2 have point-in-time and still refuse it); \
            before, FieldSortBuilder finds no field: query_shard_exception \
            \"No mapping found for [_shard_doc] in order to sort on\" on every shard",
    },
    Row {
        difference: NoClusterHealth,
        products: &[ElasticsearchServerless],
        reference: "https://www.elastic.co/docs/reference/elasticsearch/rest-apis/compatibility \
            (serverless API differences: cluster APIs unavailable); \
            elastic/elasticsearch server/src/main/java/org/elasticsearch/rest/RestController.java \
            (ApiNotAvailableException, 410)",
    },
    Row {
        difference: NoRefreshIntervalSetting,
        products: &[ElasticsearchServerless],
        reference: "https://www.elastic.co/docs/deploy-manage/deploy/elastic-cloud/differences-from-other-elasticsearch-offerings \
            (index settings: refresh_interval is managed; searches see writes within 5 s)",
    },
    Row {
        difference: NoShardCountSetting,
        products: &[ElasticsearchServerless],
        reference: "https://www.elastic.co/docs/deploy-manage/deploy/elastic-cloud/differences-from-other-elasticsearch-offerings \
            (\"shard distribution and replication\" are managed; settings are restricted to a subset) and \
            https://www.elastic.co/docs/reference/elasticsearch/index-settings/index-modules \
            (index.number_of_shards carries no Serverless badge): modelled as not shown, so the \
            tool cannot rely on it",
    },
    Row {
        difference: BodyLimit10MiB,
        products: &[AwsOpenSearch2, AwsOpenSearch2Fgac],
        reference: "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/limits.html#network-limits \
            (maximum HTTP request payload 10 MiB on small/medium/large instance types)",
    },
    Row {
        difference: BodyLimit100Mb,
        products: &[
            Elasticsearch717,
            Elasticsearch8,
            Elasticsearch9,
            Elasticsearch9Dated,
            OpenSearch2,
            OpenSearch3,
            OpenSearch32,
        ],
        reference: "http.max_content_length default 100mb: \
            https://www.elastic.co/guide/en/elasticsearch/reference/8.19/modules-network.html, \
            https://docs.opensearch.org/latest/install-and-configure/configuring-opensearch/network-settings/",
    },
    Row {
        difference: FineGrainedAccessControl,
        products: &[AwsOpenSearch2Fgac],
        reference: "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/fgac.html \
            (fine-grained access control is the OpenSearch security plugin: roles, role mapping to \
            users and backend roles such as IAM ARNs); the 403 text is \
            opensearch-project/security SecurityFilter.java (\"no permissions for %s and %s\", the \
            missing actions and User.toString(): \"User [name=.., backend_roles=[..], \
            requestedTenant=..]\"); https://repost.aws/knowledge-center/opensearch-fgac-errors \
            (\"security_exception\",\"reason\":\"no permissions\" 403: map the user or backend \
            role to a role)",
    },
];

impl Personality {
    /// Every personality, in the order the compatibility suite runs them.
    pub const ALL: [Personality; 10] = [
        Elasticsearch717,
        Elasticsearch8,
        Elasticsearch9,
        Elasticsearch9Dated,
        ElasticsearchServerless,
        OpenSearch2,
        OpenSearch3,
        OpenSearch32,
        AwsOpenSearch2,
        AwsOpenSearch2Fgac,
    ];

    /// Its name (`elasticsearch-8`, `opensearch-2`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Elasticsearch717 => "elasticsearch-7.17",
            Elasticsearch8 => "elasticsearch-8",
            Elasticsearch9 => "elasticsearch-9",
            Elasticsearch9Dated => "elasticsearch-9-dated",
            ElasticsearchServerless => "elasticsearch-serverless",
            OpenSearch2 => "opensearch-2",
            OpenSearch3 => "opensearch-3",
            OpenSearch32 => "opensearch-3.2",
            AwsOpenSearch2 => "aws-opensearch-2",
            AwsOpenSearch2Fgac => "aws-opensearch-2-fgac",
        }
    }

    /// Whether the row for `d` names this personality.
    pub fn has(self, d: Difference) -> bool {
        TABLE
            .iter()
            .any(|r| r.difference == d && r.products.contains(&self))
    }

    /// Whether it is an OpenSearch.
    pub fn is_opensearch(self) -> bool {
        ALL_OS.contains(&self)
    }

    /// The `GET /` answer. Versions: the latest of each line at the time of
    /// writing (elastic.co/downloads/past-releases, opensearch.org/releases);
    /// serverless reports `build_flavor: serverless` and a fixed version
    /// (https://www.elastic.co/docs/solutions/search/serverless-elasticsearch-get-started);
    /// OpenSearch adds `distribution: opensearch` (its RestMainAction).
    pub fn banner(self) -> Value {
        let (number, lucene, flavor) = match self {
            Elasticsearch717 => ("7.17.29", "8.11.3", "default"),
            Elasticsearch8 => ("8.19.7", "9.12.2", "default"),
            Elasticsearch9 | Elasticsearch9Dated => ("9.2.1", "10.3.1", "default"),
            ElasticsearchServerless => ("8.11.0", "9.12.0", "serverless"),
            OpenSearch2 | AwsOpenSearch2 | AwsOpenSearch2Fgac => ("2.11.0", "9.7.0", ""),
            OpenSearch3 => ("3.3.0", "10.3.1", ""),
            OpenSearch32 => ("3.2.0", "10.2.2", ""),
        };
        if self.is_opensearch() {
            json!({"name": "node-1", "cluster_name": "compat", "cluster_uuid": "c0mpat",
                "version": {"distribution": "opensearch", "number": number, "build_type": "tar",
                    "build_hash": "0", "build_date": "2025-01-01T00:00:00Z", "build_snapshot": false,
                    "lucene_version": lucene, "minimum_wire_compatibility_version": "7.10.0",
                    "minimum_index_compatibility_version": "7.0.0"},
                "tagline": "The OpenSearch Project: https://opensearch.org/"})
        } else {
            json!({"name": "node-1", "cluster_name": "compat", "cluster_uuid": "c0mpat",
                "version": {"number": number, "build_flavor": flavor, "build_type": "docker",
                    "build_hash": "0", "build_date": "2025-01-01T00:00:00Z", "build_snapshot": false,
                    "lucene_version": lucene, "minimum_wire_compatibility_version": "7.17.0",
                    "minimum_index_compatibility_version": "7.0.0"},
                "tagline": "You Know, for Search"})
        }
    }

    fn body_limit(self) -> Option<usize> {
        if self.has(BodyLimit10MiB) {
            Some(10 * 1024 * 1024)
        } else if self.has(BodyLimit100Mb) {
            Some(100 * 1024 * 1024)
        } else {
            None
        }
    }
}

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
    if matches!(p, AwsOpenSearch2 | AwsOpenSearch2Fgac) {
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
            for settings in v.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                let Some(s) = settings.get_mut("settings").and_then(Value::as_object_mut) else {
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
