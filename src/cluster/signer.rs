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

use super::sigv4::AwsSigning;
use crate::error::{Error, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::SystemTime;
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
    let signed = target
        .signing
        .sign(
            parts.method.as_str(),
            &url,
            &headers,
            &body,
            SystemTime::now(),
        )
        .map_err(|e| (500, e.to_string()))?;
    let mut out = target.client.request(parts.method.clone(), &url);
    for (name, value) in headers.iter().chain(&signed) {
        out = out.header(name, value);
    }
    let answer = out.body(body).send().await.map_err(|e| {
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
    let mut resp = Response::new(Full::new(bytes));
    *resp.status_mut() = status;
    for (name, value) in &answer_headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            resp.headers_mut().append(name, value.clone());
        }
    }
    Ok(resp)
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
    fn tokens_are_compared_whole() {
        assert!(same_token(b"abcd", b"abcd"));
        assert!(!same_token(b"abce", b"abcd"));
        assert!(!same_token(b"abc", b"abcd"));
        assert_ne!(new_token(), new_token());
        assert_eq!(new_token().len(), 64);
    }
}
