//! Unit tests of the dashboard's `update` function: events in, state and
//! commands out. No terminal, no server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use estx::dashboard::app::{App, LogLevel, Pane, RunChoice, Settings, HISTORY_EVERY};
use estx::dashboard::event::{
    ActionOutcome, Event, Expected, IoRequest, OnMarks, PollFailure, Run,
};
use estx::dashboard::update::update;
use estx::dashboard::view::Fate;
use estx::protocol::account::AccountState;
use estx::protocol::intervene::{
    AnyAct, AuditRepair, Recover, ReleaseLock, ReleaseLocksOf, Reverse, Rollback,
};
use estx::protocol::read::poll::{AccountEntry, Snapshot};
use estx::protocol::transaction::{Transaction, TxnState};
use estx::protocol::views::TransactionDetail;
use estx::protocol::Procedure;
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
        in_flight_total: txns.len() as u64,
        table: estx::protocol::read::TablePage {
            filter: Default::default(),
            listed: txns.len(),
            total: txns.len() as u64,
            page_size: 500,
        },
        transactions: txns,
        accounts,
        ..Snapshot::default()
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
        mark: None,
        runbooks: Default::default(),
        others_unavailable: None,
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
    // The first selection's interventions are asked for; while that read
    // runs no other is (the tests below leave it running).
    assert_eq!(cmds, vec![IoRequest::LoadHistory("t-old".into())]);
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
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    assert!(app.is_stuck(app.selected_transaction().unwrap()));
    assert!(app.needs_investigation(app.selected_transaction().unwrap()));
}

#[test]
fn selection_moves_and_survives_a_poll() {
    let mut app = app(false);
    update(&mut app, key('j'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    update(&mut app, key('G'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    update(&mut app, key('g'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    update(&mut app, code(KeyCode::Down));
    // A poll that reorders rows keeps the same transaction selected.
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-x", "pending", 200),
            txn("t-mid", "committed", 10),
        ])))),
    );
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
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
    assert!(!app
        .overlays
        .is_open(estx::dashboard::layers::OverlayKind::Filter));
    assert_eq!(app.visible().len(), 1);
    // The filter hid the selection (t-old): its first row is selected.
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    assert_eq!(app.selected_index(), Some(0));
    assert_eq!(app.view.detail.as_ref().unwrap().fate, Fate::Listed);
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
    assert!(!app.query.sort_desc);
    assert_eq!(app.visible()[0].id, "t-new", "state order: created first");
}

#[test]
fn actions_open_a_dialog_focused_on_cancel_and_ask_for_a_reread() {
    let mut app = app(false);
    let cmds = update(&mut app, key('R'));
    assert_eq!(cmds, vec![IoRequest::LoadPreview(rollback("t-old"))]);
    let d = app.overlays.dialog().unwrap();
    assert!(!d.confirm_focused);
    assert!(d.preview.is_loading());
    // Enter on Cancel closes without running.
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(app.overlays.dialog().is_none());
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
        assert!(app.overlays.dialog().is_none(), "{c} opened a dialog");
        assert!(!cmds
            .iter()
            .any(|c| matches!(c, IoRequest::Run(..) | IoRequest::LoadPreview(..))));
    }
}

