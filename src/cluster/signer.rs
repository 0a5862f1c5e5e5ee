//! The seam where every request gets its AWS SigV4 signature.
//!
//! The official client builds and sends each request inside its
//! `Transport` (`Transport::send` → a private `request_builder` → reqwest),
//! and neither the transport nor its reqwest client accepts a per-request
//! hook: credentials are one static header, and reqwest has no middleware.
//! A signature covers the method, the final path and query, the headers and
//! the body's hash, so it can only be computed once the request exists.
//!
//! So the client talks plain HTTP to a signer on `127.0.0.1` (an ephemeral
//! port, owned by this process and stopped with the `Cluster` handle),
//! which reads each request whole, signs exactly those bytes for the real
//! endpoint, sends it there over TLS (with `--ca-cert`/`--insecure` and the
//! proxy variables, like the client itself would) and passes the answer
//! back unchanged. A failure to reach the endpoint is answered `502` (a
//! timeout `504`), as a gateway would: reads are retried, a write's outcome
//! is unknown. Nothing listens beyond loopback, and loopback is shared by
//! every user of the machine: the signer forwards only requests carrying
//! [`TOKEN_HEADER`] with the random token drawn when it started, which only
//! this process's client knows (the header is removed before signing), so
//! another local user cannot borrow the operator's AWS credentials.
//!
//! AWS refuses a signature more than 5 minutes off its own clock ("Signature
//! expired: ... (... - 5 min.)", "Signature not yet current"), so a host
//! whose clock is off could not reach it at all. As the AWS SDKs do, such a
//! refusal's `Date` gives the offset of AWS's clock from ours: the signer
//! keeps it for every later signature and signs that request again, once.

use super::sigv4::AwsSigning;
use crate::error::{Error, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;

/// Hop-by-hop and per-connection headers, never forwarded either way.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "upgrade",
    "host",
    "content-length",
];

/// The header that proves a request comes from this process's own client.
pub(super) const TOKEN_HEADER: &str = "x-estx-signer-token";

