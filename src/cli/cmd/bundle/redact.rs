//! Redaction of what `bundle` puts in a postmortem archive: the secrets
//! this run knows (the password, API key, bearer token and AWS secret key
//! and session token in force, and the Basic `Authorization` value built
//! from the user and password) wherever they appear, and by
//! shape what it cannot know: the userinfo of a URL (`https://u:p@host`),
//! the value of an `Authorization` header, and the value of a key that
//! names a secret (`password`, `passwd`, `secret`, `token`, `api_key`,
//! `apikey`, `api-key`, `authorization`) written as `key=value`,
//! `key: value` or `"key": "value"`. Names of the variables holding
//! secrets (`password_env = "PROD_PW"`) are kept: they say where the secret
//! lives, not what it is.

use crate::cluster::ConnectOptions;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use regex::Regex;
use std::sync::LazyLock;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// `scheme://userinfo@`: everything between `//` and the `@` of the host.
static USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]+@").unwrap_or_else(|_| unreachable!())
});

/// An `Authorization` header (or a field of that name) and its value.
static AUTHORIZATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(\bauthorization"?\s*[:=]\s*"?)(?:(?:basic|bearer|apikey)\s+)?[^\s",}]+"#)
        .unwrap_or_else(|_| unreachable!())
});

/// A key naming a secret, then `=`/`:` and its value (quoted or not). The
/// key may end the name (`db_password`, `x-api-key`) but `password_env`
/// (the variable's name) does not match: a word character after the key
/// word is not allowed.
static SECRET_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)([a-z0-9_\-]*(?:password|passwd|secret|token|api[_\-]?key)"?\s*[:=]\s*"?)([^\s",}]+)"#,
    )
    .unwrap_or_else(|_| unreachable!())
});

/// The secrets one run knows, to be replaced wherever they appear.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// Every secret of the connection: the password, the API key, the
    /// bearer token, the AWS secret key and session token, and the Basic
    /// credentials built from the user and password (what an
    /// `Authorization` header would carry).
    pub fn of(o: &ConnectOptions) -> Secrets {
        let aws = o.aws.as_ref().map(|a| &a.credentials);
        let mut values: Vec<String> = [
            o.password.clone(),
            o.api_key.clone(),
            o.bearer_token.clone(),
            aws.map(|c| c.secret_access_key().to_string()),
            aws.and_then(|c| c.session_token().map(str::to_string)),
        ]
        .into_iter()
        .flatten()
        .filter(|s| s.len() >= 3)
        .collect();
        if let (Some(user), Some(password)) = (&o.user, &o.password) {
            values.push(BASE64.encode(format!("{user}:{password}")));
        }
        // Longest first, so a secret containing another goes whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        Secrets { values }
    }

    /// `text` with every known secret and every secret-shaped value replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut s = text.to_string();
        for v in &self.values {
            s = s.replace(v.as_str(), REDACTED);
        }
        let s = USERINFO.replace_all(&s, format!("${{1}}{REDACTED}@"));
        let s = AUTHORIZATION.replace_all(&s, format!("${{1}}{REDACTED}"));
        let s = SECRET_KEY.replace_all(&s, format!("${{1}}{REDACTED}"));
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::cmd::bundle::redact::*;

    fn secrets() -> Secrets {
        Secrets::of(&ConnectOptions {
            user: Some("estx".into()),
            password: Some("hunter2-pw".into()),
            api_key: Some("QUtFWTpzM2NyM3Q=".into()),
            ..ConnectOptions::new("http://localhost:9200")
        })
    }

    /// Secrets with no telltale key beside them (a bare token in a log
    /// line) are known by value: the bearer token and the AWS secrets too.
    #[test]
    fn bearer_tokens_and_aws_secrets_are_known_by_value() {
        let aws = crate::cluster::AwsSigning::from_values(
            crate::cluster::AwsService::Es,
            Some("eu-west-1".into()),
            Some("AKIDEXAMPLE".into()),
            Some("wJalrXUtnFEMI-secret".into()),
            Some("FwoGZXIvYXdzE-session".into()),
        )
        .expect("signing");
        let s = Secrets::of(&ConnectOptions {
            bearer_token: Some("eyJhbGciOi.bearer".into()),
            aws: Some(aws),
            ..ConnectOptions::new("http://localhost:9200")
        });
        let out = s.redact(
            "sent eyJhbGciOi.bearer; signed with wJalrXUtnFEMI-secret FwoGZXIvYXdzE-session",
        );
        for leaked in [
            "eyJhbGciOi.bearer",
            "wJalrXUtnFEMI-secret",
            "FwoGZXIvYXdzE-session",
        ] {
            assert!(!out.contains(leaked), "{leaked} leaked:\n{out}");
        }
        assert_eq!(BASE64.encode("estx:hunter2-pw"), "ZXN0eDpodW50ZXIyLXB3");
    }

    #[test]
    fn known_secrets_and_secret_shapes_go_names_of_variables_stay() {
        let s = secrets();
        let text = "connecting to https://estx:other@es.internal:9200/ with hunter2-pw\n\
                    authorization: Basic ZXN0eDpodW50ZXIyLXB3\n\
                    Authorization: ApiKey QUtFWTpzM2NyM3Q=\n\
                    {\"password\": \"p4ss\", \"x-api-key\": \"k3y\", \"token\":\"t0k\"}\n\
                    db_password=abc secret: xyz\n\
                    password_env = \"PROD_PW\"\n\
                    url = \"https://u@h\"";
        let out = s.redact(text);
        for leaked in [
            "hunter2-pw",
            "other",
            "ZXN0eDpodW50ZXIyLXB3",
            "QUtFWTpzM2NyM3Q=",
            "p4ss",
            "k3y",
            "t0k",
            "abc",
            "xyz",
            "u@h",
        ] {
            assert!(!out.contains(leaked), "{leaked} leaked:\n{out}");
        }
        assert!(out.contains("password_env = \"PROD_PW\""), "{out}");
        assert!(
            out.contains("https://[REDACTED]@es.internal:9200/"),
            "{out}"
        );
        assert!(out.contains("es.internal"), "the host stays:\n{out}");
    }
}
