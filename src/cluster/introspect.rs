//! Raw JSON requests for what the typed client calls do not cover and the
//! read side needs to learn about a cluster it did not create: the root
//! banner, mappings, settings, alias resolution, shard health, privileges,
//! point-in-time contexts and mapping upgrades. Each answer comes back with
//! its HTTP status so callers can tell "not supported here" (no security
//! plugin, no `_resolve`) from a failure.

use super::response::{check, read_json, transport};
use super::Cluster;
use crate::error::Result;
use elasticsearch::http::headers::HeaderMap;
use elasticsearch::http::Method;
use serde_json::Value;

impl Cluster {
    /// Sends `method path` with an optional JSON body; returns the status and
    /// the decoded body (`Null` when empty), whatever the status.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value)> {
        let resp = self
            .client
            .send::<elasticsearch::http::request::JsonBody<Value>, ()>(
                method,
                path,
                HeaderMap::new(),
                None,
                body.map(Into::into),
                None,
            )
            .await
            .map_err(transport)?;
        let status = resp.status_code().as_u16();
        // Some endpoints answer plain text when absent ("no handler found").
        let body = match read_json(resp).await {
            Ok(v) => v,
            Err(crate::Error::Decode(text)) => Value::String(text),
            Err(e) => return Err(e),
        };
        Ok((status, body))
    }

    /// `GET path` expecting success; errors are typed as for every request.
    pub async fn get_json(&self, path: &str, what: &str) -> Result<Value> {
        let resp = self
            .client
            .send::<elasticsearch::http::request::JsonBody<Value>, ()>(
                Method::Get,
                path,
                HeaderMap::new(),
                None,
                None,
                None,
            )
            .await
            .map_err(transport)?;
        check(resp, what).await
    }

    /// `method path` with a JSON body, expecting success.
    pub async fn send_json(
        &self,
        method: Method,
        path: &str,
        body: Value,
        what: &str,
    ) -> Result<Value> {
        let resp = self
            .client
            .send::<elasticsearch::http::request::JsonBody<Value>, ()>(
                method,
                path,
                HeaderMap::new(),
                None,
                Some(body.into()),
                None,
            )
            .await
            .map_err(transport)?;
        check(resp, what).await
    }
}
