//! Snapshots of what the dashboard shows when the cluster is not simply
//! healthy: stale data with a poll error, no data yet, authentication
//! failures and missing indices.

use crate::drawing::screen;
use crate::fixtures::{ago, app, now, settings};
use estx::dashboard::app::App;
use estx::dashboard::event::PollFailure;
use estx::protocol::read::poll::Snapshot;
use estx::Error;
use std::time::Duration;

#[test]
fn stale_data_with_error() {
    let mut a = app();
    a.snapshot.as_mut().unwrap().taken_at = ago(95);
    a.poll.error = Some(PollFailure::Transient(Error::Unreachable(
        "connection refused".into(),
    )));
    a.poll.running = true;
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("STALE: cluster unreachable: connection refused — retrying — data is 1m35s old"),
        "{s}"
    );
    assert_snapshot!("stale_with_error", s);
}

#[test]
fn no_data_yet() {
    let mut a = App::new(settings(), Duration::from_secs(5), now());
    assert_snapshot!("no_data_connecting", screen(&a, 100, 30));
    a.poll.error = Some(PollFailure::Transient(Error::Unreachable(
        "connection refused".into(),
    )));
    let s = screen(&a, 100, 30);
    assert!(s.contains("cannot reach http://es.example:9200"), "{s}");
    assert_snapshot!("no_data_unreachable", s);
}

#[test]
fn a_cluster_that_answered_an_error_is_not_called_unreachable() {
    let mut a = App::new(settings(), Duration::from_secs(5), now());
    a.poll.error = Some(PollFailure::Other(Error::Cluster {
        status: 400,
        reason: "explicit index in multi search is not allowed".into(),
        retry_after: None,
    }));
    let s = screen(&a, 100, 30);
    assert!(!s.contains("cannot reach"), "{s}");
    assert!(
        s.contains("http://es.example:9200 answered with an error"),
        "{s}"
    );
}

#[test]
fn auth_failure() {
    let failure = PollFailure::Auth(Error::Auth {
        status: 401,
        reason: "unable to authenticate user [ops]".into(),
    });
    let mut a = app();
    a.poll.error = Some(failure.clone());
    a.snapshot.as_mut().unwrap().taken_at = ago(20);
    a.poll.paused = true;
    let s = screen(&a, 100, 30);
    // The banner leads with its cause (issue 28, item 6).
    assert!(
        s.contains(
            " STALE: authentication or authorisation failed (HTTP 401): unable to authenticate \
             user [ops] — not r"
        ),
        "{s}"
    );
    assert_snapshot!("auth_failure_stale", s);
    assert!(
        screen(&a, 160, 30)
            .contains("user [ops] — not retrying; fix credentials and press r — data is 20s old"),
        "{s}"
    );
    let mut b = App::new(settings(), Duration::from_secs(5), now());
    b.poll.error = Some(failure);
    assert_snapshot!("auth_failure_no_data", screen(&b, 100, 30));
}

#[test]
fn missing_indices() {
    let mut a = App::new(settings(), Duration::from_secs(5), now());
    a.snapshot = Some(Snapshot {
        taken_at: ago(1),
        duration: Duration::from_millis(7),
        requests: 2,
        health: Some("green".into()),
        missing_indices: vec!["accounts".into(), "locks".into(), "transactions".into()],
        ..Snapshot::default()
    });
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("MISSING INDICES: accounts, locks, transactions — wrong cluster or index name"),
        "{s}"
    );
    // No all-clear beside it (issue 28, item 4).
    assert!(
        s.contains("● indices missing") && !s.contains("● green"),
        "{s}"
    );
    assert_snapshot!("missing_indices", s);
}

#[test]
fn partial_results_caps_and_refresh_lag_are_shown() {
    use estx::protocol::read::{Coverage, Refresh};
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.read.coverage = Coverage {
        total: 5,
        failed: 1,
        timed_out: false,
    };
    snap.read.locks_total = snap.locks.len() as u64 + 9_500;
    snap.read.refresh = Some(Refresh::Every(Duration::from_secs(1)));
    snap.read.warnings = vec!["`transaction_state` is `text` with no keyword sub-field".into()];
    let s = screen(&a, 200, 45);
    assert!(s.contains("PARTIAL: 1 OF 5 SHARDS FAILED"), "{s}");
    let locks = format!("locks {} of {}", a_locks(&a), a_locks(&a) + 9_500);
    assert!(s.contains(&locks), "{locks}: {s}");
    assert!(s.contains("+ ≤1s refresh"), "{s}");
    assert!(s.contains("⚠ `transaction_state`"), "{s}");
    let snap = a.snapshot.as_mut().unwrap();
    snap.read.warnings.clear();
    snap.read.pending_accounts_total = 350;
    let s = screen(&a, 200, 45);
    assert!(s.contains("accounts with pending 200 of 350"), "{s}");
}

