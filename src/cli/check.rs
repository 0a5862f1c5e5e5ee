//! `check`: a monitoring check for Nagios/Icinga, cron or a Prometheus
//! textfile collector. Prints the counts of stuck transactions, ones needing
//! investigation, odd documents, stale locks and audit findings, and exits
//! by thresholds with the Nagios convention: 0 OK, 1 WARNING, 2 CRITICAL,
//! 3 UNKNOWN (the cluster could not be read). A count at or above a
//! threshold trips it; a threshold of 0 is off.

use super::output::{err, out};
use crate::protocol::check::CheckCounts;
use crate::protocol::time::format_timestamp;
use crate::protocol::Protocol;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How `check` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CheckFormat {
    /// One Nagios plugin line with performance data.
    #[default]
    Nagios,
    /// The Prometheus text exposition format (for a textfile collector).
    Prometheus,
}

/// `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Nagios)]
    pub format: CheckFormat,
    /// Print JSON (counts, thresholds, status) instead.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Also write the output to this file, atomically (a temporary file
    /// renamed into place, so a collector never reads half of it).
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// WARNING at this many stuck transactions (0: off).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warn_stuck: u64,
    /// CRITICAL at this many stuck transactions (0: off).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub crit_stuck: u64,
    /// WARNING at this many transactions needing investigation (0: off).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warn_investigate: u64,
    /// CRITICAL at this many transactions needing investigation (0: off).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub crit_investigate: u64,
    /// WARNING at this many odd documents (0: off).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warn_odd: u64,
    /// CRITICAL at this many odd documents (0: off).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub crit_odd: u64,
    /// WARNING at this many stale locks (0: off).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warn_stale_locks: u64,
    /// CRITICAL at this many stale locks (0: off).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub crit_stale_locks: u64,
    /// WARNING at this many audit findings (0: off).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warn_findings: u64,
    /// CRITICAL at this many audit findings (0: off).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub crit_findings: u64,
}

/// The check's result, worst last (the Nagios order and exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Every count below its thresholds.
    Ok,
    /// Some count at or above its warning threshold.
    Warning,
    /// Some count at or above its critical threshold.
    Critical,
    /// The counts could not be read.
    Unknown,
}

impl Status {
    /// The Nagios exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Ok => 0,
            Status::Warning => 1,
            Status::Critical => 2,
            Status::Unknown => 3,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warning => "WARNING",
            Status::Critical => "CRITICAL",
            Status::Unknown => "UNKNOWN",
        }
    }
}

/// One counted thing: its names and help, written once for every format.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Key in JSON and Nagios performance data.
    pub key: &'static str,
    /// Words in the summary line.
    pub words: &'static str,
    /// Prometheus metric name.
    pub prometheus: &'static str,
    /// Prometheus HELP text.
    pub help: &'static str,
    /// Its value in the counts.
    pub value: fn(&CheckCounts) -> u64,
    /// Its `(warn, crit)` thresholds in the arguments.
    pub thresholds: fn(&CheckArgs) -> (u64, u64),
}

/// Every metric, in output order.
pub const METRICS: [Metric; 5] = [
    Metric {
        key: "stuck",
        words: "stuck",
        prometheus: "estx_stuck_transactions",
        help: "Transactions in flight untouched for longer than the recovery window.",
        value: |c| c.stuck,
        thresholds: |a| (a.warn_stuck, a.crit_stuck),
    },
    Metric {
        key: "needs_investigation",
        words: "needing investigation",
        prometheus: "estx_transactions_needing_investigation",
        help: "Stuck transactions untouched for longer than investigate-after.",
        value: |c| c.needs_investigation,
        thresholds: |a| (a.warn_investigate, a.crit_investigate),
    },
    Metric {
        key: "odd_documents",
        words: "odd documents",
        prometheus: "estx_odd_transaction_documents",
        help: "Transaction documents with no state or a state estx-tui does not know.",
        value: |c| c.odd_documents,
        thresholds: |a| (a.warn_odd, a.crit_odd),
    },
    Metric {
        key: "stale_locks",
        words: "stale locks",
        prometheus: "estx_stale_locks",
        help: "Locks whose holder is presumed dead.",
        value: |c| c.stale_locks,
        thresholds: |a| (a.warn_stale_locks, a.crit_stale_locks),
    },
    Metric {
        key: "audit_findings",
        words: "audit findings",
        prometheus: "estx_audit_findings",
        help: "Findings of the audit: money not conserved, dangling entries, malformed documents.",
        value: |c| c.audit_findings,
        thresholds: |a| (a.warn_findings, a.crit_findings),
    },
];

