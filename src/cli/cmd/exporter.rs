//! `exporter --listen ADDR`: a long-running Prometheus endpoint. One loop
//! polls the cluster every `--poll-interval` (a poll starts only when the
//! last one has ended: polls never overlap, however slow the cluster) and
//! publishes the outcome ([`metrics`]); the HTTP server
//! only hands out the last published text, so scrapes never reach the
//! cluster. `GET /metrics` is the exposition; `GET /healthz` is liveness
//! (200 `ok` while the exporter serves, whatever the cluster does, so a
//! Kubernetes liveness probe never restarts a healthy exporter because the
//! cluster is away); `GET /readyz` is readiness (200 `ok` when the last poll
//! read the cluster, 503 with the reason when not). A
//! cluster error is `estx_up 0`, never an exit; SIGTERM, SIGINT (Ctrl-C)
//! and SIGHUP stop it cleanly (exit 0: a stop asked for is no failure).

pub mod metrics;

use crate::cli::exit;
use crate::cli::output::err;
use crate::cli::values;
use crate::protocol::audit::pace::{MIN_GAP, REFERENCE_POLL};
use crate::protocol::read::verdict::Previous;
use crate::protocol::Protocol;
use crate::signals::StopSignals;
use metrics::{exposition, PollOutcome, Reading};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

/// The content type of the OpenMetrics text format `prometheus-client` writes.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `exporter`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Address to serve /metrics, /healthz and /readyz on (port 0: any free port;
    /// the address in force is printed on stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9864")]
    pub listen: SocketAddr,
    /// Time from the start of one poll to the start of the next (at least
    /// 1s); a poll that takes longer delays the next, never overlaps it.
    #[arg(long, env = "ESTX_POLL_INTERVAL", default_value = "30s", value_parser = values::interval, value_name = "DURATION")]
    pub poll_interval: Duration,
}

/// What the server hands out: the last poll's exposition and health.
#[derive(Debug, Clone)]
struct Published {
    metrics: String,
    /// `None` when the last poll read the cluster, else why not.
    down: Option<String>,
}

type Shared = Arc<RwLock<Published>>;

/// Runs the exporter until a stop signal; returns the exit code.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    // A poll is asked again at the next one: its reads wait no longer.
    let p = p.with_read_budget(a.poll_interval);
    let mut signals = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            err(format_args!("cannot catch the stop signals: {e}"));
            return exit::REFUSED;
        }
    };
    let listener = match TcpListener::bind(a.listen).await {
        Ok(l) => l,
        Err(e) => {
            err(format_args!("cannot listen on {}: {e}", a.listen));
            return exit::REFUSED;
        }
    };
    let addr = listener.local_addr().unwrap_or(a.listen);
    let first = PollOutcome {
        reading: Err("starting: the first poll has not ended".into()),
        duration: Duration::ZERO,
        last_success: None,
    };
    let shared: Shared = Arc::new(RwLock::new(publish(&first)));
    let server = tokio::spawn(serve(listener, shared.clone()));
    err(format_args!(
        "exporter listening on http://{addr}/metrics (polls every {:?})",
        a.poll_interval
    ));
    tracing::info!(%addr, interval = ?a.poll_interval, "exporter started");
    let stop = tokio::select! {
        s = signals.recv() => s,
        never = poll_loop(&p, a.poll_interval, &shared) => match never {},
    };
    server.abort();
    tracing::info!(signal = stop.name(), "exporter stopped");
    err(format_args!("exporter stopped on {}", stop.name()));
    exit::DONE
}

/// Polls forever, one poll at a time, publishing each outcome.
async fn poll_loop(p: &Protocol, every: Duration, shared: &Shared) -> Infallible {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_success = None;
    let mut audit = PacedAudit::default();
    let mut previous = None;
    loop {
        ticks.tick().await;
        let started = Instant::now();
        let reading = read(p, &mut audit, &mut previous).await;
        match &reading {
            Ok(r) => last_success = Some(r.counts.as_of),
            Err(e) => tracing::warn!(error = %e, "exporter poll could not read the cluster"),
        }
        let outcome = PollOutcome {
            reading,
            duration: started.elapsed(),
            last_success,
        };
        let published = publish(&outcome);
        if let Ok(mut slot) = shared.write() {
            *slot = published;
        }
    }
}

