//! Unit tests of `check`: ranges per count, the old flags' mapping, the
//! plugin output (perfdata with the ranges in force, long output).

use super::output::{json, nagios, prometheus};
use super::threshold::Range;
use super::*;
use crate::protocol::check::CheckCounts;
use crate::protocol::check::{CheckReading, StuckOne};
use crate::protocol::read::verdict::{Cause, CauseKind, Healing, Runbooks};
use crate::protocol::transaction::{Transaction, TxnState};
use clap::Parser;

#[derive(Parser)]
struct T {
    #[command(flatten)]
    a: Args,
}

fn args(extra: &[&str]) -> Args {
    T::parse_from(std::iter::once("t").chain(extra.iter().copied())).a
}

fn levels(extra: &[&str]) -> [Levels; COUNTS] {
    in_force(&args(extra)).0
}

/// Counts in [`METRICS`] order (those left out are 0).
fn counts(n: &[u64]) -> CheckCounts {
    let n = |i: usize| n.get(i).copied().unwrap_or(0);
    CheckCounts {
        stuck: n(0),
        needs_investigation: n(1),
        acked: 0,
        odd_documents: n(2),
        stale_locks: n(3),
        audit_findings: n(4),
        recovery_stalled: n(5),
        as_of: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
    }
}

fn stuck(id: &str, minutes: i64, needs_investigation: bool) -> StuckOne {
    let as_of = counts(&[0; 5]).as_of;
    StuckOne {
        transaction: Transaction {
            id: id.into(),
            src: Some("A".into()),
            dest: None,
            amount: Some(5),
            state: Some(TxnState::Pending),
            creation_time: None,
            modification_time: Some(as_of - chrono::Duration::minutes(minutes)),
            reverses: None,
            reversed_by: None,
            problems: Default::default(),
        },
        needs_investigation,
        cause: None,
    }
}

/// A reading of two stuck transactions, oldest first: "old" (3h20m,
/// needing investigation, on hot account A with 7 stuck) and "young"
/// (10 minutes, no cause judged), nothing acked.
fn two_stuck(counts: CheckCounts, healing: Healing, runbooks: Runbooks) -> CheckReading {
    CheckReading {
        counts,
        healing,
        stuck: vec![
            StuckOne {
                cause: Some(Cause::HotAccount {
                    account: "A".into(),
                    stuck: 7,
                }),
                ..stuck("old", 200, true)
            },
            stuck("young", 10, false),
        ],
        acked: Vec::new(),
        runbooks,
    }
}

/// Every count alone, under its own -w/-c ranges (every default off).
#[test]
fn each_count_by_its_ranges() {
    for (i, m) in METRICS.iter().enumerate() {
        let mut argv: Vec<String> = Vec::new();
        for other in &METRICS {
            argv.push(format!("-w={}=", other.key()));
            argv.push(format!("-c={}=", other.key()));
        }
        argv.push(format!("--warning={}=3", m.names.last().unwrap_or(&"")));
        argv.push(format!("-c{}=@10:20", m.key()));
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let l = levels(&argv);
        for (n, expected) in [
            (0, Status::Ok),
            (3, Status::Ok),
            (4, Status::Warning),
            (10, Status::Critical),
            (20, Status::Critical),
            (21, Status::Warning),
        ] {
            let mut v = [0; COUNTS];
            v[i] = n;
            assert_eq!(status(&counts(&v), &l), expected, "{} {n}", m.key());
        }
    }
}

#[test]
fn c_zero_is_critical_above_zero_and_a_bare_range_is_stuck() {
    let l = levels(&["-c", "0"]);
    assert_eq!(status(&counts(&[0; 5]), &l), Status::Ok);
    assert_eq!(status(&counts(&[1, 0, 0, 0, 0]), &l), Status::Critical);
    assert_eq!(status(&counts(&[1, 0, 0, 0, 0]), &l).exit_code(), 2);
    let l = levels(&["-w", "10:", "-w", "stuck="]);
    assert_eq!(l[0].warn, None, "the last -w for a count wins");
    assert!(T::try_parse_from(["t", "-c", "20:10"]).is_err());
    assert!(T::try_parse_from(["t", "-c", "nosuch=1"]).is_err());
    assert!(T::try_parse_from(["t", "-w", "stuck=ten"]).is_err());
}

#[test]
fn defaults_are_the_old_defaults() {
    let d = levels(&[]);
    assert_eq!(status(&counts(&[0; 5]), &d), Status::Ok);
    assert_eq!(status(&counts(&[1, 0, 0, 0, 0]), &d), Status::Warning);
    assert_eq!(status(&counts(&[1, 1, 0, 0, 0]), &d), Status::Critical);
    assert_eq!(status(&counts(&[0, 0, 1, 0, 0]), &d), Status::Warning);
    assert_eq!(status(&counts(&[0, 0, 0, 1, 0]), &d), Status::Warning);
    assert_eq!(status(&counts(&[0, 0, 0, 0, 1]), &d), Status::Critical);
    assert_eq!(Status::Unknown.exit_code(), 3);
}

