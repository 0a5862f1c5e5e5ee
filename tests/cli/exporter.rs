//! `exporter`: the real binary serving Prometheus, scraped over HTTP and
//! parsed by a Prometheus text parser; the same counts as `check`, the
//! per-state counts and oldest ages; `estx_up 0` (and `/readyz` 503, while
//! `/healthz`, liveness, stays 200) when
//! the cluster goes away behind the test proxy, 1 again when it is back;
//! SIGTERM stops it cleanly.

use super::*;
use common::proxy::Canned;
use common::FaultProxy;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;

/// The exporter process, killed if the test fails before it stops it.
struct Running {
    child: Child,
    base: String,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `exporter` on a free port; returns once it said where it listens.
fn start(g: &Globals) -> Running {
    let (mut c, _) = g.command(
        &[],
        &[
            "--timeout",
            "2s",
            "exporter",
            "--listen",
            "127.0.0.1:0",
            "--poll-interval",
            "1s",
        ],
    );
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn estx-tui exporter");
    let (tx, rx) = mpsc::channel();
    let pipe = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the exporter says where it listens");
    let base = line
        .split_once("http://")
        .and_then(|(_, rest)| rest.split_once("/metrics"))
        .map(|(host, _)| format!("http://{host}"))
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Running {
        child,
        base,
        stderr: rx,
    }
}

/// One scrape, parsed: `name{labels}` -> value.
fn scrape(r: &Running) -> HashMap<String, f64> {
    let (status, body) = common::http("GET", &format!("{}/metrics", r.base), None);
    assert_eq!(status, 200, "{body}");
    let lines: Vec<std::io::Result<String>> = body.lines().map(|l| Ok(l.to_string())).collect();
    let samples_in_text = body.lines().filter(|l| !l.starts_with('#')).count();
    let parsed = prometheus_parse::Scrape::parse(lines.into_iter()).expect("the exposition parses");
    assert_eq!(
        parsed.samples.len(),
        samples_in_text,
        "every sample line parses:\n{body}"
    );
    assert!(
        body.ends_with("# EOF\n"),
        "OpenMetrics ends with # EOF:\n{body}"
    );
    parsed
        .samples
        .into_iter()
        .map(|s| {
            let value = match s.value {
                prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
                other => panic!("{} is not a gauge: {other:?}", s.metric),
            };
            let labels = s.labels.to_string();
            let key = if labels.is_empty() {
                s.metric
            } else {
                format!("{}{{{labels}}}", s.metric)
            };
            (key, value)
        })
        .collect()
}

fn get(r: &Running, path: &str) -> (u16, String) {
    common::http("GET", &format!("{}{path}", r.base), None)
}

fn up(r: &Running) -> Option<f64> {
    scrape(r).get("estx_up").copied()
}

#[test]
fn a_scrape_parses_counts_as_check_does_and_says_down_while_the_cluster_is_away() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.stage("s1", "A", "B", 10, 2);
    w.backdate("s1", 10); // pending and stuck
    w.stage("fresh", "C", "D", 10, 2); // pending, recent
    w.put(
        &w.ix.locks,
        "Z",
        &json!({"owner": "ghost", "process_id": "w", "created_at": ago(30), "expires_at": ago(20)}),
    );
    w.refresh();
    let (_, check_counts) = check_counts(&w);

    let proxy = FaultProxy::start(&w.g.url);
    let mut g = w.g.clone();
    g.url = proxy.url();
    let r = start(&g);
    let deadline = Duration::from_secs(60);
    common::wait_until_blocking("the first poll is published", deadline, || {
        up(&r) == Some(1.0)
    });
    let m = scrape(&r);
    for (key, gauge) in [
        ("stuck", "estx_stuck_transactions"),
        (
            "needs_investigation",
            "estx_transactions_needing_investigation",
        ),
        ("odd_documents", "estx_odd_transaction_documents"),
        ("stale_locks", "estx_stale_locks"),
        ("audit_findings", "estx_audit_findings"),
    ] {
        assert_eq!(
            m[gauge], check_counts[key] as f64,
            "{gauge} vs check's {key}: {m:?}"
        );
    }
    assert_eq!(m["estx_stuck_transactions"], 1.0, "{m:?}");
    assert_eq!(m["estx_stale_locks"], 1.0, "{m:?}");
    // A small cluster's audit is cheap: it ran for this very poll.
    assert_eq!(m["estx_audit_age_seconds"], 0.0, "{m:?}");
    assert_eq!(m["estx_transactions{state=\"pending\"}"], 2.0, "{m:?}");
    assert_eq!(m["estx_transactions{state=\"finished\"}"], 0.0, "{m:?}");
    let age = m["estx_oldest_transaction_age_seconds{state=\"pending\"}"];
    assert!(
        (590.0..3600.0).contains(&age),
        "oldest pending is 10 min old: {age}"
    );
    assert_eq!(get(&r, "/healthz"), (200, "ok\n".into()));
    assert_eq!(get(&r, "/readyz"), (200, "ok\n".into()));