/// A running signer; dropping the last handle stops it.
#[derive(Debug)]
pub(super) struct Signer {
    addr: SocketAddr,
    token: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Signer {
    /// The loopback URL the client should talk to.
    pub(super) fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The token the client must send in [`TOKEN_HEADER`].
    pub(super) fn token(&self) -> &str {
        &self.token
    }
}

/// 256 random bits, hex-encoded.
fn new_token() -> String {
    rand::random::<[u8; 32]>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Compares in time independent of where the strings differ.
fn same_token(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

impl Drop for Signer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Where requests go and how they are signed.
struct Target {
    base: url::Url,
    token: String,
    host: String,
    signing: AwsSigning,
    client: reqwest::Client,
    /// AWS's clock minus ours, in milliseconds, learnt from a refusal.
    offset_ms: AtomicI64,
}

impl Target {
    /// The time to sign with: ours, moved by the offset learnt.
    fn now(&self) -> SystemTime {
        shifted(SystemTime::now(), self.offset_ms.load(Ordering::Relaxed))
    }
}

/// `at` moved by `ms` milliseconds.
fn shifted(at: SystemTime, ms: i64) -> SystemTime {
    let by = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        at + by
    } else {
        at - by
    }
}

/// Whether a 403's body is AWS refusing the signature's time.
fn refuses_the_time(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    text.contains("Signature expired") || text.contains("Signature not yet current")
}

/// AWS's clock minus ours (in ms) from an answer's `Date`, received at `at`.
fn offset_from(headers: &reqwest::header::HeaderMap, at: SystemTime) -> Option<i64> {
    let date = headers.get(reqwest::header::DATE)?.to_str().ok()?;
    let theirs = httpdate::parse_http_date(date).ok()?;
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    Some(match theirs.duration_since(at) {
        Ok(ahead) => ms(ahead),
        Err(behind) => -ms(behind.duration()),
    })
}

/// Starts a signer forwarding to `base` (binds the port at once, so the
/// client can be built; serves on its own thread and runtime, so it works
/// whatever runtime the caller uses).
pub(super) fn start(
    base: url::Url,
    signing: AwsSigning,
    client: reqwest::Client,
) -> Result<Arc<Signer>> {
    let host = match (base.host_str(), base.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        (None, _) => return Err(Error::Invalid(format!("--url `{base}` has no host"))),
    };
    let listener = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| Error::Invalid(format!("cannot start the SigV4 signer on loopback: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::Invalid(format!("cannot start the SigV4 signer: {e}")))?;
    let (stop, stopped) = oneshot::channel();
    let token = new_token();
    let target = Arc::new(Target {
        base,
        token: token.clone(),
        host,
        signing,
        client,
        offset_ms: AtomicI64::new(0),
    });
    std::thread::Builder::new()
        .name("estx-sigv4".into())
        .spawn(move || serve(listener, target, stopped))
        .map_err(|e| Error::Invalid(format!("cannot start the SigV4 signer: {e}")))?;
    Ok(Arc::new(Signer {
        addr,
        token,
        stop: Some(stop),
    }))
}

/// Accepts connections until told to stop.
fn serve(listener: TcpListener, target: Arc<Target>, mut stopped: oneshot::Receiver<()>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        tracing::error!("cannot start the SigV4 signer's runtime");
        return;
    };
    runtime.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        loop {
            let stream = tokio::select! {
                _ = &mut stopped => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "SigV4 signer: accept failed");
                        continue;
                    }
                },
            };
            let target = target.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let target = target.clone();
                    async move { Ok::<_, std::convert::Infallible>(forward(&target, req).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
}

/// Signs one request, sends it to the endpoint, and answers with its answer
/// (or a gateway error saying why it could not).
async fn forward(target: &Target, req: Request<Incoming>) -> Response<Full<Bytes>> {
    match try_forward(target, req).await {
        Ok(resp) => resp,
        Err((status, why)) => {
            tracing::warn!(status, %why, "SigV4 signer: request not forwarded");
            let mut resp = Response::new(Full::new(Bytes::from(format!(
                "estx-tui SigV4 signer: {why}"
            ))));
            *resp.status_mut() =
                http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_GATEWAY);
            resp
        }
    }
}

async fn try_forward(
    target: &Target,
    req: Request<Incoming>,
) -> std::result::Result<Response<Full<Bytes>>, (u16, String)> {
    let (parts, body) = req.into_parts();
    let token = parts.headers.get(TOKEN_HEADER).map(|v| v.as_bytes());
    if !token.is_some_and(|t| same_token(t, target.token.as_bytes())) {
        return Err((
            403,
            "refused: not sent by this process's client (no or wrong signer token)".into(),
        ));
    }
    let body = body
        .collect()
        .await
        .map_err(|e| (400, format!("cannot read the request body: {e}")))?
        .to_bytes();
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let url = format!(
        "{}{path_and_query}",
        target.base.as_str().trim_end_matches('/')
    );
    let mut headers: Vec<(String, String)> = vec![("host".into(), target.host.clone())];
    for (name, value) in &parts.headers {
        if HOP_BY_HOP.contains(&name.as_str()) || name.as_str() == TOKEN_HEADER {
            continue;
        }
        if let Ok(v) = value.to_str() {
            headers.push((name.as_str().to_string(), v.to_string()));
        }
    }
    // A refusal of the signature's time was not acted on: signing again on
    // AWS's clock is safe even for a write.
    let mut resigned = false;
    let (status, answer_headers, bytes) = loop {
        let (status, answer_headers, bytes) =
            send_signed(target, &parts.method, &url, &headers, &body).await?;
        if status == 403 && !resigned && refuses_the_time(&bytes) {
            if let Some(offset) = offset_from(&answer_headers, SystemTime::now()) {
                tracing::warn!(
                    offset_ms = offset,
                    "AWS refused the signature's time: signing on its clock"
                );
                target.offset_ms.store(offset, Ordering::Relaxed);
                resigned = true;
                continue;
            }
        }
        break (status, answer_headers, bytes);
    };
    let mut resp = Response::new(Full::new(bytes));
    *resp.status_mut() = status;
    for (name, value) in &answer_headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            resp.headers_mut().append(name, value.clone());
        }
    }
    Ok(resp)
}

