//! Leaving an account drill-down puts the filters back (so a transaction
//! opened later from a lock is not hidden by a filter the operator never
//! typed), and the mouse: the wheel scrolls the pane under the pointer,
//! clicks select rows and nothing past the last one, and the audit pane,
//! which covers the others, takes the mouse for itself.

use super::*;
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

fn click(column: u16, row: u16) -> Event {
    mouse(MouseEventKind::Down(MouseButton::Left), column, row)
}

fn type_filter(app: &mut App, text: &str) {
    update(app, key('/'));
    for c in text.chars() {
        update(app, key(c));
    }
    update(app, code(KeyCode::Enter));
}

/// Focuses the accounts pane and drills into account `A`.
fn drill_into_a(app: &mut App) {
    while app.focus != Pane::Accounts {
        update(app, code(KeyCode::Tab));
    }
    update(app, key('g'));
    while app.selection.account.as_deref() != Some("A") {
        update(app, key('j'));
    }
    update(app, code(KeyCode::Enter));
    assert_eq!(app.view.account.as_ref().map(|a| a.id.as_str()), Some("A"));
    assert_eq!(app.query.text, "A", "the drill-down filters the table");
}

#[test]
fn esc_out_of_a_drill_down_restores_the_filters_of_before() {
    let mut app = app(false);
    type_filter(&mut app, "t-");
    update(&mut app, key('s')); // created
    let before = (app.query.text.clone(), app.query.state.clone());
    drill_into_a(&mut app);
    assert_eq!(app.query.state, None, "every state while drilled in");
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.focus, Pane::Accounts);
    assert_eq!((app.query.text.clone(), app.query.state.clone()), before);

    // Left through the table instead: the account's filter stays for
    // browsing its transactions; Esc there restores the one of before,
    // and the next Esc clears it as usual.
    drill_into_a(&mut app);
    while app.focus != Pane::Transactions {
        update(&mut app, code(KeyCode::Tab));
    }
    assert!(app.view.account.is_none(), "the detail follows the table");
    assert_eq!(app.query.text, "A");
    update(&mut app, code(KeyCode::Esc));
    assert_eq!((app.query.text.clone(), app.query.state.clone()), before);
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.query.text, "");

    // A filter typed while drilled in is the operator's: kept.
    drill_into_a(&mut app);
    type_filter(&mut app, "t-old");
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.query.text, "", "Esc in the table clears a typed filter");
    assert!(app.query.before_drill.is_none());
}

/// The walkthrough's case: after a drill-down into an account, the owner
/// of a lock on another account opened from the locks pane was shown
/// "hidden by the filter".
#[test]
fn an_owner_opened_from_a_lock_after_a_drill_down_is_not_hidden() {
    let mut app = app(false);
    let mut snap = snapshot(vec![
        txn("t-old", "pending", 90),
        Transaction::from_source(
            "t-other",
            json!({"src_acct": "C", "dest_acct": "D", "amount": 5,
                   "transaction_state": "pending",
                   "modification_time": estx::protocol::time::format_timestamp(now())})
            .as_object()
            .unwrap(),
        ),
    ]);
    let info = estx::protocol::locks::LockInfo::from_source(
        "C",
        json!({"owner": "t-other"}).as_object().unwrap(),
    );
    snap.locks.push(estx::protocol::locks::LockView::judge(
        info,
        &Default::default(),
        &Default::default(),
        now(),
        &estx::protocol::ProtocolConfig::default(),
    ));
    update(&mut app, Event::Polled(Ok(Box::new(snap))));
    drill_into_a(&mut app);
    update(&mut app, code(KeyCode::Esc));
    while app.focus != Pane::Locks {
        update(&mut app, code(KeyCode::Tab));
    }
    update(&mut app, key('g'));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.selection.txn.as_deref(), Some("t-other"));
    let d = app.view.detail.as_ref().expect("its detail");
    assert_eq!(d.fate, Fate::Listed, "not hidden by a leftover filter");
}

