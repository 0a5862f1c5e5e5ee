//! Rendering of the dashboard as a pure function of `App`: snapshots of every
//! screen an operator can see (through `TestBackend`, no cluster needed) and
//! cell-colour checks of the destructive confirmation dialogs.
//!
//! Everything is built by hand with a fixed clock, so the snapshots are
//! deterministic. Update them with
//! `INSTA_UPDATE=always cargo test --test dashboard_render`, then read the
//! `.snap` files before committing them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, Duration as Age, TimeZone, Utc};
use estx::dashboard::app::{App, Dialog, LogEntry, LogLevel, Pane, Settings};
use estx::dashboard::event::{Action, PollFailure};
use estx::dashboard::snapshot::{AccountEntry, Snapshot, StateCount};
use estx::dashboard::ui::{layout, render};
use estx::protocol::account::AccountState;
use estx::protocol::decide::Fencing;
use estx::protocol::executor::Outcome;
use estx::protocol::lock::{LockInfo, Owner};
use estx::protocol::locks::LockView;
use estx::protocol::time::format_timestamp;
use estx::protocol::views::{preview, AccountView, TransactionDetail};
use estx::protocol::{Procedure, Transaction, TxnState};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

// ---------------------------------------------------------------- fixture

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn ago(secs: i64) -> DateTime<Utc> {
    now() - Age::seconds(secs)
}

fn ts(secs_ago: i64) -> Value {
    json!(format_timestamp(ago(secs_ago)))
}

fn settings() -> Settings {
    Settings {
        url: "http://es.example:9200".into(),
        recovery_window: Duration::from_secs(120),
        investigate_after: Duration::from_secs(3600),
        read_only: false,
        transactions_index: "transactions".into(),
    }
}

fn txn(
    id: &str,
    state: Option<&str>,
    src: &str,
    dest: &str,
    amount: Value,
    modified_ago: i64,
) -> Transaction {
    let mut doc = json!({
        "src_acct": src, "dest_acct": dest, "amount": amount,
        "creation_time": ts(modified_ago + 60), "modification_time": ts(modified_ago),
    });
    if let Some(s) = state {
        doc["transaction_state"] = json!(s);
    }
    Transaction::from_source(id, doc.as_object().unwrap())
}

fn account(balance: i64, pending: &[&str]) -> AccountEntry {
    let mut s = AccountState::new(balance);
    s.pending = pending.iter().map(|p| p.to_string()).collect();
    AccountEntry::Ok(s)
}

fn lock(resource: &str, doc: Value, owner_state: Option<TxnState>) -> LockView {
    let info = LockInfo::from_source(resource, doc.as_object().unwrap());
    let owner = owner_state.as_ref().map_or(Owner::Missing, Owner::Is);
    let staleness = info.staleness(owner, ago(3));
    LockView {
        info,
        owner_state,
        staleness,
    }
}

fn count(state: Option<TxnState>, count: u64, oldest_ago: Option<i64>) -> StateCount {
    StateCount {
        state,
        count,
        oldest: oldest_ago.map(ago),
    }
}

