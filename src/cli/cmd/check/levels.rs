//! What `check` counts ([`METRICS`], written once for every format and for
//! the exporter), the `-w`/`-c` ranges of each count ([`Levels`]) and the
//! status they give ([`Status`]).

use super::threshold::{Range, RangeError};
use crate::protocol::check::CheckCounts;
use serde::Serialize;

/// The old threshold flags (alert at N or more, 0 off), hidden.
#[derive(Debug, Clone, Default, clap::Args)]
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
    /// The application's own recovery stalled or not running (1, else 0).
    RecoveryStalled,
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
    #[error("unknown count {0:?} (stuck, needs_investigation, odd_documents, stale_locks, audit_findings, recovery_stalled)")]
    UnknownCount(String),
    /// The range is malformed.
    #[error(transparent)]
    Range(#[from] RangeError),
}

pub(super) fn parse_threshold(s: &str) -> Result<Threshold, ThresholdError> {
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
    pub(super) legacy: fn(&LegacyThresholds) -> LegacyFlags,
}

impl Metric {
    /// Perfdata label and JSON key.
    pub fn key(&self) -> &'static str {
        self.names[0]
    }
}

const ABOVE_ZERO: Option<Range> = Some(Range::at_most(0.0));

/// How many counts `check` has.
pub const COUNTS: usize = 6;

/// Every metric, in output order.
pub const METRICS: [Metric; COUNTS] = [
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
    Metric {
        count: Count::RecoveryStalled,
        names: &["recovery_stalled", "stalled"],
        words: "recovery stalled",
        prometheus: "estx_recovery_stalled",
        help: "Whether the application's own recovery has stalled or is not running (1) or not (0): the healing verdict.",
        value: |c| c.recovery_stalled,
        default: Levels {
            warn: ABOVE_ZERO,
            crit: None,
        },
        // A new count: it never had the old flags.
        legacy: |_| [("", None), ("", None)],
    },
];

/// The old meaning of `--warn-X N`/`--crit-X N`: alert at N or more (the
/// range `N-1`), 0 off.
pub(super) fn legacy_range(n: u64) -> Option<Range> {
    (n > 0).then(|| Range::at_most((n - 1) as f64))
}

/// The worst level over every metric.
pub fn status(c: &CheckCounts, levels: &[Levels; COUNTS]) -> Status {
    METRICS
        .iter()
        .zip(levels)
        .map(|(m, l)| l.status((m.value)(c)))
        .max()
        .unwrap_or(Status::Ok)
}
