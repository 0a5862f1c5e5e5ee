//! `check`: a monitoring check for Nagios/Icinga, cron or a Prometheus
//! textfile collector, by the Monitoring Plugins development guidelines
//! (<https://www.monitoring-plugins.org/doc/guidelines.html>). Counts stuck
//! transactions, ones needing investigation, odd documents, stale locks
//! and audit findings; `-w`/`-c` give each count a range in the guidelines'
//! syntax ([`super::threshold`]): a value outside it (inside with `@`)
//! alerts. Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the cluster
//! could not be read). The output itself is [`super::check_output`].
//!
//! The old `--warn-X N`/`--crit-X N` flags (alert at N or more, 0 off) still
//! work, hidden, with a deprecation line on stderr naming the range they
//! stand for.

use super::check_output::{json, nagios, prometheus};
use super::output::{err, out};
use super::threshold::{Range, RangeError};
use crate::protocol::check::CheckCounts;
use crate::protocol::Protocol;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How `check` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CheckFormat {
    /// The Nagios plugin output: a status line with performance data, then
    /// the stuck transactions (long output).
    #[default]
    Nagios,
    /// JSON: counts, thresholds in force, status and the stuck transactions.
    Json,
    /// The Prometheus text exposition format (for a textfile collector).
    Prometheus,
}

/// `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Nagios)]
    pub format: CheckFormat,
    /// Same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Also write the output to this file, atomically (a temporary file
    /// renamed into place, so a collector never reads half of it).
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// WARNING range of a count, `[COUNT=]RANGE`, repeatable. COUNT is
    /// stuck (the default), needs_investigation, odd_documents,
    /// stale_locks or audit_findings; RANGE is the Monitoring Plugins
    /// syntax (10, 10:, ~:10, 10:20, @10:20; 0 alerts above 0); an empty
    /// RANGE (`stuck=`) turns the count's default off.
    #[arg(short = 'w', long = "warning", value_name = "[COUNT=]RANGE", value_parser = parse_threshold)]
    pub warning: Vec<Threshold>,
    /// CRITICAL range of a count, `[COUNT=]RANGE`, as for --warning.
    #[arg(short = 'c', long = "critical", value_name = "[COUNT=]RANGE", value_parser = parse_threshold)]
    pub critical: Vec<Threshold>,
    /// How many stuck transactions the output lists, oldest first.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Deprecated old flags: `--warn-X N`/`--crit-X N`.
    #[command(flatten)]
    pub legacy: LegacyThresholds,
}

/// The old threshold flags (alert at N or more, 0 off), hidden.
#[derive(Debug, Clone, Default, Args)]
pub struct LegacyThresholds {
    #[arg(long, hide = true)]
    warn_stuck: Option<u64>,
    #[arg(long, hide = true)]
    crit_stuck: Option<u64>,
    #[arg(long, hide = true)]
    warn_investigate: Option<u64>,
    #[arg(long, hide = true)]
    crit_investigate: Option<u64>,
    #[arg(long, hide = true)]
    warn_odd: Option<u64>,
    #[arg(long, hide = true)]
    crit_odd: Option<u64>,
    #[arg(long, hide = true)]
    warn_stale_locks: Option<u64>,
    #[arg(long, hide = true)]
    crit_stale_locks: Option<u64>,
    #[arg(long, hide = true)]
    warn_findings: Option<u64>,
    #[arg(long, hide = true)]
    crit_findings: Option<u64>,
}

/// What `check` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Count {
    /// In-flight transactions untouched for the recovery window.
    Stuck,
    /// Stuck for longer than investigate-after.
    NeedsInvestigation,
    /// Transaction documents with no or an unknown state.
    OddDocuments,
    /// Locks whose holder is presumed dead.
    StaleLocks,
    /// Findings of the audit.
    AuditFindings,
}

/// One `-w`/`-c` value: a count and its range (`None`: no threshold).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    /// The count it applies to.
    pub count: Count,
    /// The range; `None` turns the count's threshold off.
    pub range: Option<Range>,
}

