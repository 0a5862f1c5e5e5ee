//! Making the [`FaultProxy`] answer the way real deployments do: OpenSearch's
//! plain-text or empty 401, a load balancer's HTML 502, a throttled 429 with
//! `Retry-After`, a `_cluster/health` that hangs without a master, a cluster
//! whose clock disagrees with ours (`Date` shifted), nginx's 413 for a body
//! over `client_max_body_size`, and HTTP forward-proxy requests
//! (`GET http://host/path`, as clients send through `HTTP_PROXY`).

use super::hold::Gate;
use super::{lock, FaultProxy, Shared, IO_TIMEOUT};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// A canned HTTP answer.
#[derive(Debug, Clone)]
pub struct Canned {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Canned {
    /// `status` with a `text/plain` body (OpenSearch security answers `Unauthorized`).
    pub fn text(status: u16, body: &str) -> Canned {
        Canned {
            status,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: body.into(),
        }
    }

    /// `status` with no body at all.
    pub fn empty(status: u16) -> Canned {
        Canned {
            status,
            headers: Vec::new(),
            body: String::new(),
        }
    }

    /// `status` with the HTML page a load balancer (nginx) answers.
    pub fn html(status: u16, title: &str) -> Canned {
        Canned {
            status,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: format!(
                "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            ),
        }
    }

    /// `status` with a JSON body.
    pub fn json(status: u16, body: serde_json::Value) -> Canned {
        Canned {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    /// A thread pool's rejection as the products send it: 429
    /// `es_rejected_execution_exception` with no `Retry-After` (neither
    /// product sets the header on a rejection: Elasticsearch's
    /// `RestResponse` adds only the exception's own headers, and
    /// `EsRejectedExecutionException` has none). The default load answer;
    /// [`Canned::throttled`] is the exception (a gateway that adds one).
    pub fn rejected() -> Canned {
        Canned::json(
            429,
            serde_json::json!({"error": {"root_cause": [{"type": "es_rejected_execution_exception",
                "reason": "rejected execution of coordinating operation"}],
                "type": "es_rejected_execution_exception",
                "reason": "rejected execution of coordinating operation"}, "status": 429}),
        )
    }

    /// A parent circuit breaker tripped for good: 429
    /// `circuit_breaking_exception` with `"durability": "PERMANENT"`
    /// (`CircuitBreakingException.status()` is `TOO_MANY_REQUESTS` whatever
    /// the durability, which only the body carries:
    /// elasticsearch server/src/main/java/org/elasticsearch/common/breaker/CircuitBreakingException.java).
    pub fn breaker_permanent() -> Canned {
        let reason = "[parent] Data too large, data for [<http_request>] would be \
                      [1031234567/983.4mb], which is larger than the limit of [1020054732/972.7mb]";
        Canned::json(
            429,
            serde_json::json!({"error": {"root_cause": [{"type": "circuit_breaking_exception",
                "reason": reason, "bytes_wanted": 1031234567u64, "bytes_limit": 1020054732u64,
                "durability": "PERMANENT"}],
                "type": "circuit_breaking_exception", "reason": reason,
                "bytes_wanted": 1031234567u64, "bytes_limit": 1020054732u64,
                "durability": "PERMANENT"}, "status": 429}),
        )
    }

    /// Elasticsearch's 429 with `Retry-After: retry_after` (seconds or an
    /// HTTP date): what a gateway in front of it may add; the products
    /// themselves send [`Canned::rejected`].
    pub fn throttled(retry_after: &str) -> Canned {
        let mut c = Canned::json(
            429,
            serde_json::json!({"error": {"type": "es_rejected_execution_exception",
                "reason": "rejected execution: queue capacity reached"}, "status": 429}),
        );
        c.headers.push(("Retry-After".into(), retry_after.into()));
        c
    }

    /// The same answer with one more header (a header may repeat).
    pub fn with_header(mut self, name: &str, value: &str) -> Canned {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same answer without its body (what a `HEAD` gets).
    pub fn without_body(mut self) -> Canned {
        self.body.clear();
        self
    }

    /// The status this answer carries.
    pub fn status(&self) -> u16 {
        self.status
    }

    pub(super) fn bytes(&self, date_shift: i64) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            413 => "Request Entity Too Large",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            504 => "Gateway Timeout",
            _ => "Canned",
        };
        let date = shifted(std::time::SystemTime::now(), date_shift);
        let mut head = format!("HTTP/1.1 {} {reason}\r\nDate: {date}\r\n", self.status);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
            self.body.len(),
            self.body
        ));
        head.into_bytes()
    }
}

/// What to do with matching requests.
#[derive(Debug, Clone)]
enum Action {
    /// Answer this instead of forwarding (the upstream never sees the request).
    Answer(Canned),
    /// Forward (the upstream applies it), then answer this instead of its response.
    AnswerAfterForwarding(Canned),
    /// Wait this long, then forward as usual.
    Delay(Duration),
    /// Wait at this gate (past its first few), then forward as usual.
    Hold(Arc<Gate>),
}

/// "Do `action` to the next `remaining` matching requests."
pub(super) struct Rule {
    method: String,
    path_contains: String,
    remaining: usize,
    action: Action,
    /// The rule applies until then (none: until its count is used).
    until: Option<std::time::Instant>,
}

/// What [`before_forwarding`] decided for one request.
pub(super) enum Plan {
    /// Forward, pass the (possibly `Date`-shifted) response back.
    Forward,
    /// Do not forward; send these bytes.
    Answer(Vec<u8>),
    /// Forward, then send these bytes instead of the response.
    ForwardThenAnswer(Vec<u8>),
}

impl FaultProxy {
    /// Answers the next `count` matching requests (method, path substring as
    /// in [`FaultProxy::drop_responses`]; an empty method matches any) with `canned`, without forwarding
    /// them: nothing reaches the cluster. `usize::MAX` means every one.
    pub fn answer(&self, method: &str, path_contains: &str, count: usize, canned: Canned) {
        self.push_rule(method, path_contains, count, Action::Answer(canned));
    }

