//! Reads asked again keep their last answer on screen (`Load::Reloading`):
//! the audit pane's findings while the next audit runs, and the selection's
//! recorded interventions while they are read again.

use crate::{app, audit_report, now};
use estx::dashboard::event::{Event, IoRequest};
use estx::dashboard::load::Load;
use estx::dashboard::update::update;

#[test]
fn the_audit_keeps_its_findings_while_the_next_one_runs() {
    let mut app = app(false);
    let tick = |s: i64| Event::Tick(now() + chrono::Duration::seconds(s));
    assert_eq!(update(&mut app, tick(1)), vec![IoRequest::Audit]);
    assert_eq!(app.audit.report, Load::Loading, "nothing to show yet");
    let found = audit_report(&[("dangling_pending", "A")]);
    update(
        &mut app,
        Event::Audited(Ok(Box::new(found.clone())), Default::default()),
    );
    assert_eq!(update(&mut app, tick(40)), vec![IoRequest::Audit]);
    assert!(app.audit.report.is_loading());
    assert_eq!(
        app.audit.findings(),
        &found.findings[..],
        "kept while running"
    );
    assert!(update(&mut app, tick(41)).is_empty(), "one at a time");
    update(
        &mut app,
        Event::Audited(
            Err(estx::Error::Unreadable("timeout".into())),
            Default::default(),
        ),
    );
    assert_eq!(app.audit.report.last(), Some(Err("timeout")));
    assert_eq!(update(&mut app, tick(80)), vec![IoRequest::Audit]);
    assert_eq!(
        app.audit.report.last(),
        Some(Err("timeout")),
        "a failure stays shown too"
    );
}

#[test]
fn the_selections_history_stays_shown_while_it_is_read_again() {
    let mut app = app(false);
    let id = app.selection.txn.clone().expect("a selection");
    if app.reads.history_asked.is_none() {
        assert_eq!(app.take_history(), Some(id.clone()));
    }
    assert!(app.reads.history.is_loading());
    update(
        &mut app,
        Event::History {
            id: id.clone(),
            records: Ok(vec![]),
        },
    );
    assert_eq!(app.reads.history, Load::Loaded((id.clone(), Ok(vec![]))));
    app.reads.history_asked = None; // what a poll or an action does
    assert_eq!(app.take_history(), Some(id));
    assert!(app.reads.history.is_loading());
    assert!(
        matches!(app.selected_history(), Some(Ok(r)) if r.is_empty()),
        "the last records stay shown while read again"
    );
}
