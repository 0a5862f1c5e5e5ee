//! Redaction of what `bundle` puts in a postmortem archive: the secrets
//! this run knows (the password and API key in force, and the Basic
//! `Authorization` value built from them) wherever they appear, and by
//! shape what it cannot know: the userinfo of a URL (`https://u:p@host`),
//! the value of an `Authorization` header, and the value of a key that
//! names a secret (`password`, `passwd`, `secret`, `token`, `api_key`,
//! `apikey`, `api-key`, `authorization`) written as `key=value`,
//! `key: value` or `"key": "value"`. Names of the variables holding
//! secrets (`password_env = "PROD_PW"`) are kept: they say where the secret
//! lives, not what it is.

use crate::cluster::ConnectOptions;
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
    /// The password, the API key and the Basic credentials built from the
    /// user and password (what an `Authorization` header would carry).
    pub fn of(o: &ConnectOptions) -> Secrets {
        use base64_encode as b64;
        let mut values: Vec<String> = [o.password.clone(), o.api_key.clone()]
            .into_iter()
            .flatten()
            .filter(|s| s.len() >= 3)
            .collect();
        if let (Some(user), Some(password)) = (&o.user, &o.password) {
            values.push(b64(format!("{user}:{password}").as_bytes()));
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

/// Standard base64 with padding (what HTTP Basic credentials use).
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        Secrets::of(&ConnectOptions {
            user: Some("estx".into()),
            password: Some("hunter2-pw".into()),
            api_key: Some("QUtFWTpzM2NyM3Q=".into()),
            ..ConnectOptions::new("http://localhost:9200")
        })
    }

    #[test]
    fn basic_credentials_are_base64_as_http_sends_them() {
        assert_eq!(base64_encode(b"estx:hunter2-pw"), "ZXN0eDpodW50ZXIyLXB3");
        assert_eq!(base64_encode(b"ab"), "YWI=");
        assert_eq!(base64_encode(b"a"), "YQ==");
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