#[test]
fn confirming_a_loaded_dialog_runs_the_action_then_polls() {
    let mut app = app(false);
    update(&mut app, key('F'));
    let t = txn("t-old", "pending", 90);
    let expected = Expected {
        state: t.state.clone(),
        modified: t.modification_time,
    };
    let a = AccountState::new(400);
    let b = AccountState::new(500);
    let recovery = estx::protocol::views::preview(
        estx::protocol::Procedure::Recover,
        &t,
        Some(&a),
        Some(&b),
        estx::protocol::decide::Fencing::On,
    );
    let rollback = estx::protocol::views::preview(
        estx::protocol::Procedure::Rollback,
        &t,
        Some(&a),
        Some(&b),
        estx::protocol::decide::Fencing::On,
    );
    let detail = TransactionDetail {
        txn: t,
        accounts: vec![],
        locks: vec![],
        next_step: None,
        recover: recovery,
        rollback,
    };
    update(
        &mut app,
        Event::Preview {
            act: recover("t-old"),
            plan: Ok(plan_on(
                Some(estx::protocol::Procedure::Recover),
                detail,
                None,
            )),
        },
    );
    assert!(app.overlays.dialog().unwrap().preview.is_done());
    // y opens the reason field (optional for an unforced recovery).
    assert!(update(&mut app, key('y')).is_empty());
    assert_eq!(
        app.overlays.dialog().unwrap().reason_for,
        Some(RunChoice::Plain)
    );
    for c in "stuck since the outage".chars() {
        update(&mut app, key(c));
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        cmds,
        vec![IoRequest::Run(Run::new(
            Recover::new("t-old"),
            false,
            Some("stuck since the outage".into()),
            None,
            expected,
        ))]
    );
    assert!(app.overlays.dialog().is_none());
    let running = app.running.as_ref().unwrap();
    assert_eq!(running.act, recover("t-old"));
    assert!(!running.forced);
    // A second action waits for the first.
    assert!(update(&mut app, key('R')).is_empty());
    let done = ActionOutcome {
        act: recover("t-old"),
        summary: "completed".into(),
        ok: true,
        receipts: None,
        record: None,
    };
    assert_eq!(
        update(&mut app, Event::ActionDone(done)),
        vec![IoRequest::PollNow, IoRequest::Audit],
        "an action is followed by a poll and an audit"
    );
    assert!(app.running.is_none());
    assert_eq!(app.log.back().unwrap().level, LogLevel::Updated);
}

#[test]
fn read_only_mode_disables_actions_and_says_so() {
    let mut app = app(true);
    for c in ['R', 'F', 'L'] {
        assert!(update(&mut app, key(c)).is_empty());
        assert!(app.overlays.dialog().is_none());
    }
    assert!(app.log.back().unwrap().text.contains("read-only"));
}

#[test]
fn poll_failures_keep_the_last_snapshot_and_log_once() {
    let mut app = app(false);
    let fail = PollFailure::Transient(estx::Error::Unreachable("connection refused".into()));
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
    assert!(app.poll.error.is_none());
    assert_eq!(app.stale_for(), None);
}

#[test]
fn keys_for_polling_focus_help_and_quit() {
    let mut app = app(false);
    assert_eq!(update(&mut app, key('r')), vec![IoRequest::PollNow]);
    assert_eq!(update(&mut app, key('p')), vec![IoRequest::SetPaused(true)]);
    assert_eq!(
        update(&mut app, key('p')),
        vec![IoRequest::SetPaused(false)]
    );
    assert_eq!(
        update(&mut app, key('+')),
        vec![IoRequest::SetInterval(Duration::from_secs(3))]
    );
    for _ in 0..10 {
        update(&mut app, key('-'));
    }
    assert_eq!(app.poll.interval, Duration::from_secs(1));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Detail);
    update(&mut app, code(KeyCode::BackTab));
    update(&mut app, code(KeyCode::BackTab));
    assert_eq!(app.focus, Pane::Log);
    update(&mut app, key('?'));
    assert!(app
        .overlays
        .is_open(estx::dashboard::layers::OverlayKind::Help));
    assert!(
        update(&mut app, key('q')).is_empty(),
        "a key closes help first"
    );
    assert!(!app
        .overlays
        .is_open(estx::dashboard::layers::OverlayKind::Help));
    assert!(update(&mut app, key('q')).is_empty());
    assert!(app.exit.quit, "the loop ends on should_quit");
}

#[test]
fn a_click_focuses_a_pane_and_selects_a_table_row() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut app = app(false);
    update(&mut app, Event::Resize(100, 30));
    let areas = estx::dashboard::layout::layout(ratatui::layout::Rect::new(0, 0, 100, 30));
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
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    update(&mut app, click(areas.locks.x + 2, areas.locks.y + 1));
    assert_eq!(app.focus, Pane::Locks);
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("t-new"),
        "clicking elsewhere keeps the selection"
    );
}

