//! The proxy as Amazon OpenSearch Service / Serverless checks requests: each
//! must carry a valid AWS Signature Version 4, recomputed here from the
//! request as received with the known secret (an implementation of its own,
//! from AWS's "Create a signed AWS API request" (IAM User Guide), not the
//! crate the tool signs with). A request without a signature, with another
//! key, scope or signature, or whose body does not hash to its
//! `x-amz-content-sha256` (OpenSearch Serverless requires that header) is
//! answered 403 with the body AWS sends. A request with no signature at
//! all is IAM's `anonymous` principal, which a domain's access policy does
//! not allow: `{"Message":"User: anonymous is not authorized to perform:
//! es:ESHttpGet"}` ("requests from clients that aren't compatible with
//! Signature Version 4 are rejected with an 'anonymous is not authorized'
//! error": https://repost.aws/knowledge-center/anonymous-not-authorized-opensearch,
//! formerly aws.amazon.com/premiumsupport/knowledge-center/anonymous-not-authorized-elasticsearch;
//! the action is `es:ESHttp` and the method:
//! https://docs.aws.amazon.com/opensearch-service/latest/developerguide/ac.html).

use super::{lock, rewrite::Canned, FaultProxy, Request, Shared};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;

/// The key and scope the proxy accepts.
#[derive(Debug, Clone)]
pub struct SigV4Key {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret: String,
    /// The session token that must accompany the key, if any.
    pub session_token: Option<String>,
    /// `us-east-1`.
    pub region: String,
    /// `es` or `aoss`.
    pub service: String,
}

impl FaultProxy {
    /// From now on, only requests signed with `key` are forwarded.
    pub fn require_sigv4(&self, key: SigV4Key) {
        *lock(&self.shared.sigv4) = Some(key);
    }

    /// From now on, a signature whose `x-amz-date` is more than `seconds`
    /// off the proxy's clock (its `Date`, see [`FaultProxy::shift_date`])
    /// is refused as AWS refuses it, with a 5-minute window ("Signature
    /// expired: 20150830T122600Z is now earlier than 20150830T123100Z
    /// (20150830T123600Z minus 5 min.)", or "Signature not yet current");
    /// the AWS SDKs then correct their clock from the answer's `Date` and
    /// sign again. 0: no window.
    pub fn sigv4_window(&self, seconds: i64) {
        self.shared.sigv4_window.store(seconds, Ordering::SeqCst);
    }

    /// Requests whose signature was checked and accepted.
    pub fn sigv4_accepted(&self) -> usize {
        self.shared.sigv4_accepted.load(Ordering::SeqCst)
    }
}

/// The 403 AWS answers instead of forwarding, if the signature is wrong.
pub(super) fn gate(shared: &Shared, request: &Request) -> Option<Vec<u8>> {
    let key = lock(&shared.sigv4).clone()?;
    let checked = verify(&key, request).and_then(|()| in_window(shared, request));
    match checked {
        Ok(()) => {
            shared.sigv4_accepted.fetch_add(1, Ordering::SeqCst);
            None
        }
        Err(message) => {
            shared.canned.fetch_add(1, Ordering::SeqCst);
            lock(&shared.log).push(format!(
                "{} {} -> 403 (sigv4: {message})",
                request.method, request.target
            ));
            let body = if header(request, "authorization").is_none() {
                json!({ "Message": message })
            } else {
                json!({ "message": message })
            };
            let canned = Canned::json(403, body);
            Some(canned.bytes(shared.date_shift.load(Ordering::SeqCst)))
        }
    }
}

