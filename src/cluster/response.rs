//! Turning HTTP answers and transport failures into the library's typed
//! errors and values.
//!
//! Every answer is classified by its HTTP status first, before its body is
//! looked at: a 401/403 is an authentication failure whatever it carries
//! (OpenSearch's security plugin answers plain text or nothing at all, a
//! proxy answers HTML), and a proxy's HTML 502/504 is a transient error, not
//! an "unexpected response". The body only refines the reason shown.

use super::reason::{json_reason, summarize_text, truncate};
use super::VersionedDoc;
use crate::error::{Error, Result};
use elasticsearch::http::headers::{HeaderMap, DATE, RETRY_AFTER};
use elasticsearch::http::response::Response;
use serde_json::Value;
use std::time::{Duration, SystemTime};

pub(super) fn transport(e: elasticsearch::Error) -> Error {
    match e.status_code() {
        Some(s) => Error::Cluster {
            status: s.as_u16(),
            reason: e.to_string(),
            retry_after: None,
        },
        None if answered_plain_http(&e) => Error::Unreachable(format!(
            "the server answered plain HTTP to a TLS handshake: use http:// instead of \
             https:// ({})",
            with_causes(&e)
        )),
        None => Error::Unreachable(with_causes(&e)),
    }
}

/// Whether nothing listens at the address (the connection was refused, so
/// the request was never sent): waiting brings no answer, unlike a timeout
/// or a reset connection. Read from the typed I/O error in the chain.
pub(super) fn no_listener(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        let mut x = c;
        loop {
            match x.downcast_ref::<std::io::Error>() {
                Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => return true,
                Some(io) => match io.get_ref() {
                    Some(inner) => x = inner,
                    None => break,
                },
                None => break,
            }
        }
        cause = c.source();
    }
    false
}

/// Whether a TLS handshake failed because the server spoke plain HTTP
/// (an `https://` URL to an `http` port): rustls reads the answer's first
/// byte as a record type it does not know, `InvalidContentType`.
fn answered_plain_http(e: &(dyn std::error::Error + 'static)) -> bool {
    use rustls::{Error as Tls, InvalidMessage};
    let mut cause = Some(e);
    while let Some(c) = cause {
        // An I/O error's source skips the error it wraps (an I/O error, in
        // turn, as hyper wraps rustls's): look inside each.
        let mut x = c;
        loop {
            if let Some(Tls::InvalidMessage(InvalidMessage::InvalidContentType)) =
                x.downcast_ref::<Tls>()
            {
                return true;
            }
            match x
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
            {
                Some(inner) => x = inner,
                None => break,
            }
        }
        cause = c.source();
    }
    false
}

/// The error and its chain of causes ("error sending request: ...:
/// Connection refused"), so operators can tell a refused connection from
/// DNS, TLS or a timeout.
pub(super) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        cause = c.source();
    }
    msg
}

/// An answer read in full: status, the `Retry-After` it asked for, and its
/// body (JSON when it parses, `Null` when empty, else the raw text).
pub(super) struct Answer {
    pub(super) status: u16,
    retry_after: Option<Duration>,
    pub(super) json: Value,
    /// The body as text where it is not JSON (empty where it is: the
    /// poll's answers are big, and only a body that did not parse is
    /// shown as text).
    text: String,
}

impl Answer {
    /// Reads the whole answer; fails only when the connection breaks.
    /// JSON is parsed from the bytes as they came (UTF-8 by the products'
    /// content type), not from a copy decoded to text first.
    pub(super) async fn read(resp: Response) -> Result<Answer> {
        let status = resp.status_code().as_u16();
        let retry_after = retry_after(resp.headers());
        let body = resp.bytes().await.map_err(transport)?;
        let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let text = match json {
            Value::Null => String::from_utf8_lossy(&body).into_owned(),
            _ => String::new(),
        };
        Ok(Answer {
            status,
            retry_after,
            json,
            text,
        })
    }

    /// The JSON body; a body that is not JSON as a JSON string of its text.
    pub(super) fn json_or_text(self) -> Value {
        if self.json.is_null() && !self.text.trim().is_empty() {
            Value::String(self.text)
        } else {
            self.json
        }
    }

    /// True for 2xx.
    pub(super) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body of a successful answer as JSON, or the typed error: by
    /// status for an error answer, [`Error::Decode`] for a 2xx that is not JSON.
    pub(super) fn into_json(self, index: &str) -> Result<Value> {
        if !self.is_success() {
            return Err(self.into_error(index));
        }
        if self.json.is_null() && !self.text.trim().is_empty() {
            return Err(Error::Decode(truncate(&self.text)));
        }
        Ok(self.json)
    }