fn detail_of(t: Transaction, locks: Vec<estx::protocol::locks::LockView>) -> TransactionDetail {
    let a = AccountState::new(400);
    let b = AccountState::new(500);
    let run = |p| {
        estx::protocol::views::preview(
            p,
            &t,
            Some(&a),
            Some(&b),
            estx::protocol::decide::Fencing::On,
        )
    };
    TransactionDetail {
        recover: run(estx::protocol::Procedure::Recover),
        rollback: run(estx::protocol::Procedure::Rollback),
        txn: t,
        accounts: vec![],
        locks,
        next_step: None,
    }
}

fn loaded(
    app: &mut App,
    procedure: Procedure,
    t: Transaction,
    refusal: Option<estx::protocol::intervene::ActRefusal>,
) {
    let act = match procedure {
        Procedure::Rollback => rollback(t.id.clone()),
        Procedure::Recover => recover(t.id.clone()),
    };
    update(
        app,
        Event::Preview {
            act,
            plan: Ok(plan_on(Some(procedure), detail_of(t, vec![]), refusal)),
        },
    );
}

#[test]
fn a_selected_transaction_that_leaves_the_list_stays_selected_and_is_read_by_id() {
    let mut app = app(false);
    update(&mut app, key('j'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    // The next poll no longer lists it (it finished).
    let cmds = update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-old", "pending", 90),
            txn("t-new", "created", 1),
        ])))),
    );
    assert_eq!(cmds, vec![IoRequest::LookUp("t-mid".into())]);
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"), "never jumps");
    assert_eq!(app.selected_index(), None);
    let d = app.view.detail.as_ref().unwrap();
    assert_eq!((d.txn.id.as_str(), &d.fate), ("t-mid", &Fate::Reading));
    // A second poll does not read it again.
    let again = update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![txn("t-old", "pending", 90)])))),
    );
    assert!(again.is_empty(), "{again:?}");
    update(
        &mut app,
        Event::LookedUp {
            id: "t-mid".into(),
            detail: Ok(Some(Box::new(detail_of(
                txn("t-mid", "finished", 0),
                vec![],
            )))),
        },
    );
    let d = app.view.detail.as_ref().unwrap();
    assert_eq!(d.fate, Fate::ReadById);
    assert_eq!(d.txn.state, Some(TxnState::Finished));
    // R acts on no row the operator cannot see selected: it says why.
    assert!(update(&mut app, key('R')).is_empty());
    let last = &app.log.back().unwrap().text;
    assert!(last.contains("t-mid left the list"), "{last}");
    assert!(app.overlays.dialog().is_none());
}