/// The last audit's findings, run again when its cost allows (see
/// [`crate::protocol::audit::pace`]): a small cluster is audited at every
/// poll as before, a big one less often, so that the exporter costs the
/// cluster no more than a dashboard does.
#[derive(Debug, Default)]
struct PacedAudit {
    /// The findings of the last audit that answered, and when it started.
    last: Option<(u64, Instant)>,
    /// When the next audit is due.
    next_at: Option<Instant>,
}

impl PacedAudit {
    /// The findings of an audit no older than its pace allows (running one
    /// when due, at `now`) and their age. A failed audit fails the poll, as
    /// `check` does, and is tried again at the next.
    async fn findings(&mut self, p: &Protocol, now: Instant) -> Result<(u64, Duration), String> {
        let due = self.next_at.is_none_or(|t| now >= t);
        if let (Some((n, at)), false) = (self.last, due) {
            return Ok((n, now - at));
        }
        let (report, cost) = p.audit_measured(None).await;
        let n = report.map_err(|e| e.to_string())?.findings.len() as u64;
        self.last = Some((n, now));
        self.next_at = Some(now + cost.next_gap(REFERENCE_POLL));
        if cost.next_gap(REFERENCE_POLL) > MIN_GAP {
            tracing::info!(%cost, "exporter audit paced by its cost");
        }
        Ok((n, Duration::ZERO))
    }
}

/// One poll: the check's counts and the per-state counts, both from one
/// dashboard poll (its cluster-side counts: a few requests at any scale;
/// [`Protocol::watch_reading`]), the audit paced by its cost. A partial
/// view is an error, as for `check`: no half counts. The healing verdict
/// is judged with what the exporter remembers of its `previous` poll.
async fn read(
    p: &Protocol,
    audit: &mut PacedAudit,
    previous: &mut Option<Previous>,
) -> Result<Reading, String> {
    let (findings, audit_age) = audit.findings(p, Instant::now()).await?;
    let (counts, snapshot) = p
        .watch_reading(findings, *previous)
        .await
        .map_err(|e| e.to_string())?;
    let remembered = Previous::after(*previous, &snapshot.healing_evidence);
    *previous = Some(remembered);
    let by_cause = snapshot.stuck_by_cause(p.config().recovery_window);
    Ok(Reading {
        counts,
        by_cause,
        states: snapshot.state_counts,
        audit_age,
        healing: snapshot.healing,
        last_recovery: remembered.last_recovery,
    })
}

fn publish(o: &PollOutcome) -> Published {
    Published {
        metrics: exposition(o),
        down: o.reading.as_ref().err().cloned(),
    }
}

/// Accepts connections until aborted, one task per connection.
async fn serve(listener: TcpListener, shared: Shared) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                tracing::warn!(error = %e, "exporter accept failed");
                continue;
            }
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(&req, &shared)) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "exporter connection ended");
            }
        });
    }
}

fn text(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

/// Answers one request from the last published poll.
fn answer(req: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    const PLAIN: &str = "text/plain; charset=utf-8";
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, PLAIN, "GET only\n".into());
    }
    let Ok(p) = shared.read().map(|p| p.clone()) else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, "\n".into());
    };
    match req.uri().path() {
        "/metrics" => text(StatusCode::OK, OPENMETRICS, p.metrics),
        "/healthz" => text(StatusCode::OK, PLAIN, "ok\n".into()),
        "/readyz" => match p.down {
            None => text(StatusCode::OK, PLAIN, "ok\n".into()),
            Some(why) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                PLAIN,
                format!("down: {why}\n"),
            ),
        },
        _ => text(
            StatusCode::NOT_FOUND,
            PLAIN,
            "not found: try /metrics, /healthz or /readyz\n".into(),
        ),
    }
}
