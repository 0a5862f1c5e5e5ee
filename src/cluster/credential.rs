//! Which credential the tool presents, and checking it before anything is
//! sent: basic authentication, an API key, a bearer token (Elasticsearch
//! service-account tokens, OAuth2/OIDC/JWT access tokens), or AWS SigV4
//! signing ([`super::sigv4`]). Exactly one kind at a time: two given at once
//! is refused rather than one silently winning, so the operator always knows
//! which identity acted. Secrets are trimmed of surrounding whitespace
//! (mounted secret files end with a newline), and a malformed one is an
//! [`Error::Credentials`] naming its variable, never showing it.

use super::options::ConnectOptions;
use super::sigv4::AwsService;
use crate::error::{Error, Result};
use elasticsearch::auth::Credentials;

/// Environment variable names the secrets come from (for messages).
const USER_VAR: &str = "ESTX_USER (--user)";
const PASSWORD_VAR: &str = "ESTX_PASSWORD";
const API_KEY_VAR: &str = "ESTX_API_KEY";
const BEARER_VAR: &str = "ESTX_BEARER_TOKEN";

/// The kind of credential a connection presents (`doctor` shows it; a 401
/// says which one to check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "service", rename_all = "snake_case")]
pub enum CredentialKind {
    /// Nothing: a cluster with security off (or one that will answer 401).
    None,
    /// `Authorization: Basic` from the user and `ESTX_PASSWORD`.
    Basic,
    /// `Authorization: ApiKey` from `ESTX_API_KEY`.
    ApiKey,
    /// `Authorization: Bearer` from `ESTX_BEARER_TOKEN`.
    Bearer,
    /// Every request signed with AWS Signature Version 4 for this service.
    #[serde(rename = "aws_sigv4")]
    AwsSigV4(AwsService),
}

impl CredentialKind {
    /// What to check when the cluster refuses this credential (names the
    /// variables, never their values).
    pub fn check(self) -> &'static str {
        match self {
            CredentialKind::None => {
                "no credentials were sent: set --user with ESTX_PASSWORD, ESTX_API_KEY, \
                 ESTX_BEARER_TOKEN, or --aws-sigv4 (or the profile's *_env names)"
            }
            CredentialKind::Basic => {
                "check the basic-auth user (--user / ESTX_USER) and its password \
                 (ESTX_PASSWORD or the profile's password_env)"
            }
            CredentialKind::ApiKey => {
                "check the API key (ESTX_API_KEY or the profile's api_key_env): \
                 expired, invalidated, or for another cluster?"
            }
            CredentialKind::Bearer => {
                "check the bearer token (ESTX_BEARER_TOKEN or the profile's \
                 bearer_token_env): expired, revoked, or issued for another cluster?"
            }
            CredentialKind::AwsSigV4(_) => {
                "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN \
                 (expired session?), the region (--aws-region / AWS_REGION) and the \
                 service (--aws-sigv4 es or aoss)"
            }
        }
    }
}

impl std::fmt::Display for CredentialKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CredentialKind::None => f.write_str("none"),
            CredentialKind::Basic => f.write_str("basic (user and password)"),
            CredentialKind::ApiKey => f.write_str("API key"),
            CredentialKind::Bearer => f.write_str("bearer token"),
            CredentialKind::AwsSigV4(s) => write!(f, "AWS SigV4 (service `{}`)", s.name()),
        }
    }
}

