//! The jobs view in `update`: `J` reads the unfinished bulk jobs; Enter
//! on one asks to resume it; only `y` (on a production profile, the
//! profile's name) resumes it, as this dashboard's bulk run.

use super::*;
use estx::dashboard::app::{MarkColour, ProfileMark};
use estx::dashboard::overlay::OverlayKind;
use estx::protocol::trail::{
    ActionKind, Interface, Operator, OperatorSource, Record, RecordStatus,
};

pub(crate) fn job(id: &str) -> Record {
    Record {
        record_id: id.into(),
        action: ActionKind::Recover,
        transactions: vec!["t-1".into(), "t-2".into(), "t-3".into()],
        targets: vec!["--all-stuck".into()],
        reason: Some("INC-5".into()),
        forced: false,
        bulk: true,
        interface: Interface::Cli,
        operator: Operator {
            user: "ops-ann".into(),
            source: OperatorSource::Cluster,
            host: "bastion".into(),
        },
        plan: vec![],
        status: RecordStatus::Running,
        outcome: None,
        summary: None,
        steps: vec![],
        parts: 0,
        started_at: now() - chrono::Duration::minutes(20),
        finished_at: None,
        tool_version: "0".into(),
        profile: None,
        production: false,
    }
}

fn type_text(app: &mut App, text: &str) -> Vec<IoRequest> {
    text.chars().flat_map(|c| update(app, key(c))).collect()
}

#[test]
fn j_lists_the_unfinished_jobs_and_y_resumes_one() {
    let mut app = app(false);
    assert_eq!(update(&mut app, key('J')), vec![IoRequest::LoadJobs]);
    assert!(app.overlays.is_open(OverlayKind::Jobs));
    update(&mut app, Event::Jobs(Ok(vec![job("run-2"), job("run-1")])));
    update(&mut app, key('j'));
    assert_eq!(app.jobs.selected().unwrap().record_id, "run-1");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert_eq!(app.jobs.resuming.as_deref(), Some(""));
    // Anything but `y` resumes nothing.
    type_text(&mut app, "n");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(app.bulk.is_none());
    let last = &app.log.back().unwrap().text;
    assert!(last.contains("`n` does not confirm it: type y"), "{last}");
    type_text(&mut app, "y");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        cmds,
        vec![IoRequest::ResumeJob {
            run: "run-1".into(),
            action: Action::Recover,
            confirmed: None,
        }]
    );
    assert!(!app.overlays.is_open(OverlayKind::Jobs));
    assert_eq!(app.bulk.as_ref().map(|b| b.total), Some(3));
    update(
        &mut app,
        Event::JobResumed {
            run: "run-1".into(),
            total: 2,
        },
    );
    assert_eq!(app.bulk.as_ref().map(|b| b.total), Some(2), "what is left");
    // While it runs, no other job resumes.
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![job("run-2")])));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.jobs.resuming, None);
}

#[test]
fn on_production_a_job_resumes_with_the_profile_typed() {
    let mut app = app(false);
    app.settings.profile = Some("prod".into());
    app.settings.mark = Some(ProfileMark {
        label: "PRODUCTION".into(),
        colour: MarkColour::Danger,
        production: true,
    });
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![job("run-1")])));
    update(&mut app, code(KeyCode::Enter));
    type_text(&mut app, "y");
    assert!(
        update(&mut app, code(KeyCode::Enter)).is_empty(),
        "y is not enough"
    );
    type_text(&mut app, "prod");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(
        matches!(cmds.as_slice(), [IoRequest::ResumeJob { confirmed: Some(c), .. }] if c == "prod"),
        "{cmds:?}"
    );
}

#[test]
fn a_read_only_dashboard_lists_jobs_but_resumes_none() {
    let mut app = app(true);
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![job("run-1")])));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.jobs.resuming, None);
    assert!(app.log.back().unwrap().text.contains("read-only"));
}