/// Why a `-w`/`-c` value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    /// The part before `=` names no count.
    #[error("unknown count {0:?} (stuck, needs_investigation, odd_documents, stale_locks, audit_findings)")]
    UnknownCount(String),
    /// The range is malformed.
    #[error(transparent)]
    Range(#[from] RangeError),
}

fn parse_threshold(s: &str) -> Result<Threshold, ThresholdError> {
    let (count, range) = match s.split_once('=') {
        None => (Count::Stuck, s),
        Some((name, range)) => {
            let count = METRICS
                .iter()
                .find(|m| m.names.contains(&name.trim()))
                .ok_or_else(|| ThresholdError::UnknownCount(name.to_string()))?
                .count;
            (count, range)
        }
    };
    let range = match range.trim() {
        "" => None,
        r => Some(r.parse()?),
    };
    Ok(Threshold { count, range })
}

/// The check's result, worst last (the Nagios order and exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// No count raised an alert.
    Ok,
    /// Some count is out of its warning range.
    Warning,
    /// Some count is out of its critical range.
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

    /// The word in the status line.
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warning => "WARNING",
            Status::Critical => "CRITICAL",
            Status::Unknown => "UNKNOWN",
        }
    }
}

/// One count's warning and critical ranges in force.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Levels {
    /// WARNING range, if any.
    pub warn: Option<Range>,
    /// CRITICAL range, if any.
    pub crit: Option<Range>,
}

impl Levels {
    /// The guidelines' order: critical first, then warning, else OK.
    pub fn status(&self, value: u64) -> Status {
        let alerts = |r: Option<Range>| r.is_some_and(|r| r.alerts(value as f64));
        if alerts(self.crit) {
            Status::Critical
        } else if alerts(self.warn) {
            Status::Warning
        } else {
            Status::Ok
        }
    }
}

/// The old warning and critical flags of one count: names and values.
type LegacyFlags = [(&'static str, Option<u64>); 2];

/// One counted thing: its names, help and defaults, written once for every
/// format.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Which count.
    pub count: Count,
    /// Its perfdata label and JSON key, then the other names `-w`/`-c` accept.
    pub names: &'static [&'static str],
    /// Words in the summary line.
    pub words: &'static str,
    /// Prometheus metric name.
    pub prometheus: &'static str,
    /// Prometheus HELP text.
    pub help: &'static str,
    /// Its value in the counts.
    pub value: fn(&CheckCounts) -> u64,
    /// Its ranges when no flag says otherwise.
    pub default: Levels,
    /// The old flags' names and values.
    legacy: fn(&LegacyThresholds) -> LegacyFlags,
}

impl Metric {
    /// Perfdata label and JSON key.
    pub fn key(&self) -> &'static str {
        self.names[0]
    }
}

const ABOVE_ZERO: Option<Range> = Some(Range::at_most(0.0));

/// Every metric, in output order.
pub const METRICS: [Metric; 5] = [
    Metric {
        count: Count::Stuck,
        names: &["stuck"],
        words: "stuck",
        prometheus: "estx_stuck_transactions",
        help: "Transactions in flight untouched for longer than the recovery window.",
        value: |c| c.stuck,
        default: Levels {
            warn: ABOVE_ZERO,
            crit: None,
        },
        legacy: |l| [("warn-stuck", l.warn_stuck), ("crit-stuck", l.crit_stuck)],
    },
    Metric {
        count: Count::NeedsInvestigation,
        names: &["needs_investigation", "investigate"],
        words: "needing investigation",
        prometheus: "estx_transactions_needing_investigation",
        help: "Stuck transactions untouched for longer than investigate-after.",
        value: |c| c.needs_investigation,
        default: Levels {
            warn: None,
            crit: ABOVE_ZERO,
        },
        legacy: |l| {
            [
                ("warn-investigate", l.warn_investigate),
                ("crit-investigate", l.crit_investigate),
            ]
        },
    },
    Metric {
        count: Count::OddDocuments,
        names: &["odd_documents", "odd"],
        words: "odd documents",
        prometheus: "estx_odd_transaction_documents",
        help: "Transaction documents with no state or a state estx-tui does not know.",
        value: |c| c.odd_documents,
        default: Levels {
            warn: ABOVE_ZERO,
            crit: None,
        },
        legacy: |l| [("warn-odd", l.warn_odd), ("crit-odd", l.crit_odd)],
    },
    Metric {
        count: Count::StaleLocks,
        names: &["stale_locks", "stale-locks"],
        words: "stale locks",
        prometheus: "estx_stale_locks",
        help: "Locks whose holder is presumed dead.",
        value: |c| c.stale_locks,
        default: Levels {
            warn: ABOVE_ZERO,
            crit: None,
        },
        legacy: |l| {
            [
                ("warn-stale-locks", l.warn_stale_locks),
                ("crit-stale-locks", l.crit_stale_locks),
            ]
        },
    },
    Metric {
        count: Count::AuditFindings,
        names: &["audit_findings", "findings"],
        words: "audit findings",
        prometheus: "estx_audit_findings",
        help: "Findings of the audit: money not conserved, dangling entries, malformed documents.",
        value: |c| c.audit_findings,
        default: Levels {
            warn: None,
            crit: ABOVE_ZERO,
        },
        legacy: |l| {
            [
                ("warn-findings", l.warn_findings),
                ("crit-findings", l.crit_findings),
            ]
        },
    },
];

