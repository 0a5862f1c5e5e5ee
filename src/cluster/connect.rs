//! Connection options and building the official client from them.

use crate::error::{Error, Result};
use elasticsearch::auth::Credentials;
use elasticsearch::cert::{Certificate, CertificateValidation};
use elasticsearch::http::transport::{SingleNodeConnectionPool, TransportBuilder};
use elasticsearch::Elasticsearch;
use std::path::PathBuf;
use std::time::Duration;

/// How to reach the cluster. Secrets come from the environment only (see the
/// CLI), never from flags, so they do not end up in shell history.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Base URL, e.g. `https://es.internal:9200`.
    pub url: String,
    /// Basic-auth user.
    pub user: Option<String>,
    /// Basic-auth password (from `ESTX_PASSWORD`).
    pub password: Option<String>,
    /// API key, base64 `id:key` as Elasticsearch prints it (from `ESTX_API_KEY`).
    pub api_key: Option<String>,
    /// PEM file of the CA that signed the cluster's certificate.
    pub ca_cert: Option<PathBuf>,
    /// Skip certificate validation (testing only).
    pub insecure: bool,
    /// Per-request timeout; a timed-out write has an unknown outcome.
    pub timeout: Duration,
}

impl ConnectOptions {
    /// Options for an unauthenticated cluster at `url` (tests, the demo).
    pub fn new(url: impl Into<String>) -> ConnectOptions {
        ConnectOptions {
            url: url.into(),
            user: None,
            password: None,
            api_key: None,
            ca_cert: None,
            insecure: false,
            timeout: Duration::from_secs(10),
        }
    }
}

/// Builds the client. Fails on a bad URL, an unreadable CA file, or a user
/// without a password; never touches the network.
pub(super) fn build_client(opts: &ConnectOptions) -> Result<Elasticsearch> {
    let url = url::Url::parse(&opts.url)
        .map_err(|e| Error::Invalid(format!("invalid --url `{}`: {e}", opts.url)))?;
    let pool = SingleNodeConnectionPool::new(url);
    let mut builder = TransportBuilder::new(pool)
        .timeout(opts.timeout)
        .disable_proxy();
    if let Some(key) = &opts.api_key {
        builder = builder.auth(Credentials::EncodedApiKey(key.clone()));
    } else if let Some(user) = &opts.user {
        let password = opts.password.clone().ok_or_else(|| {
            Error::Invalid(format!(
                "--user `{user}` given but ESTX_PASSWORD is not set"
            ))
        })?;
        builder = builder.auth(Credentials::Basic(user.clone(), password));
    }
    if opts.insecure {
        builder = builder.cert_validation(CertificateValidation::None);
    } else if let Some(path) = &opts.ca_cert {
        let pem = std::fs::read(path).map_err(|e| {
            Error::Invalid(format!("cannot read --ca-cert {}: {e}", path.display()))
        })?;
        let cert = Certificate::from_pem(&pem).map_err(|e| {
            Error::Invalid(format!(
                "--ca-cert {} is not a PEM certificate: {e}",
                path.display()
            ))
        })?;
        builder = builder.cert_validation(CertificateValidation::Full(cert));
    }
    let transport = builder
        .build()
        .map_err(|e| Error::Invalid(format!("cannot build the HTTP client: {e}")))?;
    Ok(Elasticsearch::new(transport))
}
