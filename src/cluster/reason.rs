//! What an error answer says, in one line: its reason refined by its first
//! root cause (`error.root_cause`, else each failed shard's), AWS's own
//! `Message`, or, for a body that is not JSON, the title of a proxy's HTML
//! page, the first line of plain text, or the status's standard phrase.
//! `response` classifies the answer by its status; this only words it.

use serde_json::Value;

/// One root cause of an error answer: the exception's type and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCause {
    /// `query_shard_exception`, `cluster_block_exception`, ...
    pub kind: String,
    /// What the cluster said.
    pub reason: String,
}

/// The root causes of an error answer: `error.root_cause`, else each failed
/// shard's reason (a search that failed on every shard says only "all shards
/// failed" at the top).
pub fn root_causes(body: &Value) -> Vec<RootCause> {
    let of = |v: &Value| {
        Some(RootCause {
            kind: v.get("type")?.as_str()?.to_string(),
            reason: v
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        })
    };
    let listed = |pointer: &str, inner: &str| -> Vec<RootCause> {
        body.pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| of(c.pointer(inner).unwrap_or(c)))
            .collect()
    };
    let mut causes = listed("/error/root_cause", "");
    if causes.is_empty() {
        causes = listed("/error/failed_shards", "/reason");
    }
    causes.dedup();
    causes
}

/// The error's reason, with its first root cause when that says more
/// ("all shards failed: No mapping found for [_shard_doc] in order to sort
/// on (query_shard_exception)").
pub(super) fn json_reason(status: u16, body: &Value) -> String {
    let top = json_top_reason(status, body);
    match root_causes(body).into_iter().next() {
        Some(c) if !c.reason.is_empty() && !top.contains(&c.reason) => {
            format!("{top}: {} ({})", c.reason, c.kind)
        }
        _ => top,
    }
}

fn json_top_reason(status: u16, body: &Value) -> String {
    body.pointer("/error/reason")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            body.get("error")
                .and_then(Value::as_str)
                .or_else(|| super::denial::aws_message(body))
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            if body.is_null() {
                summarize_text(status, "")
            } else {
                truncate(&body.to_string())
            }
        })
}

/// A one-line reason for a body that is not JSON: the title of an HTML page
/// (what a load balancer answers), the first line of plain text, or the
/// status's standard phrase for an empty body; an empty 403 (the answer to
/// a `HEAD`) says what is missing, since its body does not. (Which
/// credential to check after a 401 is added where the kind is known,
/// [`super::Cluster::send`].)
pub(super) fn summarize_text(status: u16, text: &str) -> String {
    let summary = summarize_body(status, text);
    match status {
        403 if text.trim().is_empty() => format!("{summary}: {MISSING_PRIVILEGE}"),
        _ => summary,
    }
}
/// What a 403 without a reason of its own means.
const MISSING_PRIVILEGE: &str =
    "the credentials lack a privilege this request needs (`estx-tui doctor` lists them)";

fn summarize_body(status: u16, text: &str) -> String {
    let text = text.trim();
    let phrase = elasticsearch::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("no reason given");
    if text.is_empty() {
        return format!("{phrase} (empty answer)");
    }
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<body")
    {
        let title = lower
            .find("<title>")
            .and_then(|start| {
                let from = start + "<title>".len();
                lower[from..]
                    .find("</title>")
                    .map(|len| text[from..from + len].trim().to_string())
            })
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| phrase.to_string());
        return format!("{title} (HTML answer, probably from a proxy or load balancer)");
    }
    let first = text.lines().next().unwrap_or_default();
    truncate(first)
}

/// `s`, cut to 300 bytes (at a character boundary) with an ellipsis.
pub(super) fn truncate(s: &str) -> String {
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_string()
    }
}
