//! Who the cluster says we are: the authenticated user, for the operator
//! audit trail. Elasticsearch answers `_security/_authenticate`; OpenSearch's
//! security plugin answers `_plugins/_security/authinfo`. A cluster without
//! security answers neither (an error or 404), which is not a failure.

use super::response::Answer;
use super::Cluster;
use crate::error::Result;
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
    /// cluster refuses (401) are an [`crate::Error::Auth`]; a 403 only means this
    /// user may not call that endpoint, so the next one is tried.
    pub async fn authenticated_user(&self) -> Result<Option<String>> {
        for (path, field) in ENDPOINTS {
            let resp = self
                .send_read(|| {
                    self.client.send::<(), ()>(
                        Method::Get,
                        path,
                        HeaderMap::new(),
                        None,
                        None,
                        None,
                    )
                })
                .await?;
            let answer = Answer::read(resp).await?;
            if answer.status == 401 {
                return Err(answer.into_error("_security"));
            }
            if answer.is_success() {
                if let Some(user) = answer.json.get(field).and_then(Value::as_str) {
                    return Ok(Some(user.to_string()));
                }
            }
        }
        Ok(None)
    }
}