/// Whether `count` trips `(warn, crit)` (0 = off; at or above trips).
pub fn level(count: u64, (warn, crit): (u64, u64)) -> Status {
    let trips = |t: u64| t > 0 && count >= t;
    if trips(crit) {
        Status::Critical
    } else if trips(warn) {
        Status::Warning
    } else {
        Status::Ok
    }
}

/// The worst level over every metric.
pub fn status(c: &CheckCounts, a: &CheckArgs) -> Status {
    METRICS
        .iter()
        .map(|m| level((m.value)(c), (m.thresholds)(a)))
        .max()
        .unwrap_or(Status::Ok)
}

/// One metric in `--json`.
#[derive(Debug, Serialize)]
struct MetricJson {
    key: &'static str,
    count: u64,
    warn: Option<u64>,
    crit: Option<u64>,
    status: Status,
}

/// What `check --json` prints.
#[derive(Debug, Serialize)]
struct CheckJson {
    status: Status,
    exit_code: i32,
    as_of: Option<String>,
    error: Option<String>,
    metrics: Vec<MetricJson>,
}

fn on(t: u64) -> Option<u64> {
    (t > 0).then_some(t)
}

/// The Nagios plugin line: status, summary, performance data.
pub fn nagios(c: &CheckCounts, a: &CheckArgs) -> String {
    let st = status(c, a);
    let summary: Vec<String> = METRICS
        .iter()
        .map(|m| format!("{} {}", (m.value)(c), m.words))
        .collect();
    let perf: Vec<String> = METRICS
        .iter()
        .map(|m| {
            let (w, k) = (m.thresholds)(a);
            let t = |v: u64| on(v).map(|v| v.to_string()).unwrap_or_default();
            format!("{}={};{};{};0", m.key, (m.value)(c), t(w), t(k))
        })
        .collect();
    format!(
        "ESTX {} - {} | {}",
        st.word(),
        summary.join(", "),
        perf.join(" ")
    )
}

/// The Prometheus text format: HELP and TYPE lines and a gauge per count,
/// then the status and whether the cluster could be read.
pub fn prometheus(counts: Option<&CheckCounts>, st: Status) -> String {
    let mut s = String::new();
    let mut gauge = |name: &str, help: &str, value: u64| {
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} gauge");
        let _ = writeln!(s, "{name} {value}");
    };
    if let Some(c) = counts {
        for m in &METRICS {
            gauge(m.prometheus, m.help, (m.value)(c));
        }
        gauge(
            "estx_check_timestamp_seconds",
            "When the counts were taken (Unix time, the cluster's clock).",
            c.as_of.timestamp().max(0) as u64,
        );
    }
    gauge(
        "estx_check_up",
        "Whether the cluster could be read (1) or not (0).",
        u64::from(counts.is_some()),
    );
    gauge(
        "estx_check_status",
        "The check's status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
        st.exit_code() as u64,
    );
    s
}

