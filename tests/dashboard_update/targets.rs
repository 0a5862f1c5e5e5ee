//! What `R`/`F`/`L` act on (only a transaction the operator can see
//! selected, or one looked up with `#`), the recovery window's refusal as
//! of now with the dashboard's force key, the state filter asking the
//! poller for a terminal state's rows, Alt-<key> as Esc then the key, the
//! detail following the focus, and the log's scroll with wrapped lines.

use super::*;
use estx::dashboard::app::LogEntry;
use estx::protocol::steps::ProcedureRefusal;

fn last_log(app: &App) -> String {
    app.log.back().map(|e| e.text.clone()).unwrap_or_default()
}

/// A poll never moves the selection: one that hides the selected row
/// (its state moved on past the state filter) leaves it selected but no
/// target, and the keys say why.
#[test]
fn action_keys_refuse_a_selection_a_poll_hid() {
    let mut app = app(false);
    for _ in 0..3 {
        update(&mut app, key('s')); // committed
    }
    assert_eq!(app.state_filter(), Some(&TxnState::Committed));
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("t-mid"),
        "the filter's row"
    );
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-old", "pending", 90),
            txn("t-mid", "terminating", 0),
            txn("t-new", "created", 1),
        ])))),
    );
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("t-mid"),
        "still selected"
    );
    assert_eq!(app.selected_index(), None, "but not a visible row");
    for k in ['R', 'F', 'L', ' '] {
        assert!(update(&mut app, key(k)).is_empty(), "{k} acted");
        assert!(app.overlays.dialog().is_none() && app.selection.marks.is_empty());
        let last = last_log(&app);
        assert!(last.contains("t-mid is hidden by the filter"), "{last}");
    }
    // A state cycle that shows rows again selects the first visible one.
    update(&mut app, key('s')); // terminating
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    update(&mut app, key('s')); // finished: no row
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    for _ in 0..3 {
        update(&mut app, key('s')); // rolled-back, all, created
    }
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    assert_eq!(
        update(&mut app, key('R')),
        vec![IoRequest::LoadPreview(rollback("t-new"))]
    );
}

#[test]
fn l_in_the_accounts_pane_never_targets_the_other_panes_transaction() {
    let mut app = app(false);
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Accounts);
    update(&mut app, key('j'));
    for k in ['L', 'R', 'F'] {
        assert!(update(&mut app, key(k)).is_empty(), "{k} acted");
        let last = last_log(&app);
        assert!(last.contains("select a lock or a transaction"), "{last}");
    }
    assert!(app.overlays.dialog().is_none());
}

#[test]
fn a_transaction_looked_up_with_hash_is_the_explicit_target() {
    let mut app = app(false);
    update(&mut app, key('#'));
    for c in "t-gone".chars() {
        update(&mut app, key(c));
    }
    update(&mut app, code(KeyCode::Enter));
    update(
        &mut app,
        Event::LookedUp {
            id: "t-gone".into(),
            detail: Ok(Some(Box::new(detail_of(
                txn("t-gone", "pending", 30),
                vec![],
            )))),
        },
    );
    assert_eq!(app.focus, Pane::Detail);
    assert_eq!(app.selection.pinned.as_deref(), Some("t-gone"));
    assert_eq!(
        update(&mut app, key('R')),
        vec![IoRequest::LoadPreview(rollback("t-gone"))]
    );
    app.overlays.take_dialog();
    // Selecting a row drops the look-up: it is no target any more.
    update(&mut app, code(KeyCode::Esc));
    update(&mut app, key('j'));
    assert_ne!(app.selection.txn.as_deref(), Some("t-gone"));
    assert!(app.selection.pinned.is_none());
}

#[test]
fn the_window_refusal_names_the_force_key_and_the_age_at_the_refusal() {
    let mut app = app(false);
    update(&mut app, key('G')); // t-new, modified a minute ago
    update(&mut app, key('R'));
    // As the preview's re-read says it when the dialog opens.
    let at_open = ProcedureRefusal::Recent {
        age: chrono::TimeDelta::seconds(60),
        window: std::time::Duration::from_secs(120),
    };
    loaded(
        &mut app,
        Procedure::Rollback,
        txn("t-new", "created", 1),
        Some(estx::protocol::intervene::ActRefusal::Procedure(at_open)),
    );
    // 30 s later the operator presses y.
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(30)));
    assert!(update(&mut app, key('y')).is_empty());
    let last = last_log(&app);
    assert!(last.contains("modified 1m30s ago"), "{last}");
    assert!(last.contains("use the force key ! to act anyway"), "{last}");
    assert!(!last.contains("--force"), "{last}");
    // Past the window since: y is still refused (the dialog's check is
    // from its opening), saying so.
    update(&mut app, Event::Tick(now() + chrono::Duration::seconds(90)));
    assert!(update(&mut app, key('y')).is_empty());
    let last = last_log(&app);
    assert!(last.contains("left the recovery window since"), "{last}");
    assert!(app.running.is_none());
}