    // The cluster goes away: estx_up 0, no counts, /readyz 503 (/healthz,
    // liveness, still 200); no exit.
    proxy.answer("", "", usize::MAX, Canned::html(502, "502 Bad Gateway"));
    common::wait_until_blocking("the exporter says down", deadline, || up(&r) == Some(0.0));
    let m = scrape(&r);
    assert!(!m.contains_key("estx_stuck_transactions"), "{m:?}");
    assert!(
        m.contains_key("estx_last_success_timestamp_seconds"),
        "{m:?}"
    );
    let (status, body) = get(&r, "/readyz");
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("down: "), "{body}");
    assert_eq!(get(&r, "/healthz"), (200, "ok\n".into()));

    // Back: up again with the counts.
    proxy.clear_answers();
    common::wait_until_blocking("the exporter is up again", deadline, || up(&r) == Some(1.0));
    assert_eq!(scrape(&r)["estx_stuck_transactions"], 1.0);

    // SIGTERM: a clean stop, exit 0.
    let mut r = r;
    let status = Command::new("kill")
        .args(["-TERM", &r.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut code = None;
    common::wait_until_blocking("the exporter exits on SIGTERM", deadline, || {
        code = r.child.try_wait().unwrap().map(|s| s.code());
        code.is_some()
    });
    assert_eq!(code, Some(Some(0)), "exit status after SIGTERM");
    // The process has exited: its stderr ends, and so does this.
    let said: Vec<String> = r.stderr.iter().collect();
    assert!(
        said.iter()
            .any(|l| l.contains("exporter stopped on SIGTERM")),
        "{said:?}"
    );
}

/// `_bulk` of `docs` (id, source) into `index`.
fn bulk(w: &World, index: &str, docs: impl Iterator<Item = (String, Value)>) {
    let mut body = String::new();
    for (id, doc) in docs {
        body.push_str(&json!({"index": {"_id": id}}).to_string());
        body.push('\n');
        body.push_str(&doc.to_string());
        body.push('\n');
    }
    let (status, resp) = common::http("POST", &w.url(index, "_bulk"), Some(&body));
    assert!((200..300).contains(&status), "_bulk: {status} {resp}");
    let resp: Value = serde_json::from_str(&resp).unwrap();
    assert_eq!(resp["errors"], json!(false), "_bulk reported item errors");
}

/// Issue 18 item 9: an exporter poll costs what a dashboard poll costs (its
/// `_msearch` counts the stuck, those needing investigation and the odd
/// ones over every document; one `_mget` reads the lock's owner; the
/// health), not `check`'s scan of every in-flight transaction (three pages
/// here, with its point in time), and its gauges still say what `check`
/// says.
#[test]
fn an_exporter_poll_past_a_scan_page_costs_a_few_requests_and_counts_as_check_does() {
    const STUCK: usize = 2_500;
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    let stamp = ago(30);
    let stuck = (0..STUCK).map(|i| {
        let doc = json!({"transaction_state": "created", "src_acct": "A", "dest_acct": "B",
            "amount": 1, "modification_time": stamp});
        (format!("stuck-{i:04}"), doc)
    });
    bulk(&w, &w.ix.transactions, stuck);
    let done = json!({"transaction_state": "finished", "src_acct": "C", "dest_acct": "D",
        "amount": 1, "modification_time": stamp});
    bulk(
        &w,
        &w.ix.transactions,
        [("done".to_string(), done)].into_iter(),
    );
    w.put(
        &w.ix.locks,
        "C",
        &json!({"owner": "done", "process_id": "w", "created_at": ago(30)}),
    );
    w.refresh();
    let (check, check_counts) = check_counts(&w);
    assert_eq!(check_counts["stuck"], STUCK as u64, "{check}");
    assert_eq!(check_counts["stale_locks"], 1, "{check}");

    let proxy = FaultProxy::start(&w.g.url);
    let mut g = w.g.clone();
    g.url = proxy.url();
    let r = start(&g);
    let polls = |log: &[String]| -> Vec<usize> {
        let at = log
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains("_msearch"));
        at.map(|(i, _)| i).collect()
    };
    common::wait_until_blocking("five polls", Duration::from_secs(90), || {
        polls(&proxy.log()).len() >= 5
    });
    // Polls two to five: the first audit ran with the first poll, and the
    // next is due 30 s later at the soonest.
    let log = proxy.log();
    let at = polls(&log);
    let window = &log[at[1] + 1..=at[4]];
    let shown = window.join("\n");
    let sent = window.len();
    assert!(
        sent <= 3 * 4,
        "3 polls, at most 4 requests each, not {sent}:\n{shown}"
    );
    let scans = window.iter().filter(|l| {
        l.contains("/_search") || l.contains("_pit") || l.contains("scroll") || l.contains("_count")
    });
    assert_eq!(scans.count(), 0, "no scan, no count apart:\n{shown}");

    // A poll that timed out on a loaded machine publishes no counts: the
    // next good one does.
    let mut m = HashMap::new();
    common::wait_until_blocking("a good poll published", Duration::from_secs(90), || {
        m = scrape(&r);
        m.get("estx_up") == Some(&1.0)
    });
    for (key, gauge) in [
        ("stuck", "estx_stuck_transactions"),
        (
            "needs_investigation",
            "estx_transactions_needing_investigation",
        ),
        ("odd_documents", "estx_odd_transaction_documents"),
        ("stale_locks", "estx_stale_locks"),
        ("audit_findings", "estx_audit_findings"),
    ] {
        assert_eq!(
            m[gauge], check_counts[key] as f64,
            "{gauge} vs check's {key}: {m:?}"
        );
    }
    assert_eq!(
        m["estx_transactions{state=\"created\"}"], STUCK as f64,
        "{m:?}"
    );
}

