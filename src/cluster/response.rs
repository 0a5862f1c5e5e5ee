//! Turning HTTP answers and transport failures into the library's typed
//! errors and values.

use super::VersionedDoc;
use crate::error::{Error, Result};
use elasticsearch::http::response::Response;
use serde_json::Value;

pub(super) fn transport(e: elasticsearch::Error) -> Error {
    match e.status_code() {
        Some(s) => Error::Cluster {
            status: s.as_u16(),
            reason: e.to_string(),
        },
        None => Error::Unreachable(with_causes(&e)),
    }
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

pub(super) async fn read_json(resp: Response) -> Result<Value> {
    let text = resp.text().await.map_err(transport)?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| Error::Decode(format!("{e}: {}", truncate(&text))))
}

pub(super) async fn check(resp: Response, index: &str) -> Result<Value> {
    let status = resp.status_code().as_u16();
    let body = read_json(resp).await?;
    if (200..300).contains(&status) {
        Ok(body)
    } else {
        Err(error_from(status, &body, index))
    }
}

pub(super) fn error_from(status: u16, body: &Value, index: &str) -> Error {
    let kind = body
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let reason = body
        .pointer("/error/reason")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            body.get("error")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| truncate(&body.to_string()));
    if kind == "index_not_found_exception" {
        let missing = body
            .pointer("/error/index")
            .and_then(Value::as_str)
            .unwrap_or(index)
            .to_string();
        return Error::IndexMissing(missing);
    }
    match status {
        401 | 403 => Error::Auth { status, reason },
        _ => Error::Cluster { status, reason },
    }
}

pub(super) fn versioned(id: &str, body: &Value) -> Result<VersionedDoc> {
    let seq_no = body.get("_seq_no").and_then(Value::as_i64);
    let primary_term = body.get("_primary_term").and_then(Value::as_i64);
    let source = body.get("_source").and_then(Value::as_object).cloned();
    match (seq_no, primary_term, source) {
        (Some(seq_no), Some(primary_term), Some(source)) => Ok(VersionedDoc {
            id: id.to_string(),
            seq_no,
            primary_term,
            source,
        }),
        _ => Err(Error::Decode(format!(
            "document `{id}` answer lacks _seq_no/_primary_term/_source: {}",
            truncate(&body.to_string())
        ))),
    }
}

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