#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer() {
    let mut app = app(false);
    update(&mut app, Event::Resize(160, 48));
    many_accounts_and_locks(&mut app, 40);
    for i in 0..30 {
        app.push_log(LogLevel::Info, format!("line {i}"));
    }
    update(&mut app, Event::Resize(160, 48));
    let areas = app.areas();
    let inside = |r: ratatui::layout::Rect| (r.x + 2, r.y + 2);
    let wheel = |down: bool, (c, r): (u16, u16)| {
        let kind = if down {
            MouseEventKind::ScrollDown
        } else {
            MouseEventKind::ScrollUp
        };
        mouse(kind, c, r)
    };
    assert_eq!(app.focus, Pane::Transactions);

    // Accounts: focused by the wheel, the cursor moves, bounded at the end.
    update(&mut app, wheel(true, inside(areas.accounts)));
    assert_eq!(app.focus, Pane::Accounts);
    let first = app.view.accounts.cursor;
    update(&mut app, wheel(true, inside(areas.accounts)));
    assert_eq!(app.view.accounts.cursor, first.map(|i| i + 1));
    for _ in 0..100 {
        update(&mut app, wheel(true, inside(areas.accounts)));
    }
    assert_eq!(
        app.view.accounts.cursor,
        Some(app.view.accounts.ids.len() - 1)
    );

    // Locks.
    update(&mut app, wheel(true, inside(areas.locks)));
    assert_eq!(app.focus, Pane::Locks);
    update(&mut app, wheel(true, inside(areas.locks)));
    let at = app.view.locks.cursor;
    update(&mut app, wheel(false, inside(areas.locks)));
    assert_eq!(app.view.locks.cursor, at.map(|i| i - 1));

    // Log: up goes to older lines, down back to following the newest.
    update(&mut app, wheel(false, inside(areas.log)));
    assert_eq!(app.focus, Pane::Log);
    assert!(app.selection.log_top.is_some(), "scrolled back");
    update(&mut app, wheel(true, inside(areas.log)));
    assert_eq!(app.selection.log_top, None, "following the newest again");

    // Detail: scrolls (bounded) without touching the table's selection.
    let selected = app.selection.txn.clone();
    for _ in 0..200 {
        update(&mut app, wheel(true, inside(areas.detail)));
    }
    assert_eq!(app.focus, Pane::Detail);
    assert!(
        app.selection.detail_scroll < 40,
        "{}",
        app.selection.detail_scroll
    );
    assert_eq!(app.selection.txn, selected);

    // Outside every pane (the key bar): nothing moves.
    let before = (app.focus, app.selection.detail_scroll);
    update(&mut app, wheel(true, (areas.keys.x + 1, areas.keys.y)));
    assert_eq!((app.focus, app.selection.detail_scroll), before);
}

#[test]
fn clicks_select_rows_and_nothing_past_the_last() {
    let mut app = app(false);
    update(&mut app, Event::Resize(160, 48));
    let areas = app.areas();
    let t = areas.transactions;
    // Border, header, then rows: the second row is t-mid.
    update(&mut app, click(t.x + 3, t.y + 3));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    // Below the last of the three rows: focus, no new selection.
    update(&mut app, click(t.x + 3, t.y + 2 + 3));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    update(&mut app, click(t.x + 3, t.y + t.height - 2));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    // On the border or the header: nothing selected either.
    update(&mut app, click(t.x + 3, t.y));
    update(&mut app, click(t.x + 3, t.y + 1));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    // A click on a log line (wrapped or not) only focuses the log.
    app.push_log(LogLevel::Info, "x ".repeat(200));
    update(&mut app, click(areas.log.x + 2, areas.log.y + 1));
    assert_eq!(app.focus, Pane::Log);
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
}

#[test]
fn the_audit_pane_takes_the_mouse_while_open() {
    let mut app = app(false);
    update(&mut app, Event::Resize(160, 48));
    update(
        &mut app,
        Event::Audited(
            Ok(Box::new(audit_report(&[
                ("dangling_pending", "A"),
                ("stale_lock", "res-1"),
            ]))),
            Default::default(),
        ),
    );
    update(&mut app, key('A'));
    assert!(app
        .overlays
        .is_open(estx::dashboard::layers::OverlayKind::Audit));
    let areas = app.areas();
    let t = areas.transactions;
    let focus = app.focus;
    // A click on a table row behind the pane selects nothing.
    update(&mut app, click(t.x + 3, t.y + 4));
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    assert_eq!(app.focus, focus);
    // The wheel moves among the findings.
    update(
        &mut app,
        mouse(MouseEventKind::ScrollDown, t.x + 3, t.y + 4),
    );
    assert_eq!(audit_cursor(&app), 1);
    update(&mut app, mouse(MouseEventKind::ScrollUp, t.x + 3, t.y + 4));
    assert_eq!(audit_cursor(&app), 0);
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
}

/// The detail's scroll is bounded by the rows its text takes, derived with
/// the view (never asked of the drawing): a tick that turns the selection
/// stuck adds the "! stuck" line, so the bound is derived again then too.
#[test]
fn a_tick_that_turns_the_selection_stuck_derives_the_detail_rows_again() {
    let mut app = app(false);
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![txn("t-new", "created", 1)])))),
    );
    app.select("t-new".into());
    let before = app.view.detail_rows;
    assert!(before > 0, "the detail's text is measured when derived");
    update(&mut app, Event::Tick(now() + chrono::Duration::minutes(5)));
    assert!(
        app.view.detail_rows > before,
        "{} rows, as many as before the tick",
        app.view.detail_rows
    );
}