    /// The typed error for this (non-2xx) answer.
    pub(super) fn into_error(self, index: &str) -> Error {
        let reason = if self.json.is_object() {
            None
        } else {
            Some(summarize_text(self.status, &self.text))
        };
        let e = classify(self.status, &self.json, reason, index);
        match e {
            Error::Cluster { status, reason, .. } => Error::Cluster {
                status,
                reason,
                retry_after: self.retry_after,
            },
            other => other,
        }
    }
}

/// Reads an answer and returns its JSON body if the status is 2xx.
pub(super) async fn check(resp: Response, index: &str) -> Result<Value> {
    Answer::read(resp).await?.into_json(index)
}

/// The typed error for an error answer whose body is JSON (or `Null`, or
/// the text of a body that was not JSON, as a JSON string).
pub fn error_from(status: u16, body: &Value, index: &str) -> Error {
    let text_reason = body.as_str().map(|text| summarize_text(status, text));
    classify(status, body, text_reason, index)
}

/// Status first: 401/403 are [`Error::Auth`] whatever the body (one that
/// names the missing permission and its principal also says where to grant
/// it: `denial`), except a
/// block (`cluster_block_exception`, [`Error::Blocked`]); a JSON
/// `index_not_found_exception` is [`Error::IndexMissing`], an
/// `index_closed_exception` [`Error::IndexClosed`]; a 404 without the
/// products' error type is a proxy's ([`Error::UnknownResource`]);
/// everything else is [`Error::Cluster`] with the status it came with. `text_reason` replaces
/// the reason read from JSON when the body was not JSON.
fn classify(status: u16, body: &Value, text_reason: Option<String>, index: &str) -> Error {
    let reason = text_reason.unwrap_or_else(|| json_reason(status, body));
    let kind = body
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if status == 403 && kind == "cluster_block_exception" {
        return Error::Blocked { status, reason };
    }
    if status == 400 && kind == "illegal_argument_exception" && refuses_explicit_index(&reason) {
        return Error::ExplicitIndexRefused { reason };
    }
    if kind == "circuit_breaking_exception"
        && body.pointer("/error/durability").and_then(Value::as_str) == Some("PERMANENT")
    {
        return Error::Breaker { reason };
    }
    if kind == "security_exception" && refuses_partial_update(&reason) {
        return Error::UpdateRefused {
            index: index.to_string(),
            reason,
        };
    }
    if matches!(status, 401 | 403) {
        let reason = match super::denial::hint(body, &reason) {
            Some(hint) => format!("{reason}; {hint}"),
            None => reason,
        };
        return Error::Auth { status, reason };
    }
    if kind == "index_closed_exception" {
        let closed = body
            .pointer("/error/index")
            .and_then(Value::as_str)
            .unwrap_or(index);
        return Error::IndexClosed(closed.to_string());
    }
    if status == 404 && kind.is_empty() && body.get("found").is_none() {
        return Error::UnknownResource(reason);
    }
    if kind == "index_not_found_exception" {
        let missing = body
            .pointer("/error/index")
            .and_then(Value::as_str)
            .unwrap_or(index)
            .to_string();
        return Error::IndexMissing(missing);
    }
    Error::Cluster {
        status,
        reason,
        retry_after: None,
    }
}

/// Whether a 400 `illegal_argument_exception` is the product refusing an
/// index named in a multi-request body under
/// `rest.action.multi.allow_explicit_index: false`. Both products throw it
/// while parsing the body, before anything runs, with one of three fixed
/// texts: "explicit index in bulk is not allowed" (`BulkRequestParser`),
/// "explicit index in multi search is not allowed" (`MultiSearchRequest`),
/// "explicit index in multi get is not allowed" (`MultiGetRequest`), in
/// opensearch-project/OpenSearch `server/src/main/java/org/opensearch/action/`
/// `bulk/`, `search/` and `get/` (and the same classes of
/// elastic/elasticsearch).
fn refuses_explicit_index(reason: &str) -> bool {
    reason.contains("explicit index in ") && reason.contains(" is not allowed")
}

/// Whether a `security_exception`'s reason is a product refusing `_update`
/// to a role with field- or document-level security:
/// - Elasticsearch answers 400 "Can't execute an update request if field or
///   document level security is enabled" (`UpdateRequestInterceptor`), and
///   per `_bulk` item "Can't execute a bulk item request with update requests
///   embedded if field or document level security is enabled"
///   (`BulkShardRequestInterceptor`, x-pack security);
/// - OpenSearch answers 500 "Update is not supported when FLS or DLS or
///   Fieldmasking is activated" (security plugin `DlsFlsValveImpl.invoke`,
///   for an `UpdateRequest` and for a bulk shard request carrying one).
fn refuses_partial_update(reason: &str) -> bool {
    const MARKERS: [&str; 2] = [
        "if field or document level security is enabled",
        "Update is not supported when FLS",
    ];
    MARKERS.iter().any(|m| reason.contains(m))
}

