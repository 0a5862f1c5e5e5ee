//! Index administration: refresh, existence, creation, cluster health.

use super::response::{check, error_from, Answer};
use super::Cluster;
use crate::error::{Error, Result};
use elasticsearch::cluster::ClusterHealthParts;
use elasticsearch::http::Method;
use elasticsearch::indices::{IndicesCreateParts, IndicesExistsParts, IndicesRefreshParts};
use serde_json::Value;
use std::time::Duration;

/// How long `_cluster/health` may wait for the master (`timeout` and
/// `master_timeout`); the request itself is abandoned a second later. Health
/// is a hint on the dashboard: it must never hold a poll up.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// What `_cluster/health` said, typed so that "no elected master" is a state
/// to show, not an error or a stalled poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterHealth {
    /// The master answered.
    Reported {
        /// `green`, `yellow` or `red`.
        status: String,
        /// Unassigned shards (replicas on `yellow`, primaries too on `red`).
        unassigned_shards: u64,
        /// Nodes in the cluster.
        number_of_nodes: u64,
    },
    /// No master is elected (or none answered within [`HEALTH_TIMEOUT`]):
    /// writes will fail or hang until one is.
    NoMaster {
        /// What the cluster said.
        reason: String,
    },
}

/// A `_cluster/health` request running alongside other work (the poll's
/// searches); dropping it cancels the request, so nothing outlives the poll.
#[derive(Debug)]
pub struct HealthProbe(tokio::task::JoinHandle<Result<ClusterHealth>>);

impl HealthProbe {
    /// Waits for the answer (at most [`HEALTH_TIMEOUT`] plus a second).
    pub async fn finish(mut self) -> Result<ClusterHealth> {
        match (&mut self.0).await {
            Ok(answer) => answer,
            Err(e) => Err(Error::Unreachable(format!("health request stopped: {e}"))),
        }
    }
}

impl Drop for HealthProbe {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl ClusterHealth {
    /// The short label the dashboard header shows: the colour, or `no master`.
    pub fn label(&self) -> &str {
        match self {
            ClusterHealth::Reported { status, .. } => status,
            ClusterHealth::NoMaster { .. } => "no master",
        }
    }

    /// Reads a health answer (status and body).
    fn from_answer(status: u16, body: &Value) -> Option<ClusterHealth> {
        let kind = body
            .pointer("/error/type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let reason = || {
            body.pointer("/error/reason")
                .and_then(Value::as_str)
                .unwrap_or(kind)
                .to_string()
        };
        let master_missing = |key: &str| body.get(key) == Some(&Value::Bool(false));
        if kind.contains("master_not_discovered")
            || kind.contains("cluster_manager_not_discovered")
            || (kind == "cluster_block_exception" && reason().contains("no master"))
            || (kind == "cluster_block_exception" && reason().contains("no cluster-manager"))
        {
            return Some(ClusterHealth::NoMaster { reason: reason() });
        }
        if master_missing("discovered_master") || master_missing("discovered_cluster_manager") {
            return Some(ClusterHealth::NoMaster {
                reason: "the cluster reports no discovered master".into(),
            });
        }
        // 408: the health wait timed out; the body is still a health report.
        if !(200..300).contains(&status) && status != 408 {
            return None;
        }
        let health_status = body.get("status").and_then(Value::as_str)?;
        let count = |k: &str| body.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(ClusterHealth::Reported {
            status: health_status.to_string(),
            unassigned_shards: count("unassigned_shards"),
            number_of_nodes: count("number_of_nodes"),
        })
    }
}

impl Cluster {
    /// Makes recent writes visible to search (tests; the cluster does it by itself every second).
    pub async fn refresh(&self, index: &str) -> Result<()> {
        let target = [index];
        let indices = self.client.indices();
        let resp = self
            .send(indices.refresh(IndicesRefreshParts::Index(&target)).send())
            .await?;
        check(resp, index).await.map(|_| ())
    }

