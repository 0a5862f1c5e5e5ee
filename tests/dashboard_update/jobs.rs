//! The jobs view in `update`: `J` reads the unfinished bulk jobs, each
//! judged by its heartbeat; Enter on one asks to resume it in the
//! confirmation dialog every act uses (a job not presumed dead only
//! forced, with a reason; on a production profile, the profile's name
//! typed); it then runs as this dashboard's bulk run.

use super::*;
use estx::dashboard::app::{MarkColour, ProfileMark};
use estx::dashboard::event::ResumeConfirmed;
use estx::dashboard::layers::jobs::JobsView;
use estx::dashboard::layers::OverlayKind;
use estx::protocol::jobs::JobLife;
use estx::protocol::trail::{ActionKind, Interface, Operator, Record};

/// A job whose heartbeat (every 10 s) stopped 19 minutes ago: presumed dead.
pub(crate) fn job(id: &str) -> Record {
    let op = Operator::cluster("ops-ann", "bastion");
    let started = now() - chrono::Duration::minutes(20);
    Record {
        transactions: vec!["t-1".into(), "t-2".into(), "t-3".into()],
        targets: vec!["--all-stuck".into()],
        reason: Some("INC-5".into()),
        bulk: true,
        alive_at: Some(now() - chrono::Duration::minutes(19)),
        alive_every_ms: Some(10_000),
        tool_version: "0".into(),
        ..Record::new(id, ActionKind::Recover, Interface::Cli, op, started)
    }
}

fn type_text(app: &mut App, text: &str) -> Vec<IoRequest> {
    text.chars().flat_map(|c| update(app, key(c))).collect()
}

/// The resume dialog, when one is open.
fn resume_dialog(app: &App) -> Option<&estx::dashboard::layers::dialog::Resume> {
    app.overlays.dialog().and_then(|d| d.resuming())
}

#[test]
fn j_lists_the_unfinished_jobs_and_y_resumes_one() {
    let mut app = app(false);
    assert_eq!(update(&mut app, key('J')), vec![IoRequest::LoadJobs]);
    assert!(app.overlays.is_open(OverlayKind::Jobs));
    update(&mut app, Event::Jobs(Ok(vec![job("run-2"), job("run-1")])));
    update(&mut app, key('j'));
    assert_eq!(view(&app).selected().unwrap().record_id, "run-1");
    // Enter asks in the confirmation dialog every act uses.
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert_eq!(view(&app).selected_life().kind(), "presumed dead");
    let asked = resume_dialog(&app).expect("a resume dialog");
    assert_eq!(asked.total, 3);
    assert_eq!(asked.run, "run-1");
    // `y` opens the reason (optional: the job is presumed dead), Enter runs.
    assert!(update(&mut app, key('y')).is_empty());
    assert!(app.bulk.is_none());
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        cmds,
        vec![IoRequest::ResumeJob {
            run: "run-1".into(),
            procedure: Procedure::Recover,
            confirmed: ResumeConfirmed::default(),
        }]
    );
    assert!(!app.overlays.is_open(OverlayKind::Jobs));
    assert!(!app.overlays.is_open(OverlayKind::Dialog));
    assert_eq!(app.bulk.as_ref().map(|b| b.total), Some(3));
    update(
        &mut app,
        Event::JobResumed {
            run: "run-1".into(),
            total: 2,
            left_file: None,
        },
    );
    assert_eq!(app.bulk.as_ref().map(|b| b.total), Some(2), "what is left");
    // While it runs, no other job resumes.
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![job("run-2")])));
    update(&mut app, code(KeyCode::Enter));
    assert!(resume_dialog(&app).is_none());
    let last = &app.log.back().unwrap().text;
    assert!(last.contains("still running"), "{last}");
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
    update(&mut app, key('y'));
    assert!(
        update(&mut app, code(KeyCode::Enter)).is_empty(),
        "the reason given, the profile's name is asked"
    );
    type_text(&mut app, "y");
    assert!(
        update(&mut app, code(KeyCode::Enter)).is_empty(),
        "y is not enough"
    );
    let last = &app.log.back().unwrap().text;
    assert!(last.contains("`y` does not confirm it"), "{last}");
    type_text(&mut app, "prod");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(
        matches!(cmds.as_slice(), [IoRequest::ResumeJob { confirmed: ResumeConfirmed { typed: Some(c), reason: None, forced: false }, .. }] if c == "prod"),
        "{cmds:?}"
    );
}

