//! AWS Signature Version 4 for Amazon OpenSearch Service (`es`) and
//! Amazon OpenSearch Serverless (`aoss`), with AWS's own `aws-sigv4` crate.
//!
//! Credentials come from the standard variables `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (the CLI reads them);
//! the whole `aws-config` provider chain (profiles, SSO, instance metadata)
//! is not pulled in: export short-lived credentials with
//! `aws configure export-credentials --format env`.
//!
//! Every request carries `x-amz-content-sha256`, the SHA-256 of its body:
//! OpenSearch Serverless refuses requests without it ("Signing HTTP requests
//! to Amazon OpenSearch Serverless", AWS docs), and it is signed, so a body
//! changed in transit fails the check. Paths are encoded twice in the
//! canonical request and normalised, as for every AWS service but S3 (the
//! crate's defaults).

use crate::error::{Error, Result};
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings,
};
use aws_sigv4::sign::v4;
use std::time::SystemTime;

/// Which AWS service the requests are signed for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum AwsService {
    /// Amazon OpenSearch Service (managed domains).
    Es,
    /// Amazon OpenSearch Serverless (collections).
    Aoss,
}

impl AwsService {
    /// The signing name AWS expects in the credential scope.
    pub fn name(self) -> &'static str {
        match self {
            AwsService::Es => "es",
            AwsService::Aoss => "aoss",
        }
    }
}

/// What signing needs: the service, the region and the credentials.
#[derive(Debug, Clone)]
pub struct AwsSigning {
    /// The service signed for.
    pub service: AwsService,
    /// The region of the domain or collection (`eu-west-1`).
    pub region: String,
    /// The access key, secret and session token (`Debug` hides the secret).
    pub credentials: Credentials,
}

impl AwsSigning {
    /// Signing from the standard variables' values; a missing key or secret
    /// is an [`Error::Credentials`] naming the variable.
    pub fn from_values(
        service: AwsService,
        region: Option<String>,
        access_key_id: Option<String>,
        secret_access_key: Option<String>,
        session_token: Option<String>,
    ) -> Result<AwsSigning> {
        let needed = |v: Option<String>, var: &'static str| {
            v.map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .ok_or(Error::Credentials {
                    var,
                    problem: format!("not set, but --aws-sigv4 {} was given", service.name()),
                })
        };
        let region = region
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .ok_or_else(|| {
                Error::Invalid(
                    "--aws-sigv4 needs the region of the domain or collection: --aws-region, \
                     the profile's aws_region, or AWS_REGION"
                        .into(),
                )
            })?;
        let key = needed(access_key_id, "AWS_ACCESS_KEY_ID")?;
        let secret = needed(secret_access_key, "AWS_SECRET_ACCESS_KEY")?;
        let token = session_token
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        Ok(AwsSigning {
            service,
            region,
            credentials: Credentials::new(key, secret, token, None, "environment"),
        })
    }

    /// The headers that sign this request (`authorization`, `x-amz-date`,
    /// `x-amz-content-sha256`, `x-amz-security-token`). `uri` is the full
    /// URL as sent (already percent-encoded); `headers` are those sent with
    /// it, `host` included.
    pub fn sign(
        &self,
        method: &str,
        uri: &str,
        headers: &[(String, String)],
        body: &[u8],
        time: SystemTime,
    ) -> Result<Vec<(String, String)>> {
        signing_headers(
            self.service.name(),
            &self.region,
            &self.credentials,
            Request {
                method,
                uri,
                headers,
                body,
            },
            time,
        )
    }
}

/// One request to sign.
struct Request<'a> {
    method: &'a str,
    uri: &'a str,
    headers: &'a [(String, String)],
    body: &'a [u8],
}

/// The signing itself, for any service name (the AWS test vectors use
/// `service`).
fn signing_headers(
    service: &str,
    region: &str,
    credentials: &Credentials,
    request: Request<'_>,
    time: SystemTime,
) -> Result<Vec<(String, String)>> {
    let failed =
        |e: &dyn std::fmt::Display| Error::Invalid(format!("cannot sign the request: {e}"));
    let identity = credentials.clone().into();
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| failed(&e))?
        .into();
    let signable = SignableRequest::new(
        request.method,
        request.uri,
        request
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str())),
        SignableBody::Bytes(request.body),
    )
    .map_err(|e| failed(&e))?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|e| failed(&e))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::cluster::sigv4::*;
    use std::time::Duration;

    /// The AWS SigV4 test suite (aws-c-auth's `aws-signing-test-suite/v4`,
    /// shipped with the `aws-sigv4` crate): its credentials and time.
    fn suite() -> (Credentials, SystemTime) {
        let creds = Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
            None,
            "test-suite",
        );
        // 2015-08-30T12:36:00Z
        (
            creds,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_440_938_160),
        )
    }

    fn signature(headers: &[(String, String)]) -> String {
        let auth = headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        auth.rsplit("Signature=")
            .next()
            .unwrap_or_default()
            .to_string()
    }

    fn header(name: &str, value: &str) -> (String, String) {
        (name.to_string(), value.to_string())
    }

    #[test]
    fn the_published_vectors_with_a_signed_body() {
        let (creds, time) = suite();
        // post-x-www-form-urlencoded, and its `-parameters` twin (a charset
        // in the type): the same body, signed differently.
        let vectors = [
            (
                "application/x-www-form-urlencoded",
                "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b",
            ),
            (
                "application/x-www-form-urlencoded; charset=utf-8",
                "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422",
            ),
        ];
        for (content_type, expected) in vectors {
            let headers = [
                header("content-type", content_type),
                header("host", "example.amazonaws.com"),
                header("content-length", "13"),
            ];
            let request = Request {
                method: "POST",
                uri: "https://example.amazonaws.com/",
                headers: &headers,
                body: b"Param1=value1",
            };
            let signed = signing_headers("service", "us-east-1", &creds, request, time).unwrap();
            assert_eq!(signature(&signed), expected, "{content_type}");
            // The body hash header and the date, the same for both.
            assert!(signed.contains(&header(
                "x-amz-content-sha256",
                "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"
            )));
            assert!(signed.contains(&header("x-amz-date", "20150830T123600Z")));
        }
    }

    #[test]
    fn missing_aws_settings_are_named() {
        let e = AwsSigning::from_values(AwsService::Aoss, None, None, None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--aws-region"), "{e}");
        let e = AwsSigning::from_values(
            AwsService::Es,
            Some("eu-west-1".into()),
            Some("AKID".into()),
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("AWS_SECRET_ACCESS_KEY"), "{e}");
    }
}
