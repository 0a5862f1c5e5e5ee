//! How to reach a cluster ([`ConnectOptions`]): URL, credential, signing,
//! trust and timeout, as the CLI and profiles fill them in.

use super::sigv4::AwsSigning;
use std::path::PathBuf;
use std::time::Duration;

/// How to reach the cluster. Secrets come from the environment only (see the
/// CLI), never from flags, so they do not end up in shell history.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Base URL, e.g. `https://es.internal:9200` (an Elastic Cloud ID is
    /// decoded into it by the CLI, see [`super::cloud_id_url`]).
    pub url: String,
    /// Basic-auth user.
    pub user: Option<String>,
    /// Basic-auth password (from `ESTX_PASSWORD`).
    pub password: Option<String>,
    /// API key, base64 `id:key` as Elasticsearch prints it (from `ESTX_API_KEY`).
    pub api_key: Option<String>,
    /// Bearer token: a service-account token, an OAuth2 access token or a
    /// JWT (from `ESTX_BEARER_TOKEN`).
    pub bearer_token: Option<String>,
    /// Sign every request with AWS SigV4 (Amazon OpenSearch Service or
    /// Serverless) instead of sending a credential header.
    pub aws: Option<AwsSigning>,
    /// PEM file of the CA that signed the cluster's certificate.
    pub ca_cert: Option<PathBuf>,
    /// Skip certificate validation (testing only).
    pub insecure: bool,
    /// Per-request timeout; a timed-out write has an unknown outcome.
    pub timeout: Duration,
    /// How long one read may be retried in all when the cluster is busy or
    /// does not answer (a scan page: [`super::SCAN_PAGE_FACTOR`] times it).
    pub retry_budget: Duration,
}

impl ConnectOptions {
    /// Options for an unauthenticated cluster at `url` (tests, the demo).
    pub fn new(url: impl Into<String>) -> ConnectOptions {
        ConnectOptions {
            url: url.into(),
            user: None,
            password: None,
            api_key: None,
            bearer_token: None,
            aws: None,
            ca_cert: None,
            insecure: false,
            timeout: Duration::from_secs(10),
            retry_budget: super::DEFAULT_READ_BUDGET,
        }
    }
}