#[test]
fn re_sorting_keeps_the_selected_transaction() {
    let mut app = app(false);
    update(&mut app, key('G'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    assert_eq!(app.selected_index(), Some(2));
    update(&mut app, key('O'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    assert_eq!(app.selected_index(), Some(0));
    update(&mut app, key('o'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    assert_eq!(app.visible()[app.selected_index().unwrap()].id, "t-new");
}

#[test]
fn the_state_filter_covers_terminal_states_and_toggles_narrow_by_age() {
    let mut app = app(false);
    let names: Vec<String> = (0..7)
        .map(|_| {
            update(&mut app, key('s'));
            app.state_filter()
                .map(|s| s.to_string())
                .unwrap_or_else(|| "all".into())
        })
        .collect();
    assert_eq!(
        names,
        [
            "created",
            "pending",
            "committed",
            "terminating",
            "finished",
            "rolled-back",
            "all"
        ],
        "every state in the one state order, then all again"
    );
    update(&mut app, key('x'));
    let ids: Vec<&str> = app.visible().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["t-old", "t-mid"],
        "stuck: older than the 2-minute window"
    );
    update(&mut app, key('x'));
    update(&mut app, key('X'));
    let ids: Vec<&str> = app.visible().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, vec!["t-old"], "over the hour");
    update(&mut app, key('X'));
    assert_eq!(app.visible().len(), 3);
}

#[test]
fn looking_up_an_id_selects_it_and_reads_it() {
    let mut app = app(false);
    update(&mut app, key('#'));
    for c in "t-gone".chars() {
        assert!(update(&mut app, key(c)).is_empty(), "typing runs nothing");
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(cmds, vec![IoRequest::LookUp("t-gone".into())]);
    assert_eq!(app.selection.txn.as_deref(), Some("t-gone"));
    update(
        &mut app,
        Event::LookedUp {
            id: "t-gone".into(),
            detail: Ok(Some(Box::new(detail_of(
                txn("t-gone", "rolled-back", 3),
                vec![],
            )))),
        },
    );
    let d = app.view.detail.as_ref().unwrap();
    assert_eq!(d.txn.state, Some(TxnState::RolledBack));
}

#[test]
fn y_never_forces_the_force_key_does() {
    let mut app = app(false);
    update(&mut app, key('G')); // t-new, modified a minute ago
    update(&mut app, key('R'));
    let refusal = "transaction was modified 1m ago, within the 2m recovery window";
    let recent = estx::protocol::ProcedureRefusal::Recent {
        age: chrono::TimeDelta::minutes(1),
        window: std::time::Duration::from_secs(120),
    };
    loaded(
        &mut app,
        Procedure::Rollback,
        txn("t-new", "created", 1),
        Some(estx::protocol::intervene::ActRefusal::Procedure(recent)),
    );
    // y: refused with the protocol's words; nothing runs; the dialog stays.
    assert!(update(&mut app, key('y')).is_empty());
    assert!(app.running.is_none());
    assert!(app.overlays.dialog().is_some());
    let last = &app.log.back().unwrap().text;
    assert!(last.contains(refusal), "{last}");
    // Enter on the focused Confirm button is `y`, refused too.
    update(&mut app, code(KeyCode::Tab));
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(app.overlays.dialog().is_some());
    // ! forces, after a reason: a forced rollback runs only with one.
    assert!(update(&mut app, key('!')).is_empty());
    assert_eq!(
        app.overlays.dialog().unwrap().reason_for,
        Some(RunChoice::Forced)
    );
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    let last = &app.log.back().unwrap().text;
    assert!(last.contains("needs a reason"), "{last}");
    assert!(app.overlays.dialog().is_some() && app.running.is_none());
    for c in "worker died".chars() {
        update(&mut app, key(c));
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [IoRequest::Run(run)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert!(run.intervention.choices.force);
    assert_eq!(
        run.intervention.choices.reason.as_deref(),
        Some("worker died")
    );
    assert_eq!(run.act(), &rollback("t-new"));
    assert!(app.running.as_ref().unwrap().forced);
}

#[test]
fn a_stale_reply_for_another_target_does_not_fill_the_dialog() {
    let mut app = app(false);
    update(&mut app, key('R'));
    loaded(
        &mut app,
        Procedure::Rollback,
        txn("t-mid", "committed", 10),
        None,
    );
    assert!(app.overlays.dialog().unwrap().preview.is_loading());
}

#[test]
fn the_log_says_whether_the_run_matched_the_preview() {
    use estx::protocol::report::{StepReport, StepResult};
    let mut app = app(false);
    update(&mut app, key('R'));
    loaded(
        &mut app,
        Procedure::Rollback,
        txn("t-old", "pending", 90),
        None,
    );
    update(&mut app, key('y'));
    for c in "stuck".chars() {
        update(&mut app, key(c));
    }
    update(&mut app, code(KeyCode::Enter));
    let planned = app.running.as_ref().unwrap().planned.clone();
    assert!(!planned.is_empty());
    // Report the first planned step as it was previewed, then a different one.
    let step = |label: &str, write: bool| {
        Event::Step(StepReport {
            txn: "t-old".into(),
            step: None,
            label: label.into(),
            target: "transactions/t-old".into(),
            result: if write {
                StepResult::Updated(estx::protocol::decide::Effect::LockReleased)
            } else {
                StepResult::Noop(estx::protocol::decide::NoopReason::LockNotHeld)
            },
            receipt: None,
        })
    };
    let first = planned[0].rsplit_once(": ").unwrap();
    update(&mut app, step(first.0, first.1 == "write"));
    update(&mut app, step("something else", true));
    update(
        &mut app,
        Event::ActionDone(ActionOutcome {
            act: rollback("t-old"),
            summary: "completed".into(),
            ok: true,
            receipts: None,
            record: None,
        }),
    );
    let last = &app.log.back().unwrap().text;
    assert!(
        last.contains("differed from the preview at line 2"),
        "{last}"
    );
}

#[test]
fn the_log_says_after_each_act_what_its_receipts_prove() {
    use estx::protocol::trail::receipts::{Mismatch, ReceiptProblem, Verification};
    let done = |receipts| {
        Event::ActionDone(ActionOutcome {
            act: rollback("t-old"),
            summary: "rolled back · audit record r-9".into(),
            ok: true,
            receipts,
            record: None,
        })
    };
    let texts = |on: &App| -> Vec<(LogLevel, String)> {
        on.log.iter().map(|e| (e.level, e.text.clone())).collect()
    };
    // Three balance writes that verify: one line, after the outcome's.
    let mut quiet = app(false);
    let verified = Verification {
        records: 1,
        verified: 1,
        writes: 3,
        ..Verification::default()
    };
    update(&mut quiet, done(Some(verified)));
    let log = texts(&quiet);
    let at = log
        .iter()
        .position(|(_, t)| t.ends_with("rolled back · audit record r-9"))
        .unwrap();
    assert_eq!(
        log[at + 1],
        (
            LogLevel::Info,
            "Roll back t-old: receipts verified: 3 writes".to_string()
        ),
        "{log:#?}"
    );
    // A mismatch: named by record, transaction and account, as an error.
    let mismatch = Mismatch {
        record: "r-9".into(),
        txn: "t-old".into(),
        account: "A".into(),
        problem: ReceiptProblem::Arithmetic {
            before: 400,
            after: 450,
            delta: 100,
        },
    };
    let wrong = Verification {
        records: 1,
        writes: 2,
        mismatches: vec![mismatch.clone(), mismatch],
        ..Verification::default()
    };
    let mut caught = app(false);
    update(&mut caught, done(Some(wrong)));
    let log = texts(&caught);
    let (level, text) = log.iter().find(|(_, t)| t.contains("receipts")).unwrap();
    assert_eq!(*level, LogLevel::Error, "{log:#?}");
    assert_eq!(
        text,
        "Roll back t-old: receipts do NOT verify: record r-9, transaction t-old, \
         account A: balance 400 -> 450 is not a change of +100 (and 1 more)"
    );
    // An act that did not run says nothing of receipts.
    update(&mut caught, done(None));
    let said = texts(&caught);
    assert_eq!(
        said.iter().filter(|(_, t)| t.contains("receipts")).count(),
        1
    );
}

fn many_accounts_and_locks(app: &mut App, n: usize) {
    let mut snap = snapshot(vec![txn("t-old", "pending", 90)]);
    for i in 0..n {
        snap.accounts.insert(
            format!("acct-{i:03}"),
            AccountEntry::Ok(AccountState::new(1)),
        );
        let info = estx::protocol::locks::LockInfo::from_source(
            &format!("res-{i:03}"),
            json!({"owner": format!("t-{i}")}).as_object().unwrap(),
        );
        snap.locks.push(estx::protocol::locks::LockView::judge(
            info,
            &Default::default(),
            &Default::default(),
            now(),
            &estx::protocol::ProtocolConfig::default(),
        ));
    }
    update(app, Event::Polled(Ok(Box::new(snap))));
}

#[test]
fn every_pane_scrolls_within_its_rows() {
    let mut app = app(false);
    update(&mut app, Event::Resize(80, 24));
    many_accounts_and_locks(&mut app, 40);
    let rows = estx::dashboard::layout::pane_rows((80, 24));
    // Accounts: the cursor stops at the last row, which stays on screen.
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Accounts);
    for _ in 0..100 {
        update(&mut app, key('j'));
    }
    let n = app.view.accounts.ids.len();
    assert_eq!(app.view.accounts.cursor, Some(n - 1));
    assert_eq!(app.view.accounts.offset, n - rows.accounts);
    update(&mut app, key('g'));
    assert_eq!(
        (app.view.accounts.cursor, app.view.accounts.offset),
        (Some(0), 0)
    );
    // Locks: same, and L releases the lock under the cursor.
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::End));
    assert_eq!(app.view.locks.cursor, Some(39));
    assert_eq!(app.view.locks.offset, 40 - rows.locks);
    assert_eq!(
        update(&mut app, key('L')),
        vec![IoRequest::LoadPreview(release_lock("res-039"))]
    );
    update(&mut app, code(KeyCode::Esc));
    // Log: follows the newest; scrolls back and forward within its lines.
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Log);
    for i in 0..30 {
        app.push_log(LogLevel::Info, format!("line {i}"));
    }
    update(&mut app, Event::Resize(80, 24));
    let len = app.log.len();
    assert_eq!(app.view.log.top, len - rows.log, "newest last");
    update(&mut app, key('k'));
    assert_eq!(app.view.log.top, len - rows.log - 1);
    for _ in 0..100 {
        update(&mut app, key('j'));
    }
    assert_eq!(app.view.log.top, len - rows.log, "never past the end");
    assert_eq!(app.selection.log_top, None, "back to following");
    update(&mut app, key('g'));
    assert_eq!(app.view.log.top, 0);
    // Detail: bounded by its text.
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Detail);
    for _ in 0..500 {
        update(&mut app, key('j'));
    }
    assert!(
        app.selection.detail_scroll < 40,
        "{}",
        app.selection.detail_scroll
    );
    // Table: the offset keeps the selection on screen.
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.focus, Pane::Transactions);
    assert_eq!(app.view.table.offset, 0);
}

#[test]
fn enter_on_an_account_drills_into_it_and_esc_comes_back() {
    let mut app = app(false);
    let mut snap = snapshot(vec![
        txn("t-old", "pending", 90),
        txn("t-new", "created", 1),
    ]);
    let mut a = AccountState::new(400);
    a.pending.push("t-old".into());
    snap.accounts.insert("A".into(), AccountEntry::Ok(a));
    update(&mut app, Event::Polled(Ok(Box::new(snap))));
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Accounts);
    update(&mut app, key('j')); // A (it carries a pending entry: listed first)
    assert_eq!(app.selection.account.as_deref(), Some("A"));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.focus, Pane::Detail);
    let d = app.view.account.as_ref().unwrap();
    assert_eq!(d.id, "A");
    assert_eq!(
        d.pending,
        vec![("t-old".to_string(), Some(TxnState::Pending))]
    );
    assert_eq!(d.naming.len(), 2, "both transactions name A");
    assert_eq!(
        app.query.text, "A",
        "the table shows the transactions naming it"
    );
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.focus, Pane::Accounts);
    assert!(app.view.account.is_none());
}

