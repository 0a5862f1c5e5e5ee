//! What the exporter publishes after each poll, in the OpenMetrics text
//! format (which Prometheus scrapes) encoded by `prometheus-client`: the
//! gauges of `check` under the same names and help ([`METRICS`], one rule
//! for both), the transactions per state and the oldest one's age per
//! state (the dashboard's poll: [`crate::protocol::read::poll`]), whether
//! the cluster could be read (`estx_up`), how long the poll took and when
//! the last one succeeded. When the cluster cannot be read, the counts are
//! left out (a gauge that stops updating would look like a value) and
//! `estx_up` is 0.

use crate::cli::cmd::check::levels::METRICS;
use crate::protocol::check::CheckCounts;
use crate::protocol::read::verdict::{CauseKind, Healing};
use crate::protocol::read::StateCount;
use chrono::{DateTime, Utc};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// A gauge of whole numbers.
type IntGauge = Gauge<i64>;
/// A gauge of seconds (fractions allowed).
type SecondsGauge = Gauge<f64, AtomicU64>;
/// One label set: `state="..."`.
type StateLabel = Vec<(&'static str, String)>;

/// What one poll read: the check's counts and the per-state counts.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The counts `check` reports, as `check` reads them.
    pub counts: CheckCounts,
    /// Transactions per state, with the oldest modification time of each.
    pub states: Vec<StateCount>,
    /// How old the audit behind `audit_findings` is (audits are paced by
    /// their cost: not every poll runs one).
    pub audit_age: Duration,
    /// Whether the application's own recovery is working.
    pub healing: Healing,
    /// The last recovery by the application the exporter has seen.
    pub last_recovery: Option<DateTime<Utc>>,
    /// The stuck transactions the poll lists (the oldest), by cause.
    pub by_cause: BTreeMap<CauseKind, u64>,
}

/// The outcome of one poll, as published.
#[derive(Debug, Clone)]
pub struct PollOutcome {
    /// The reading, or why the cluster could not be read.
    pub reading: Result<Reading, String>,
    /// How long the poll took.
    pub duration: Duration,
    /// When the last successful poll's counts were taken, if any ever was.
    pub last_success: Option<DateTime<Utc>>,
}

/// The label value of a state: its name, `unknown(x)` for one this tool
/// does not know, `none` for a document without one.
fn state_label(c: &StateCount) -> StateLabel {
    let name = c
        .state
        .as_ref()
        .map_or_else(|| "none".into(), ToString::to_string);
    vec![("state", name)]
}

/// The help without its final full stop: `prometheus-client` adds one.
fn help(text: &str) -> &str {
    text.trim_end_matches('.')
}

fn int(registry: &mut Registry, name: &str, text: &str, value: u64) {
    let g = IntGauge::default();
    g.set(i64::try_from(value).unwrap_or(i64::MAX));
    registry.register(name, help(text), g);
}

fn seconds(registry: &mut Registry, name: &str, text: &str, value: f64) {
    let g = SecondsGauge::default();
    g.set(value);
    registry.register_with_unit(name, help(text), Unit::Seconds, g);
}

/// The counts of a successful poll.
fn register_reading(registry: &mut Registry, r: &Reading) {
    for m in &METRICS {
        int(registry, m.prometheus, m.help, (m.value)(&r.counts));
    }
    let (name, text) = crate::cli::cmd::check::output::ACKED_GAUGE;
    int(registry, name, text, r.counts.acked);
    seconds(
        registry,
        "estx_audit_age",
        "How old the audit behind estx_audit_findings is (audits run as often as their cost allows).",
        r.audit_age.as_secs_f64(),
    );
    register_healing(registry, r);
    let (name, text, label) = crate::cli::cmd::check::output::BY_CAUSE_GAUGE;
    let by_cause = Family::<StateLabel, IntGauge>::default();
    for kind in CauseKind::ALL {
        let n = r.by_cause.get(&kind).copied().unwrap_or(0);
        by_cause
            .get_or_create(&vec![(label, kind.name().to_string())])
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }
    registry.register(name, text, by_cause);
    let per_state = Family::<StateLabel, IntGauge>::default();
    let oldest = Family::<StateLabel, SecondsGauge>::default();
    for c in &r.states {
        let labels = state_label(c);
        per_state
            .get_or_create(&labels)
            .set(i64::try_from(c.count).unwrap_or(i64::MAX));
        if let Some(t) = c.oldest.filter(|_| c.count > 0) {
            let age = (r.counts.as_of - t).num_milliseconds().max(0) as f64 / 1000.0;
            oldest.get_or_create(&labels).set(age);
        }
    }
    registry.register(
        "estx_transactions",
        "Transaction documents per state (none: no state field)",
        per_state,
    );
    registry.register_with_unit(
        "estx_oldest_transaction_age",
        "Age of the least recently modified transaction per state, on the cluster's clock",
        Unit::Seconds,
        oldest,
    );
}

