//! The background audit runs at the pace its own cost allows
//! (`protocol::audit::pace`): a cheap one every 30 s, a costly one later, so
//! that watching a big cluster costs no more per poll than a small one; an
//! audit the operator asks for runs at once.

use crate::{app, audit_report, now};
use estx::dashboard::event::{Event, IoRequest};
use estx::dashboard::update::update;
use estx::protocol::audit::pace::AuditCost;
use std::time::Duration;

fn tick(s: i64) -> Event {
    Event::Tick(now() + chrono::Duration::seconds(s))
}

fn audited(cost: AuditCost) -> Event {
    Event::Audited(Ok(Box::new(audit_report(&[]))), cost)
}

#[test]
fn a_costly_audit_is_spread_over_more_polls_than_a_cheap_one() {
    let mut app = app(false);
    assert_eq!(update(&mut app, tick(1)), vec![IoRequest::Audit]);
    // A cheap audit: the next one 30 s on.
    update(
        &mut app,
        audited(AuditCost {
            requests: 6,
            ..Default::default()
        }),
    );
    assert!(update(&mut app, tick(30)).is_empty());
    assert_eq!(update(&mut app, tick(31)), vec![IoRequest::Audit]);
    // 90 requests at one poll every 2 s (and the fixture's 5 ms poll): the
    // next one 180.45 s on, so each poll carries one request more on
    // average.
    let costly = AuditCost {
        requests: 90,
        cpu: Duration::from_millis(40),
        elapsed: Duration::from_secs(3),
    };
    update(&mut app, audited(costly));
    assert!(update(&mut app, tick(31 + 180)).is_empty(), "not yet");
    assert_eq!(update(&mut app, tick(31 + 181)), vec![IoRequest::Audit]);
    assert_eq!(app.audit.cost, Some(costly));
}

#[test]
fn an_audit_asked_for_runs_at_once_whatever_the_pace() {
    let mut app = app(false);
    assert_eq!(update(&mut app, tick(1)), vec![IoRequest::Audit]);
    let costly = AuditCost {
        requests: 500,
        ..Default::default()
    };
    update(&mut app, audited(costly));
    assert!(update(&mut app, tick(100)).is_empty(), "paced");
    let asked = estx::dashboard::audit::audit_if_due(&mut app, true);
    assert_eq!(asked, vec![IoRequest::Audit]);
}

/// On a slow cluster polls end the poll's own time apart more than the
/// interval (the poller waits the interval after each): the audit is
/// spread over the polls that really happen, so each still carries one
/// request more at the most.
#[test]
fn a_slow_clusters_polls_spread_the_audit_over_more_time() {
    let mut app = app(false);
    assert_eq!(update(&mut app, tick(1)), vec![IoRequest::Audit]);
    if let Some(s) = app.snapshot.as_mut() {
        s.duration = Duration::from_millis(1_400);
    }
    let costly = AuditCost {
        requests: 34,
        ..Default::default()
    };
    update(&mut app, audited(costly));
    // 34 polls 3.4 s apart: 115.6 s, not the 68 s of 2 s polls.
    assert!(update(&mut app, tick(1 + 115)).is_empty(), "not yet");
    assert_eq!(update(&mut app, tick(1 + 116)), vec![IoRequest::Audit]);
}
