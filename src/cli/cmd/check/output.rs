//! What `check` prints: the Nagios plugin output (status line, perfdata
//! `label=value;warn;crit;min;max` with the ranges in force, then the long
//! output naming the stuck transactions, oldest first, then the
//! acknowledged ones, which do not alert), JSON, and the Prometheus text
//! format. The thresholds and status are [`super::levels`].

use super::levels::{Levels, Status, COUNTS, METRICS};
use crate::protocol::check::{CheckCounts, CheckReading, StuckOne};
use crate::protocol::read::verdict::CauseKind;
use crate::protocol::time::{format_timestamp, human_age};
use serde::Serialize;
use std::fmt::Write as _;

/// The gauge of the acknowledged stuck transactions (`check --format
/// prometheus` and the exporter): its name and help.
pub const ACKED_GAUGE: (&str, &str) = (
    "estx_acked_transactions",
    "Stuck transactions acknowledged (ack): listed, not counted as stuck, not alerting.",
);

/// The gauge family of the stuck transactions by cause (`check --format
/// prometheus` and the exporter): its name, help and label, one sample
/// per cause ([`CauseKind::ALL`], zero included: a cause that appears is
/// not a new series).
pub const BY_CAUSE_GAUGE: (&str, &str, &str) = (
    "estx_stuck_by_cause",
    "Stuck transactions by cause (holder dead or live, hot account, refused, application recovering, unknown), among the oldest listed (at most 500), acknowledged ones left out",
    "cause",
);

/// `src -> dest`, `?` for what the document does not say (ASCII: monitoring
/// systems mangle other bytes).
fn route(s: &StuckOne) -> String {
    let t = &s.transaction;
    format!(
        "{} -> {}",
        t.src.as_deref().unwrap_or("?"),
        t.dest.as_deref().unwrap_or("?")
    )
}

fn state(s: &StuckOne) -> String {
    s.transaction
        .state
        .as_ref()
        .map_or_else(|| "(no state)".into(), ToString::to_string)
}

/// The healing verdict's line: the verdict and its evidence in words.
fn healing_line(r: &CheckReading) -> String {
    format!(
        "recovery: {} ({})",
        r.healing.short(),
        r.healing.evidence(r.counts.as_of)
    )
}

/// The long output: the healing verdict's line, then one line per stuck
/// transaction (id, state, age, route), at most `top`, and how many more
/// there are; then the acknowledged ones (at most `top`), each with its
/// ack; none at all under `--top 0` (the status line only).
fn long_output(r: &CheckReading, top: usize) -> Vec<String> {
    let mut lines = stuck_lines(r, top);
    if r.acked.is_empty() || top == 0 {
        return lines;
    }
    lines.push(format!(
        "acknowledged stuck transactions, not alerting ({} of {}):",
        r.acked.len().min(top),
        r.acked.len()
    ));
    for (s, ack) in r.acked.iter().take(top) {
        let age = s
            .transaction
            .age_seconds(r.counts.as_of)
            .map_or_else(|| "undated".into(), human_age);
        lines.push(format!(
            "{} {} {age} {} - {ack}",
            s.transaction.id,
            state(s),
            route(s)
        ));
    }
    if r.acked.len() > top {
        lines.push(format!("... and {} more", r.acked.len() - top));
    }
    lines
}

/// A stuck transaction's cause in the long output: ` - cause: holder dead
/// (evidence): safe act: recover`, then the profile's runbook for it.
fn cause_text(r: &CheckReading, s: &StuckOne) -> String {
    let Some(c) = &s.cause else {
        return String::new();
    };
    let mut text = format!(" - cause: {}", c.line(r.counts.as_of));
    if let Some(url) = r.runbooks.get(c.kind()) {
        let _ = write!(text, " - runbook: {url}");
    }
    text
}

/// The long output's healing line and stuck transactions not acknowledged.
fn stuck_lines(r: &CheckReading, top: usize) -> Vec<String> {
    if top == 0 {
        return Vec::new();
    }
    let mut lines = vec![healing_line(r)];
    if r.stuck.is_empty() {
        return lines;
    }
    lines.push(format!(
        "stuck transactions, oldest first ({} of {}):",
        r.stuck.len().min(top),
        r.stuck.len()
    ));
    for s in r.stuck.iter().take(top) {
        let age = s
            .transaction
            .age_seconds(r.counts.as_of)
            .map_or_else(|| "undated".into(), human_age);
        let flag = if s.needs_investigation {
            " (needs investigation)"
        } else {
            ""
        };
        lines.push(format!(
            "{} {} {age} {}{flag}{}",
            s.transaction.id,
            state(s),
            route(s),
            cause_text(r, s)
        ));
    }
    if r.stuck.len() > top {
        lines.push(format!("... and {} more", r.stuck.len() - top));
    }
    lines
}