fn audit_report(findings: &[(&str, &str)]) -> estx::protocol::audit::AuditReport {
    estx::protocol::audit::AuditReport {
        total_balance: 900,
        in_flight_delta: 0,
        consistent_view: true,
        repair_effect: Vec::new(),
        coverage: Default::default(),
        findings: findings
            .iter()
            .map(|(kind, id)| estx::protocol::audit::Finding {
                kind: kind.parse().unwrap(),
                id: id.to_string(),
                detail: "found".into(),
            })
            .collect(),
        repairs: vec![],
        repair_steps: vec![],
    }
}

#[test]
fn the_audit_runs_in_the_background_and_its_repairs_use_the_dialog() {
    let mut app = app(false);
    // The first tick with data audits; the next ones wait for the cadence.
    let tick = |s: i64| Event::Tick(now() + chrono::Duration::seconds(s));
    assert_eq!(update(&mut app, tick(1)), vec![IoRequest::Audit]);
    assert!(update(&mut app, tick(2)).is_empty(), "one at a time");
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
    assert!(update(&mut app, tick(10)).is_empty(), "not due yet");
    assert_eq!(update(&mut app, tick(40)), vec![IoRequest::Audit]);
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
    // A opens the pane (and audits now); Enter on the stale lock opens the
    // lock's release dialog; on the dangling entry, the repair's dialog.
    assert_eq!(update(&mut app, key('A')), vec![IoRequest::Audit]);
    assert!(app
        .overlays
        .is_open(estx::dashboard::layers::OverlayKind::Audit));
    update(&mut app, key('j'));
    assert_eq!(
        update(&mut app, code(KeyCode::Enter)),
        vec![IoRequest::LoadPreview(release_lock("res-1"))]
    );
    update(&mut app, code(KeyCode::Esc)); // closes the dialog
    assert!(
        app.overlays.dialog().is_none()
            && app
                .overlays
                .is_open(estx::dashboard::layers::OverlayKind::Audit)
    );
    update(&mut app, key('k'));
    assert_eq!(
        update(&mut app, code(KeyCode::Enter)),
        vec![IoRequest::LoadPreview(audit_repair("A"))]
    );
    update(&mut app, code(KeyCode::Esc));
    update(&mut app, code(KeyCode::Esc));
    assert!(!app
        .overlays
        .is_open(estx::dashboard::layers::OverlayKind::Audit));
}