/// Six transactions in flight (one of each non-terminal state, some stuck,
/// one half-applied), one in an unknown state, one malformed; accounts
/// with pending entries, settled records, a malformed and a missing one;
/// a stale, two live and one ownerless lock.
fn snapshot() -> Snapshot {
    let transactions = vec![
        txn(
            "t-pend-1",
            Some("pending"),
            "alice",
            "bob",
            json!(100),
            7200,
        ),
        txn(
            "t-commit-1",
            Some("committed"),
            "carol",
            "dave",
            json!(250),
            300,
        ),
        txn(
            "t-created-2",
            Some("created"),
            "carol",
            "dave",
            json!(75),
            240,
        ),
        txn(
            "t-term-1",
            Some("terminating"),
            "erin",
            "frank",
            json!(30),
            90,
        ),
        txn(
            "t-created-1",
            Some("created"),
            "alice",
            "bob",
            json!(50),
            30,
        ),
        txn("t-pend-2", Some("pending"), "erin", "frank", json!(20), 10),
        txn("t-weird", Some("paused"), "alice", "carol", json!(10), 4200),
        txn("t-broken", None, "grace", "heidi", json!("lots"), 1200),
    ];
    let mut frank = AccountState::new(1000);
    frank.settled.push(estx::protocol::account::Settled {
        txn: "t-term-1".into(),
        outcome: estx::protocol::account::SettledOutcome::Undone,
        at: ago(60),
    });
    let accounts: BTreeMap<String, AccountEntry> = [
        ("alice", account(400, &["t-pend-1"])),
        ("bob", account(500, &[])),
        ("carol", account(750, &["t-commit-1"])),
        ("dave", account(1250, &["t-commit-1"])),
        ("erin", account(950, &["t-term-1", "t-pend-2"])),
        ("frank", AccountEntry::Ok(frank)),
        (
            "grace",
            AccountEntry::Malformed(vec!["`balance` is not an integer: \"lots\"".into()]),
        ),
        ("heidi", AccountEntry::Missing),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let locks = vec![
        lock(
            "legacy-7",
            json!({"process_id": "batch-9", "created_at": ts(3 * 86_400)}),
            None,
        ),
        lock(
            "alice",
            json!({"owner": "t-pend-1", "process_id": "worker-7:4242", "created_at": ts(7200), "expires_at": ts(7080)}),
            Some(TxnState::Pending),
        ),
        lock(
            "bob",
            json!({"owner": "t-pend-1", "process_id": "worker-2:99", "created_at": ts(100), "expires_at": ts(-20)}),
            Some(TxnState::Pending),
        ),
        lock(
            "erin",
            json!({"owner": "t-term-1", "process_id": "worker-3:17", "created_at": ts(90), "expires_at": ts(-30)}),
            Some(TxnState::Terminating),
        ),
    ];
    Snapshot {
        taken_at: ago(3),
        duration: Duration::from_millis(42),
        requests: 3,
        health: Some("yellow".into()),
        state_counts: vec![
            count(Some(TxnState::Created), 2, Some(240)),
            count(Some(TxnState::Pending), 5, Some(7200)),
            count(Some(TxnState::Committed), 1, Some(300)),
            count(Some(TxnState::Terminating), 1, Some(90)),
            count(Some(TxnState::Finished), 1204, Some(30 * 86_400)),
            count(Some(TxnState::RolledBack), 12, Some(20 * 86_400)),
            count(None, 1, Some(1200)),
            count(Some(TxnState::Unknown("paused".into())), 1, Some(4200)),
        ],
        transactions,
        in_flight_total: 9,
        accounts,
        locks,
        missing_indices: vec![],
    }
}

fn log_entry(secs_ago: i64, level: LogLevel, text: &str) -> LogEntry {
    LogEntry {
        at: ago(secs_ago),
        level,
        text: text.into(),
    }
}

fn app() -> App {
    let mut app = App::new(settings(), Duration::from_secs(5), now());
    app.size = (100, 30);
    app.snapshot = Some(snapshot());
    app.log.extend([
        log_entry(120, LogLevel::Info, "dashboard started"),
        log_entry(
            61,
            LogLevel::Updated,
            "t-old: core 7: committed -> finished: updated (state committed -> finished)",
        ),
        log_entry(
            60,
            LogLevel::Noop,
            "t-old: core 5: remove from source: no-op (not in pending_transactions)",
        ),
        log_entry(
            30,
            LogLevel::Error,
            "poll failed: cluster unreachable: connection refused (retrying with backoff)",
        ),
        log_entry(25, LogLevel::Info, "cluster reachable again"),
    ]);
    app
}

fn select(app: &mut App, id: &str) {
    app.selected = Some(id.into());
    assert_eq!(
        app.selected_transaction().map(|t| t.id.as_str()),
        Some(id),
        "{id} not visible"
    );
}

/// What `Protocol::transaction_detail` would return for `id`, built from the snapshot.
fn detail(app: &App, id: &str) -> TransactionDetail {
    let snap = app.snapshot.as_ref().unwrap();
    let txn = snap
        .transactions
        .iter()
        .find(|t| t.id == id)
        .unwrap()
        .clone();
    let accounts: Vec<AccountView> = [&txn.src, &txn.dest]
        .into_iter()
        .flatten()
        .map(|a| match &snap.accounts[a] {
            AccountEntry::Ok(s) => AccountView {
                id: a.clone(),
                state: Some(s.clone()),
                carries: s.carries(id),
                settled: s.settled_of(id).map(|r| r.outcome),
                problems: vec![],
            },
            AccountEntry::Malformed(p) => AccountView {
                id: a.clone(),
                state: None,
                carries: false,
                settled: None,
                problems: p.clone(),
            },
            AccountEntry::Missing => AccountView {
                id: a.clone(),
                state: None,
                carries: false,
                settled: None,
                problems: vec!["account does not exist".into()],
            },
        })
        .collect();
    let locks = snap
        .locks
        .iter()
        .filter(|l| l.info.owner.as_deref() == Some(id))
        .cloned()
        .collect();
    let st = |k: usize| accounts.get(k).and_then(|a: &AccountView| a.state.as_ref());
    let recover = preview(Procedure::Recover, &txn, st(0), st(1), Fencing::On, now());
    let rollback = preview(Procedure::Rollback, &txn, st(0), st(1), Fencing::On, now());
    let next_step = recover
        .steps
        .iter()
        .find(|s| matches!(s.outcome, Outcome::Updated(_)))
        .map(|s| s.step);
    TransactionDetail {
        txn,
        accounts,
        locks,
        next_step,
        recover,
        rollback,
    }
}

fn open_dialog(app: &mut App, action: Action, id: &str, loaded: bool) {
    select(app, id);
    let detail = loaded.then(|| Ok(Box::new(detail(app, id))));
    app.dialog = Some(Dialog {
        action,
        txn: id.into(),
        detail,
        confirm_focused: false,
    });
}

// ---------------------------------------------------------------- drawing

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| render(f, app)).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer as text, one line per row, trailing blanks trimmed.
fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| {
            let mut line = String::new();
            let mut skip = 0usize;
            for c in row {
                if skip == 0 {
                    line.push_str(c.symbol());
                }
                skip = skip.max(unicode_width(c.symbol())).saturating_sub(1);
            }
            line.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn unicode_width(s: &str) -> usize {
    ratatui::text::Span::raw(s).width()
}

fn screen(app: &App, w: u16, h: u16) -> String {
    text(&draw(app, w, h))
}

/// Position of the first cell where `needle` (one cell per char) starts.
fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let chars: Vec<String> = needle.chars().map(String::from).collect();
    let area = buf.area;
    for y in 0..area.height {
        for x in 0..area.width.saturating_sub(chars.len() as u16 - 1) {
            if chars
                .iter()
                .enumerate()
                .all(|(i, ch)| buf[(x + i as u16, y)].symbol() == ch)
            {
                return Some((x, y));
            }
        }
    }
    None
}

