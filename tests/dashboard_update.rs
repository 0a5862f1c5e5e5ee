//! Unit tests of the dashboard's `update` function: events in, state and
//! commands out. No terminal, no server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use estx::dashboard::app::{App, LogLevel, Pane, Settings};
use estx::dashboard::event::{Action, ActionOutcome, Command, Event, PollFailure};
use estx::dashboard::snapshot::{AccountEntry, Snapshot};
use estx::dashboard::update::update;
use estx::protocol::account::AccountState;
use estx::protocol::transaction::Transaction;
use estx::protocol::views::TransactionDetail;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap()
}

fn txn(id: &str, state: &str, minutes_ago: i64) -> Transaction {
    let t = now() - chrono::Duration::minutes(minutes_ago);
    Transaction::from_source(
        id,
        json!({"src_acct": "A", "dest_acct": "B", "amount": 100, "transaction_state": state,
               "modification_time": estx::protocol::time::format_timestamp(t)})
        .as_object()
        .unwrap(),
    )
}

fn snapshot(txns: Vec<Transaction>) -> Snapshot {
    let mut accounts = BTreeMap::new();
    accounts.insert("A".to_string(), AccountEntry::Ok(AccountState::new(400)));
    accounts.insert("B".to_string(), AccountEntry::Ok(AccountState::new(500)));
    Snapshot {
        taken_at: now(),
        duration: Duration::from_millis(5),
        requests: 3,
        health: Some("green".into()),
        state_counts: vec![],
        in_flight_total: txns.len() as u64,
        transactions: txns,
        accounts,
        locks: vec![],
        missing_indices: vec![],
        read: Default::default(),
    }
}

fn app(read_only: bool) -> App {
    let settings = Settings {
        url: "http://localhost:9200".into(),
        recovery_window: Duration::from_secs(120),
        investigate_after: Duration::from_secs(3600),
        read_only,
        transactions_index: "transactions".into(),
        profile: None,
    };
    let mut app = App::new(settings, Duration::from_secs(2), now());
    let cmds = update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-old", "pending", 90),
            txn("t-mid", "committed", 10),
            txn("t-new", "created", 1),
        ])))),
    );
    assert!(cmds.is_empty());
    app
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn code(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

#[test]
fn first_snapshot_selects_the_oldest_transaction() {
    let app = app(false);
    assert_eq!(app.selected.as_deref(), Some("t-old"));
    assert!(app.is_stuck(app.selected_transaction().unwrap()));
    assert!(app.needs_investigation(app.selected_transaction().unwrap()));
}

#[test]
fn selection_moves_and_survives_a_poll() {
    let mut app = app(false);
    update(&mut app, key('j'));
    assert_eq!(app.selected.as_deref(), Some("t-mid"));
    update(&mut app, key('G'));
    assert_eq!(app.selected.as_deref(), Some("t-new"));
    update(&mut app, key('g'));
    assert_eq!(app.selected.as_deref(), Some("t-old"));
    update(&mut app, code(KeyCode::Down));
    // A poll that reorders rows keeps the same transaction selected.
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-x", "pending", 200),
            txn("t-mid", "committed", 10),
        ])))),
    );
    assert_eq!(app.selected.as_deref(), Some("t-mid"));
    assert_eq!(app.selected_index(), Some(1));
}

#[test]
fn text_and_state_filters_narrow_the_rows() {
    let mut app = app(false);
    update(&mut app, key('/'));
    for c in "mid".chars() {
        update(&mut app, key(c));
    }
    update(&mut app, code(KeyCode::Enter));
    assert!(!app.editing_filter);
    assert_eq!(app.visible().len(), 1);
    assert_eq!(app.selected.as_deref(), Some("t-mid"));
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.visible().len(), 3);
    update(&mut app, key('s')); // created
    assert_eq!(
        app.visible()
            .iter()
            .map(|t| t.id.as_str())
            .collect::<Vec<_>>(),
        vec!["t-new"]
    );
    update(&mut app, key('s')); // pending
    assert_eq!(app.visible()[0].id, "t-old");
}

#[test]
fn sort_cycles_and_reverses() {
    let mut app = app(false);
    update(&mut app, key('O'));
    assert_eq!(app.visible()[0].id, "t-new");
    update(&mut app, key('o'));
    update(&mut app, key('O'));
    assert!(!app.sort_desc);
    assert_eq!(app.visible()[0].id, "t-new", "state order: created first");
}

#[test]
fn actions_open_a_dialog_focused_on_cancel_and_ask_for_a_reread() {
    let mut app = app(false);
    let cmds = update(&mut app, key('R'));
    assert_eq!(
        cmds,
        vec![Command::LoadPreview(Action::Rollback, "t-old".into())]
    );
    let d = app.dialog.as_ref().unwrap();
    assert!(!d.confirm_focused);
    assert!(d.detail.is_none());
    // Enter on Cancel closes without running.
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(app.dialog.is_none());
    // n and Esc cancel too; y before the re-read arrives runs nothing.
    update(&mut app, key('R'));
    assert!(update(&mut app, key('y')).is_empty());
    assert!(app.running.is_none());
}

