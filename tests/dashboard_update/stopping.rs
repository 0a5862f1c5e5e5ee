//! A bulk run ends only when the operator says so: the stop key asks
//! first and says what stopping does; `q` (and Ctrl-C) during a run asks
//! "stop it and quit, or keep running" and quits only after a clean stop;
//! `Esc` never stops a run; a stopped run's counts agree with each other.

use super::*;
use estx::dashboard::app::Ending;
use estx::dashboard::event::LeftIds;
use estx::dashboard::layers::OverlayKind;
use estx::dashboard::progress::BulkProgress;
use estx::protocol::trail::ActOutcome;

fn running(on: OnMarks, total: usize) -> App {
    let mut app = app(false);
    app.bulk = Some(BulkProgress::new(on, total, now()));
    update(
        &mut app,
        Event::BulkStarted {
            run: "r-1".into(),
            left_file: Some("/state/ids/r-1.ids".into()),
        },
    );
    app
}

fn item(id: &str, outcome: ActOutcome) -> Event {
    Event::BulkItem {
        act: recover(id),
        summary: outcome.to_string(),
        outcome,
    }
}

fn ctrl_c() -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))
}

fn done(not_started: usize, left: Option<LeftIds>) -> Event {
    Event::BulkDone {
        on: RECOVER,
        not_started,
        summary: "… · audit record r-1".into(),
        record: Some("audit record r-1".into()),
        left,
        receipts: None,
    }
}

#[test]
fn esc_during_a_run_never_stops_it() {
    let mut app = running(RECOVER, 3);
    app.query.text = "t-".into();
    let cmds = update(&mut app, code(KeyCode::Esc));
    assert!(!cmds.contains(&IoRequest::StopBulk), "{cmds:?}");
    assert!(!app.bulk.as_ref().unwrap().stopping);
    assert_eq!(app.query.text, "", "Esc still clears the filter");
}

#[test]
fn the_stop_key_asks_first_and_says_what_stopping_does() {
    let mut app = running(RECOVER, 3);
    assert!(update(&mut app, key('S')).is_empty(), "asks first");
    assert!(app.overlays.is_open(OverlayKind::StopRun));
    let ask = app.overlays.stop_ask().unwrap();
    assert!(!ask.quit);
    let text = estx::dashboard::stop::question(&app).join("\n");
    for said in [
        "Stop the bulk recover?",
        "no new transaction starts",
        "each started transaction is brought to a state a resume or the application's recovery finishes",
        "The ids left are written to /state/ids/r-1.ids",
        "Then resume with: estx-tui recover --ids-from /state/ids/r-1.ids --reason",
    ] {
        assert!(text.contains(said), "{said:?} not in:\n{text}");
    }
    // n keeps it running; the question closes.
    assert!(update(&mut app, key('n')).is_empty());
    assert!(app.overlays.is_empty() && !app.bulk.as_ref().unwrap().stopping);
    // S then y stops it.
    update(&mut app, key('S'));
    assert_eq!(update(&mut app, key('y')), vec![IoRequest::StopBulk]);
    assert!(app.bulk.as_ref().unwrap().stopping && app.overlays.is_empty());
    assert!(!app.exit.quit, "a stop is not a quit");
    // Without a run, S says so and opens nothing.
    let mut app = super::app(false);
    assert!(update(&mut app, key('S')).is_empty());
    assert!(app.overlays.is_empty());
}

#[test]
fn q_during_a_run_asks_and_keep_running_keeps_it_running() {
    let mut app = running(RECOVER, 3);
    assert!(update(&mut app, key('q')).is_empty());
    assert!(!app.exit.quit, "quit at once, with a run going");
    assert!(app.overlays.stop_ask().unwrap().quit);
    let text = estx::dashboard::stop::question(&app).join("\n");
    assert!(
        text.contains("stop it and quit, or keep running?"),
        "{text}"
    );
    // Enter presses the focused button: keep running (the default).
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(!app.exit.quit && !app.bulk.as_ref().unwrap().stopping);
    assert!(app.overlays.is_empty());
    // Ctrl-C asks the same question.
    assert!(update(&mut app, ctrl_c()).is_empty());
    assert!(app.overlays.stop_ask().unwrap().quit && !app.exit.quit);
    assert!(update(&mut app, code(KeyCode::Esc)).is_empty());
    assert!(!app.exit.quit && !app.bulk.as_ref().unwrap().stopping);
    // The run ends by itself: q quits at once again.
    update(&mut app, item("t-1", ActOutcome::Completed));
    update(&mut app, item("t-2", ActOutcome::Completed));
    update(&mut app, item("t-3", ActOutcome::Completed));
    update(&mut app, done(0, None));
    update(&mut app, key('q'));
    assert!(app.exit.quit);
    assert_eq!(app.exit.ending, Ending::Quit);
}

#[test]
fn a_quit_question_the_runs_own_end_closes_says_q_quits_now() {
    let mut app = running(RECOVER, 1);
    update(&mut app, key('q'));
    assert!(app.overlays.stop_ask().unwrap().quit);
    update(&mut app, item("t-1", ActOutcome::Completed));
    update(&mut app, done(0, None));
    assert!(app.overlays.is_empty() && !app.exit.quit);
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("the bulk run ended before the answer"),
        "{last}"
    );
    assert!(last.contains("q quits now"), "{last}");
    update(&mut app, key('q'));
    assert!(app.exit.quit);
}

