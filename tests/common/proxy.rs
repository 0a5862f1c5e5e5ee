//! `FaultProxy`: a tiny HTTP/1.1 proxy for "lost response" tests.
//!
//! It sits on `127.0.0.1:<free port>` in front of an upstream cluster. Every
//! client request is forwarded in full over a new upstream connection (with
//! `Connection: close`), and the upstream response is read to EOF. Normally
//! that response is passed back to the client; when a drop rule matches, it
//! is discarded and the client connection is closed without a single byte of
//! response, so the upstream has applied the request but the client cannot
//! know. Each client connection carries exactly one request: responses always
//! say `Connection: close`, so clients never reuse a connection (and
//! therefore never silently retry a request on a "stale" pooled connection).
//!
//! Rules in [`rewrite`] make it answer as real deployments do (canned 401s,
//! HTML 502s, 429 with `Retry-After`, slow requests, a shifted or no `Date`
//! ([`FaultProxy::strip_date`]), 413 for a body over nginx's limit), held
//! requests ([`hold`]: past the first few, until the test lets them go), and it
//! also serves as an HTTP forward proxy (`HTTP_PROXY`). [`security`] makes it
//! a cluster with security on (Basic auth and bearer tokens, users,
//! privileges); [`sigv4`] makes it check AWS SigV4 signatures as Amazon
//! OpenSearch Service does, and [`iam`] refuses methods as its IAM
//! policies do; [`personality`]
//! makes it answer as a named product and version (`GET /`, no `Date`,
//! point-in-time dialect, sort restrictions, missing APIs, size limits);
//! [`routing`] makes reads by id miss documents indexed with custom routing
//! as an index of several shards does; [`fls`] answers as a role with
//! field-level security, an ingest pipeline stamping writes, or indices with
//! a derived `_source`.
//!
//! Only `std` is used: one thread accepts, one thread serves each connection.

mod fls;
mod hold;
mod iam;
mod lost_shard;
mod partial;
mod personality;
mod products;
mod rewrite;
mod routing;
mod security;
mod security_actions;
mod security_api;
mod shed;
mod sigv4;
mod wire;

pub use fls::FlsProduct;
pub use hold::Gate;
pub use partial::partial_search;
pub use personality::{Difference, Personality, TABLE as PERSONALITY_TABLE};
pub use rewrite::Canned;
pub use security::{Product, Realm, User};
pub use sigv4::{verify_parts as verify_sigv4, SigV4Key};

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the proxy waits on a silent client or upstream before giving up.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// Hop-by-hop request headers the proxy replaces or strips when forwarding.
const STRIPPED_REQUEST_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "expect",
    "host",
];

/// An HTTP/1.1 proxy in front of one upstream, with rules that make it
/// swallow responses. Stops (and closes every client connection) when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

/// State shared between the handle and the proxy threads.
struct Shared {
    upstream_addr: SocketAddr,
    upstream_host: String,
    rules: Mutex<Vec<DropRule>>,
    dropped: AtomicUsize,
    forwarded: AtomicUsize,
    log: Mutex<Vec<String>>,
    /// Each forwarded request's log line with its answer's size in bytes.
    answered: Mutex<Vec<(String, usize)>>,
    /// Each request received, with its body's size ([`FaultProxy::sent`]).
    sent: Mutex<Vec<Sent>>,
    /// What [`Sent::watched`] looks for in each body.
    watched: Mutex<Option<Vec<u8>>>,
    stopping: AtomicBool,
    next_conn_id: AtomicU64,
    clients: Mutex<HashMap<u64, TcpStream>>,
    rewrites: Mutex<Vec<rewrite::Rule>>,
    date_shift: AtomicI64,
    absolute_form: AtomicUsize,
    canned: AtomicUsize,
    body_limit: AtomicUsize,
    largest_body: AtomicUsize,
    realm: Mutex<Option<security::Realm>>,
    personality: Mutex<Option<personality::Personality>>,
    strip_date: AtomicBool,
    route_by_shards: AtomicBool,
    sigv4: Mutex<Option<sigv4::SigV4Key>>,
    sigv4_accepted: AtomicUsize,
    sigv4_window: AtomicI64,
    iam: Mutex<Option<iam::Denial>>,
    shed: shed::Rule,
    lost_shard: AtomicBool,
    fls: Mutex<fls::Rules>,
}