/// The Nagios plugin output: status, summary and performance data on the
/// first line, then the long output.
pub fn nagios(r: &CheckReading, levels: &[Levels; COUNTS], top: usize) -> String {
    let c = &r.counts;
    let st = super::levels::status(c, levels);
    let mut summary: Vec<String> = METRICS
        .iter()
        .map(|m| format!("{} {}", (m.value)(c), m.words))
        .collect();
    if c.acked > 0 {
        summary.push(format!("{} acknowledged", c.acked));
    }
    let perf: Vec<String> = METRICS
        .iter()
        .zip(levels)
        .map(|(m, l)| {
            let t =
                |r: Option<super::threshold::Range>| r.map(|r| r.to_string()).unwrap_or_default();
            format!("{}={};{};{};0", m.key(), (m.value)(c), t(l.warn), t(l.crit))
        })
        .collect();
    let mut text = format!(
        "ESTX {} - {} | {}\n",
        st.word(),
        summary.join(", "),
        perf.join(" ")
    );
    for line in long_output(r, top) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// The Prometheus text format: HELP and TYPE lines and a gauge per count,
/// the stuck ones by cause (the exporter's family), then the status and
/// whether the cluster could be read.
pub fn prometheus(reading: Option<&CheckReading>, st: Status) -> String {
    let mut s = String::new();
    if let Some(r) = reading {
        let c = &r.counts;
        for m in &METRICS {
            gauge(&mut s, m.prometheus, m.help, (m.value)(c));
        }
        let (name, help) = ACKED_GAUGE;
        gauge(&mut s, name, help, c.acked);
        gauge(
            &mut s,
            "estx_check_timestamp_seconds",
            "When the counts were taken (Unix time, the cluster's clock).",
            c.as_of.timestamp().max(0) as u64,
        );
        let (name, help, label) = BY_CAUSE_GAUGE;
        let by = r.stuck_by_cause();
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} gauge");
        for kind in CauseKind::ALL {
            let n = by.get(&kind).copied().unwrap_or(0);
            let _ = writeln!(s, "{name}{{{label}=\"{}\"}} {n}", kind.name());
        }
    }
    gauge(
        &mut s,
        "estx_check_up",
        "Whether the cluster could be read (1) or not (0).",
        u64::from(reading.is_some()),
    );
    gauge(
        &mut s,
        "estx_check_status",
        "The check's status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
        st.exit_code() as u64,
    );
    s
}

/// One gauge in the Prometheus text format: its HELP, TYPE and sample.
fn gauge(s: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(s, "# HELP {name} {help}");
    let _ = writeln!(s, "# TYPE {name} gauge");
    let _ = writeln!(s, "{name} {value}");
}

/// One metric in JSON: its count, the ranges in force, its level.
#[derive(Debug, Serialize)]
struct MetricJson {
    key: &'static str,
    count: u64,
    warn: Option<String>,
    crit: Option<String>,
    status: Status,
}

/// One stuck transaction in JSON.
#[derive(Debug, Serialize)]
struct StuckJson {
    id: String,
    state: String,
    age_seconds: Option<i64>,
    src: Option<String>,
    dest: Option<String>,
    needs_investigation: bool,
    /// Why it is stuck, its safe act, evidence and runbook.
    cause: Option<serde_json::Value>,
}

/// The healing verdict in JSON: the verdict's fields (tagged `verdict`)
/// and its evidence in words.
#[derive(Debug, Serialize)]
struct HealingJson {
    #[serde(flatten)]
    verdict: crate::protocol::read::verdict::Healing,
    evidence: String,
}

/// One acknowledged stuck transaction in JSON: the stuck one, its ack.
#[derive(Debug, Serialize)]
struct AckedJson {
    #[serde(flatten)]
    stuck: StuckJson,
    acked_by: String,
    reason: String,
    ticket: Option<String>,
    acked_since: String,
    acked_until: String,
}

/// What `check --format json` prints.
#[derive(Debug, Serialize)]
struct CheckJson {
    status: Status,
    exit_code: i32,
    as_of: Option<String>,
    error: Option<String>,
    metrics: Vec<MetricJson>,
    healing: Option<HealingJson>,
    stuck: Vec<StuckJson>,
    /// The acknowledged stuck ones (not counted in `stuck`, no alert).
    acked: Vec<AckedJson>,
}

/// JSON: status, counts with the ranges in force, the first `top` stuck
/// transactions; or the error when the cluster could not be read.
pub fn json(
    reading: Result<&CheckReading, &String>,
    levels: &[Levels; COUNTS],
    st: Status,
    top: usize,
) -> String {
    let metrics = |c: &CheckCounts| {
        METRICS
            .iter()
            .zip(levels)
            .map(|(m, l)| MetricJson {
                key: m.key(),
                count: (m.value)(c),
                warn: l.warn.map(|r| r.to_string()),
                crit: l.crit.map(|r| r.to_string()),
                status: l.status((m.value)(c)),
            })
            .collect()
    };
    let one = |r: &CheckReading, s: &StuckOne| StuckJson {
        id: s.transaction.id.clone(),
        state: state(s),
        age_seconds: s.transaction.age_seconds(r.counts.as_of),
        src: s.transaction.src.clone(),
        dest: s.transaction.dest.clone(),
        needs_investigation: s.needs_investigation,
        cause: s
            .cause
            .as_ref()
            .map(|c| c.json(r.counts.as_of, &r.runbooks)),
    };
    let stuck = |r: &CheckReading| r.stuck.iter().take(top).map(|s| one(r, s)).collect();
    let acked = |r: &CheckReading| {
        r.acked
            .iter()
            .take(top)
            .map(|(s, a)| AckedJson {
                stuck: one(r, s),
                acked_by: a.by.clone(),
                reason: a.reason.clone(),
                ticket: a.ticket.clone(),
                acked_since: format_timestamp(a.since),
                acked_until: format_timestamp(a.until),
            })
            .collect()
    };
    let j = CheckJson {
        status: st,
        exit_code: st.exit_code(),
        as_of: reading.ok().map(|r| format_timestamp(r.counts.as_of)),
        error: reading.err().cloned(),
        metrics: reading.ok().map(|r| metrics(&r.counts)).unwrap_or_default(),
        healing: reading.ok().map(|r| HealingJson {
            verdict: r.healing,
            evidence: r.healing.evidence(r.counts.as_of),
        }),
        stuck: reading.ok().map(stuck).unwrap_or_default(),
        acked: reading.ok().map(acked).unwrap_or_default(),
    };
    // Plain data: serialising it cannot fail.
    serde_json::to_string_pretty(&j).unwrap_or_default() + "\n"
}