    /// Whether the index exists. A `HEAD` refused (401/403) or not found
    /// (404) carries no body,
    /// so the same question is asked once more with `GET` for the cluster's
    /// reason (which names the user and the missing privilege).
    pub async fn index_exists(&self, index: &str) -> Result<bool> {
        let target = [index];
        let indices = self.client.indices();
        let resp = self
            .send_read(|| indices.exists(IndicesExistsParts::Index(&target)).send())
            .await?;
        match resp.status_code().as_u16() {
            200 => Ok(true),
            // A `HEAD` 404 has no body: only the cluster's own `GET` answer
            // (`index_not_found_exception`) tells a missing index from a
            // proxy that does not know the path.
            404 => match self.raw(Method::Get, &format!("/{index}"), None).await? {
                (200, _) => Ok(true),
                (status, body) => match error_from(status, &body, index) {
                    Error::IndexMissing(_) => Ok(false),
                    other => Err(other),
                },
            },
            401 | 403 => {
                let head = Answer::read(resp).await?.into_error(index);
                match self.raw(Method::Get, &format!("/{index}"), None).await? {
                    (200, _) => Ok(true),
                    (404, _) => Ok(false),
                    (status @ (401 | 403), body) if !body.is_null() => {
                        Err(error_from(status, &body, index))
                    }
                    _ => Err(head),
                }
            }
            _ => Err(Answer::read(resp).await?.into_error(index)),
        }
    }

    /// Creates an index with `body` (settings and mappings); `false` if it already existed.
    pub async fn create_index(&self, index: &str, body: Value) -> Result<bool> {
        let indices = self.client.indices();
        let resp = self
            .send(
                indices
                    .create(IndicesCreateParts::Index(index))
                    .body(body)
                    .send(),
            )
            .await?;
        if resp.status_code().as_u16() == 400 {
            let body = Answer::read(resp).await?.json;
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

    /// Starts [`Cluster::health`] in the background (needs a tokio runtime).
    pub fn start_health(&self) -> HealthProbe {
        let cluster = self.clone();
        HealthProbe(tokio::spawn(async move { cluster.health().await }))
    }

    /// `_cluster/health`, waiting at most [`HEALTH_TIMEOUT`] for the master
    /// (`timeout`, `master_timeout`) and abandoning the request a second
    /// later. No elected master is [`ClusterHealth::NoMaster`], not an error.
    /// Not retried: the dashboard asks again at its next poll.
    pub async fn health(&self) -> Result<ClusterHealth> {
        let wait = format!("{}ms", HEALTH_TIMEOUT.as_millis());
        let cluster = self.client.cluster();
        let request = cluster
            .health(ClusterHealthParts::None)
            .timeout(&wait)
            .master_timeout(&wait)
            .request_timeout(HEALTH_TIMEOUT + Duration::from_secs(1))
            .send();
        let answer = match self.send(request).await {
            Ok(resp) => Answer::read(resp).await?,
            Err(Error::Unreachable(why)) if why.contains("timed out") => {
                return Ok(ClusterHealth::NoMaster {
                    reason: format!("no health answer within {HEALTH_TIMEOUT:?}: {why}"),
                })
            }
            Err(e) => return Err(e),
        };
        match ClusterHealth::from_answer(answer.status, &answer.json) {
            Some(h) => Ok(h),
            None if answer.is_success() => Err(Error::Decode(format!(
                "health answer without status: {}",
                answer.json
            ))),
            None => Err(answer.into_error("_cluster")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::admin::*;
    use serde_json::json;

    #[test]
    fn no_master_is_a_state() {
        let es = json!({"error": {"type": "master_not_discovered_exception", "reason": null}, "status": 503});
        assert!(matches!(
            ClusterHealth::from_answer(503, &es),
            Some(ClusterHealth::NoMaster { .. })
        ));
        let os =
            json!({"error": {"type": "cluster_manager_not_discovered_exception", "reason": "x"}});
        assert_eq!(
            ClusterHealth::from_answer(503, &os).map(|h| h.label().to_string()),
            Some("no master".into())
        );
        let green = json!({"status": "green", "number_of_nodes": 3, "unassigned_shards": 0});
        assert_eq!(
            ClusterHealth::from_answer(200, &green),
            Some(ClusterHealth::Reported {
                status: "green".into(),
                unassigned_shards: 0,
                number_of_nodes: 3
            })
        );
        assert_eq!(ClusterHealth::from_answer(500, &json!({})), None);
    }
}