/// The typed error of one `_mget` entry. Elasticsearch gives per-document
/// errors a `type` and no status, so the status is the one the same error
/// would carry on its own: a missing index is [`Error::IndexMissing`], a
/// security refusal 403, a rejected execution 429, an unavailable shard 503;
/// anything else is a final 400-class error, never a retried 500.
pub(super) fn mget_item_error(item: &Value, index: &str) -> Error {
    let err = item.get("error").cloned().unwrap_or(Value::Null);
    let kind = err.get("type").and_then(Value::as_str).unwrap_or_default();
    let status = item
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(match kind {
            "index_not_found_exception" => 404,
            "security_exception" => 403,
            "es_rejected_execution_exception"
            | "rejected_execution_exception"
            | "circuit_breaking_exception" => 429,
            // A block names its level: `FORBIDDEN/8/index write (api)`
            // is the index's own setting (403 on its own, as a whole
            // request's block is), `SERVICE_UNAVAILABLE/1/state not
            // recovered` a cluster still starting (503)
            // (`ClusterBlockException.status()` in both products).
            "cluster_block_exception" if block_is_forbidden(&err) => 403,
            "no_shard_available_action_exception"
            | "unavailable_shards_exception"
            | "node_not_connected_exception"
            | "node_disconnected_exception"
            | "cluster_block_exception" => 503,
            _ => 400,
        });
    let body = serde_json::json!({ "error": err });
    error_from(status, &body, index)
}

/// Whether a `cluster_block_exception` names a `FORBIDDEN/` block (an
/// index's `index.blocks.*` setting) rather than a `SERVICE_UNAVAILABLE/` one.
fn block_is_forbidden(err: &Value) -> bool {
    let reason = err
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default();
    reason.contains("FORBIDDEN/") && !reason.contains("SERVICE_UNAVAILABLE/")
}

/// The wait an answer asks for: `Retry-After` as seconds or as an HTTP date
/// (measured against the answer's own `Date`, so our clock does not matter).
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let now = headers
        .get(DATE)
        .and_then(|d| d.to_str().ok())
        .and_then(|d| httpdate::parse_http_date(d).ok())
        .unwrap_or_else(SystemTime::now);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