fn json_of(
    counts: Option<&CheckCounts>,
    a: &CheckArgs,
    st: Status,
    error: Option<String>,
) -> CheckJson {
    CheckJson {
        status: st,
        exit_code: st.exit_code(),
        as_of: counts.map(|c| format_timestamp(c.as_of)),
        error,
        metrics: counts
            .map(|c| {
                METRICS
                    .iter()
                    .map(|m| {
                        let (w, k) = (m.thresholds)(a);
                        let count = (m.value)(c);
                        MetricJson {
                            key: m.key,
                            count,
                            warn: on(w),
                            crit: on(k),
                            status: level(count, (w, k)),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Writes `text` to `path` through a temporary file renamed into place.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Runs `check`; returns the Nagios exit code.
pub async fn run(p: &Protocol, a: &CheckArgs) -> i32 {
    let (counts, error) = match p.check_counts().await {
        Ok(c) => (Some(c), None),
        Err(e) => {
            tracing::warn!(error = %e, "check could not read the cluster");
            (None, Some(e.to_string()))
        }
    };
    let st = counts.as_ref().map_or(Status::Unknown, |c| status(c, a));
    let text = if a.json {
        let j = json_of(counts.as_ref(), a, st, error.clone());
        // Plain data: serialising it cannot fail.
        serde_json::to_string_pretty(&j).unwrap_or_default() + "\n"
    } else {
        match (a.format, &counts, &error) {
            (CheckFormat::Prometheus, _, _) => prometheus(counts.as_ref(), st),
            (CheckFormat::Nagios, Some(c), _) => nagios(c, a),
            (CheckFormat::Nagios, None, e) => format!(
                "ESTX UNKNOWN - cannot read the cluster: {}",
                e.as_deref().unwrap_or("unknown error")
            ),
        }
    };
    out(text.trim_end());
    if let Some(path) = &a.output {
        if let Err(e) = write_atomically(path, &text) {
            err(format_args!("cannot write {}: {e}", path.display()));
            return Status::Unknown.exit_code();
        }
    }
    st.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: CheckArgs,
    }

    fn args(extra: &[&str]) -> CheckArgs {
        T::parse_from(std::iter::once("t").chain(extra.iter().copied())).a
    }

    fn counts(n: [u64; 5]) -> CheckCounts {
        CheckCounts {
            stuck: n[0],
            needs_investigation: n[1],
            odd_documents: n[2],
            stale_locks: n[3],
            audit_findings: n[4],
            as_of: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
        }
    }

    #[test]
    fn every_threshold_trips_at_its_value_and_not_below() {
        let flags = [
            ("--warn-stuck", "--crit-stuck"),
            ("--warn-investigate", "--crit-investigate"),
            ("--warn-odd", "--crit-odd"),
            ("--warn-stale-locks", "--crit-stale-locks"),
            ("--warn-findings", "--crit-findings"),
        ];
        for (i, (warn, crit)) in flags.iter().enumerate() {
            // Every other threshold off; this one warns at 3, is critical at 5.
            let mut argv: Vec<&str> = Vec::new();
            for (w, c) in flags.iter().filter(|f| f.0 != *warn) {
                argv.extend([*w, "0", *c, "0"]);
            }
            argv.extend([*warn, "3", *crit, "5"]);
            let a = args(&argv);
            for (n, expected) in [
                (0, Status::Ok),
                (2, Status::Ok),
                (3, Status::Warning),
                (4, Status::Warning),
                (5, Status::Critical),
                (9, Status::Critical),
            ] {
                let mut v = [0; 5];
                v[i] = n;
                assert_eq!(status(&counts(v), &a), expected, "{warn} {n}");
                assert_eq!(status(&counts(v), &a).exit_code(), expected.exit_code());
            }
        }
    }

    #[test]
    fn zero_is_off_and_the_worst_metric_wins() {
        let a = args(&["--warn-stuck", "0", "--crit-stuck", "0"]);
        assert_eq!(status(&counts([100, 0, 0, 0, 0]), &a), Status::Ok);
        let d = args(&[]);
        assert_eq!(status(&counts([0; 5]), &d), Status::Ok);
        assert_eq!(status(&counts([1, 0, 0, 0, 0]), &d), Status::Warning);
        assert_eq!(status(&counts([1, 1, 0, 0, 0]), &d), Status::Critical);
        assert_eq!(status(&counts([0, 0, 0, 0, 1]), &d), Status::Critical);
        assert_eq!(Status::Unknown.exit_code(), 3);
    }

    #[test]
    fn nagios_line_and_prometheus_text() {
        let c = counts([2, 1, 0, 3, 0]);
        let a = args(&[]);
        assert_eq!(
            nagios(&c, &a),
            "ESTX CRITICAL - 2 stuck, 1 needing investigation, 0 odd documents, 3 stale locks, \
             0 audit findings | stuck=2;1;;0 needs_investigation=1;;1;0 odd_documents=0;1;;0 \
             stale_locks=3;1;;0 audit_findings=0;;1;0"
        );
        let text = prometheus(Some(&c), Status::Critical);
        for m in &METRICS {
            assert!(
                text.contains(&format!("# HELP {} ", m.prometheus)),
                "{text}"
            );
            assert!(
                text.contains(&format!("# TYPE {} gauge\n", m.prometheus)),
                "{text}"
            );
        }
        assert!(text.contains("\nestx_stale_locks 3\n"), "{text}");
        assert!(text.contains("\nestx_check_status 2\n"), "{text}");
        assert!(text.contains("\nestx_check_up 1\n"), "{text}");
        let down = prometheus(None, Status::Unknown);
        assert!(down.contains("estx_check_up 0") && down.contains("estx_check_status 3"));
        assert!(!down.contains("estx_stuck_transactions"));
    }
}
