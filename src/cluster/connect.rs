//! Connection options and building the official client from them.
//!
//! TLS trusts the operating system's certificate store and the built-in
//! (Mozilla) roots, plus `--ca-cert` when given. Proxies come from the
//! environment as curl reads them: `HTTPS_PROXY`/`https_proxy` for https
//! URLs, `HTTP_PROXY`/`http_proxy` for http, `ALL_PROXY`, and hosts listed in
//! `NO_PROXY`/`no_proxy` go direct. Secrets are trimmed of surrounding
//! whitespace (mounted secret files end with a newline) and validated before
//! anything is sent: a bad one is [`Error::Credentials`], never a panic in
//! the HTTP client.

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
    // No `disable_proxy`: the HTTP client then reads the proxy variables.
    let mut builder = TransportBuilder::new(pool).timeout(opts.timeout);
    if let Some(credentials) = credentials(opts)? {
        builder = builder.auth(credentials);
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
        // `Full` adds this CA to the built-in and system roots (it does not
        // replace them).
        builder = builder.cert_validation(CertificateValidation::Full(cert));
    }
    let transport = builder
        .build()
        .map_err(|e| Error::Invalid(format!("cannot build the HTTP client: {e}")))?;
    Ok(Elasticsearch::new(transport))
}

/// Environment variable names the secrets come from (for messages).
const USER_VAR: &str = "ESTX_USER (--user)";
const PASSWORD_VAR: &str = "ESTX_PASSWORD";
const API_KEY_VAR: &str = "ESTX_API_KEY";

/// The credentials to send, trimmed and validated; `None` when none are set.
/// An API key takes precedence over user and password.
pub(super) fn credentials(opts: &ConnectOptions) -> Result<Option<Credentials>> {
    let trimmed = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    if let Some(key) = trimmed(&opts.api_key) {
        return api_key(&key).map(Some);
    }
    let Some(user) = trimmed(&opts.user) else {
        return Ok(None);
    };
    if let Some(bad) = user.chars().find(|c| c.is_control()) {
        return Err(Error::Credentials {
            var: USER_VAR,
            problem: format!("contains the control character {bad:?}"),
        });
    }
    if user.contains(':') {
        return Err(Error::Credentials {
            var: USER_VAR,
            problem: "contains `:`, which basic authentication cannot carry".into(),
        });
    }
    let password = trimmed(&opts.password).ok_or_else(|| Error::Credentials {
        var: PASSWORD_VAR,
        problem: format!("not set (or empty), but user `{user}` was given"),
    })?;
    if password.chars().any(|c| c.is_control()) {
        return Err(Error::Credentials {
            var: PASSWORD_VAR,
            problem: "contains a control character (a line break inside the value?)".into(),
        });
    }
    Ok(Some(Credentials::Basic(user, password)))
}

/// An API key as Elasticsearch prints it: the `encoded` value (base64 of
/// `id:api_key`), or `id:api_key` itself.
fn api_key(key: &str) -> Result<Credentials> {
    let invalid = |problem: String| Error::Credentials {
        var: API_KEY_VAR,
        problem,
    };
    if key.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid(
            "contains whitespace or a control character inside the value; expected the \
             base64 `encoded` key or `id:api_key`"
                .into(),
        ));
    }
    if let Some((id, secret)) = key.split_once(':') {
        if id.is_empty() || secret.is_empty() {
            return Err(invalid("`id:api_key` with an empty part".into()));
        }
        return Ok(Credentials::ApiKey(id.to_string(), secret.to_string()));
    }
    let base64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_');
    if let Some(at) = key.chars().position(|c| !base64(c)) {
        return Err(invalid(format!(
            "character {} is not base64; expected the `encoded` key or `id:api_key`",
            at + 1
        )));
    }
    Ok(Credentials::EncodedApiKey(key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(user: Option<&str>, password: Option<&str>, key: Option<&str>) -> ConnectOptions {
        ConnectOptions {
            user: user.map(str::to_string),
            password: password.map(str::to_string),
            api_key: key.map(str::to_string),
            ..ConnectOptions::new("http://localhost:9200")
        }
    }

    fn problem(o: &ConnectOptions) -> String {
        match credentials(o) {
            Err(e @ Error::Credentials { .. }) => e.to_string(),
            other => panic!("expected a credentials error, got {other:?}"),
        }
    }

    #[test]
    fn secrets_are_trimmed() {
        let got = credentials(&opts(None, None, Some("c2VjcmV0OmtleQ==\n"))).unwrap();
        assert!(matches!(got, Some(Credentials::EncodedApiKey(k)) if k == "c2VjcmV0OmtleQ=="));
        let got = credentials(&opts(Some(" elastic\n"), Some("pw\r\n"), None)).unwrap();
        assert!(matches!(got, Some(Credentials::Basic(u, p)) if u == "elastic" && p == "pw"));
        let got = credentials(&opts(None, None, Some("id:secret"))).unwrap();
        assert!(matches!(got, Some(Credentials::ApiKey(i, s)) if i == "id" && s == "secret"));
        assert!(credentials(&opts(None, None, Some(" \n")))
            .unwrap()
            .is_none());
        // A key wins over user and password.
        let got = credentials(&opts(Some("u"), None, Some("abc"))).unwrap();
        assert!(matches!(got, Some(Credentials::EncodedApiKey(_))));
    }

    #[test]
    fn invalid_secrets_are_named_not_shown() {
        let e = problem(&opts(None, None, Some("abc\ndef")));
        assert!(e.contains("ESTX_API_KEY"), "{e}");
        assert!(!e.contains("abc"), "the secret leaked: {e}");
        assert!(problem(&opts(None, None, Some("é"))).contains("not base64"));
        assert!(problem(&opts(Some("a:b"), Some("p"), None)).contains("`:`"));
        assert!(problem(&opts(Some("u"), None, None)).contains("ESTX_PASSWORD"));
        assert!(problem(&opts(Some("u"), Some("p\u{7}w"), None)).contains("control"));
        assert!(build_client(&opts(None, None, Some("a b"))).is_err());
    }

    #[test]
    fn https_builds_with_the_system_store_and_a_ca_file_is_checked() {
        let mut o = ConnectOptions::new("https://es.internal:9200");
        assert!(build_client(&o).is_ok(), "system and built-in roots load");
        let dir = tempfile::tempdir().unwrap();
        let not_pem = dir.path().join("ca.pem");
        std::fs::write(&not_pem, "not a certificate").unwrap();
        o.ca_cert = Some(not_pem);
        let e = build_client(&o).err().unwrap().to_string();
        assert!(e.contains("--ca-cert"), "{e}");
        o.ca_cert = Some(dir.path().join("missing.pem"));
        let e = build_client(&o).err().unwrap().to_string();
        assert!(e.contains("cannot read --ca-cert"), "{e}");
    }
}