/// One request the proxy received ([`FaultProxy::sent`]).
#[derive(Debug, Clone)]
pub struct Sent {
    /// `METHOD path`.
    pub line: String,
    /// Its body's size in bytes (as received: still chunked if it was).
    pub bytes: usize,
    /// Its body holds what [`FaultProxy::watch_bodies_for`] named.
    pub watched: bool,
}

/// "Swallow the responses to the next `remaining` matching requests."
struct DropRule {
    method: String,
    path_contains: String,
    remaining: usize,
    /// Armed once this rule's last use is taken.
    then: Option<Box<DropRule>>,
}

/// One request as read from the client.
struct Request {
    method: String,
    target: String,
    version: String,
    headers: Vec<(String, String)>,
    /// The body exactly as received (still chunked if it was chunked).
    body: Vec<u8>,
}

impl FaultProxy {
    /// Starts a proxy in front of `upstream` (e.g. `http://127.0.0.1:40113`;
    /// only the scheme `http`, host and port are used). Panics if the upstream
    /// URL is unusable or no local port can be bound.
    pub fn start(upstream: &str) -> FaultProxy {
        let parsed = url::Url::parse(upstream)
            .unwrap_or_else(|e| panic!("FaultProxy: bad upstream url {upstream}: {e}"));
        assert_eq!(
            parsed.scheme(),
            "http",
            "FaultProxy only proxies plain http, not {upstream}"
        );
        let host = parsed
            .host_str()
            .unwrap_or_else(|| panic!("FaultProxy: no host in {upstream}"))
            .to_string();
        let port = parsed.port_or_known_default().unwrap_or(80);
        let upstream_addr = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .unwrap_or_else(|| panic!("FaultProxy: cannot resolve {host}:{port}"));

        let listener = TcpListener::bind("127.0.0.1:0").expect("FaultProxy: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("FaultProxy: local_addr");
        let shared = Arc::new(Shared {
            upstream_addr,
            upstream_host: format!("{host}:{port}"),
            rules: Mutex::new(Vec::new()),
            dropped: AtomicUsize::new(0),
            forwarded: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
            answered: Mutex::new(Vec::new()),
            sent: Mutex::new(Vec::new()),
            watched: Mutex::new(None),
            stopping: AtomicBool::new(false),
            next_conn_id: AtomicU64::new(0),
            clients: Mutex::new(HashMap::new()),
            rewrites: Mutex::new(Vec::new()),
            date_shift: AtomicI64::new(0),
            absolute_form: AtomicUsize::new(0),
            canned: AtomicUsize::new(0),
            body_limit: AtomicUsize::new(0),
            largest_body: AtomicUsize::new(0),
            realm: Mutex::new(None),
            personality: Mutex::new(None),
            sigv4: Mutex::new(None),
            sigv4_accepted: AtomicUsize::new(0),
            sigv4_window: AtomicI64::new(0),
            iam: Mutex::new(None),
            shed: shed::Rule::default(),
            lost_shard: AtomicBool::new(false),
            fls: Mutex::new(fls::Rules::default()),
            strip_date: AtomicBool::new(false),
            route_by_shards: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        let accept_thread = std::thread::Builder::new()
            .name("fault-proxy-accept".into())
            .spawn(move || accept_loop(&listener, &accept_shared))
            .expect("FaultProxy: spawn accept thread");
        FaultProxy {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        }
    }

    /// Base URL of the proxy, e.g. `http://127.0.0.1:45678`; point the client
    /// under test here.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Swallows the responses to the next `count` requests whose method equals
    /// `method` (case-insensitive) and whose path (including the query string)
    /// contains `path_contains`. Such a request is still forwarded to the
    /// upstream in full and its response read completely, so the upstream
    /// applies it; then the client connection is closed without a response.
    /// Rules accumulate; the first matching rule with requests left is used.
    pub fn drop_responses(&self, method: &str, path_contains: &str, count: usize) {
        lock(&self.shared.rules).push(DropRule {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            remaining: count,
            then: None,
        });
    }

    /// Like [`drop_responses`](Self::drop_responses), and once those `count`
    /// responses are swallowed, swallows the next `then.2` responses of
    /// `then.0` requests whose path contains `then.1` — armed at the moment
    /// the last matching request arrives, so nothing depends on timing (e.g.
    /// a write's response, then the re-reads that would confirm it).
    pub fn drop_responses_then(
        &self,
        method: &str,
        path_contains: &str,
        count: usize,
        then: (&str, &str, usize),
    ) {
        lock(&self.shared.rules).push(DropRule {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            remaining: count,
            then: Some(Box::new(DropRule {
                method: then.0.to_string(),
                path_contains: then.1.to_string(),
                remaining: then.2,
                then: None,
            })),
        });
    }

    /// Removes every drop rule (including partially used ones).
    pub fn clear_rules(&self) {
        lock(&self.shared.rules).clear();
    }

    /// How many responses have been swallowed so far. A request is counted
    /// only after the upstream response has been read in full, and before the
    /// client connection is closed: once the client sees its error, the
    /// upstream has applied the request and this counter includes it.
    pub fn dropped(&self) -> usize {
        self.shared.dropped.load(Ordering::SeqCst)
    }

    /// How many requests were relayed with their response passed back to the
    /// client (dropped ones are not included).
    pub fn forwarded(&self) -> usize {
        self.shared.forwarded.load(Ordering::SeqCst)
    }

    /// One line per request seen, in completion order, such as
    /// `PUT /accounts/_doc/a1?if_seq_no=3 -> 200` or `... -> dropped`;
    /// useful in assertion messages.
    pub fn log(&self) -> Vec<String> {
        lock(&self.shared.log).clone()
    }

    /// Each request relayed with the cluster's answer, as its
    /// [`FaultProxy::log`] line, with the answer's size in bytes (headers
    /// included): what a poll had to read.
    pub fn answered(&self) -> Vec<(String, usize)> {
        lock(&self.shared.answered).clone()
    }

    /// Each request received (past the security gates), in arrival order:
    /// what a client had to send, as [`FaultProxy::answered`] is what it
    /// had to read.
    pub fn sent(&self) -> Vec<Sent> {
        lock(&self.shared.sent).clone()
    }

    /// From now on, each [`Sent`] says whether its body holds `needle`.
    pub fn watch_bodies_for(&self, needle: &str) {
        *lock(&self.shared.watched) = Some(needle.as_bytes().to_vec());
    }

    /// The requests of [`FaultProxy::log`] from line `from` on, counted by
    /// kind (`POST _msearch: 12, PUT (document): 3, ...`): what a bench
    /// prints of a window.
    pub fn kinds_since(&self, from: usize) -> String {
        let mut by: std::collections::BTreeMap<String, usize> = Default::default();
        for line in lock(&self.shared.log).iter().skip(from) {
            let mut words = line.split_whitespace();
            let method = words.next().unwrap_or("?");
            let path = words.next().unwrap_or("?").split('?').next().unwrap_or("?");
            let kind = path
                .split('/')
                .find(|seg| seg.starts_with('_'))
                .unwrap_or("(document)");
            *by.entry(format!("{method} {kind}")).or_default() += 1;
        }
        by.iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the accept loop with a throwaway connection.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(handle) = self.accept_thread.take() {
            let _ = handle.join();
        }
        for (_, client) in lock(&self.shared.clients).drain() {
            let _ = client.shutdown(Shutdown::Both);
        }
    }
}

/// Locks a mutex, ignoring poisoning (a panicking test thread must not take
/// the proxy down with it).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let id = shared.next_conn_id.fetch_add(1, Ordering::SeqCst);
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.clients).insert(id, clone);
        }
        let conn_shared = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name(format!("fault-proxy-conn-{id}"))
            .spawn(move || {
                let _ = serve_connection(stream, &conn_shared);
                lock(&conn_shared.clients).remove(&id);
            });
        if spawned.is_err() {
            lock(&shared.clients).remove(&id);
        }
    }
}