/// Signs the request at the signer's time, sends it, reads the answer whole.
async fn send_signed(
    target: &Target,
    method: &http::Method,
    url: &str,
    headers: &[(String, String)],
    body: &Bytes,
) -> std::result::Result<(http::StatusCode, reqwest::header::HeaderMap, Bytes), (u16, String)> {
    let signed = target
        .signing
        .sign(method.as_str(), url, headers, body, target.now())
        .map_err(|e| (500, e.to_string()))?;
    let mut out = target.client.request(method.clone(), url);
    for (name, value) in headers.iter().chain(&signed) {
        out = out.header(name, value);
    }
    let answer = out.body(body.clone()).send().await.map_err(|e| {
        let status = if e.is_timeout() { 504 } else { 502 };
        (status, format!("cannot reach {}: {e}", target.base))
    })?;
    let status = answer.status();
    let answer_headers = answer.headers().clone();
    let bytes = answer.bytes().await.map_err(|e| {
        (
            502,
            format!("the answer from {} broke off: {e}", target.base),
        )
    })?;
    Ok((status, answer_headers, bytes))
}

#[cfg(test)]
mod tests {
    use crate::cluster::signer::*;
    use crate::cluster::sigv4::AwsService;
    use std::time::Duration;

    fn signing() -> AwsSigning {
        AwsSigning::from_values(
            AwsService::Es,
            Some("eu-west-1".into()),
            Some("AKIDEXAMPLE".into()),
            Some("secret".into()),
            None,
        )
        .expect("test signing")
    }

    /// A target that never answers: the refused request must not even
    /// connect to it; the admitted one reaches it (and times out there).
    #[tokio::test]
    async fn only_requests_with_the_signers_token_are_forwarded() {
        let target = TcpListener::bind("127.0.0.1:0").expect("bind");
        target.set_nonblocking(true).expect("nonblocking");
        let base = url::Url::parse(&format!("http://{}/", target.local_addr().expect("addr")))
            .expect("url");
        let forwarding = reqwest::Client::builder()
            .timeout(Duration::from_millis(500))
            .build()
            .expect("client");
        let signer = start(base, signing(), forwarding).expect("signer");
        let client = reqwest::Client::new();

        let refused = client.get(signer.url()).send().await.expect("answer");
        assert_eq!(refused.status(), 403);
        let wrong = client
            .get(signer.url())
            .header(TOKEN_HEADER, "0".repeat(64))
            .send()
            .await
            .expect("answer");
        assert_eq!(wrong.status(), 403);
        assert!(
            matches!(target.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a refused request must never reach the endpoint"
        );

        let admitted = client
            .get(signer.url())
            .header(TOKEN_HEADER, signer.token())
            .send()
            .await
            .expect("answer");
        assert_eq!(
            admitted.status(),
            504,
            "forwarded, and the target never answers"
        );
        assert!(
            target.accept().is_ok(),
            "the admitted request reached the endpoint"
        );
    }

    #[test]
    fn the_offset_comes_from_the_refusals_date() {
        let mut h = reqwest::header::HeaderMap::new();
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(offset_from(&h, at), None);
        let ahead = httpdate::fmt_http_date(at + Duration::from_secs(1200));
        h.insert(reqwest::header::DATE, ahead.parse().expect("date"));
        assert_eq!(offset_from(&h, at), Some(1_200_000));
        let behind = httpdate::fmt_http_date(at - Duration::from_secs(600));
        h.insert(reqwest::header::DATE, behind.parse().expect("date"));
        assert_eq!(offset_from(&h, at), Some(-600_000));
        assert_eq!(shifted(at, -600_000), at - Duration::from_secs(600));
        assert!(refuses_the_time(
            b"{\"message\":\"Signature expired: 20261128T023414Z is now earlier than ...\"}"
        ));
        assert!(!refuses_the_time(
            b"{\"message\":\"The request signature we calculated does not match\"}"
        ));
    }

    #[test]
    fn tokens_are_compared_whole() {
        assert!(same_token(b"abcd", b"abcd"));
        assert!(!same_token(b"abce", b"abcd"));
        assert!(!same_token(b"abc", b"abcd"));
        assert_ne!(new_token(), new_token());
        assert_eq!(new_token().len(), 64);
    }
}