#[test]
fn a_read_only_dashboard_lists_jobs_but_resumes_none() {
    let mut app = app(true);
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![job("run-1")])));
    update(&mut app, code(KeyCode::Enter));
    assert!(resume_dialog(&app).is_none());
    assert!(app.log.back().unwrap().text.contains("read-only"));
}

/// A job whose last heartbeat was `ago` seconds before the screen's clock
/// (`None`: an older version's record, with none).
fn beating(id: &str, ago: Option<i64>) -> Record {
    let mut r = job(id);
    r.alive_at = ago.map(|s| now() - chrono::Duration::seconds(s));
    r.alive_every_ms = ago.map(|_| 10_000);
    r
}

#[test]
fn a_live_or_unknown_job_resumes_only_forced_with_a_reason() {
    let mut app = app(false);
    update(&mut app, key('J'));
    let jobs = vec![beating("run-live", Some(5)), beating("run-old", None)];
    update(&mut app, Event::Jobs(Ok(jobs)));
    assert!(
        matches!(view(&app).rows[0].life, JobLife::Live { .. }),
        "{:?}",
        view(&app).rows
    );
    assert_eq!(view(&app).rows[1].life, JobLife::Unknown);
    // Enter on the live job: `y` is refused, only the force key acts.
    update(&mut app, code(KeyCode::Enter));
    assert!(app.overlays.dialog().unwrap().needs_force());
    update(&mut app, key('y'));
    assert_eq!(app.overlays.dialog().unwrap().reason_for, None);
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("is live (heartbeat 5s ago): a resume would run"),
        "{last}"
    );
    update(&mut app, key('!'));
    // A blank reason is refused.
    type_text(&mut app, "  ");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("is live (heartbeat 5s ago): forcing its resume needs a reason"),
        "{last}"
    );
    type_text(&mut app, "host bastion-2 rebooted");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        cmds,
        vec![IoRequest::ResumeJob {
            run: "run-live".into(),
            procedure: Procedure::Recover,
            confirmed: ResumeConfirmed {
                typed: None,
                reason: Some("host bastion-2 rebooted".into()),
                forced: true,
            },
        }]
    );
}

#[test]
fn a_live_job_is_presumed_dead_once_its_heartbeat_is_silent_for_four_periods() {
    let mut app = app(false);
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![beating("run-1", Some(5))])));
    assert_eq!(view(&app).selected_life().kind(), "live");
    // The screen's clock moves on 40 s: nothing was read again, the job is
    // judged again at the tick.
    let later = now() + chrono::Duration::seconds(40);
    update(&mut app, Event::Tick(later));
    assert_eq!(
        view(&app).selected_life(),
        JobLife::PresumedDead {
            silent_for: chrono::Duration::seconds(45)
        }
    );
    update(&mut app, code(KeyCode::Enter));
    assert!(
        !app.overlays.dialog().unwrap().needs_force(),
        "y resumes it"
    );
}

/// What the jobs view shows of each job beyond its record (its life, how
/// long ago it started, how many transactions its checkpoints ended) is
/// derived when the list arrives and again at each tick, not while
/// drawing.
#[test]
fn each_jobs_age_and_progress_are_derived_with_its_life() {
    use estx::protocol::trail::TrailStep;
    let mut app = app(false);
    update(&mut app, key('J'));
    let mut r = job("run-1");
    r.steps = ["t-1", "t-1", "t-3"]
        .map(|t| TrailStep {
            txn: t.into(),
            label: "repair".into(),
            target: String::new(),
            result: "updated".into(),
            detail: "applied".into(),
            wrote_state: None,
            receipt: None,
        })
        .into();
    update(&mut app, Event::Jobs(Ok(vec![r, job("run-2")])));
    let row = &view(&app).rows[0];
    assert_eq!(row.started_ago, "20m00s");
    assert_eq!(row.ended, 2, "t-1 and t-3");
    assert_eq!(view(&app).rows[1].ended, 0);
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(40)));
    assert_eq!(view(&app).rows[0].started_ago, "20m40s");
    assert_eq!(view(&app).rows.len(), 2);
}

/// The jobs view's state (open, or kept since it closed).
fn view(app: &App) -> &JobsView {
    app.overlays
        .state::<JobsView>()
        .expect("the jobs view was opened")
}