#[test]
fn the_command_line_keeps_its_own_force_hint() {
    let r = ProcedureRefusal::Recent {
        age: chrono::TimeDelta::seconds(5),
        window: std::time::Duration::from_secs(120),
    };
    assert!(
        r.to_string().ends_with("(use --force to act anyway)"),
        "{r}"
    );
    assert_eq!(r.to_string(), r.explain("--force"));
}

#[test]
fn every_state_filter_asks_the_poller_for_its_matches() {
    let mut app = app(false);
    let mut asked = Vec::new();
    for _ in 0..7 {
        for c in update(&mut app, key('s')) {
            if let IoRequest::SetListing(t) = c {
                asked.push(t.state);
            }
        }
    }
    let mut expected: Vec<Option<TxnState>> = TxnState::KNOWN.iter().cloned().map(Some).collect();
    expected.push(None);
    assert_eq!(asked, expected);
}

#[test]
fn a_polled_terminal_listing_fills_the_filtered_table() {
    let mut app = app(false);
    for _ in 0..6 {
        update(&mut app, key('s'));
    }
    assert_eq!(app.state_filter(), Some(&TxnState::RolledBack));
    assert!(app.visible().is_empty());
    let mut snap = snapshot(vec![
        txn("t-old", "pending", 90),
        txn("t-undone", "rolled-back", 5),
    ]);
    snap.in_flight_total = 1;
    snap.table = estx::protocol::read::TablePage {
        filter: app.query.listing.clone(),
        listed: 1,
        total: 40,
        page_size: 500,
    };
    update(&mut app, Event::Polled(Ok(Box::new(snap))));
    let ids: Vec<&str> = app.visible().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, vec!["t-undone"]);
}

#[test]
fn alt_tab_is_esc_then_tab() {
    let mut app = app(false);
    update(&mut app, key('/'));
    update(&mut app, key('z'));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.query.text, "z");
    update(
        &mut app,
        Event::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::ALT)),
    );
    assert_eq!(app.query.text, "", "Esc cleared the filter");
    assert_eq!(app.focus, Pane::Detail, "Tab moved the focus");
}

#[test]
fn the_detail_follows_the_table_once_it_has_the_focus_again() {
    let mut app = app(false);
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, key('j'));
    update(&mut app, code(KeyCode::Enter));
    assert!(app.view.account.is_some(), "the account drilled into");
    assert_eq!(app.focus, Pane::Detail);
    // Tab round to the table (Detail → Accounts → Locks → Log → table).
    for _ in 0..4 {
        update(&mut app, code(KeyCode::Tab));
    }
    assert_eq!(app.focus, Pane::Transactions);
    assert!(app.view.account.is_none(), "still showing the account");
    assert!(app.view.detail.is_some());
}

#[test]
fn long_log_lines_wrap_and_the_scroll_stays_bounded() {
    let mut app = app(false);
    update(&mut app, Event::Resize(80, 24));
    for i in 0..30 {
        app.log.push_back(LogEntry {
            at: now(),
            level: LogLevel::Info,
            text: format!("line {i} {}", "word ".repeat(40)),
        });
    }
    update(&mut app, key('r'));
    // The log pane has 2 rows at 80×24; each line wraps onto 3: only the
    // newest fits, and following shows it from its first row.
    let n = app.log.len();
    assert_eq!(app.view.log.top, n - 1);
    // Focus the log; k scrolls one entry up, G follows again.
    for _ in 0..4 {
        update(&mut app, code(KeyCode::Tab));
    }
    assert_eq!(app.focus, Pane::Log);
    update(&mut app, key('k'));
    assert_eq!(app.view.log.top, n - 2);
    for _ in 0..5 {
        update(&mut app, key('j'));
    }
    assert_eq!(app.view.log.top, n - 1, "never past the newest");
    assert_eq!(app.selection.log_top, None, "back to following");
}

#[test]
fn enter_on_a_lock_opens_its_owner_as_the_explicit_target() {
    let mut app = app(false);
    many_accounts_and_locks(&mut app, 3);
    app.terminal.size = (160, 48);
    for _ in 0..3 {
        update(&mut app, code(KeyCode::Tab));
    }
    assert_eq!(app.focus, Pane::Locks);
    update(&mut app, key('j'));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.focus, Pane::Detail);
    assert_eq!(app.selection.txn.as_deref(), Some("t-0"));
    assert_eq!(app.selection.pinned.as_deref(), Some("t-0"));
    // Not a row of the table, yet opened explicitly: R acts on it.
    update(
        &mut app,
        Event::LookedUp {
            id: "t-0".into(),
            detail: Ok(Some(Box::new(detail_of(txn("t-0", "pending", 30), vec![])))),
        },
    );
    assert_eq!(
        update(&mut app, key('R')),
        vec![IoRequest::LoadPreview(rollback("t-0"))]
    );
}

#[test]
fn the_reverse_key_obeys_the_same_target_rule() {
    let mut app = app(false);
    update(&mut app, key('j'));
    // t-mid finished and left the list.
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![txn("t-old", "pending", 90)])))),
    );
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
    assert!(update(&mut app, key('V')).is_empty());
    let last = last_log(&app);
    assert!(last.contains("t-mid left the list"), "{last}");
    assert!(app.overlays.dialog().is_none());
}