#[test]
fn lowercase_letters_never_trigger_actions() {
    let mut app = app(false);
    for c in ['r', 'f', 'l'] {
        let cmds = update(&mut app, key(c));
        assert!(app.dialog.is_none(), "{c} opened a dialog");
        assert!(!cmds
            .iter()
            .any(|c| matches!(c, Command::Run(..) | Command::LoadPreview(..))));
    }
}

#[test]
fn confirming_a_loaded_dialog_runs_the_action_then_polls() {
    let mut app = app(false);
    update(&mut app, key('F'));
    let t = txn("t-old", "pending", 90);
    let a = AccountState::new(400);
    let b = AccountState::new(500);
    let recover = estx::protocol::views::preview(
        estx::protocol::Procedure::Recover,
        &t,
        Some(&a),
        Some(&b),
        estx::protocol::decide::Fencing::On,
        now(),
    );
    let rollback = estx::protocol::views::preview(
        estx::protocol::Procedure::Rollback,
        &t,
        Some(&a),
        Some(&b),
        estx::protocol::decide::Fencing::On,
        now(),
    );
    let detail = TransactionDetail {
        txn: t,
        accounts: vec![],
        locks: vec![],
        next_step: None,
        recover,
        rollback,
    };
    update(
        &mut app,
        Event::Preview {
            action: Action::ForceRecover,
            detail: Ok(Box::new(detail)),
        },
    );
    assert!(app.dialog.as_ref().unwrap().detail.is_some());
    let cmds = update(&mut app, key('y'));
    assert_eq!(
        cmds,
        vec![Command::Run(Action::ForceRecover, "t-old".into())]
    );
    assert!(app.dialog.is_none());
    assert_eq!(app.running, Some((Action::ForceRecover, "t-old".into())));
    // A second action waits for the first.
    assert!(update(&mut app, key('R')).is_empty());
    let done = ActionOutcome {
        action: Action::ForceRecover,
        txn: "t-old".into(),
        summary: "completed".into(),
        ok: true,
    };
    assert_eq!(
        update(&mut app, Event::ActionDone(done)),
        vec![Command::PollNow]
    );
    assert!(app.running.is_none());
    assert_eq!(app.log.back().unwrap().level, LogLevel::Updated);
}

#[test]
fn read_only_mode_disables_actions_and_says_so() {
    let mut app = app(true);
    for c in ['R', 'F', 'L'] {
        assert!(update(&mut app, key(c)).is_empty());
        assert!(app.dialog.is_none());
    }
    assert!(app.log.back().unwrap().text.contains("read-only"));
}

#[test]
fn poll_failures_keep_the_last_snapshot_and_log_once() {
    let mut app = app(false);
    let fail = PollFailure::Transient("connection refused".into());
    update(&mut app, Event::Polled(Err(fail.clone())));
    update(&mut app, Event::Polled(Err(fail)));
    assert!(app.snapshot.is_some());
    assert_eq!(
        app.log
            .iter()
            .filter(|l| l.level == LogLevel::Error)
            .count(),
        1
    );
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(30)));
    assert_eq!(app.stale_for(), Some(30));
    update(&mut app, Event::Polled(Ok(Box::new(snapshot(vec![])))));
    assert!(app.poll_error.is_none());
    assert_eq!(app.stale_for(), None);
}

#[test]
fn keys_for_polling_focus_help_and_quit() {
    let mut app = app(false);
    assert_eq!(update(&mut app, key('r')), vec![Command::PollNow]);
    assert_eq!(update(&mut app, key('p')), vec![Command::SetPaused(true)]);
    assert_eq!(update(&mut app, key('p')), vec![Command::SetPaused(false)]);
    assert_eq!(
        update(&mut app, key('+')),
        vec![Command::SetInterval(Duration::from_secs(3))]
    );
    for _ in 0..10 {
        update(&mut app, key('-'));
    }
    assert_eq!(app.interval, Duration::from_secs(1));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Detail);
    update(&mut app, code(KeyCode::BackTab));
    update(&mut app, code(KeyCode::BackTab));
    assert_eq!(app.focus, Pane::Log);
    update(&mut app, key('?'));
    assert!(app.help);
    assert!(
        update(&mut app, key('q')).is_empty(),
        "a key closes help first"
    );
    assert!(!app.help);
    assert_eq!(update(&mut app, key('q')), vec![Command::Quit]);
    assert!(app.should_quit);
}

#[test]
fn a_click_focuses_a_pane_and_selects_a_table_row() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut app = app(false);
    update(&mut app, Event::Resize(100, 30));
    let areas = estx::dashboard::ui::layout(ratatui::layout::Rect::new(0, 0, 100, 30));
    let click = |col: u16, row: u16| {
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    // Third data row of the table: border, header, then rows.
    update(
        &mut app,
        click(areas.transactions.x + 3, areas.transactions.y + 4),
    );
    assert_eq!(app.focus, Pane::Transactions);
    assert_eq!(app.selected.as_deref(), Some("t-new"));
    update(&mut app, click(areas.locks.x + 2, areas.locks.y + 1));
    assert_eq!(app.focus, Pane::Locks);
    assert_eq!(
        app.selected.as_deref(),
        Some("t-new"),
        "clicking elsewhere keeps the selection"
    );
}