/// Serves the single request of one client connection.
fn serve_connection(client: TcpStream, shared: &Shared) -> io::Result<()> {
    client.set_read_timeout(Some(IO_TIMEOUT))?;
    client.set_write_timeout(Some(IO_TIMEOUT))?;
    let _ = client.set_nodelay(true);
    let mut writer = client.try_clone()?;
    let mut reader = BufReader::new(client);

    let Some(mut request) = read_request(&mut reader, &mut writer)? else {
        return Ok(()); // client connected and left (or the proxy's wake-up call)
    };
    request.target = rewrite::origin_form(shared, &request.target);
    let path = request.target.clone();
    if let Some(bytes) = sigv4::gate(shared, &request) {
        writer.write_all(&finish(shared, bytes, None))?;
        return close_gracefully(&writer, &mut reader);
    }
    if let Some(bytes) = iam::gate(shared, &request) {
        writer.write_all(&finish(shared, bytes, None))?;
        return close_gracefully(&writer, &mut reader);
    }
    if let Some(bytes) = security::gate(shared, &request) {
        writer.write_all(&finish(shared, bytes, None))?;
        return close_gracefully(&writer, &mut reader);
    }
    let as_role = match fls::before(shared, &mut request) {
        Ok(after) => after,
        Err(refusal) => {
            lock(&shared.log).push(format!("{} {path} -> refused (fls)", request.method));
            writer.write_all(&finish(shared, refusal, None))?;
            return close_gracefully(&writer, &mut reader);
        }
    };
    lock(&shared.sent).push(Sent {
        line: format!("{} {path}", request.method),
        bytes: request.body.len(),
        watched: lock(&shared.watched).as_ref().is_some_and(|needle| {
            !needle.is_empty()
                && request
                    .body
                    .windows(needle.len())
                    .any(|w| w == needle.as_slice())
        }),
    });
    if let Some(bytes) = rewrite::body_too_large(shared, &request.method, &path, request.body.len())
    {
        writer.write_all(&finish(shared, bytes, None))?;
        return close_gracefully(&writer, &mut reader);
    }
    let personality = personality::current(shared);
    let fix = match personality.map(|p| (p, personality::before(p, &mut request))) {
        Some((p, personality::Plan::Answer(canned))) => {
            shared.canned.fetch_add(1, Ordering::SeqCst);
            lock(&shared.log).push(format!(
                "{} {path} -> {} ({})",
                request.method,
                canned.status(),
                p.name()
            ));
            let bytes = canned.bytes(shared.date_shift.load(Ordering::SeqCst));
            writer.write_all(&finish(shared, bytes, Some((p, personality::Fix::Headers))))?;
            return close_gracefully(&writer, &mut reader);
        }
        Some((p, personality::Plan::Forward(fix))) => Some((p, fix)),
        None => None,
    };
    let instead = match rewrite::before_forwarding(shared, &request.method, &path) {
        rewrite::Plan::Answer(bytes) => {
            writer.write_all(&finish(shared, bytes, fix))?;
            return close_gracefully(&writer, &mut reader);
        }
        rewrite::Plan::ForwardThenAnswer(bytes) => Some(bytes),
        rewrite::Plan::Forward => None,
    };
    let miss = routing::before(shared, &mut request);
    let shed = shed::before(shared, &mut request);
    if let Some(s) = shed.as_ref().filter(|s| shed::all_shed(s)) {
        writer.write_all(&finish(shared, shed::answer_all(s), fix))?;
        return close_gracefully(&writer, &mut reader);
    }
    let lost = lost_shard::before(shared, &request);
    if let lost_shard::Plan::Refuse(bytes) = lost {
        writer.write_all(&finish(shared, bytes, fix))?;
        return close_gracefully(&writer, &mut reader);
    }
    let drop_it = take_rule(shared, &request.method, &path);

    let response = match forward(shared, &request) {
        Ok(response) if !response.is_empty() => response,
        outcome => {
            if drop_it {
                restore_rule(shared, &request.method, &path);
            }
            let why = match outcome {
                Ok(_) => "upstream closed without a response".to_string(),
                Err(e) => e.to_string(),
            };
            lock(&shared.log).push(format!("{} {path} -> 502 ({why})", request.method));
            let body = format!("FaultProxy: upstream failed: {why}");
            let _ = write!(
                writer,
                "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            return close_gracefully(&writer, &mut reader);
        }
    };

    if drop_it {
        lock(&shared.log).push(format!("{} {path} -> dropped", request.method));
        shared.dropped.fetch_add(1, Ordering::SeqCst);
        let _ = writer.shutdown(Shutdown::Both);
        return Ok(());
    }
    if let Some(bytes) = instead {
        writer.write_all(&finish(shared, bytes, fix))?;
        return close_gracefully(&writer, &mut reader);
    }
    let response = match &miss {
        Some(miss) => routing::after(miss, response),
        None => response,
    };
    let response = match &shed {
        Some(s) => shed::after(s, response),
        None => response,
    };
    let response = shed::after_read(shared, &request.target, response);
    let response = lost_shard::after(&lost, response);
    let response = match &as_role {
        Some(a) => fls::after(a, response),
        None => response,
    };
    let response = finish(shared, rewrite::shift_response_date(shared, response), fix);

    let status = String::from_utf8_lossy(&response[..response.len().min(64)])
        .split_whitespace()
        .nth(1)
        .unwrap_or("?")
        .to_string();
    let line = format!("{} {path} -> {status}", request.method);
    lock(&shared.answered).push((line.clone(), response.len()));
    lock(&shared.log).push(line);
    shared.forwarded.fetch_add(1, Ordering::SeqCst);
    writer.write_all(&wire::ensure_connection_close(&response))?;
    writer.flush()?;
    close_gracefully(&writer, &mut reader)
}

/// The answer as it leaves the proxy: the personality's changes, and no
/// `Date` when it is stripped.
fn finish(
    shared: &Shared,
    response: Vec<u8>,
    fix: Option<(personality::Personality, personality::Fix)>,
) -> Vec<u8> {
    let response = match fix {
        Some((p, fix)) => personality::after(p, fix, response),
        None => response,
    };
    if shared.strip_date.load(Ordering::SeqCst) {
        wire::without_header(&response, "date")
    } else {
        response
    }
}

/// Half-closes towards the client, then waits for the client to close its
/// side, so that closing the socket cannot reset the connection and destroy
/// response bytes the client has not read yet.
fn close_gracefully(writer: &TcpStream, reader: &mut BufReader<TcpStream>) -> io::Result<()> {
    writer.shutdown(Shutdown::Write)?;
    let _ = writer.set_read_timeout(Some(Duration::from_secs(5)));
    let mut sink = [0u8; 4096];
    while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
    Ok(())
}

/// Consumes one use of the first rule matching the request, if any.
fn take_rule(shared: &Shared, method: &str, path: &str) -> bool {
    let mut rules = lock(&shared.rules);
    match rules.iter_mut().find(|r| {
        r.remaining > 0 && r.method.eq_ignore_ascii_case(method) && path.contains(&r.path_contains)
    }) {
        Some(rule) => {
            rule.remaining -= 1;
            if rule.remaining == 0 {
                if let Some(next) = rule.then.take() {
                    rules.push(*next);
                }
            }
            true
        }
        None => false,
    }
}

/// Gives back the use taken by [`take_rule`] when the upstream never saw the
/// request (so the write was not applied and the drop must not count).
fn restore_rule(shared: &Shared, method: &str, path: &str) {
    let mut rules = lock(&shared.rules);
    if let Some(rule) = rules
        .iter_mut()
        .find(|r| r.method.eq_ignore_ascii_case(method) && path.contains(&r.path_contains))
    {
        rule.remaining += 1;
    }
}

/// Reads one request (head and body). `Ok(None)` on EOF before any byte.
fn read_request(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
) -> io::Result<Option<Request>> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(None);
    }
    let request_line = request_line.trim_end().to_string();
    if request_line.is_empty() {
        return Ok(None);
    }
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(target), version) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad_data(format!("malformed request line {request_line:?}")));
    };

    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(bad_data("EOF inside request head".into()));
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad_data(format!("malformed header {line:?}")))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }

    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let body = if header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        wire::read_chunked_raw(reader)?
    } else if let Some(length) = header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| bad_data(format!("bad Content-Length {length:?}")))?;
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    } else {
        Vec::new()
    };

    Ok(Some(Request {
        method: method.to_string(),
        target: target.to_string(),
        version: version.unwrap_or("HTTP/1.1").to_string(),
        headers,
        body,
    }))
}

/// Sends `request` over a new upstream connection and reads the response
/// until the upstream closes it.
fn forward(shared: &Shared, request: &Request) -> io::Result<Vec<u8>> {
    let mut upstream = TcpStream::connect_timeout(&shared.upstream_addr, Duration::from_secs(10))?;
    upstream.set_read_timeout(Some(IO_TIMEOUT))?;
    upstream.set_write_timeout(Some(IO_TIMEOUT))?;
    let _ = upstream.set_nodelay(true);

    let mut head = format!(
        "{} {} {}\r\nHost: {}\r\n",
        request.method, request.target, request.version, shared.upstream_host
    );
    for (name, value) in &request.headers {
        if !STRIPPED_REQUEST_HEADERS
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
        {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut message = head.into_bytes();
    message.extend_from_slice(&request.body);
    upstream.write_all(&message)?;
    upstream.flush()?;

    let mut response = Vec::new();
    upstream.read_to_end(&mut response)?;
    Ok(response)
}

fn bad_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}
