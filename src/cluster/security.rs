//! Who the cluster says we are: the authenticated user, for the operator
//! audit trail. Elasticsearch answers `_security/_authenticate`; OpenSearch's
//! security plugin answers `_plugins/_security/authinfo`. A cluster without
//! security answers neither (an error or 404), which is not a failure.

use super::response::{read_json, transport};
use super::Cluster;
use crate::error::{Error, Result};
use elasticsearch::http::headers::HeaderMap;
use elasticsearch::http::Method;
use serde_json::Value;

/// The endpoints tried, in order, with the field naming the user.
const ENDPOINTS: [(&str, &str); 2] = [
    ("/_security/_authenticate", "username"),
    ("/_plugins/_security/authinfo", "user_name"),
];

impl Cluster {
    /// The user the cluster authenticated this handle as; `None` when
    /// security is off (no endpoint answers with a user). Credentials the
    /// cluster refuses (401) are an [`Error::Auth`]; a 403 only means this
    /// user may not call that endpoint, so the next one is tried.
    pub async fn authenticated_user(&self) -> Result<Option<String>> {
        for (path, field) in ENDPOINTS {
            let resp = self
                .client
                .send::<(), ()>(Method::Get, path, HeaderMap::new(), None, None, None)
                .await
                .map_err(transport)?;
            let status = resp.status_code().as_u16();
            let body = read_json(resp).await.unwrap_or(Value::Null);
            if status == 401 {
                let reason = body
                    .pointer("/error/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("credentials refused")
                    .to_string();
                return Err(Error::Auth { status, reason });
            }
            if (200..300).contains(&status) {
                if let Some(user) = body.get(field).and_then(Value::as_str) {
                    return Ok(Some(user.to_string()));
                }
            }
        }
        Ok(None)
    }
}
