//! Production guardrails in `update`: on a profile marked production, a
//! bulk run and a forced run ask the operator, after the reason, to type
//! the count (bulk) or the profile's name; anything else runs nothing and
//! the field stays open; off production, `y` and a reason still suffice.

use super::*;
use estx::dashboard::app::{MarkColour, ProfileMark};

fn production(app: &mut App) {
    app.settings.profile = Some("prod".into());
    app.settings.mark = Some(ProfileMark {
        label: "PRODUCTION".into(),
        colour: MarkColour::Danger,
        production: true,
    });
}

fn type_text(app: &mut App, text: &str) -> Vec<IoRequest> {
    text.chars().flat_map(|c| update(app, key(c))).collect()
}

fn typed(app: &App) -> Option<String> {
    app.overlays.dialog().and_then(|d| d.typed.clone())
}

#[test]
fn a_bulk_run_on_production_runs_only_with_its_count_typed() {
    let mut app = app(false);
    production(&mut app);
    update(&mut app, key('*'));
    update(&mut app, key('R'));
    super::bulk::bulk_loaded(&mut app, ROLLBACK);
    update(&mut app, key('y'));
    type_text(&mut app, "outage");
    // Enter after the reason opens the typed confirmation instead of running.
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert_eq!(typed(&app).as_deref(), Some(""));
    // A wrong count (or `y`) runs nothing; the field is emptied.
    for wrong in ["2", "y"] {
        type_text(&mut app, wrong);
        assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
        assert_eq!(typed(&app).as_deref(), Some(""), "{wrong}");
        let last = &app.log.back().unwrap().text;
        assert!(
            last.contains(&format!(
                "`{wrong}` does not confirm it: type 1 (the count) or `prod`"
            )),
            "{last}"
        );
    }
    assert_eq!(app.selection.marks.len(), 3, "nothing ran");
    // Esc goes back to the reason; Enter asks again.
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(typed(&app), None);
    assert!(app.overlays.dialog().unwrap().reason_for.is_some());
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    type_text(&mut app, "1");
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [IoRequest::RunBulk(_, runs)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (
            runs[0].intervention.choices.reason.as_deref(),
            runs[0].intervention.choices.confirmed.as_deref()
        ),
        (Some("outage"), Some("1"))
    );
}

#[test]
fn a_forced_run_on_production_runs_only_with_the_profile_typed() {
    let mut app = app(false);
    production(&mut app);
    open_loaded_recover(&mut app);
    update(&mut app, key('!'));
    type_text(&mut app, "INC-7");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    type_text(&mut app, "1");
    assert!(
        update(&mut app, code(KeyCode::Enter)).is_empty(),
        "1 is no name"
    );
    type_text(&mut app, "prod");
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [IoRequest::Run(run)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(
        (
            run.intervention.choices.force,
            run.intervention.choices.confirmed.as_deref()
        ),
        (true, Some("prod"))
    );
}

#[test]
fn off_production_and_unforced_nothing_more_is_asked() {
    // The same profile, not production: the forced run goes at Enter.
    let mut app = app(false);
    app.settings.profile = Some("prod".into());
    open_loaded_recover(&mut app);
    update(&mut app, key('!'));
    type_text(&mut app, "INC-7");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(
        matches!(cmds.as_slice(), [IoRequest::Run(r)] if r.intervention.choices.force && r.intervention.choices.confirmed.is_none())
    );
    // Production, unforced on one transaction: not asked either.
    let mut app = self::app(false);
    production(&mut app);
    open_loaded_recover(&mut app);
    update(&mut app, key('y'));
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(
        matches!(cmds.as_slice(), [IoRequest::Run(r)] if !r.intervention.choices.force),
        "{cmds:?}"
    );
}

/// F on the selected `t-old` (pending 90 minutes), its preview loaded.
fn open_loaded_recover(app: &mut App) {
    update(app, key('F'));
    let t = txn("t-old", "pending", 90);
    let (a, b) = (AccountState::new(400), AccountState::new(500));
    let preview = |p| {
        estx::protocol::views::preview(
            p,
            &t,
            Some(&a),
            Some(&b),
            estx::protocol::decide::Fencing::On,
        )
    };
    let detail = TransactionDetail {
        txn: t.clone(),
        accounts: vec![],
        locks: vec![],
        next_step: None,
        recover: preview(estx::protocol::Procedure::Recover),
        rollback: preview(estx::protocol::Procedure::Rollback),
    };
    update(
        app,
        Event::Preview {
            act: recover("t-old"),
            plan: Ok(crate::plan_on(
                Some(estx::protocol::Procedure::Recover),
                detail,
                None,
            )),
        },
    );
    assert!(app.overlays.dialog().unwrap().preview.is_done());
}