/// The healing verdict (one gauge per verdict, 1 for the one in force)
/// and the age of the application's last observed recovery (left out
/// until one is seen).
fn register_healing(registry: &mut Registry, r: &Reading) {
    let verdicts = Family::<StateLabel, IntGauge>::default();
    for word in ["healing", "stalled", "not running", "idle", "unknown"] {
        let on = i64::from(r.healing.word() == word);
        verdicts
            .get_or_create(&vec![("verdict", word.replace(' ', "_"))])
            .set(on);
    }
    registry.register(
        "estx_recovery_verdict",
        "The healing verdict on the application's own recovery: 1 for the verdict in force",
        verdicts,
    );
    if let Some(t) = r.last_recovery {
        let age = (r.counts.as_of - t).num_milliseconds().max(0) as f64 / 1000.0;
        seconds(
            registry,
            "estx_recovery_last_seen_age",
            "Age of the last transaction the application itself moved out of a stuck state, as seen by this exporter.",
            age,
        );
    }
}

/// The exposition of one poll's outcome.
pub fn exposition(o: &PollOutcome) -> String {
    let mut registry = Registry::default();
    int(
        &mut registry,
        "estx_up",
        "Whether the last poll read the cluster (1) or not (0).",
        u64::from(o.reading.is_ok()),
    );
    seconds(
        &mut registry,
        "estx_poll_duration",
        "How long the last poll took.",
        o.duration.as_secs_f64(),
    );
    if let Some(t) = o.last_success {
        seconds(
            &mut registry,
            "estx_last_success_timestamp",
            "When the last successful poll's counts were taken (Unix time, the cluster's clock).",
            t.timestamp_millis() as f64 / 1000.0,
        );
    }
    if let Ok(r) = &o.reading {
        register_reading(&mut registry, r);
    }
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}

#[cfg(test)]
mod tests {
    use crate::cli::cmd::exporter::metrics::*;
    use crate::protocol::transaction::TxnState;

    fn reading() -> Reading {
        let now = Utc::now();
        Reading {
            counts: CheckCounts {
                stuck: 2,
                needs_investigation: 1,
                acked: 0,
                odd_documents: 1,
                stale_locks: 3,
                audit_findings: 0,
                recovery_stalled: 1,
                as_of: now,
            },
            states: vec![
                StateCount {
                    state: Some(TxnState::Pending),
                    count: 2,
                    oldest: Some(now - chrono::Duration::seconds(90)),
                },
                StateCount {
                    state: None,
                    count: 1,
                    oldest: None,
                },
            ],
            audit_age: Duration::from_secs(75),
            healing: Healing::Stalled {
                since: now - chrono::Duration::seconds(300),
                stuck: 2,
                last_recovery: Some(now - chrono::Duration::seconds(600)),
            },
            last_recovery: Some(now - chrono::Duration::seconds(600)),
            by_cause: [(CauseKind::HolderDead, 2)].into(),
        }
    }

    #[test]
    fn a_good_poll_has_the_check_gauges_and_the_per_state_ones() {
        let text = exposition(&PollOutcome {
            reading: Ok(reading()),
            duration: Duration::from_millis(250),
            last_success: Some(Utc::now()),
        });
        for line in [
            "estx_up 1\n",
            "estx_stuck_transactions 2\n",
            "estx_stale_locks 3\n",
            "estx_transactions{state=\"pending\"} 2\n",
            "estx_transactions{state=\"none\"} 1\n",
            "estx_oldest_transaction_age_seconds{state=\"pending\"} 90.0\n",
            "estx_poll_duration_seconds 0.25\n",
            "estx_audit_age_seconds 75.0\n",
            "estx_recovery_stalled 1\n",
            "estx_recovery_verdict{verdict=\"stalled\"} 1\n",
            "estx_recovery_verdict{verdict=\"healing\"} 0\n",
            "estx_recovery_last_seen_age_seconds 600.0\n",
            "estx_stuck_by_cause{cause=\"holder_dead\"} 2\n",
            "estx_stuck_by_cause{cause=\"holder_live\"} 0\n",
            "# HELP estx_stuck_transactions Transactions in flight untouched for longer than the recovery window.\n",
            "# EOF\n",
        ] {
            assert!(text.contains(line), "{line:?} missing from\n{text}");
        }
        assert!(!text.contains("age_seconds{state=\"none\"}"), "{text}");
        assert!(!text.contains("..\n"), "one full stop per help: {text}");
    }

    #[test]
    fn a_failed_poll_says_down_and_publishes_no_counts() {
        let text = exposition(&PollOutcome {
            reading: Err("connection refused".into()),
            duration: Duration::from_secs(2),
            last_success: None,
        });
        assert!(text.contains("estx_up 0\n"), "{text}");
        assert!(!text.contains("estx_stuck_transactions"), "{text}");
        assert!(!text.contains("estx_transactions{"), "{text}");
        assert!(!text.contains("estx_last_success"), "{text}");
    }
}