    /// Answers every matching request with `canned`, without forwarding
    /// it, for `lasting` from now; then forwards again (a cluster busy for
    /// a while).
    pub fn answer_for(&self, method: &str, path_contains: &str, lasting: Duration, canned: Canned) {
        lock(&self.shared.rewrites).push(Rule {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            remaining: usize::MAX,
            action: Action::Answer(canned),
            until: Some(std::time::Instant::now() + lasting),
        });
    }

    /// Removes every [`FaultProxy::answer`], [`FaultProxy::answer_after_forwarding`]
    /// and [`FaultProxy::delay`] rule: the cluster is reachable again.
    pub fn clear_answers(&self) {
        lock(&self.shared.rewrites).clear();
    }

    /// Forwards the next `count` matching requests (so the cluster applies
    /// them) but answers `canned` instead of the cluster's response: a proxy's
    /// 502/504 after the write landed.
    pub fn answer_after_forwarding(
        &self,
        method: &str,
        path_contains: &str,
        count: usize,
        canned: Canned,
    ) {
        let action = Action::AnswerAfterForwarding(canned);
        self.push_rule(method, path_contains, count, action);
    }

    /// Holds the next `count` matching requests for `delay` before forwarding.
    pub fn delay(&self, method: &str, path_contains: &str, count: usize, delay: Duration) {
        self.push_rule(method, path_contains, count, Action::Delay(delay));
    }

    /// Lets the first `pass` matching requests through, then holds every
    /// later one before forwarding until the returned gate is opened
    /// ([`Gate::open`]): a run that cannot go past that point before the
    /// test lets it. Removed by [`FaultProxy::clear_answers`] (which does
    /// not free the requests already held: open the gate).
    pub fn hold_after(&self, method: &str, path_contains: &str, pass: usize) -> Arc<Gate> {
        let gate = Arc::new(Gate::new(pass));
        let action = Action::Hold(Arc::clone(&gate));
        self.push_rule(method, path_contains, usize::MAX, action);
        gate
    }

    /// Refuses every request whose body is over `bytes` with nginx's 413
    /// page, without forwarding it, as nginx does past its
    /// `client_max_body_size` (default `1m`: "If the size in a request
    /// exceeds the configured value, the 413 (Request Entity Too Large)
    /// error is returned to the client",
    /// <https://nginx.org/en/docs/http/ngx_http_core_module.html#client_max_body_size>).
    pub fn limit_body_size(&self, bytes: usize) {
        self.shared.body_limit.store(bytes, Ordering::SeqCst);
    }

    /// The largest request body seen so far, in bytes (refused ones included).
    pub fn largest_body(&self) -> usize {
        self.shared.largest_body.load(Ordering::SeqCst)
    }

    /// Shifts the `Date` header of every answer by `seconds` (a cluster whose
    /// clock is that far ahead of ours; negative: behind).
    pub fn shift_date(&self, seconds: i64) {
        self.shared.date_shift.store(seconds, Ordering::SeqCst);
    }