pub(super) fn versioned(id: &str, mut body: Value) -> Result<VersionedDoc> {
    let seq_no = body.get("_seq_no").and_then(Value::as_i64);
    let primary_term = body.get("_primary_term").and_then(Value::as_i64);
    // Taken out of the answer, not copied (an `_mget` of the poll reads a
    // thousand documents).
    let source = match body.get_mut("_source").map(Value::take) {
        Some(Value::Object(source)) => Some(source),
        Some(other) => {
            body["_source"] = other;
            None
        }
        None => None,
    };
    match (seq_no, primary_term, source) {
        (Some(seq_no), Some(primary_term), Some(source)) => Ok(VersionedDoc {
            id: id.to_string(),
            seq_no,
            primary_term,
            source,
            routing: body
                .get("_routing")
                .and_then(Value::as_str)
                .map(str::to_string),
        }),
        _ => Err(Error::Decode(format!(
            "document `{id}` answer lacks _seq_no/_primary_term/_source: {}",
            truncate(&body.to_string())
        ))),
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::reason::root_causes;
    use crate::cluster::response::*;
    use elasticsearch::http::headers::HeaderValue;
    use serde_json::json;

    fn error_of(status: u16, text: &str) -> Error {
        let json = serde_json::from_str(text).unwrap_or(Value::Null);
        Answer {
            status,
            retry_after: None,
            json,
            text: text.to_string(),
        }
        .into_error("idx")
    }

    #[test]
    fn status_decides_before_the_body() {
        for (status, body) in [
            (401, ""),
            (401, "Unauthorized"),
            (403, "<html><title>Forbidden</title></html>"),
            (
                401,
                r#"{"error":{"type":"security_exception","reason":"missing authentication"}}"#,
            ),
        ] {
            let e = error_of(status, body);
            assert!(
                matches!(e, Error::Auth { status: s, .. } if s == status),
                "{e:?}"
            );
            assert!(!e.is_transient());
        }
        let e = error_of(
            502,
            "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
        );
        assert!(e.is_transient(), "{e:?}");
        assert!(e.to_string().contains("502 Bad Gateway"), "{e}");
        assert!(e.to_string().contains("proxy"), "{e}");
        assert!(error_of(504, "").is_transient());
        assert!(error_of(429, "").is_transient());
        assert!(error_of(503, "Service Unavailable").is_transient());
        assert!(!error_of(500, "").is_transient());
        assert!(!error_of(400, "bad").is_transient());
        assert!(!error_of(405, "").is_transient());
        assert!(error_of(401, "").to_string().contains("Unauthorized"));
        assert!(error_of(403, "").to_string().contains("doctor"));
    }

    #[test]
    fn blocks_closed_indices_and_foreign_404s_are_named() {
        let block = json!({"error": {"root_cause": [{"type": "cluster_block_exception",
            "reason": "index [a] blocked by: [FORBIDDEN/8/index write (api)];"}],
            "type": "cluster_block_exception",
            "reason": "index [a] blocked by: [FORBIDDEN/8/index write (api)];"}, "status": 403});
        let e = error_of(403, &block.to_string());
        assert!(matches!(e, Error::Blocked { status: 403, .. }), "{e:?}");
        assert!(e.to_string().contains("index write (api)"), "{e}");
        let closed = json!({"error": {"type": "index_closed_exception", "reason": "closed",
            "index": "acc"}, "status": 400});
        assert!(matches!(error_of(400, &closed.to_string()), Error::IndexClosed(i) if i == "acc"));
        let e = error_of(404, "Unknown resource");
        assert!(matches!(e, Error::UnknownResource(_)), "{e:?}");
        let e = error_of(404, r#"{"message": "Not Found"}"#);
        assert!(matches!(e, Error::UnknownResource(_)), "{e:?}");
        let missing = json!({"error": {"type": "index_not_found_exception", "index": "x"}});
        assert!(matches!(
            error_of(404, &missing.to_string()),
            Error::IndexMissing(_)
        ));
    }

    #[test]
    fn the_root_cause_is_named() {
        let cause = json!({"type": "query_shard_exception",
            "reason": "No mapping found for [_shard_doc] in order to sort on"});
        let body = json!({"error": {"root_cause": [cause.clone()],
            "type": "search_phase_execution_exception", "reason": "all shards failed",
            "failed_shards": [{"shard": 0, "reason": cause}]}, "status": 400});
        let e = error_of(400, &body.to_string()).to_string();
        assert!(
            e.contains("all shards failed: No mapping found for [_shard_doc]"),
            "{e}"
        );
        assert!(e.contains("query_shard_exception"), "{e}");
        let shards_only = json!({"error": {"type": "search_phase_execution_exception",
            "reason": "all shards failed", "failed_shards": [{"shard": 0,
            "reason": {"type": "illegal_argument_exception", "reason": "bad sort"}}]}});
        assert_eq!(root_causes(&shards_only)[0].reason, "bad sort");
        let same = json!({"error": {"type": "x", "reason": "r", "root_cause": [{"type": "x", "reason": "r"}]}});
        assert_eq!(
            error_of(400, &same.to_string()).to_string(),
            "cluster error (HTTP 400): r"
        );
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            DATE,
            HeaderValue::from_static("Mon, 23 Nov 2026 10:00:00 GMT"),
        );
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Mon, 23 Nov 2026 10:00:07 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn mget_item_errors_keep_their_own_status() {
        let missing = json!({"_id": "a", "error": {"type": "index_not_found_exception", "reason": "no such index [x]", "index": "x"}});
        assert!(matches!(
            mget_item_error(&missing, "x"),
            Error::IndexMissing(_)
        ));
        let rejected = json!({"_id": "a", "error": {"type": "es_rejected_execution_exception", "reason": "queue full"}});
        assert!(mget_item_error(&rejected, "x").is_transient());
        let blocked = json!({"_id": "a", "error": {"type": "cluster_block_exception",
            "reason": "index [x] blocked by: [FORBIDDEN/7/index read (api)];"}});
        let e = mget_item_error(&blocked, "x");
        assert!(matches!(e, Error::Blocked { status: 403, .. }), "{e:?}");
        let starting = json!({"_id": "a", "error": {"type": "cluster_block_exception",
            "reason": "blocked by: [SERVICE_UNAVAILABLE/1/state not recovered / initialized];"}});
        assert!(mget_item_error(&starting, "x").is_transient());
        let breaker = json!({"_id": "a", "error": {"type": "circuit_breaking_exception",
            "reason": "[parent] Data too large", "durability": "PERMANENT"}});
        let e = mget_item_error(&breaker, "x");
        assert!(matches!(e, Error::Breaker { .. }), "{e:?}");
        assert!(!e.is_transient());
        let transient = json!({"_id": "a", "error": {"type": "circuit_breaking_exception",
            "reason": "[parent] Data too large", "durability": "TRANSIENT"}});
        assert!(mget_item_error(&transient, "x").is_throttle());
        let odd =
            json!({"_id": "a", "error": {"type": "illegal_argument_exception", "reason": "bad"}});
        let e = mget_item_error(&odd, "x");
        assert!(!e.is_transient());
        assert!(matches!(e, Error::Cluster { status: 400, .. }), "{e:?}");
    }
}