fn is_red(c: Color) -> bool {
    matches!(c, Color::Red | Color::LightRed)
}

// ---------------------------------------------------------------- snapshots

#[test]
fn main_screen() {
    insta::assert_snapshot!("main_100x30", screen(&app(), 100, 30));
}

#[test]
fn main_screen_minimum_size() {
    insta::assert_snapshot!("main_80x24", screen(&app(), 80, 24));
}

#[test]
fn main_screen_wide() {
    // From 200 columns the accounts and locks move under the detail.
    insta::assert_snapshot!("main_200x45", screen(&app(), 200, 45));
}

#[test]
fn too_small() {
    let s = screen(&app(), 60, 20);
    assert!(
        s.contains("estx-tui needs at least 80×24 (now 60×20)"),
        "{s}"
    );
    insta::assert_snapshot!("too_small_60x20", s);
}

#[test]
fn filtered_with_state_filter() {
    let mut a = app();
    a.filter = "erin".into();
    a.editing_filter = true;
    a.state_filter = 2; // pending
    a.select_index(0);
    let s = screen(&a, 100, 30);
    assert!(s.contains("/erin█"), "{s}");
    insta::assert_snapshot!("filtered_state_pending", s);
}

#[test]
fn filter_matching_nothing() {
    let mut a = app();
    a.filter = "zzz".into();
    a.sort_desc = true;
    insta::assert_snapshot!("filtered_nothing", screen(&a, 100, 30));
}