#[test]
fn a_click_selects_an_account_or_a_lock_row() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut app = app(false);
    update(&mut app, Event::Resize(160, 48));
    many_accounts_and_locks(&mut app, 5);
    let areas = app.areas();
    let click = |col: u16, row: u16| {
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    // Border, header, then the second lock row.
    update(&mut app, click(areas.locks.x + 3, areas.locks.y + 3));
    assert_eq!(app.focus, Pane::Locks);
    assert_eq!(app.selection.lock.as_deref(), Some("res-001"));
    update(&mut app, click(areas.accounts.x + 3, areas.accounts.y + 2));
    assert_eq!(app.focus, Pane::Accounts);
    assert_eq!(
        app.selection.account,
        Some(app.view.accounts.ids[0].clone())
    );
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("t-old"),
        "the transaction stays selected"
    );
}

#[test]
fn the_detail_asks_for_the_selections_interventions_one_read_at_a_time() {
    let mut app = app(false);
    update(&mut app, key('j')); // t-mid, while t-old's read runs: not asked yet
    let done = |id: &str| Event::History {
        id: id.into(),
        records: Ok(vec![]),
    };
    // t-old's records arrive for a selection that moved on: dropped, and
    // the new selection is asked for.
    assert_eq!(
        update(&mut app, done("t-old")),
        vec![IoRequest::LoadHistory("t-mid".into())]
    );
    assert!(app.reads.history.value().is_none());
    assert_eq!(update(&mut app, done("t-mid")), vec![]);
    assert!(matches!(app.selected_history(), Some(Ok(r)) if r.is_empty()));
    // Asked once per selection; again after a poll where its document
    // changed (an act, by anyone, moves it), or after HISTORY_EVERY, and
    // after an action; a poll that changed nothing asks nothing.
    assert_eq!(update(&mut app, key('p')).len(), 1, "only SetPaused");
    let poll = |state: &str, minutes_ago: i64| {
        Event::Polled(Ok(Box::new(snapshot(vec![txn(
            "t-mid",
            state,
            minutes_ago,
        )]))))
    };
    assert_eq!(update(&mut app, poll("committed", 10)), vec![], "unchanged");
    assert_eq!(
        update(&mut app, poll("finished", 0)),
        vec![IoRequest::LoadHistory("t-mid".into())],
        "moved on"
    );
    update(&mut app, done("t-mid"));
    assert_eq!(update(&mut app, poll("finished", 0)), vec![], "unchanged");
    let later = now() + chrono::Duration::from_std(HISTORY_EVERY).unwrap();
    update(&mut app, Event::Tick(later));
    assert_eq!(
        update(&mut app, poll("finished", 0)),
        vec![IoRequest::LoadHistory("t-mid".into())],
        "read again after HISTORY_EVERY"
    );
}

