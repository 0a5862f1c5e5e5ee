//! Raw JSON requests for what the typed client calls do not cover and the
//! read side needs to learn about a cluster it did not create: the root
//! banner, mappings, settings, alias resolution, shard health, privileges,
//! point-in-time contexts and mapping upgrades; and whether it refuses an
//! index named in a multi-request body (`scope`). [`Cluster::raw`] returns
//! every answer with its HTTP status so callers can tell "not supported
//! here" (no security plugin, no `_resolve`) from a failure; the others
//! type errors as every request does. Reads go through the same busy-retry
//! and clock as the typed calls.

use super::response::{check, Answer};
use super::Cluster;
use crate::error::{Error, Result};
use elasticsearch::http::headers::HeaderMap;
use elasticsearch::http::request::JsonBody;
use elasticsearch::http::response::Response;
use elasticsearch::http::Method;
use elasticsearch::MgetParts;
use serde_json::{json, Value};

impl Cluster {
    /// Sends `method path`; a `GET`/`HEAD`, or any request the caller says
    /// only reads (`read_budget`: retried for that long), is retried on a
    /// busy answer like every read.
    async fn send_raw(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        read_budget: Option<std::time::Duration>,
    ) -> Result<Response> {
        let make = || {
            self.client.send::<JsonBody<Value>, ()>(
                method,
                path,
                HeaderMap::new(),
                None,
                body.clone().map(Into::into),
                None,
            )
        };
        if let Some(budget) = read_budget {
            self.send_read_within(make, budget).await
        } else if matches!(method, Method::Get | Method::Head) {
            self.send_read(make).await
        } else {
            self.send(make()).await
        }
    }

    /// Sends `method path` with an optional JSON body; returns the status and
    /// the JSON body, whatever the status: `Null` when empty, the text as a
    /// JSON string when it is not JSON (OpenSearch security's `Unauthorized`,
    /// a proxy's page), so [`Self::error_for`] can still say what it was.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value)> {
        let a = Answer::read(self.send_raw(method, path, body, None).await?).await?;
        Ok((a.status, a.json_or_text()))
    }

    /// [`Self::raw`] for a `POST` that only reads (opening a point-in-time,
    /// a page of it, the first page of a scroll, a count): retried on a busy
    /// answer like every read. Not for a scroll's later pages: asking again
    /// after an answer was lost would skip a page.
    pub async fn raw_read(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value)> {
        let budget = Some(self.read_budget);
        let a = Answer::read(self.send_raw(method, path, body, budget).await?).await?;
        Ok((a.status, a.json_or_text()))
    }

    /// [`Self::raw_read`] for a page of a scan (a point-in-time's page, a
    /// scroll's first): retried [`super::SCAN_PAGE_FACTOR`] times as long
    /// as a read, since losing one page loses the whole scan.
    pub async fn raw_page(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value)> {
        let budget = Some(self.read_budget * super::SCAN_PAGE_FACTOR);
        let a = Answer::read(self.send_raw(method, path, body, budget).await?).await?;
        Ok((a.status, a.json_or_text()))
    }

    /// `GET path` expecting success; errors are typed as for every request.
    pub async fn get_json(&self, path: &str, what: &str) -> Result<Value> {
        Answer::read(self.send_raw(Method::Get, path, None, None).await?)
            .await?
            .into_json(what)
    }

    /// `method path` with a JSON body, expecting success.
    pub async fn send_json(
        &self,
        method: Method,
        path: &str,
        body: Value,
        what: &str,
    ) -> Result<Value> {
        Answer::read(self.send_raw(method, path, Some(body), None).await?)
            .await?
            .into_json(what)
    }

    /// The typed error for a non-2xx `status` and `body` (for [`Self::raw`] callers).
    pub fn error_for(&self, status: u16, body: &Value, what: &str) -> crate::Error {
        super::response::error_from(status, body, what)
    }

    /// Asks whether the cluster refuses an index named in a multi-request
    /// body (`rest.action.multi.allow_explicit_index: false`, see `scope`),
    /// with a harmless realtime `_mget` of one id that does not exist
    /// naming `index` in its body; a refusal is remembered as a refused
    /// request would be. `Some(reason)`: refused, with the product's words.
    pub async fn probe_explicit_index(&self, index: &str) -> Result<Option<String>> {
        let body = json!({"docs": [{"_index": index, "_id": "estx-doctor-probe"}]});
        let resp = self
            .send_read(|| {
                self.client
                    .mget(MgetParts::None)
                    .realtime(true)
                    .body(body.clone())
                    .send()
            })
            .await?;
        match check(resp, index).await {
            Err(Error::ExplicitIndexRefused { reason }) => {
                self.scope.refused();
                Ok(Some(reason))
            }
            // Any other refusal (a missing index, a role) is not this
            // setting, and other checks name it.
            _ => Ok(None),
        }
    }
}
