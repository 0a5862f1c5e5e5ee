//! The jobs view in `update`: `J` reads the unfinished bulk jobs, each
//! judged by its heartbeat; Enter on one asks to resume it (a job not
//! presumed dead only forced, with a reason); only `y` (on a production
//! profile, the profile's name) resumes it, as this dashboard's bulk run.

use super::*;
use estx::dashboard::app::{MarkColour, ProfileMark};
use estx::dashboard::jobs::{ResumeConfirmed, ResumePrompt};
use estx::dashboard::overlay::OverlayKind;
use estx::protocol::jobs::JobLife;
use estx::protocol::trail::{
    ActionKind, Interface, Operator, OperatorSource, Record, RecordStatus,
};

/// A job whose heartbeat (every 10 s) stopped 19 minutes ago: presumed dead.
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
        counts: None,
        steps: vec![],
        parts: 0,
        started_at: now() - chrono::Duration::minutes(20),
        finished_at: None,
        alive_at: Some(now() - chrono::Duration::minutes(19)),
        alive_every_ms: Some(10_000),
        resumed: vec![],
        clock: None,
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
    assert_eq!(app.jobs.selected_life().kind(), "presumed dead");
    assert_eq!(app.jobs.prompt, Some(confirm("", None)));
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
            confirmed: ResumeConfirmed::default(),
        }]
    );
    assert!(!app.overlays.is_open(OverlayKind::Jobs));
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
    assert_eq!(app.jobs.prompt, None);
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
        matches!(cmds.as_slice(), [IoRequest::ResumeJob { confirmed: ResumeConfirmed { typed: Some(c), forced_with: None }, .. }] if c == "prod"),
        "{cmds:?}"
    );
}

#[test]
fn a_read_only_dashboard_lists_jobs_but_resumes_none() {
    let mut app = app(true);
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![job("run-1")])));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.jobs.prompt, None);
    assert!(app.log.back().unwrap().text.contains("read-only"));
}

fn confirm(typed: &str, forced_with: Option<&str>) -> ResumePrompt {
    ResumePrompt::Confirm {
        typed: typed.into(),
        forced_with: forced_with.map(str::to_string),
    }
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
        matches!(app.jobs.rows[0].life, JobLife::Live { .. }),
        "{:?}",
        app.jobs.rows
    );
    assert_eq!(app.jobs.rows[1].life, JobLife::Unknown);
    // Enter on the live job asks for a reason, not for `y`.
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.jobs.prompt, Some(ResumePrompt::Reason(String::new())));
    // `y` alone is a reason being typed, and a blank reason is refused.
    type_text(&mut app, "  ");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert_eq!(app.jobs.prompt, Some(ResumePrompt::Reason(String::new())));
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("is live (heartbeat 5s ago): forcing its resume needs a reason"),
        "{last}"
    );
    type_text(&mut app, "host bastion-2 rebooted");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert_eq!(
        app.jobs.prompt,
        Some(confirm("", Some("host bastion-2 rebooted")))
    );
    type_text(&mut app, "y");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        cmds,
        vec![IoRequest::ResumeJob {
            run: "run-live".into(),
            action: Action::Recover,
            confirmed: ResumeConfirmed {
                typed: None,
                forced_with: Some("host bastion-2 rebooted".into()),
            },
        }]
    );
}

#[test]
fn a_live_job_is_presumed_dead_once_its_heartbeat_is_silent_for_four_periods() {
    let mut app = app(false);
    update(&mut app, key('J'));
    update(&mut app, Event::Jobs(Ok(vec![beating("run-1", Some(5))])));
    assert_eq!(app.jobs.selected_life().kind(), "live");
    // The screen's clock moves on 40 s: nothing was read again, the job is
    // judged again at the tick.
    let later = now() + chrono::Duration::seconds(40);
    update(&mut app, Event::Tick(later));
    assert_eq!(
        app.jobs.selected_life(),
        JobLife::PresumedDead {
            silent_for: chrono::Duration::seconds(45)
        }
    );
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.jobs.prompt, Some(confirm("", None)), "no reason asked");
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
            ..TrailStep::repair("applied")
        })
        .into();
    update(&mut app, Event::Jobs(Ok(vec![r, job("run-2")])));
    let row = &app.jobs.rows[0];
    assert_eq!(row.started_ago, "20m00s");
    assert_eq!(row.ended, 2, "t-1 and t-3");
    assert_eq!(app.jobs.rows[1].ended, 0);
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(40)));
    assert_eq!(app.jobs.rows[0].started_ago, "20m40s");
    assert_eq!(app.jobs.rows.len(), 2);
}
