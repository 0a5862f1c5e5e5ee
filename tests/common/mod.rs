//! Shared harness for the integration tests of `estx`.
//!
//! Every integration test crate pulls this in with `mod common;` and gets:
//!
//! - [`TestServer`]: the cluster under test. It is a freshly spawned
//!   `osmem-server` (an in-memory OpenSearch-compatible server from PyPI), or
//!   the real cluster named by `ESTX_TEST_URL` when that variable is set.
//! - [`TestIndices`] / [`unique_prefix`]: index names that cannot collide with
//!   other tests sharing the same (real) cluster.
//! - [`app`]: an application following the article, with Kestra-style
//!   locks and heartbeats, crashes injected, for live tests beside the tool.
//! - [`world::Kit`]: one kit for building a test's world (accounts, a
//!   transfer stopped at any step, backdating, locks of each shape, many
//!   stuck transactions), used by every target that seeds the cluster.
//! - [`tmux::Tmux`]: the real binary in a detached tmux session, for the
//!   end-to-end tests of the dashboard (`dashboard_e2e`, `cli`).
//! - [`FaultProxy`]: an HTTP/1.1 proxy that can swallow responses, for
//!   "the write was applied but the client never heard about it" tests.
//! - [`tamper::edit_first_receipt`]: a stored record edited by hand, for
//!   the tests that prove `audit --receipts` catches it.
//! - [`tls::TlsFront`]: HTTPS in front of the server, signed by a throwaway CA.
//! - [`wait_until`] / [`wait_until_blocking`]: polling with a deadline, so
//!   that no test synchronises by sleeping.
//! - [`http`] / [`try_http`] / [`refresh`]: a tiny blocking HTTP client on
//!   `std::net` for raw setup and inspection, independent of the crate's own
//!   client.
//!
//! `osmem-server` has no automatic refresh: a test that searches after writing
//! must call [`refresh`] first.

#![allow(dead_code, unused_imports)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod app;
pub mod proxy;
pub mod server;
pub mod tamper;
pub mod tls;
pub mod tmux;
pub mod world;

pub use proxy::FaultProxy;
pub use server::{unique_prefix, TestIndices, TestServer};

use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How often [`wait_until`] and [`wait_until_blocking`] re-evaluate their condition.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Polls the async condition `f` every [`POLL_INTERVAL`] until it returns
/// `true`; panics with `what` if it is still `false` after `deadline`.
///
/// The condition is always evaluated at least once, and once more after the
/// deadline has passed, so a slow final poll cannot cause a spurious failure.
pub async fn wait_until<F, Fut>(what: &str, deadline: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        let past_deadline = start.elapsed() >= deadline;
        if f().await {
            return;
        }
        if past_deadline {
            panic!("timed out after {deadline:?} waiting until {what}");
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Blocking twin of [`wait_until`] for tests that are not async.
pub fn wait_until_blocking<F>(what: &str, deadline: Duration, mut f: F)
where
    F: FnMut() -> bool,
{
    let start = Instant::now();
    loop {
        let past_deadline = start.elapsed() >= deadline;
        if f() {
            return;
        }
        if past_deadline {
            panic!("timed out after {deadline:?} waiting until {what}");
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Sends one HTTP/1.1 request and returns `(status, body)`; panics on any
/// transport error (use [`try_http`] to observe those).
///
/// `url` is absolute, e.g. `format!("{}/accounts/_doc/a1", server.url())`.
/// A body is sent as `application/json` with a `Content-Length`.
pub fn http(method: &str, url: &str, body: Option<&str>) -> (u16, String) {
    match try_http(method, url, body) {
        Ok(response) => response,
        Err(e) => panic!("{method} {url} failed: {e}"),
    }
}

/// Sends one HTTP/1.1 request (`Connection: close`) using only `std::net`
/// and returns `(status, body)`.
///
/// Only `http://` URLs are supported; `user:password@` in the URL is sent as
/// Basic authentication (taken verbatim, not percent-decoded). A connection
/// that closes before a complete status line arrives is an
/// [`io::ErrorKind::UnexpectedEof`] error: that is what a client sees when a
/// [`FaultProxy`] drops the response.
pub fn try_http(method: &str, url: &str, body: Option<&str>) -> io::Result<(u16, String)> {
    let parsed = url::Url::parse(url)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad url {url}: {e}")))?;
    if parsed.scheme() != "http" {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the test http helper only speaks plain http, not {url}"),
        ));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("no host in {url}")))?
        .to_string();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let mut target = parsed.path().to_string();
    if let Some(query) = parsed.query() {
        target.push('?');
        target.push_str(query);
    }

    let addr = (host.as_str(), port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("cannot resolve {host}")))?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.set_write_timeout(Some(Duration::from_secs(60)))?;

    let body = body.unwrap_or("");
    let mut request = format!(
        "{method} {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nAccept: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        request.push_str("Content-Type: application/json\r\n");
    }
    if !parsed.username().is_empty() {
        let credentials = format!("{}:{}", parsed.username(), parsed.password().unwrap_or(""));
        request.push_str(&format!(
            "Authorization: Basic {}\r\n",
            base64(credentials.as_bytes())
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    stream.flush()?;

    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "connection closed without a complete response ({} bytes received)",
                    raw.len()
                ),
            )
        })
        .map(|(status, body)| (status, String::from_utf8_lossy(&body).into_owned()))
}

/// `POST /{index}/_refresh` on the cluster at `url`, panicking unless it
/// succeeds. Needed before searching on `osmem-server`, which never refreshes
/// by itself.
pub fn refresh(url: &str, index: &str) {
    let (status, body) = http("POST", &format!("{url}/{index}/_refresh"), None);
    assert!(
        (200..300).contains(&status),
        "refresh of {index} failed with {status}: {body}"
    );
}

/// Splits a complete HTTP/1.1 response read until EOF into status and
/// (de-chunked) body. Returns `None` if no complete head was received.
fn parse_response(raw: &[u8]) -> Option<(u16, Vec<u8>)> {
    let head_end = find(raw, b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = lines.any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("transfer-encoding")
                && value.to_ascii_lowercase().contains("chunked")
        })
    });
    let body = &raw[head_end + 4..];
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Some((status, body))
}

/// Decodes a `Transfer-Encoding: chunked` body.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = find(data, b"\r\n")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// Position of the first occurrence of `needle` in `haystack`.
pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Standard base64 with padding (for Basic authentication).
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// User + system CPU of process `pid` so far (clock ticks of 10 ms): what
/// the benches measure another process (the dashboard, the server) by.
pub fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let f: Vec<&str> = stat[stat.rfind(')').expect("comm") + 2..]
        .split_whitespace()
        .collect();
    let ticks = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}