#[test]
fn q_during_a_single_act_quits_once_it_has_ended_and_a_second_q_at_once() {
    let running = |app: &mut App| {
        app.running = Some(estx::dashboard::app::Running {
            act: recover("t-1"),
            forced: false,
            planned: Vec::new(),
            seen: Vec::new(),
        });
    };
    let done = || {
        Event::ActionDone(estx::dashboard::event::ActionOutcome {
            act: recover("t-1"),
            summary: "completed".into(),
            ok: true,
            receipts: None,
            record: None,
        })
    };
    let mut app = app(false);
    running(&mut app);
    assert!(update(&mut app, key('q')).is_empty());
    assert!(!app.exit.quit, "not in the middle of the act");
    let said = &app.log.back().unwrap().text;
    assert!(said.contains("quitting once"), "{said}");
    assert!(said.contains("q again quits at once"), "{said}");
    assert!(update(&mut app, done()).contains(&IoRequest::PollNow));
    assert!(app.exit.quit, "the act has ended: the session ends");
    assert_eq!(app.exit.ending, Ending::Quit);

    let mut app = super::app(false);
    running(&mut app);
    update(&mut app, key('q'));
    update(&mut app, key('q'));
    assert!(app.exit.quit, "a second q does not wait");
}

#[test]
fn q_then_stop_quits_only_after_the_run_has_stopped_with_the_stopped_code() {
    let mut app = running(RECOVER, 4);
    update(&mut app, key('q'));
    assert_eq!(update(&mut app, key('y')), vec![IoRequest::StopBulk]);
    assert!(!app.exit.quit, "not before the run has stopped");
    update(&mut app, item("t-1", ActOutcome::Completed));
    update(&mut app, item("t-2", ActOutcome::Stopped));
    assert!(!app.exit.quit);
    let left = LeftIds {
        count: 3,
        file: Ok("/state/ids/r-1.ids".into()),
    };
    update(&mut app, done(2, Some(left)));
    assert!(app.exit.quit);
    assert_eq!(app.exit.ending, Ending::RunStopped);
}

#[test]
fn a_stopped_runs_counts_agree_and_name_the_ids_file() {
    let mut app = running(RECOVER, 500);
    update(&mut app, item("t-1", ActOutcome::Completed));
    update(&mut app, item("t-2", ActOutcome::Completed));
    update(&mut app, item("t-3", ActOutcome::Refused));
    for i in 0..497 {
        update(&mut app, item(&format!("s-{i}"), ActOutcome::Stopped));
    }
    let b = app.bulk.as_ref().unwrap();
    assert_eq!((b.done, b.failed), (3, 0), "a stopped item is not failed");
    let left = LeftIds {
        count: 497,
        file: Ok("/state/ids/r-1.ids".into()),
    };
    update(&mut app, done(0, Some(left)));
    let text: Vec<&str> = app.log.iter().map(|l| l.text.as_str()).collect();
    let end = text
        .iter()
        .find(|t| t.starts_with("bulk recover stopped"))
        .unwrap_or_else(|| panic!("{text:#?}"));
    assert!(
        end.contains("3 of 500 ended (2 completed, 1 refused); 497 left (stopped part-way: 497)"),
        "{end}"
    );
    assert!(!end.contains("failed"), "{end}");
    let ids = text
        .iter()
        .find(|t| t.contains("ids are in /state/ids/r-1.ids"))
        .unwrap_or_else(|| panic!("{text:#?}"));
    assert!(
        ids.contains("estx-tui recover --ids-from /state/ids/r-1.ids --reason"),
        "{ids}"
    );
}

#[test]
fn a_run_that_ends_is_counted_by_outcome_not_reduced_to_the_worst() {
    let mut app = running(RECOVER, 3);
    update(&mut app, item("t-1", ActOutcome::Completed));
    update(&mut app, item("t-2", ActOutcome::Completed));
    update(&mut app, item("t-3", ActOutcome::Refused));
    update(&mut app, done(0, None));
    let last = &app.log.back().unwrap().text;
    assert!(
        last.starts_with("bulk recover: 3 of 3 ended (2 completed, 1 refused)"),
        "{last}"
    );
}

#[test]
fn a_stop_signal_during_a_run_stops_it_cleanly_before_quitting() {
    let mut app = running(RECOVER, 3);
    let cmds = update(&mut app, Event::Signal(estx::signals::StopSignal::Hangup));
    assert_eq!(cmds, vec![IoRequest::StopBulk]);
    assert!(!app.exit.quit && app.bulk.as_ref().unwrap().stopping);
    update(&mut app, done(3, None));
    assert!(app.exit.quit);
    // Without a run, a signal quits at once.
    let mut app = super::app(false);
    update(
        &mut app,
        Event::Signal(estx::signals::StopSignal::Terminate),
    );
    assert!(app.exit.quit);
}