/// `check --json`'s output and its count by metric key, which the
/// exporter's gauges must equal.
fn check_counts(w: &World) -> (Out, BTreeMap<String, u64>) {
    let check = w.run(&["check", "--json"]);
    let counts = check.json()["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap().into(),
                m["count"].as_u64().unwrap(),
            )
        })
        .collect();
    (check, counts)
}

/// Issue 30 item 3: an acknowledged stuck transaction is the exporter's
/// `estx_acked_transactions`, not one of its `estx_stuck_transactions`
/// (as `check` counts it). Item 2: the stuck ones by cause
/// (`estx_stuck_by_cause`): s2's worker's lease ran out, holder dead; the
/// acknowledged s1 is not counted.
#[test]
fn the_exporter_gauges_acked_stuck_transactions_apart() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    for (id, src, dest) in [("s1", "A", "B"), ("s2", "C", "D")] {
        w.stage(id, src, dest, 10, 2);
        w.backdate(id, 10);
    }
    w.put(
        &w.ix.locks,
        "C",
        &json!({"owner": "s2", "process_id": "w-1", "created_at": ago(12), "expires_at": ago(2)}),
    );
    w.refresh();
    w.run(&["ack", "s1", "--for", "1h", "--reason", "known"])
        .code(0);
    common::refresh(&w.g.url, &w.ix.acks);
    let r = start(&w.g);
    common::wait_until_blocking(
        "the first poll is published",
        Duration::from_secs(60),
        || up(&r) == Some(1.0),
    );
    let m = scrape(&r);
    assert_eq!(m.get("estx_acked_transactions"), Some(&1.0), "{m:?}");
    assert_eq!(m["estx_stuck_transactions"], 1.0, "{m:?}");
    assert_eq!(
        m.get("estx_stuck_by_cause{cause=\"holder_dead\"}"),
        Some(&1.0),
        "{m:?}"
    );
    assert_eq!(
        m.get("estx_stuck_by_cause{cause=\"unknown\"}"),
        Some(&0.0),
        "{m:?}"
    );
}