fn a_locks(a: &App) -> usize {
    a.snapshot.as_ref().map(|s| s.locks.len()).unwrap_or(0)
}

/// With more stuck transactions than a poll lists (6,000 against a page of
/// 500), the alert line says the poll's counts over every document, as
/// `check` does, not the listed rows' ("!! investigate 500 · ! stuck 0").
#[test]
fn the_alert_line_counts_the_cluster_not_the_listed_rows() {
    use estx::protocol::read::poll::AttentionCounts;
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.in_flight_total = 6_004;
    snap.read.attention = Some(AttentionCounts {
        stuck: Some(6_000),
        needs_investigation: Some(5_990),
        odd: 4,
    });
    let s = screen(&a, 160, 48);
    assert!(
        s.contains("!! investigate 5,990 · ! stuck 6,000 · ? odd 4"),
        "{s}"
    );
}

/// A deployment without a locks index (none named): the locks pane says it
/// takes no locks, and the header keeps its health: no index is missing.
#[test]
fn a_deployment_without_a_locks_index() {
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.locks.clear();
    snap.locks_absent = true;
    let s = screen(&a, 200, 45);
    assert!(
        s.contains("no locks index: this deployment takes") && s.contains("no locks"),
        "{s}"
    );
    assert!(
        !s.contains("MISSING INDICES") && s.contains("● yellow"),
        "{s}"
    );
}

/// Issue 28, item 6: at 80 columns every count stays on the summary line
/// (in the table's marks when the words do not fit), the locks count
/// included once the audit count has arrived; a banner's cause comes
/// before the data's age, so a narrow screen cuts the age.
#[test]
fn counts_never_leave_a_narrow_header_and_banners_lead_with_the_cause() {
    let mut a = app();
    a.audit.report =
        estx::dashboard::load::Load::Loaded(Box::new(estx::protocol::audit::AuditReport {
            total_balance: 0,
            in_flight_delta: 0,
            consistent_view: true,
            repair_effect: Vec::new(),
            coverage: Default::default(),
            findings: Vec::new(),
            repairs: Vec::new(),
            repair_steps: Vec::new(),
        }));
    let s = screen(&a, 80, 24);
    let line = s.lines().nth(1).unwrap();
    for count in ["in flight", "!! ", "! ", "? ", "locks ", "audit 0"] {
        assert!(line.contains(count), "{count:?} missing: {line}");
    }
    a.poll.error = Some(PollFailure::Transient(Error::Unreachable(
        "Connection refused (os error 111)".into(),
    )));
    let s = screen(&a, 80, 24);
    assert!(
        s.lines()
            .nth(1)
            .unwrap()
            .contains("STALE: cluster unreachable: Connection refused (os error 111)"),
        "{s}"
    );
}

/// The healing verdict in the header: an alarm (stalled since a time, not
/// running) in words at a normal width; healing and idle too; nothing
/// before a poll was judged.
#[test]
fn the_header_says_whether_the_application_is_healing() {
    use estx::protocol::read::verdict::{Healing, HealingSign};
    let mut a = app();
    let s = screen(&a, 160, 30);
    assert!(!s.contains("recovery"), "not judged yet: {s}");
    a.snapshot.as_mut().unwrap().healing = Healing::Stalled {
        since: ago(600),
        stuck: 9,
        last_recovery: None,
    };
    let s = screen(&a, 160, 30);
    assert!(s.contains("recovery stalled since "), "{s}");
    assert_snapshot!("header_recovery_stalled", s);
    let set = |a: &mut App, h: Healing| {
        a.snapshot.as_mut().unwrap().healing = h;
        screen(a, 160, 30)
    };
    let healing = Healing::Healing {
        sign: HealingSign::OldestLeft,
        stuck: 9,
    };
    let not_running = Healing::NotRunning {
        last_beat: ago(900),
        stuck: 9,
    };
    for (h, words) in [
        (healing, "recovery healing"),
        (not_running, "recovery not running"),
        (Healing::Idle, "recovery idle"),
    ] {
        let s = set(&mut a, h);
        assert!(s.contains(words), "{words}: {s}");
    }
}
