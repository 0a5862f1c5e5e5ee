//! The overlays as a stack: the top one takes every key, closing it
//! uncovers the one under it, and the panes get keys only when none is
//! open. Also the dialog's re-read as one `Load` (loading, then loaded or
//! failed).

use super::*;
use estx::dashboard::layers::{Overlay, OverlayKind};
use estx::dashboard::load::Load;

fn with_rows() -> App {
    let mut app = app(false);
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-1", "pending", 90),
            txn("t-2", "pending", 80),
            txn("t-3", "pending", 70),
        ])))),
    );
    app.select_index(0);
    app
}

fn kinds(app: &App) -> Vec<OverlayKind> {
    app.overlays.iter().map(Overlay::kind).collect()
}

#[test]
fn the_top_overlay_takes_the_keys_and_closing_it_uncovers_the_one_below() {
    let mut app = with_rows();
    update(
        &mut app,
        Event::Audited(
            Ok(Box::new(audit_report(&[
                ("stale_lock", "res-1"),
                ("stale_lock", "res-2"),
            ]))),
            Default::default(),
        ),
    );
    update(&mut app, key('A'));
    assert_eq!(kinds(&app), vec![OverlayKind::Audit]);
    // The audit pane takes j: its cursor moves, the table's does not.
    let selected = app.selection.txn.clone();
    update(&mut app, key('j'));
    assert_eq!((audit_cursor(&app), &app.selection.txn), (1, &selected));
    // Enter opens the dialog over it; the dialog takes j (scroll), not
    // the audit pane.
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(kinds(&app), vec![OverlayKind::Audit, OverlayKind::Dialog]);
    update(&mut app, key('k'));
    assert_eq!(audit_cursor(&app), 1, "the dialog took k");
    // Esc closes the dialog only; the audit pane takes keys again.
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(kinds(&app), vec![OverlayKind::Audit]);
    update(&mut app, key('k'));
    assert_eq!(audit_cursor(&app), 0);
    // Any unbound key closes it; then the panes get keys.
    update(&mut app, code(KeyCode::Esc));
    assert!(app.overlays.is_empty());
    update(&mut app, key('j'));
    assert_ne!(app.selection.txn, selected, "the table took j");
}

#[test]
fn typing_goes_to_the_layer_being_typed_into_not_to_the_keys_below() {
    let mut app = with_rows();
    // `?` and `q` while typing the filter are text, not help or quit.
    update(&mut app, key('/'));
    assert_eq!(kinds(&app), vec![OverlayKind::Filter]);
    for c in ['?', 'q'] {
        update(&mut app, key(c));
    }
    assert_eq!(app.query.text, "?q");
    assert!(!app.exit.quit && !app.overlays.is_open(OverlayKind::Help));
    update(&mut app, code(KeyCode::Esc));
    assert!(app.overlays.is_empty() && app.query.text.is_empty());
    // The look-up takes what is typed, Enter selects it and closes.
    update(&mut app, key('#'));
    for c in "t-3".chars() {
        update(&mut app, key(c));
    }
    assert_eq!(app.overlays.typed_lookup(), Some("t-3"));
    update(&mut app, code(KeyCode::Enter));
    assert!(app.overlays.is_empty());
    assert_eq!(app.selection.txn.as_deref(), Some("t-3"));
    // Help is one layer: opening it again does not stack a second one, and
    // any key that does not scroll it closes it.
    update(&mut app, key('?'));
    app.overlays.open(Overlay::Help(Default::default()));
    assert_eq!(kinds(&app), vec![OverlayKind::Help]);
    update(&mut app, key('x'));
    assert!(app.overlays.is_empty());
}

#[test]
fn the_dialog_loads_once_and_a_failed_reread_leaves_nothing_to_confirm() {
    let mut app = with_rows();
    update(&mut app, key('F'));
    let d = app.overlays.dialog().unwrap();
    assert!(d.preview.is_loading() && !d.loaded() && !d.can_confirm());
    update(
        &mut app,
        Event::Preview {
            act: recover("t-1"),
            plan: Err(estx::dashboard::event::NoPlan::Failed(
                estx::Error::Unreachable("refused".into()),
            )),
        },
    );
    let d = app.overlays.dialog().unwrap();
    assert!(matches!(&d.preview, Load::Failed(e) if e == "cluster unreachable: refused"));
    assert!(d.loaded() && !d.can_confirm());
    // y on it runs nothing and closes it, saying why.
    let io = update(&mut app, key('y'));
    assert!(!io.iter().any(|c| matches!(c, IoRequest::Run(_))), "{io:?}");
    assert!(app.overlays.dialog().is_none());
    assert!(app.log.back().unwrap().text.contains("nothing to confirm"));
}

/// `y` pressed before the plan arrived (an operator's quick fingers): the
/// dialog stays open and says the plan is still being read; once it shows,
/// `y` goes on to the reason as usual.
#[test]
fn y_before_the_plan_arrives_keeps_the_dialog_open() {
    let mut app = with_rows();
    update(&mut app, key('F'));
    let io = update(&mut app, key('y'));
    assert!(!io.iter().any(|c| matches!(c, IoRequest::Run(_))), "{io:?}");
    let d = app.overlays.dialog().expect("the dialog stays open");
    assert!(d.reason_for.is_none());
    let said = &app.log.back().unwrap().text;
    assert!(said.contains("still being read"), "{said}");
}

#[test]
fn y_runs_the_act_the_dialog_previewed_with_the_operators_choices() {
    let mut app = with_rows();
    update(&mut app, key('F'));
    let act = app.overlays.dialog().unwrap().intervention().unwrap();
    assert_eq!(
        act.act,
        estx::protocol::intervene::AnyAct::Recover(estx::protocol::intervene::Recover::new("t-1"))
    );
    let plan = crate::plan_on(
        Some(estx::protocol::Procedure::Recover),
        detail_of(txn("t-1", "pending", 90), vec![]),
        None,
    );
    let steps = estx::protocol::intervene::Planned::labels(&plan);
    update(
        &mut app,
        Event::Preview {
            act: recover("t-1"),
            plan: Ok(plan),
        },
    );
    update(&mut app, key('y'));
    for c in "INC-9".chars() {
        update(&mut app, key(c));
    }
    let io = update(&mut app, code(KeyCode::Enter));
    let [IoRequest::Run(run)] = io.as_slice() else {
        panic!("{io:?}");
    };
    let i = run.intervention.clone();
    assert_eq!(i.act, act.act);
    assert_eq!(
        (
            i.choices.force,
            i.choices.reason_text(),
            i.choices.interface
        ),
        (
            false,
            Some("INC-9"),
            estx::protocol::trail::Interface::Dashboard
        )
    );
    // The lines the log compares with what ran are the plan's steps.
    let planned = &app.running.as_ref().unwrap().planned;
    assert_eq!(planned.len(), steps.len());
    for (line, step) in planned.iter().zip(&steps) {
        assert!(line.starts_with(step.as_str()), "{line} / {step}");
    }
}