/// A non-empty, trimmed value.
fn trimmed(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The credential to send, trimmed and validated, with its kind. Refuses
/// more than one kind at once.
pub(super) fn credentials(opts: &ConnectOptions) -> Result<(CredentialKind, Option<Credentials>)> {
    let user = trimmed(&opts.user);
    let key = trimmed(&opts.api_key);
    let bearer = trimmed(&opts.bearer_token);
    let given: Vec<&str> = [
        (user.is_some(), "basic auth (--user)"),
        (key.is_some(), API_KEY_VAR),
        (bearer.is_some(), BEARER_VAR),
        (opts.aws.is_some(), "AWS SigV4 (--aws-sigv4)"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    if given.len() > 1 {
        return Err(Error::Invalid(format!(
            "more than one credential kind given ({}): use exactly one",
            given.join(", ")
        )));
    }
    if let Some(aws) = &opts.aws {
        return Ok((CredentialKind::AwsSigV4(aws.service), None));
    }
    if let Some(key) = key {
        return Ok((CredentialKind::ApiKey, Some(api_key(&key)?)));
    }
    if let Some(token) = bearer {
        return Ok((CredentialKind::Bearer, Some(bearer_token(&token)?)));
    }
    match user {
        Some(user) => Ok((CredentialKind::Basic, Some(basic(user, opts)?))),
        None => Ok((CredentialKind::None, None)),
    }
}

/// Basic authentication: a user basic auth can carry and its password.
fn basic(user: String, opts: &ConnectOptions) -> Result<Credentials> {
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
    Ok(Credentials::Basic(user, password))
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

/// A bearer token (RFC 6750 §2.1 `b64token`: letters, digits and
/// `-._~+/`, then `=` padding): an Elasticsearch service-account token
/// (`POST /_security/service/.../credential/token`, its `value`), an
/// access token from `POST /_security/oauth2/token`, or a JWT from an
/// OpenID Connect / JWT realm.
fn bearer_token(token: &str) -> Result<Credentials> {
    let invalid = |problem: String| Error::Credentials {
        var: BEARER_VAR,
        problem,
    };
    if token
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("bearer "))
    {
        return Err(invalid(
            "starts with `Bearer `: give the token alone, the tool adds the scheme".into(),
        ));
    }
    let body = token.trim_end_matches('=');
    let allowed =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/');
    if let Some(at) = body.chars().position(|c| !allowed(c)) {
        return Err(invalid(format!(
            "character {} cannot be in a bearer token (whitespace or a line break inside \
             the value?)",
            at + 1
        )));
    }
    Ok(Credentials::Bearer(token.to_string()))
}

#[cfg(test)]
mod tests {
    use crate::cluster::credential::*;

    fn opts(user: Option<&str>, password: Option<&str>, key: Option<&str>) -> ConnectOptions {
        ConnectOptions {
            user: user.map(str::to_string),
            password: password.map(str::to_string),
            api_key: key.map(str::to_string),
            ..ConnectOptions::new("http://localhost:9200")
        }
    }

    fn bearer(token: &str) -> ConnectOptions {
        ConnectOptions {
            bearer_token: Some(token.to_string()),
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
        assert!(
            matches!(got, (CredentialKind::ApiKey, Some(Credentials::EncodedApiKey(k))) if k == "c2VjcmV0OmtleQ==")
        );
        let got = credentials(&opts(Some(" elastic\n"), Some("pw\r\n"), None)).unwrap();
        assert!(
            matches!(got, (CredentialKind::Basic, Some(Credentials::Basic(u, p))) if u == "elastic" && p == "pw")
        );
        let got = credentials(&opts(None, None, Some("id:secret"))).unwrap();
        assert!(matches!(got.1, Some(Credentials::ApiKey(i, s)) if i == "id" && s == "secret"));
        let got = credentials(&opts(None, None, Some(" \n"))).unwrap();
        assert!(matches!(got, (CredentialKind::None, None)));
    }

    #[test]
    fn bearer_tokens_are_sent_as_bearer() {
        // A service-account token as Elasticsearch prints it, and a JWT.
        for token in [
            "AAEAAWVsYXN0aWMvZmxlZXQtc2VydmVyL3Rva2VuMTo3TFdaSDZ=",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMifQ.c2lnbmF0dXJl_-",
        ] {
            let got = credentials(&bearer(&format!("{token}\n"))).unwrap();
            assert!(
                matches!(&got, (CredentialKind::Bearer, Some(Credentials::Bearer(t))) if t == token),
                "{got:?}"
            );
        }
        let e = problem(&bearer("Bearer abc"));
        assert!(
            e.contains("ESTX_BEARER_TOKEN") && e.contains("alone"),
            "{e}"
        );
        let e = problem(&bearer("abc\ndef-secret"));
        assert!(!e.contains("def-secret"), "the secret leaked: {e}");
    }

    #[test]
    fn exactly_one_credential_kind() {
        let both = ConnectOptions {
            bearer_token: Some("tok".into()),
            ..opts(None, None, Some("id:key"))
        };
        let e = credentials(&both).unwrap_err().to_string();
        assert!(
            e.contains("ESTX_API_KEY") && e.contains("ESTX_BEARER_TOKEN"),
            "{e}"
        );
        assert!(!e.contains("tok"), "{e}");
        // A key and a user no longer pick one silently.
        let e = credentials(&opts(Some("u"), Some("p"), Some("abc")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one"), "{e}");
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
    }
}
