//! Index administration: refresh, existence, creation, cluster health.

use super::response::{check, error_from, read_json, transport};
use super::Cluster;
use crate::error::Result;
use elasticsearch::indices::{IndicesCreateParts, IndicesExistsParts, IndicesRefreshParts};
use serde_json::Value;

impl Cluster {
    /// Makes recent writes visible to search (tests; the cluster does it by itself every second).
    pub async fn refresh(&self, index: &str) -> Result<()> {
        let resp = self
            .client
            .indices()
            .refresh(IndicesRefreshParts::Index(&[index]))
            .send()
            .await
            .map_err(transport)?;
        check(resp, index).await.map(|_| ())
    }

    /// Whether the index exists.
    pub async fn index_exists(&self, index: &str) -> Result<bool> {
        let resp = self
            .client
            .indices()
            .exists(IndicesExistsParts::Index(&[index]))
            .send()
            .await
            .map_err(transport)?;
        match resp.status_code().as_u16() {
            200 => Ok(true),
            404 => Ok(false),
            s => Err(error_from(s, &Value::Null, index)),
        }
    }

    /// Creates an index with `body` (settings and mappings); `false` if it already existed.
    pub async fn create_index(&self, index: &str, body: Value) -> Result<bool> {
        let resp = self
            .client
            .indices()
            .create(IndicesCreateParts::Index(index))
            .body(body)
            .send()
            .await
            .map_err(transport)?;
        if resp.status_code().as_u16() == 400 {
            let body = read_json(resp).await?;
            let kind = body
                .pointer("/error/type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if kind.contains("already_exists") {
                return Ok(false);
            }
            return Err(error_from(400, &body, index));
        }
        check(resp, index).await.map(|_| true)
    }

    /// `_cluster/health` answer.
    pub async fn health(&self) -> Result<Value> {
        let resp = self
            .client
            .cluster()
            .health(elasticsearch::cluster::ClusterHealthParts::None)
            .send()
            .await
            .map_err(transport)?;
        check(resp, "_cluster").await
    }
}