/// `--warn-X N` keeps its meaning (N or more; 0 off), with a deprecation
/// line naming the range it stands for.
#[test]
fn old_flags_map_to_ranges_with_a_deprecation_line() {
    let (l, notes) = in_force(&args(&["--warn-stuck", "3", "--crit-stuck", "5"]));
    assert_eq!(l[0].warn, Some(Range::at_most(2.0)));
    for (n, expected) in [(2, Status::Ok), (3, Status::Warning), (5, Status::Critical)] {
        assert_eq!(status(&counts(&[n, 0, 0, 0, 0]), &l), expected, "{n}");
    }
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].contains("--warn-stuck 3 is -w stuck=2"),
        "{notes:?}"
    );
    let (l, notes) = in_force(&args(&["--crit-findings", "0"]));
    assert_eq!(l[4].crit, None);
    assert!(
        notes[0].contains("--crit-findings 0 is -c audit_findings="),
        "{notes:?}"
    );
    // The new flags win over the old.
    let (l, _) = in_force(&args(&["--warn-odd", "0", "-w", "odd=4"]));
    assert_eq!(l[2].warn, Some(Range::at_most(4.0)));
}

#[test]
fn nagios_output_with_perfdata_and_long_output() {
    let as_of = counts(&[]).as_of;
    let healing = Healing::Stalled {
        since: as_of - chrono::Duration::minutes(20),
        stuck: 2,
        last_recovery: None,
    };
    let runbooks = Runbooks([(CauseKind::HotAccount, "https://rb/hot".to_string())].into());
    let r = two_stuck(counts(&[2, 1, 0, 3, 0, 1]), healing, runbooks);
    let l = levels(&["-w", "stale_locks=10:", "-c", "@5:9"]);
    assert_eq!(
        nagios(&r, &l, 10),
        "ESTX CRITICAL - 2 stuck, 1 needing investigation, 0 odd documents, 3 stale locks, \
         0 audit findings, 1 recovery stalled | stuck=2;0;@5:9;0 needs_investigation=1;;0;0 \
         odd_documents=0;0;;0 stale_locks=3;10:;;0 audit_findings=0;;0;0 recovery_stalled=1;0;;0\n\
         recovery: stalled since 2023-11-14T21:53:20.000Z (2 stuck, none recovered by the \
         application for 20m00s (no recovery by the application seen))\n\
         stuck transactions, oldest first (2 of 2):\n\
         old pending 3h20m A -> ? (needs investigation) - cause: hot account (7 stuck \
         transactions on account A): safe act: investigate - runbook: https://rb/hot\n\
         young pending 10m00s A -> ?\n"
    );
    let one = nagios(&r, &l, 1);
    assert!(
        one.ends_with("safe act: investigate - runbook: https://rb/hot\n... and 1 more\n"),
        "{one}"
    );
    assert_eq!(nagios(&r, &l, 0).lines().count(), 1);
    let j: serde_json::Value =
        serde_json::from_str(&json(Ok(&r), &l, Status::Critical, 1)).unwrap_or_default();
    assert_eq!(j["metrics"][0]["crit"], "@5:9", "{j}");
    assert_eq!(j["metrics"][3]["warn"], "10:", "{j}");
    assert_eq!(j["stuck"][0]["id"], "old", "{j}");
    assert_eq!(j["stuck"][0]["cause"]["cause"], "hot_account", "{j}");
    assert_eq!(j["stuck"][0]["cause"]["safe_act"], "investigate", "{j}");
    assert_eq!(j["stuck"][0]["cause"]["runbook"], "https://rb/hot", "{j}");
    assert_eq!(j["stuck"].as_array().map(Vec::len), Some(1), "{j}");
    assert_eq!(j["healing"]["verdict"], "stalled", "{j}");
    assert_eq!(j["healing"]["stuck"], 2, "{j}");
    assert_eq!(j["metrics"][5]["key"], "recovery_stalled", "{j}");
    assert!(
        j["healing"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("2 stuck")),
        "{j}"
    );
}

#[test]
fn prometheus_text() {
    let r = two_stuck(counts(&[2, 1, 0, 3, 0]), Healing::Idle, Runbooks::default());
    let text = prometheus(Some(&r), Status::Critical);
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
    // The exporter's family, one sample per cause (issue 30): a judged one
    // counted, the others zero; one not judged yet counts for none.
    assert!(
        text.contains("# TYPE estx_stuck_by_cause gauge\n"),
        "{text}"
    );
    assert!(
        text.contains("\nestx_stuck_by_cause{cause=\"hot_account\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("\nestx_stuck_by_cause{cause=\"holder_dead\"} 0\n"),
        "{text}"
    );
    let down = prometheus(None, Status::Unknown);
    assert!(down.contains("estx_check_up 0") && down.contains("estx_check_status 3"));
    assert!(!down.contains("estx_stuck_transactions"));
    assert!(!down.contains("estx_stuck_by_cause"));
}