#[test]
fn each_pane_focused() {
    for pane in [Pane::Detail, Pane::Accounts, Pane::Locks, Pane::Log] {
        let mut a = app();
        a.focus = pane;
        if pane == Pane::Detail {
            select(&mut a, "t-term-1");
        }
        if pane == Pane::Accounts {
            a.scroll[0] = 2;
        }
        if pane == Pane::Log {
            a.scroll[2] = 1;
        }
        insta::assert_snapshot!(
            format!("focus_{pane:?}").to_lowercase(),
            screen(&a, 100, 30)
        );
    }
}

#[test]
fn detail_of_half_applied_pending() {
    let mut a = app();
    a.focus = Pane::Detail;
    select(&mut a, "t-pend-1");
    let s = screen(&a, 100, 30);
    assert!(s.contains("src alice: 400 · carries it"), "{s}");
    assert!(s.contains("dst bob: 500 · not applied"), "{s}");
    insta::assert_snapshot!("detail_half_applied", s);
}

#[test]
fn detail_of_malformed_and_unknown() {
    let mut a = app();
    select(&mut a, "t-broken");
    insta::assert_snapshot!("detail_malformed", screen(&a, 100, 30));
    select(&mut a, "t-weird");
    insta::assert_snapshot!("detail_unknown_state", screen(&a, 100, 30));
}

#[test]
fn rollback_dialog_loading() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-1", false);
    insta::assert_snapshot!("dialog_rollback_loading", screen(&a, 100, 30));
}

#[test]
fn rollback_dialog_loaded() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-1", true);
    let s = screen(&a, 100, 30);
    assert!(s.contains("alice: 400 → 500 (+100)"), "{s}");
    insta::assert_snapshot!("dialog_rollback_loaded", s);
}

#[test]
fn rollback_dialog_refused_for_committed() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-commit-1", true);
    let buf = draw(&a, 100, 30);
    assert!(find(&buf, "[ Close ]").is_some());
    assert!(find(&buf, "Confirm").is_none());
    insta::assert_snapshot!("dialog_rollback_refused_committed", text(&buf));
}

#[test]
fn rollback_dialog_warns_of_recent_modification() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-2", true);
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("modified 10s ago: a worker may still be running it"),
        "{s}"
    );
    insta::assert_snapshot!("dialog_rollback_recent_warning", s);
}

#[test]
fn rollback_dialog_read_error() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-1", false);
    a.dialog.as_mut().unwrap().detail = Some(Err("cluster unreachable: connection refused".into()));
    insta::assert_snapshot!("dialog_rollback_error", screen(&a, 100, 30));
}

#[test]
fn force_recover_dialog() {
    let mut a = app();
    open_dialog(&mut a, Action::ForceRecover, "t-pend-1", true);
    insta::assert_snapshot!("dialog_force_recover", screen(&a, 100, 30));
}

#[test]
fn release_locks_dialog() {
    let mut a = app();
    open_dialog(&mut a, Action::ReleaseLocks, "t-pend-1", true);
    insta::assert_snapshot!("dialog_release_locks", screen(&a, 100, 30));
}

#[test]
fn help_overlay() {
    let mut a = app();
    a.help = true;
    insta::assert_snapshot!("help_100x30", screen(&a, 100, 30));
    insta::assert_snapshot!("help_80x24", screen(&a, 80, 24));
}

#[test]
fn stale_data_with_error() {
    let mut a = app();
    a.snapshot.as_mut().unwrap().taken_at = ago(95);
    a.poll_error = Some(PollFailure::Transient(
        "cluster unreachable: connection refused".into(),
    ));
    a.polling = true;
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("STALE: data is 1m35s old — cluster unreachable: connection refused (retrying)"),
        "{s}"
    );
    insta::assert_snapshot!("stale_with_error", s);
}