/// `Ok` when the signature's time is within the window of the proxy's clock.
fn in_window(shared: &Shared, request: &Request) -> Result<(), String> {
    let window = shared.sigv4_window.load(Ordering::SeqCst);
    if window == 0 {
        return Ok(());
    }
    let fmt = "%Y%m%dT%H%M%SZ";
    let amz = header(request, "x-amz-date").unwrap_or_default();
    let signed = chrono::NaiveDateTime::parse_from_str(amz, fmt)
        .map_err(|_| format!("invalid x-amz-date {amz}"))?
        .and_utc();
    let now =
        chrono::Utc::now() + chrono::Duration::seconds(shared.date_shift.load(Ordering::SeqCst));
    let w = chrono::Duration::seconds(window);
    let (at, now_s) = (signed.format(fmt), now.format(fmt));
    if signed < now - w {
        return Err(format!(
            "Signature expired: {at} is now earlier than {} ({now_s} - 5 min.)",
            (now - w).format(fmt)
        ));
    }
    if signed > now + w {
        return Err(format!(
            "Signature not yet current: {at} is still later than {} ({now_s} + 5 min.)",
            (now + w).format(fmt)
        ));
    }
    Ok(())
}

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// [`verify`] for a request given by its parts (the test vectors).
pub fn verify_parts(
    key: &SigV4Key,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<(), String> {
    let request = Request {
        method: method.into(),
        target: target.into(),
        version: "HTTP/1.1".into(),
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body: body.to_vec(),
    };
    verify(key, &request)
}

/// `Ok` when the request is signed with `key`, else AWS's message.
fn verify(key: &SigV4Key, request: &Request) -> Result<(), String> {
    const MISMATCH: &str = "The request signature we calculated does not match the signature \
        you provided. Check your AWS Secret Access Key and signing method. Consult the service \
        documentation for details.";
    let Some(auth) = header(request, "authorization") else {
        return Err(format!(
            "User: anonymous is not authorized to perform: {}",
            super::iam::es_action(&request.method)
        ));
    };
    let auth = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("Authorization header requires 'AWS4-HMAC-SHA256'")?;
    let field = |name: &str| {
        auth.split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(name))
            .map(str::to_string)
            .ok_or(format!("Authorization header requires '{name}' parameter"))
    };
    let credential = field("Credential=")?;
    let signed_headers = field("SignedHeaders=")?;
    let signature = field("Signature=")?;
    let scope: Vec<&str> = credential.split('/').collect();
    let [access_key, date, region, service, "aws4_request"] = scope[..] else {
        return Err(format!(
            "Credential should be scoped correctly: {credential}"
        ));
    };
    if access_key != key.access_key {
        return Err("The security token included in the request is invalid.".into());
    }
    if region != key.region || service != key.service {
        return Err(format!(
            "Credential should be scoped to a valid region and service: {region}/{service}"
        ));
    }
    let amz_date = header(request, "x-amz-date").ok_or("x-amz-date is required")?;
    let body_hash = hex::encode(Sha256::digest(&request.body));
    if header(request, "x-amz-content-sha256") != Some(body_hash.as_str()) {
        return Err(
            "The provided 'x-amz-content-sha256' header does not match what was computed.".into(),
        );
    }
    if let Some(token) = &key.session_token {
        if header(request, "x-amz-security-token") != Some(token.as_str()) {
            return Err("The security token included in the request is invalid.".into());
        }
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    for needed in ["host", "x-amz-date", "x-amz-content-sha256"] {
        if !names.contains(&needed) {
            return Err(format!("'{needed}' must be a signed header"));
        }
    }
    let canonical = canonical_request(request, &names, &signed_headers, &body_hash);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{date}/{region}/{service}/aws4_request\n{}",
        hex::encode(Sha256::digest(canonical.as_bytes()))
    );
    let mut k = hmac(format!("AWS4{}", key.secret).as_bytes(), date.as_bytes());
    for part in [region, service, "aws4_request"] {
        k = hmac(&k, part.as_bytes());
    }
    if hex::encode(hmac(&k, to_sign.as_bytes())) != signature {
        return Err(MISMATCH.into());
    }
    Ok(())
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// The canonical request: method, path (each segment encoded again, as for
/// every service but S3), sorted query, the signed headers, the body hash.
fn canonical_request(request: &Request, names: &[&str], signed: &str, body_hash: &str) -> String {
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((&request.target, ""));
    let path = if path.is_empty() { "/" } else { path };
    let path: Vec<String> = path.split('/').map(|s| encode(s.as_bytes())).collect();
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (encode(&decode(k)), encode(&decode(v)))
        })
        .collect();
    pairs.sort();
    let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let headers: String = names
        .iter()
        .map(|name| {
            let values: Vec<String> = request
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
            format!("{name}:{}\n", values.join(","))
        })
        .collect();
    format!(
        "{}\n{}\n{}\n{headers}\n{signed}\n{body_hash}",
        request.method,
        path.join("/"),
        query.join("&")
    )
}

/// Percent-encoding with AWS's unreserved set (`A-Za-z0-9-_.~`).
fn encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Percent-decoding (`+` is a literal plus: AWS reads queries that way).
fn decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}