/// The plan a dialog receives for `procedure` on `d` (`None`: the release
/// of its locks), as the protocol's preview makes it.
pub(crate) fn plan_on(
    procedure: Option<estx::protocol::Procedure>,
    d: estx::protocol::views::TransactionDetail,
    refusal: Option<estx::protocol::intervene::ActRefusal>,
) -> estx::protocol::intervene::AnyPlan {
    use estx::protocol::intervene::{AnyPlan, LocksOfActPlan, LocksOfPlan, ProcedurePlan, TxnPlan};
    use estx::protocol::Procedure;
    match procedure {
        Some(p) => {
            let plan = ProcedurePlan::Judged(Box::new(TxnPlan::on_transaction(p, d, refusal)));
            match p {
                Procedure::Rollback => AnyPlan::Rollback(plan),
                Procedure::Recover => AnyPlan::Recover(plan),
            }
        }
        None => AnyPlan::ReleaseLocksOf(LocksOfActPlan::Judged(LocksOfPlan {
            detail: Box::new(d),
        })),
    }
}

/// The one bulk act's plan of `procedure` over `items` (each one's own
/// plan on its documents), as a bulk dialog receives it.
pub(crate) fn bulk_of(
    procedure: estx::protocol::Procedure,
    items: Vec<estx::protocol::intervene::TxnPlan>,
) -> estx::dashboard::event::Marked {
    use estx::protocol::intervene::{Selected, SelectionPlan};
    estx::dashboard::event::Marked::Bulk(SelectionPlan {
        procedure,
        targets: vec![],
        selected: Selected {
            transactions: vec![],
            left_out: vec![],
        },
        sweeps: false,
        items,
        sweep: vec![],
        locks_absent: false,
        versions: Default::default(),
    })
}

