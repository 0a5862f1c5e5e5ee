//! The dashboard never acts unseen: while the terminal is too small to
//! show it (below `layout::MIN_SIZE`), every key but quit and every mouse
//! event is ignored, and a dialog or prompt open when it shrinks is closed,
//! so nothing can be confirmed blind.

use super::*;
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use estx::dashboard::layers::OverlayKind;

fn click(column: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

#[test]
fn keys_and_clicks_do_nothing_while_the_screen_is_too_small() {
    let mut app = app(false);
    update(&mut app, Event::Resize(60, 20));
    assert!(app.terminal.too_small);
    // R, y, a reason, Enter: what rolled back the selection unseen.
    let mut cmds = update(&mut app, key('R'));
    for c in "y outage".chars() {
        cmds.extend(update(&mut app, key(c)));
    }
    cmds.extend(update(&mut app, code(KeyCode::Enter)));
    cmds.extend(update(&mut app, code(KeyCode::Tab)));
    cmds.extend(update(&mut app, click(70, 10)));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(app.overlays.is_empty() && app.running.is_none());
    assert_eq!(
        (app.focus, app.selection.txn.as_deref()),
        (Pane::Transactions, Some("t-old")),
        "nothing moved"
    );
    assert_eq!(app.query.text, "", "nothing typed");
    // Back to a size that shows it: the keys typed blind are counted in
    // the log (11 keys; the click is no key), and keys act again.
    update(&mut app, Event::Resize(140, 40));
    assert!(!app.terminal.too_small);
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("11 key(s) ignored while the terminal was too small"),
        "{last}"
    );
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Detail);
}

#[test]
fn quit_still_quits_while_the_screen_is_too_small() {
    let mut app = app(false);
    update(&mut app, key('?'));
    update(&mut app, Event::Resize(79, 40));
    assert!(app.terminal.too_small, "one column short is too small");
    update(&mut app, key('q'));
    assert!(app.exit.quit, "q quits, though help (unseen) was open");
    let mut app = super::app(false);
    update(&mut app, Event::Resize(140, 23));
    update(
        &mut app,
        Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
    );
    assert!(app.exit.quit, "Ctrl-C too");
}

#[test]
fn a_dialog_open_when_the_screen_shrinks_is_closed_and_cannot_be_confirmed() {
    let mut app = app(false);
    update(&mut app, key('R'));
    loaded(
        &mut app,
        Procedure::Rollback,
        txn("t-old", "pending", 90),
        None,
    );
    update(&mut app, key('y'));
    for c in "worker died".chars() {
        update(&mut app, key(c));
    }
    assert!(app.overlays.dialog().unwrap().reason_for.is_some());
    update(&mut app, Event::Resize(60, 20));
    assert!(app.overlays.dialog().is_none(), "closed when it shrank");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    update(&mut app, Event::Resize(140, 40));
    assert!(app.overlays.dialog().is_none(), "not back when it grows");
    let said = app.log.iter().any(|l| {
        l.text
            .contains("Roll back t-old: dialog closed: the terminal became too small")
    });
    assert!(said, "{:?}", app.log);
    // Enter now opens the detail: it confirms nothing.
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(app.running.is_none());
}

#[test]
fn prompts_open_when_the_screen_shrinks_are_closed() {
    let mut app = app(false);
    update(&mut app, key('#'));
    update(&mut app, key('t'));
    update(&mut app, Event::Resize(60, 20));
    assert!(!app.overlays.is_open(OverlayKind::LookUp));
    let mut app = super::app(false);
    update(&mut app, key('/'));
    update(&mut app, key('m'));
    update(&mut app, Event::Resize(60, 20));
    assert!(!app.overlays.is_open(OverlayKind::Filter));
}