    /// How many requests arrived in absolute form (`GET http://host/...`):
    /// the client used this proxy as an HTTP proxy.
    pub fn proxied_requests(&self) -> usize {
        self.shared.absolute_form.load(Ordering::SeqCst)
    }

    /// How many requests were answered by a canned answer instead of the cluster.
    pub fn canned(&self) -> usize {
        self.shared.canned.load(Ordering::SeqCst)
    }

    fn push_rule(&self, method: &str, path_contains: &str, count: usize, action: Action) {
        lock(&self.shared.rewrites).push(Rule {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            remaining: count,
            action,
            until: None,
        });
    }
}

/// Turns an absolute-form target (`http://host:port/path?q`) into the origin
/// form the upstream expects, counting it.
pub(super) fn origin_form(shared: &Shared, target: &str) -> String {
    let Some(rest) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    else {
        return target.to_string();
    };
    shared.absolute_form.fetch_add(1, Ordering::SeqCst);
    match rest.find('/') {
        Some(i) => rest[i..].to_string(),
        None => "/".to_string(),
    }
}

/// nginx's 413 answer when `body_len` is over the limit set by
/// [`FaultProxy::limit_body_size`] (none by default).
pub(super) fn body_too_large(
    shared: &Shared,
    method: &str,
    path: &str,
    body_len: usize,
) -> Option<Vec<u8>> {
    shared.largest_body.fetch_max(body_len, Ordering::SeqCst);
    let limit = shared.body_limit.load(Ordering::SeqCst);
    if limit == 0 || body_len <= limit {
        return None;
    }
    shared.canned.fetch_add(1, Ordering::SeqCst);
    lock(&shared.log).push(format!("{method} {path} -> 413 (body of {body_len} bytes)"));
    let shift = shared.date_shift.load(Ordering::SeqCst);
    Some(Canned::html(413, "413 Request Entity Too Large").bytes(shift))
}

/// Applies the first matching rule (waiting out a delay here).
pub(super) fn before_forwarding(shared: &Shared, method: &str, path: &str) -> Plan {
    let action = {
        let mut rules = lock(&shared.rewrites);
        let Some(rule) = rules.iter_mut().find(|r| {
            r.remaining > 0
                && r.until.is_none_or(|t| std::time::Instant::now() < t)
                && (r.method.is_empty() || r.method.eq_ignore_ascii_case(method))
                && path.contains(&r.path_contains)
        }) else {
            return Plan::Forward;
        };
        if rule.remaining != usize::MAX {
            rule.remaining -= 1;
        }
        rule.action.clone()
    };
    let shift = shared.date_shift.load(Ordering::SeqCst);
    match action {
        Action::Answer(c) => {
            shared.canned.fetch_add(1, Ordering::SeqCst);
            lock(&shared.log).push(format!("{method} {path} -> {} (canned)", c.status));
            Plan::Answer(c.bytes(shift))
        }
        Action::AnswerAfterForwarding(c) => {
            shared.canned.fetch_add(1, Ordering::SeqCst);
            lock(&shared.log).push(format!(
                "{method} {path} -> {} (canned after forwarding)",
                c.status
            ));
            Plan::ForwardThenAnswer(c.bytes(shift))
        }
        Action::Delay(d) => {
            let until = std::time::Instant::now() + d;
            while std::time::Instant::now() < until && !shared.stopping.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            Plan::Forward
        }
        Action::Hold(gate) => {
            gate.pass_or_wait(&shared.stopping, IO_TIMEOUT);
            Plan::Forward
        }
    }
}

/// The response with its `Date` header moved by the configured shift.
pub(super) fn shift_response_date(shared: &Shared, response: Vec<u8>) -> Vec<u8> {
    let shift = shared.date_shift.load(Ordering::SeqCst);
    if shift == 0 {
        return response;
    }
    let Some(head_end) = super::super::find(&response, b"\r\n\r\n") else {
        return response;
    };
    let head = String::from_utf8_lossy(&response[..head_end]).into_owned();
    let mut out = String::new();
    for (i, line) in head.split("\r\n").enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("date") => {
                let at = httpdate::parse_http_date(value.trim())
                    .unwrap_or_else(|_| std::time::SystemTime::now());
                out.push_str(&format!("Date: {}", shifted(at, shift)));
            }
            _ => out.push_str(line),
        }
    }
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&response[head_end..]);
    bytes
}

fn shifted(at: std::time::SystemTime, seconds: i64) -> String {
    let moved = if seconds >= 0 {
        at + Duration::from_secs(seconds.unsigned_abs())
    } else {
        at - Duration::from_secs(seconds.unsigned_abs())
    };
    httpdate::fmt_http_date(moved)
}