mod acks;
mod audit_pace;
mod bulk;
mod groups;
mod healing;
mod jobs;
mod marks;
mod navigation;
mod operators;
mod overlays;
mod paging;
mod production;
mod rebound;
mod reloading;
mod reverse;
mod stopping;
mod targets;
mod timeline;
mod trends;
mod unseen;

/// The audit pane's selected finding (open, or kept since it closed).
pub(crate) fn audit_cursor(app: &App) -> usize {
    app.overlays
        .state::<estx::dashboard::layers::audit::Audit>()
        .map_or(0, |a| a.cursor)
}

/// R, F and L on the marked rows.
const ROLLBACK: OnMarks = OnMarks::Procedure(Procedure::Rollback);
const RECOVER: OnMarks = OnMarks::Procedure(Procedure::Recover);
#[allow(dead_code)]
const RELEASE_LOCKS: OnMarks = OnMarks::ReleaseLocks;

/// The acts the keys offer, as the dashboard builds them.
fn rollback(id: impl Into<String>) -> AnyAct {
    Rollback::new(id).into()
}

fn recover(id: impl Into<String>) -> AnyAct {
    Recover::new(id).into()
}

#[allow(dead_code)]
fn release_locks_of(id: impl Into<String>) -> AnyAct {
    ReleaseLocksOf {
        txn: id.into(),
        allow_partial: true,
    }
    .into()
}

fn release_lock(resource: impl Into<String>) -> AnyAct {
    ReleaseLock::new(resource).into()
}

fn audit_repair(account: impl Into<String>) -> AnyAct {
    AuditRepair {
        account: Some(account.into()),
        expect_total: None,
        allow_partial: false,
    }
    .into()
}

fn reverse(id: impl Into<String>) -> AnyAct {
    Reverse {
        txn: id.into(),
        finish_committed: true,
    }
    .into()
}