#[test]
fn no_data_yet() {
    let mut a = App::new(settings(), Duration::from_secs(5), now());
    insta::assert_snapshot!("no_data_connecting", screen(&a, 100, 30));
    a.poll_error = Some(PollFailure::Transient(
        "cluster unreachable: connection refused".into(),
    ));
    let s = screen(&a, 100, 30);
    assert!(s.contains("cannot reach http://es.example:9200"), "{s}");
    insta::assert_snapshot!("no_data_unreachable", s);
}

#[test]
fn auth_failure() {
    let failure = PollFailure::Auth(
        "authentication or authorisation failed (HTTP 401): unable to authenticate user [ops]"
            .into(),
    );
    let mut a = app();
    a.poll_error = Some(failure.clone());
    a.snapshot.as_mut().unwrap().taken_at = ago(20);
    a.paused = true;
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("authentication failed — not retrying; fix credentials and press r"),
        "{s}"
    );
    insta::assert_snapshot!("auth_failure_stale", s);
    let mut b = App::new(settings(), Duration::from_secs(5), now());
    b.poll_error = Some(failure);
    insta::assert_snapshot!("auth_failure_no_data", screen(&b, 100, 30));
}

#[test]
fn missing_indices() {
    let mut a = App::new(settings(), Duration::from_secs(5), now());
    a.snapshot = Some(Snapshot {
        taken_at: ago(1),
        duration: Duration::from_millis(7),
        requests: 2,
        health: Some("green".into()),
        state_counts: vec![],
        transactions: vec![],
        in_flight_total: 0,
        accounts: BTreeMap::new(),
        locks: vec![],
        missing_indices: vec!["accounts".into(), "locks".into(), "transactions".into()],
    });
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("MISSING INDICES: accounts, locks, transactions — run `estx-tui init`"),
        "{s}"
    );
    insta::assert_snapshot!("missing_indices", s);
}

#[test]
fn read_only_mode() {
    let mut a = app();
    a.settings.read_only = true;
    let s = screen(&a, 100, 30);
    assert!(s.contains("READ-ONLY"), "{s}");
    assert!(s.contains("read-only: actions disabled"), "{s}");
    assert!(s.contains("R F L read-only"), "{s}");
    insta::assert_snapshot!("read_only", s);
}

// ---------------------------------------------------------------- colours

/// Asserts the dialog titled `title` has a red border, a red Confirm button
/// and the focus on Cancel.
fn assert_danger_dialog(buf: &Buffer, title: &str) {
    let (tx, ty) =
        find(buf, title).unwrap_or_else(|| panic!("title {title:?} not found:\n{}", text(buf)));
    assert!(is_red(buf[(tx, ty)].fg), "title fg {:?}", buf[(tx, ty)].fg);
    let mut x = tx;
    while buf[(x, ty)].symbol() != "╔" {
        x = x.checked_sub(1).expect("dialog top-left corner");
    }
    for (cx, cy) in [(x, ty), (x + 1, ty), (x, ty + 1)] {
        let c = &buf[(cx, cy)];
        assert!(
            is_red(c.fg),
            "border cell ({cx},{cy}) {:?} has fg {:?}",
            c.symbol(),
            c.fg
        );
    }
    assert_eq!(buf[(x, ty + 1)].symbol(), "║");

    let (cx, cy) = find(buf, "[ Confirm (y) ]").expect("Confirm button");
    for i in 0..15 {
        let c = &buf[(cx + i, cy)];
        assert!(is_red(c.fg), "Confirm cell {i} fg {:?}", c.fg);
        assert!(
            !c.modifier.contains(Modifier::REVERSED),
            "Confirm must not start focused"
        );
    }
    let (kx, ky) = find(buf, "[ Cancel ]").expect("Cancel button");
    for i in 0..10 {
        assert!(
            buf[(kx + i, ky)].modifier.contains(Modifier::REVERSED),
            "Cancel starts focused"
        );
    }
}

