//! Bulk actions in `update`: marks by id that survive polls and sorts, the
//! one dialog on the marked set (counts, what is left out), the required
//! reason, the run's commands, progress counted by outcome, and the stop
//! key stopping new items.

use super::*;
use estx::dashboard::progress::BulkProgress;
use estx::protocol::trail::ActOutcome;

fn space() -> Event {
    key(' ')
}

/// The bulk dialog's plan: `t-old` pending 90 min (runs), `t-mid`
/// committed (refused for a rollback), `t-new` created a minute ago
/// (refused unforced: left out, to be forced one by one).
pub(crate) fn bulk_loaded(app: &mut App, on: OnMarks) {
    let OnMarks::Procedure(procedure) = on else {
        panic!("L's items are each their own act")
    };
    let checked = |t: Transaction, refusal: Option<estx::protocol::intervene::ActRefusal>| {
        estx::protocol::intervene::TxnPlan::on_transaction(procedure, detail_of(t, vec![]), refusal)
    };
    let recent = estx::protocol::intervene::ActRefusal::Procedure(
        estx::protocol::ProcedureRefusal::Recent {
            age: chrono::TimeDelta::minutes(1),
            window: std::time::Duration::from_secs(120),
        },
    );
    let items = vec![
        checked(txn("t-mid", "committed", 10), None),
        checked(txn("t-new", "created", 1), Some(recent)),
        checked(txn("t-old", "pending", 90), None),
    ];
    update(
        app,
        Event::BulkPreview {
            on,
            plan: Ok(crate::bulk_of(procedure, items)),
        },
    );
}

#[test]
fn marks_are_by_id_and_survive_polls_and_sorting() {
    let mut app = app(false);
    update(&mut app, space()); // t-old
    update(&mut app, key('j'));
    update(&mut app, space()); // t-mid
    update(&mut app, space()); // unmarked again
    update(&mut app, space());
    assert_eq!(
        app.selection
            .marks
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["t-mid", "t-old"]
    );
    update(&mut app, key('O')); // reverse the order
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-new", "created", 1),
            txn("t-mid", "committed", 10),
            txn("t-old", "pending", 90),
        ])))),
    );
    assert_eq!(app.selection.marks.len(), 2);
    // `*` marks every row of the filter; `u` clears.
    update(&mut app, key('s')); // state filter: created
    update(&mut app, key('*'));
    assert!(app.selection.marks.contains("t-new") && app.selection.marks.len() == 3);
    update(&mut app, key('u'));
    assert!(app.selection.marks.is_empty());
}