/// The old meaning of `--warn-X N`/`--crit-X N`: alert at N or more (the
/// range `N-1`), 0 off.
fn legacy_range(n: u64) -> Option<Range> {
    (n > 0).then(|| Range::at_most((n - 1) as f64))
}

/// The ranges in force, one per metric in [`METRICS`] order: the defaults,
/// then the old flags, then `-w`/`-c` in order (the last one for a count
/// wins); and a deprecation line for each old flag used.
pub fn in_force(a: &CheckArgs) -> ([Levels; 5], Vec<String>) {
    let mut levels = METRICS.map(|m| m.default);
    let mut notes = Vec::new();
    for (i, m) in METRICS.iter().enumerate() {
        let [(wflag, warn), (cflag, crit)] = (m.legacy)(&a.legacy);
        for (flag, n, slot, short) in [
            (wflag, warn, &mut levels[i].warn, 'w'),
            (cflag, crit, &mut levels[i].crit, 'c'),
        ] {
            if let Some(n) = n {
                *slot = legacy_range(n);
                let range = slot.map(|r| r.to_string()).unwrap_or_default();
                notes.push(format!(
                    "warning: --{flag} is deprecated; --{flag} {n} is -{short} {}={range} \
                     (Monitoring Plugins ranges: {})",
                    m.key(),
                    if n == 0 {
                        "an empty range is off"
                    } else {
                        "N alerts above N"
                    }
                ));
            }
        }
    }
    let index = |c: Count| METRICS.iter().position(|m| m.count == c).unwrap_or(0);
    for t in &a.warning {
        levels[index(t.count)].warn = t.range;
    }
    for t in &a.critical {
        levels[index(t.count)].crit = t.range;
    }
    (levels, notes)
}

/// The worst level over every metric.
pub fn status(c: &CheckCounts, levels: &[Levels; 5]) -> Status {
    METRICS
        .iter()
        .zip(levels)
        .map(|(m, l)| l.status((m.value)(c)))
        .max()
        .unwrap_or(Status::Ok)
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
    let (levels, notes) = in_force(a);
    for n in &notes {
        err(n);
    }
    let reading = match p.check_reading().await {
        Ok(r) => Ok(r),
        Err(e) => {
            tracing::warn!(error = %e, "check could not read the cluster");
            Err(e.to_string())
        }
    };
    let st = reading
        .as_ref()
        .map_or(Status::Unknown, |r| status(&r.counts, &levels));
    let format = if a.json { CheckFormat::Json } else { a.format };
    let text = match (format, &reading) {
        (CheckFormat::Json, r) => json(r.as_ref(), &levels, st, a.top),
        (CheckFormat::Prometheus, r) => prometheus(r.as_ref().ok().map(|r| &r.counts), st),
        (CheckFormat::Nagios, Ok(r)) => nagios(r, &levels, a.top),
        (CheckFormat::Nagios, Err(e)) => format!("ESTX UNKNOWN - cannot read the cluster: {e}\n"),
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
mod tests;
