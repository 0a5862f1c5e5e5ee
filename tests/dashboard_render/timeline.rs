//! The timeline view (`T`): the last hour's interventions, newest first,
//! each with when, the act, on what and how it ended (a bulk run by its
//! counts, coloured by its outcome), then who, from where and why.

use crate::drawing::{draw, find, text};
use crate::fixtures::{app, job, now};
use chrono::Duration as Age;
use estx::dashboard::layers::timeline::{Read, TimelineView};
use estx::dashboard::layers::Overlay;
use estx::dashboard::load::Load;
use estx::protocol::report::Tally;
use estx::protocol::trail::{
    ActOutcome, ActionKind, Entry, Interface, OperatorSource, RecordStatus,
};

/// Four interventions, newest first: a bulk recovery finished with its
/// counts, a rollback from a dashboard, a failed forced lock release, and
/// one still running (or whose process died).
fn entries() -> Vec<Entry> {
    let mut bulk = job("20260301T115000.000Z-recover-1a2b3c4d", 10, "ops-ann", None);
    bulk.status = RecordStatus::Finished;
    bulk.outcome = Some(ActOutcome::Refused);
    bulk.counts = Some(Tally {
        completed: 298,
        refused: 2,
        ..Tally::default()
    });
    bulk.finished_at = Some(now() - Age::minutes(8));
    let mut rollback = job("20260301T114000.000Z-rollback-5e6f7a8b", 20, "bob", None);
    rollback.action = ActionKind::Rollback;
    rollback.bulk = false;
    rollback.transactions = vec!["t-7".into()];
    rollback.targets = vec![];
    rollback.interface = Interface::Dashboard;
    rollback.operator.source = OperatorSource::Os;
    rollback.operator.host = "ops-laptop".into();
    rollback.reason = Some("INC-6 stuck payment".into());
    rollback.status = RecordStatus::Finished;
    rollback.outcome = Some(ActOutcome::Completed);
    rollback.summary = Some("completed: rolled back (state pending -> rolled-back)".into());
    let mut release = rollback.clone();
    release.record_id = "20260301T113000.000Z-release_lock-9c0d1e2f".into();
    release.started_at = now() - Age::minutes(30);
    release.action = ActionKind::ReleaseLock;
    release.forced = true;
    release.transactions = vec![];
    release.targets = vec!["acct-9".into()];
    release.interface = Interface::Cli;
    release.reason = Some("INC-6 lock held by a dead worker".into());
    release.outcome = Some(ActOutcome::Failed);
    release.summary = Some("the lock changed meanwhile".into());
    let running = job(
        "20260301T112000.000Z-rollback-3a4b5c6d",
        40,
        "ops-cy",
        Some(5),
    );
    [bulk, rollback, release, running]
        .iter()
        .map(Entry::of)
        .collect()
}

#[test]
fn the_timeline_lists_the_last_hours_interventions_newest_first() {
    let mut a = app();
    let view = TimelineView {
        list: Load::Loaded(Read {
            since: now() - Age::hours(1),
            entries: entries(),
        }),
        cursor: 1,
    };
    a.overlays.open(Overlay::Timeline(view));
    let buf = draw(&a, 100, 30);
    let s = text(&buf);
    assert!(s.contains("interventions since 11:00:00: 4"), "{s}");
    let at = |needle: &str| find(&buf, needle).unwrap_or_else(|| panic!("{needle}: {s}"));
    // Newest first.
    assert!(at("11:50:00").1 < at("11:40:00").1, "{s}");
    assert!(at("11:40:00").1 < at("11:30:00").1, "{s}");
    assert!(at("11:30:00").1 < at("11:20:00").1, "{s}");
    for line in [
        "11:50:00  recover (bulk) · 300 transaction(s); targets: --all-stuck",
        "  298 completed, 2 refused",
        "by ops-ann (cluster user) on bastion · via cli · reason: INC-5 outage",
        "▶ 11:40:00  rollback · 1 transaction(s)",
        "completed: rolled back (state pending -> rolled-back)",
        "via dashboard · reason: INC-6 stuck payment",
        "11:30:00  release-lock (forced) · targets: acct-9 · failed: the lock changed meanwhile",
    ] {
        assert!(s.contains(line), "{line}: {s}");
    }
    assert!(s.contains("UNFINISHED"), "{s}");
    // Each outcome in its colour.
    let fg = |needle: &str| {
        let (x, y) = at(needle);
        buf[(x, y)].fg
    };
    assert_eq!(fg("298 completed"), a.theme.warn, "some refused");
    assert_eq!(fg("failed: the lock"), a.theme.danger);
    assert_eq!(fg("UNFINISHED"), a.theme.odd);
    assert!(s.contains("j/k select · r read again · Esc close"), "{s}");
    assert_snapshot!("timeline_view_100x30", s);
}

#[test]
fn the_timeline_says_when_the_window_is_empty_or_unreadable() {
    let mut a = app();
    let mut view = TimelineView {
        list: Load::Loaded(Read {
            since: now() - Age::hours(1),
            entries: vec![],
        }),
        cursor: 0,
    };
    a.overlays.open(Overlay::Timeline(view.clone()));
    let s = text(&draw(&a, 100, 30));
    assert!(
        s.contains("no recorded interventions since 11:00:00"),
        "{s}"
    );
    view.list = Load::Failed("audit index `audit` does not exist".into());
    a.overlays.open(Overlay::Timeline(view));
    let s = text(&draw(&a, 100, 30));
    assert!(
        s.contains("cannot read the interventions: audit index `audit` does not exist"),
        "{s}"
    );
}
