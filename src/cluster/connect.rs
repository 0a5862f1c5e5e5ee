//! Building the official client from the connection options.
//!
//! TLS trusts the operating system's certificate store and the built-in
//! (Mozilla) roots, plus `--ca-cert` when given. Proxies come from the
//! environment as curl reads them: `HTTPS_PROXY`/`https_proxy` for https
//! URLs, `HTTP_PROXY`/`http_proxy` for http, `ALL_PROXY`, and hosts listed in
//! `NO_PROXY`/`no_proxy` go direct. The credential ([`super::credential`])
//! is checked before anything is sent: a bad one is an error, never a panic
//! in the HTTP client. With AWS SigV4 the client talks to a loopback signer
//! ([`super::signer`]) that signs each request for the real endpoint.

use super::credential::{credentials, CredentialKind};
use super::options::ConnectOptions;
use super::signer::{self, Signer};
use crate::error::{Error, Result};
use elasticsearch::cert::{Certificate, CertificateValidation};
use elasticsearch::http::headers::{HeaderName, HeaderValue};
use elasticsearch::http::transport::{SingleNodeConnectionPool, TransportBuilder};
use elasticsearch::Elasticsearch;
use std::sync::Arc;

/// The client, the credential kind it presents, and its signer (kept alive
/// as long as the client is used).
pub(super) struct Built {
    pub(super) client: Elasticsearch,
    pub(super) kind: CredentialKind,
    pub(super) signer: Option<Arc<Signer>>,
}

/// Builds the client. Fails on a bad URL, an unreadable CA file, or a bad
/// or ambiguous credential; never touches the network.
pub(super) fn build_client(opts: &ConnectOptions) -> Result<Built> {
    let url = url::Url::parse(&opts.url)
        .map_err(|e| Error::Invalid(format!("invalid --url `{}`: {e}", opts.url)))?;
    let (kind, header) = credentials(opts)?;
    let ca = ca_cert(opts)?;
    let signer = match &opts.aws {
        Some(aws) => Some(signer::start(
            url.clone(),
            aws.clone(),
            forwarding_client(opts, ca.as_ref())?,
        )?),
        None => None,
    };
    let builder = match &signer {
        // The signer is on loopback: no proxy; TLS is the signer's business.
        Some(s) => {
            let local = url::Url::parse(&s.url())
                .map_err(|e| Error::Invalid(format!("SigV4 signer address: {e}")))?;
            let token = HeaderValue::from_str(s.token())
                .map_err(|e| Error::Invalid(format!("SigV4 signer token: {e}")))?;
            TransportBuilder::new(SingleNodeConnectionPool::new(local))
                .disable_proxy()
                .header(HeaderName::from_static(signer::TOKEN_HEADER), token)
        }
        // No `disable_proxy`: the HTTP client then reads the proxy variables.
        None => tls(
            TransportBuilder::new(SingleNodeConnectionPool::new(url)),
            opts,
            ca,
        ),
    };
    let mut builder = builder.timeout(opts.timeout);
    if let Some(credentials) = header {
        builder = builder.auth(credentials);
    }
    let transport = builder
        .build()
        .map_err(|e| Error::Invalid(format!("cannot build the HTTP client: {e}")))?;
    Ok(Built {
        client: Elasticsearch::new(transport),
        kind,
        signer,
    })
}

/// The `--ca-cert` file's certificate, read and checked.
fn ca_cert(opts: &ConnectOptions) -> Result<Option<Vec<u8>>> {
    let Some(path) = &opts.ca_cert else {
        return Ok(None);
    };
    let pem = std::fs::read(path)
        .map_err(|e| Error::Invalid(format!("cannot read --ca-cert {}: {e}", path.display())))?;
    Certificate::from_pem(&pem).map_err(|e| {
        Error::Invalid(format!(
            "--ca-cert {} is not a PEM certificate: {e}",
            path.display()
        ))
    })?;
    Ok(Some(pem))
}

/// Certificate validation as the options ask.
fn tls(builder: TransportBuilder, opts: &ConnectOptions, ca: Option<Vec<u8>>) -> TransportBuilder {
    if opts.insecure {
        return builder.cert_validation(CertificateValidation::None);
    }
    match ca.and_then(|pem| Certificate::from_pem(&pem).ok()) {
        // `Full` adds this CA to the built-in and system roots (it does not
        // replace them).
        Some(cert) => builder.cert_validation(CertificateValidation::Full(cert)),
        None => builder,
    }
}

/// The signer's own client to the real endpoint: the same trust (system and
/// built-in roots, `--ca-cert`, `--insecure`), proxy variables and timeout.
fn forwarding_client(opts: &ConnectOptions, ca: Option<&Vec<u8>>) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .timeout(opts.timeout);
    if opts.insecure {
        builder = builder.danger_accept_invalid_certs(true);
    } else if let Some(pem) = ca {
        let cert = reqwest::Certificate::from_pem(pem)
            .map_err(|e| Error::Invalid(format!("--ca-cert is not a PEM certificate: {e}")))?;
        builder = builder.add_root_certificate(cert);
    }
    builder
        .build()
        .map_err(|e| Error::Invalid(format!("cannot build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    use crate::cluster::connect::*;
    use crate::cluster::sigv4::{AwsService, AwsSigning};

    #[test]
    fn a_bad_secret_stops_the_build() {
        let o = ConnectOptions {
            api_key: Some("a b".into()),
            ..ConnectOptions::new("http://localhost:9200")
        };
        assert!(build_client(&o).is_err());
    }

    #[test]
    fn signing_points_the_client_at_a_loopback_signer() {
        let aws = AwsSigning::from_values(
            AwsService::Aoss,
            Some("eu-west-1".into()),
            Some("AKID".into()),
            Some("secret".into()),
            None,
        )
        .unwrap();
        let o = ConnectOptions {
            aws: Some(aws),
            ..ConnectOptions::new("https://abc.eu-west-1.aoss.amazonaws.com")
        };
        let built = build_client(&o).unwrap();
        assert_eq!(built.kind, CredentialKind::AwsSigV4(AwsService::Aoss));
        assert!(built.signer.unwrap().url().starts_with("http://127.0.0.1:"));
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