#[test]
fn rollback_dialog_is_red_and_cancel_is_focused() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-1", true);
    assert_danger_dialog(&draw(&a, 100, 30), "Roll back t-pend-1?");
}

#[test]
fn release_dialog_is_red_and_cancel_is_focused() {
    let mut a = app();
    open_dialog(&mut a, Action::ReleaseLocks, "t-pend-1", true);
    assert_danger_dialog(&draw(&a, 100, 30), "Release the locks of t-pend-1?");
}

#[test]
fn focused_confirm_is_filled_red() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-1", true);
    a.dialog.as_mut().unwrap().confirm_focused = true;
    let buf = draw(&a, 100, 30);
    let (cx, cy) = find(&buf, "[ Confirm (y) ]").unwrap();
    assert!(
        is_red(buf[(cx, cy)].bg),
        "focused Confirm bg {:?}",
        buf[(cx, cy)].bg
    );
    let (kx, ky) = find(&buf, "[ Cancel ]").unwrap();
    assert!(!buf[(kx, ky)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn force_recover_dialog_is_not_red() {
    let mut a = app();
    open_dialog(&mut a, Action::ForceRecover, "t-pend-1", true);
    let buf = draw(&a, 100, 30);
    let (cx, cy) = find(&buf, "[ Confirm (y) ]").unwrap();
    assert_eq!(buf[(cx, cy)].fg, Color::Yellow);
}

#[test]
fn stuck_rows_are_coloured() {
    let buf = draw(&app(), 100, 30);
    let (x, y) = find(&buf, "▶!! t-pend-1").unwrap();
    assert_eq!(buf[(x + 4, y)].fg, Color::Red, "over investigate_after");
    assert!(
        buf[(x + 4, y)].modifier.contains(Modifier::REVERSED),
        "selected"
    );
    let (x, y) = find(&buf, "t-commit-1").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Yellow, "stuck");
    let (x, y) = find(&buf, "t-created-1").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Reset, "fresh");
}

#[test]
fn layout_hit_testing() {
    let a = layout(Rect::new(0, 0, 100, 30));
    assert_eq!(
        a.pane_at(a.transactions.x + 1, a.transactions.y + 1),
        Some(Pane::Transactions)
    );
    assert_eq!(
        a.pane_at(a.detail.x + 1, a.detail.y + 1),
        Some(Pane::Detail)
    );
    assert_eq!(a.pane_at(a.locks.x + 1, a.locks.y + 1), Some(Pane::Locks));
    assert_eq!(a.pane_at(0, 0), None);
    assert_eq!(a.keys.y, 29);
}

#[test]
fn every_screen_renders_at_every_size() {
    let mut states = vec![app(), App::new(settings(), Duration::from_secs(5), now())];
    let mut help = app();
    help.help = true;
    states.push(help);
    for (action, id) in [
        (Action::Rollback, "t-pend-1"),
        (Action::Rollback, "t-commit-1"),
        (Action::ReleaseLocks, "t-pend-1"),
        (Action::ForceRecover, "t-broken"),
    ] {
        let mut a = app();
        open_dialog(&mut a, action, id, true);
        states.push(a);
    }
    let sizes = (0..=230u16)
        .step_by(23)
        .flat_map(|w| (0..=70u16).step_by(7).map(move |h| (w, h)))
        .chain([(80, 24), (79, 24), (80, 23), (81, 25), (1, 1)]);
    for (w, h) in sizes {
        for a in &states {
            let s = screen(a, w.max(1), h.max(1));
            if w >= 80 && h >= 24 {
                assert!(s.contains("estx-tui"), "{w}x{h}:\n{s}");
            }
        }
    }
}

#[test]
fn rollback_dialog_fits_the_minimum_size() {
    let mut a = app();
    open_dialog(&mut a, Action::Rollback, "t-pend-1", true);
    let buf = draw(&a, 80, 24);
    assert!(find(&buf, "[ Confirm (y) ]").is_some(), "{}", text(&buf));
    assert_danger_dialog(&buf, "Roll back t-pend-1?");
    insta::assert_snapshot!("dialog_rollback_80x24", text(&buf));
}