#[test]
fn one_dialog_for_the_marked_set_requires_a_reason_and_runs_what_may_run() {
    let mut app = app(false);
    update(&mut app, key('*'));
    let cmds = update(&mut app, key('R'));
    let ids: Vec<String> = ["t-mid", "t-new", "t-old"].map(String::from).to_vec();
    assert_eq!(cmds, vec![IoRequest::LoadBulkPreview(ROLLBACK, ids)]);
    bulk_loaded(&mut app, ROLLBACK);
    let d = app.overlays.dialog().unwrap();
    let p = d.bulk().unwrap().plan.clone().unwrap();
    assert_eq!(p.runs.len(), 1);
    assert_eq!(p.runs[0].act(), &rollback("t-old"));
    assert_eq!(p.left_out.len(), 2, "{:?}", p.left_out);
    assert_eq!(p.left_out["refused: committed"], ["t-mid"]);
    assert_eq!(
        p.left_out["refused: modified within the recovery window"],
        ["t-new"]
    );
    // `!` never acts in bulk.
    assert!(update(&mut app, key('!')).is_empty());
    assert!(app.overlays.dialog().unwrap().reason_for.is_none());
    // y, then Enter without a reason: refused by the trail's rule.
    assert!(update(&mut app, key('y')).is_empty());
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    let last = &app.log.back().unwrap().text;
    assert!(last.contains("needs a reason"), "{last}");
    for c in "outage cleanup".chars() {
        update(&mut app, key(c));
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [IoRequest::RunBulk(_, runs)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(runs.len(), 1);
    let choices = &runs[0].intervention.choices;
    assert_eq!(
        (choices.force, choices.reason.as_deref()),
        (false, Some("outage cleanup"))
    );
    assert!(app.selection.marks.is_empty() && app.overlays.dialog().is_none());
    // No other action while it runs.
    update(&mut app, key('F'));
    assert!(app.overlays.dialog().is_none());
}

#[test]
fn progress_counts_items_by_outcome_and_the_stop_key_stops_starting_new_ones() {
    let mut app = app(false);
    app.bulk = Some(BulkProgress::new(ROLLBACK, 3, now()));
    let item = |id: &str, outcome| Event::BulkItem {
        act: rollback(id),
        summary: "completed".into(),
        outcome,
    };
    update(&mut app, item("t-old", ActOutcome::Completed));
    update(&mut app, item("t-mid", ActOutcome::Failed));
    let b = app.bulk.as_ref().unwrap();
    assert_eq!((b.done, b.failed), (2, 1));
    update(&mut app, key('S'));
    assert_eq!(update(&mut app, key('y')), vec![IoRequest::StopBulk]);
    assert!(app.bulk.as_ref().unwrap().stopping);
    update(&mut app, key('S'));
    assert!(
        app.overlays.is_empty(),
        "asked once: a stopping run is not asked about again"
    );
    let verified = estx::protocol::trail::receipts::Verification {
        records: 1,
        verified: 1,
        writes: 4,
        ..Default::default()
    };
    let cmds = update(
        &mut app,
        Event::BulkDone {
            on: ROLLBACK,
            not_started: 1,
            summary: "2 selected transactions: … · audit record r-1".into(),
            record: Some("audit record r-1".into()),
            left: None,
            receipts: Some(verified),
        },
    );
    assert!(cmds.contains(&IoRequest::PollNow));
    assert!(app.bulk.is_none());
    // The run's line says what its receipts prove.
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("2 of 3 ended (1 completed, 1 failed); 1 left (not started: 1)")
            && last.ends_with(" · receipts verified: 4 writes"),
        "{last}"
    );
    assert!(
        last.contains(" · audit record r-1 · "),
        "the one record: {last}"
    );
}

/// `P` pauses the run's writes and resumes them; the rate and the time
/// left are derived as items end and the clock ticks; a stop of a paused
/// run resumes it so the items under way reach their next state.
#[test]
fn p_pauses_and_resumes_a_bulk_run_with_its_rate_and_eta() {
    let mut app = app(false);
    assert!(
        update(&mut app, key('P')).is_empty(),
        "no run: nothing to pause"
    );
    app.bulk = Some(BulkProgress::new(RECOVER, 10, now()));
    let item = |id: &str| Event::BulkItem {
        act: recover(id),
        summary: "completed".into(),
        outcome: ActOutcome::Completed,
    };
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(30)));
    update(&mut app, item("t-1"));
    update(&mut app, item("t-2"));
    let b = app.bulk.as_ref().unwrap();
    // 2 in 30 s: 4 a minute, the 8 left in 2 minutes.
    assert_eq!((b.per_minute, b.eta), (4, Some(Duration::from_secs(120))));
    assert_eq!(update(&mut app, key('P')), vec![IoRequest::PauseBulk(true)]);
    let b = app.bulk.as_ref().unwrap();
    assert!(b.paused && b.eta.is_none(), "{b:?}");
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(60)));
    assert_eq!(
        update(&mut app, key('P')),
        vec![IoRequest::PauseBulk(false)]
    );
    assert_eq!(
        app.bulk.as_ref().unwrap().eta,
        Some(Duration::from_secs(240)),
        "2 in 60 s"
    );
    update(&mut app, key('P'));
    update(&mut app, key('S'));
    assert_eq!(update(&mut app, key('y')), vec![IoRequest::StopBulk]);
    let b = app.bulk.as_ref().unwrap();
    assert!(b.stopping && !b.paused, "{b:?}");
    assert!(
        update(&mut app, key('P')).is_empty(),
        "a stopping run stays going"
    );
}

#[test]
fn e_exports_the_table_as_of_the_snapshot_and_logs_where() {
    let mut app = app(false);
    assert_eq!(
        update(&mut app, key('e')),
        vec![IoRequest::Export(Default::default())]
    );
    update(
        &mut app,
        Event::Exported(Ok(("/tmp/x/estx-tui-transactions.csv".into(), 3))),
    );
    let last = &app.log.back().unwrap().text;
    assert_eq!(
        last,
        "exported 3 row(s) to /tmp/x/estx-tui-transactions.csv"
    );
    update(&mut app, Event::Exported(Err("/ro: read-only".into())));
    assert!(app
        .log
        .back()
        .unwrap()
        .text
        .starts_with("export failed: /ro"));
}

/// `p` in the bulk dialog asks to save the plan it shows (once it
/// arrived) as a plan file for `estx-tui apply`; the log names the file.
#[test]
fn the_bulk_dialog_saves_its_plan_to_a_file() {
    let mut app = app(false);
    update(&mut app, key('*'));
    update(&mut app, key('R'));
    assert!(update(&mut app, key('p')).is_empty(), "no plan yet");
    bulk_loaded(&mut app, ROLLBACK);
    let cmds = update(&mut app, key('p'));
    let [IoRequest::SavePlan(plan)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(plan.0.items.len(), 3);
    assert!(app.overlays.dialog().is_some(), "the dialog stays open");
    update(
        &mut app,
        Event::PlanSaved(Ok(("/tmp/p.json".into(), "sha256:ab".into()))),
    );
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("plan saved to /tmp/p.json (sha256:ab)"),
        "{last}"
    );
}
