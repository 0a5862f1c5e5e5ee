//! Snapshots of the confirmation dialogs (rollback, force recovery, lock
//! release): loading, loaded, refused, warning, read error, and the rollback
//! dialog at the minimum terminal size.

use crate::drawing::{assert_danger_dialog, draw, find, screen, text};
use crate::fixtures::{app, open_dialog, recover, release_locks_of, rollback};
use estx::dashboard::app::{Pending, RunChoice};
use estx::dashboard::load::Load;
use estx::protocol::intervene::{AnyAct, AuditRepair, ReleaseLock};

#[test]
fn rollback_dialog_loading() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", false);
    assert_snapshot!("dialog_rollback_loading", screen(&a, 100, 30));
}

#[test]
fn rollback_dialog_loaded() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", true);
    let s = screen(&a, 100, 30);
    assert!(s.contains("alice: 400 → 500 (+100)"), "{s}");
    assert_snapshot!("dialog_rollback_loaded", s);
}

#[test]
fn rollback_dialog_refused_for_committed() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-commit-1", true);
    let buf = draw(&a, 100, 30);
    assert!(find(&buf, "[ Close ]").is_some());
    assert!(find(&buf, "Confirm").is_none());
    assert_snapshot!("dialog_rollback_refused_committed", text(&buf));
}

#[test]
fn rollback_dialog_of_a_recent_transaction_offers_only_force() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-2", true);
    let buf = draw(&a, 100, 30);
    let s = text(&buf);
    assert!(
        s.contains("y is refused: transaction was modified 10s ago"),
        "{s}"
    );
    let (x, y) = find(&buf, "[ FORCE (!) ]").expect("a force button");
    assert!(
        crate::drawing::is_red(buf[(x, y)].fg),
        "the force button is red"
    );
    assert_snapshot!("dialog_rollback_recent_warning", s);
}

#[test]
fn rollback_dialog_read_error() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", false);
    a.overlays.dialog_mut().unwrap().preview =
        Load::Failed("cluster unreachable: connection refused".into());
    assert_snapshot!("dialog_rollback_error", screen(&a, 100, 30));
}

#[test]
fn recover_dialog() {
    let mut a = app();
    open_dialog(&mut a, recover, "t-pend-1", true);
    assert_snapshot!("dialog_force_recover", screen(&a, 100, 30));
}

#[test]
fn release_locks_dialog() {
    let mut a = app();
    open_dialog(&mut a, release_locks_of, "t-pend-1", true);
    assert_snapshot!("dialog_release_locks", screen(&a, 100, 30));
}

#[test]
fn rollback_dialog_fits_the_minimum_size() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", true);
    let buf = draw(&a, 80, 24);
    assert!(find(&buf, "[ Confirm (y) ]").is_some(), "{}", text(&buf));
    assert_danger_dialog(&buf, "Roll back t-pend-1?");
    assert_snapshot!("dialog_rollback_80x24", text(&buf));
}

#[test]
fn recent_rollback_dialog_at_80x24_shows_the_force_key() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-2", true);
    let buf = draw(&a, 80, 24);
    assert!(find(&buf, "[ FORCE (!) ]").is_some(), "{}", text(&buf));
    assert_snapshot!("dialog_rollback_recent_80x24", text(&buf));
}

#[test]
fn release_one_lock_dialog_names_the_holder() {
    use estx::dashboard::app::Dialog;
    let mut a = app();
    let snap = a.snapshot.as_ref().unwrap();
    let live = snap
        .locks
        .iter()
        .find(|l| l.info.resource == "bob")
        .unwrap()
        .clone();
    a.overlays.open_dialog(Dialog {
        preview: Load::Loaded(estx::protocol::intervene::AnyPlan::ReleaseLock(
            estx::protocol::intervene::LockPlan::on_lock("bob", Some(live)),
        )),
        confirm_focused: false,
        scroll: 0,
        reason: String::new(),
        reason_for: None,
        typed: None,
        lasts: None,
        pending: Pending::One(AnyAct::ReleaseLock(ReleaseLock::new("bob"))),
    });
    let buf = draw(&a, 80, 24);
    let s = text(&buf);
    assert!(s.contains("held by txn t-pend-1 (worker-2:99)"), "{s}");
    let (x, y) = find(&buf, "[ FORCE (!) ]").expect("the force button");
    assert!(
        crate::drawing::is_red(buf[(x, y)].fg),
        "the force button is red"
    );
    let (x, y) = find(&buf, "Release the lock on bob?").unwrap();
    assert!(
        crate::drawing::is_red(buf[(x, y)].fg),
        "a destructive dialog is red"
    );
    assert_snapshot!("dialog_release_lock_80x24", s);
}

#[test]
fn rollback_dialog_asks_for_the_reason() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", true);
    let d = a.overlays.dialog_mut().unwrap();
    d.reason_for = Some(RunChoice::Plain);
    d.reason = "worker died in the outage".into();
    let s = screen(&a, 100, 34);
    assert!(
        s.contains("reason (required, recorded in the audit trail): worker died in the outage▏"),
        "{s}"
    );
    assert!(s.contains("Enter runs · Esc back"), "{s}");
    assert_snapshot!("dialog_rollback_reason", s);
}

/// R on four marked rows (a fifth mark no longer listed): one dialog with
/// how many do what by state, every id it touches or leaves out, the mark
/// it does not include, the balance effect of the ones that run, and the
/// required reason.
#[test]
fn bulk_rollback_dialog_counts_and_the_progress_bar() {
    use estx::dashboard::progress::BulkProgress;
    let mut a = app();
    open_bulk_rollback(&mut a);
    let s = screen(&a, 100, 40);
    for want in [
        "· 5 marked (1 no longer listed) ",
        "4 marked row(s) of the table, re-read just now:",
        " not included: 1 marked, no longer listed:",
        "   t-gone-9",
        " 2 roll back (1 created, 1 pending):",
        "   t-created-2",
        "   t-pend-1",
        " 1 refused: committed:",
        "   t-commit-1",
        " 1 refused: modified within the recovery window:",
        "   t-pend-2",
        "runs unforced as one recorded intervention; force refused ones one by one",
        "reason (required, recorded in the audit trail): outage▏",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
    assert_snapshot!("dialog_bulk_rollback", s);

    a.overlays.take_dialog();
    use estx::protocol::trail::ActOutcome;
    let mut b = BulkProgress::new(
        estx::dashboard::event::OnMarks::Procedure(estx::protocol::Procedure::Rollback),
        40,
        a.now - chrono::Duration::seconds(20),
    );
    for _ in 0..9 {
        b.count(ActOutcome::Completed);
    }
    b.count(ActOutcome::Failed);
    b.pace(a.now);
    a.bulk = Some(b);
    let s = screen(&a, 100, 30);
    assert!(
        s.contains(
            "bulk roll back 10/40 · 1 failed · 30/min · ETA 1m00s · P pauses · S stops (asks) · q asks"
        ),
        "{s}"
    );
    assert_snapshot!("bulk_progress_100x30", s);
    // At 80 columns the keys stay whole.
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("bulk roll back 10/40 · 1 failed · 30/min · ETA 1m00s · P pauses · S stops")
            && !s.contains("S stops (a"),
        "{s}"
    );
    let mut b = BulkProgress::new(
        estx::dashboard::event::OnMarks::Procedure(estx::protocol::Procedure::Rollback),
        40,
        a.now - chrono::Duration::seconds(20),
    );
    for _ in 0..10 {
        b.count(ActOutcome::Completed);
    }
    b.paused = true;
    b.pace(a.now);
    a.bulk = Some(b);
    let buf = crate::drawing::draw(&a, 100, 30);
    let s = crate::drawing::text(&buf);
    assert!(
        s.contains("bulk roll back 10/40 · 0 failed · 30/min · PAUSED · P resumes · S stops"),
        "{s}"
    );
    // The filled quarter of the bar is yellow while paused.
    let (_, y) = crate::drawing::find(&buf, "PAUSED").unwrap();
    assert_eq!(
        buf[(0, y)].fg,
        ratatui::style::Color::Yellow,
        "paused: a yellow bar"
    );
}

/// The R dialog on four marked rows (a fifth no longer listed), the
/// reason `outage` being typed.
fn open_bulk_rollback(a: &mut estx::dashboard::app::App) {
    open_bulk(a, estx::protocol::Procedure::Rollback);
}

/// The `action` dialog on four marked rows (a fifth no longer listed), the
/// reason `outage` being typed.
fn open_bulk(a: &mut estx::dashboard::app::App, procedure: estx::protocol::Procedure) {
    let on = estx::dashboard::event::OnMarks::Procedure(procedure);
    use crate::fixtures::{detail, unforced_refusal};
    use estx::dashboard::app::Dialog;
    use estx::dashboard::layers::dialog::Bulk;
    let ids = ["t-commit-1", "t-created-2", "t-pend-1", "t-pend-2"];
    // The one bulk act's plan: each marked transaction's own plan.
    let items = ids
        .iter()
        .map(|id| {
            let d = detail(a, id);
            let refusal = unforced_refusal(a, &d);
            estx::protocol::intervene::TxnPlan::on_transaction(procedure, d, refusal)
        })
        .collect();
    let plan = crate::fixtures::bulk_of(procedure, items);
    a.selection.marks = ids.iter().map(|s| s.to_string()).collect();
    a.selection.marks.insert("t-gone-9".into());
    let mut bulk = Bulk {
        on,
        ids: ids.iter().map(|s| s.to_string()).collect(),
        filtered: vec![],
        unlisted: vec!["t-gone-9".into()],
        preview: Load::Idle,
        plan: None,
    };
    estx::dashboard::bulk::reread(&mut bulk, Ok(plan));
    a.overlays.open_dialog(Dialog {
        preview: Load::Idle,
        confirm_focused: false,
        scroll: 0,
        reason: "outage".into(),
        reason_for: Some(RunChoice::Plain),
        typed: None,
        lasts: None,
        pending: Pending::Bulk(Box::new(bulk)),
    });
}

/// A bulk dialog longer than the screen (80x24) keeps its reason field in
/// sight under the scrolled list: the operator sees what they type.
#[test]
fn a_long_bulk_dialog_keeps_its_reason_in_sight() {
    let mut a = app();
    open_bulk_rollback(&mut a);
    let d = a.overlays.dialog_mut().unwrap();
    let b = d.bulk_mut().unwrap();
    b.unlisted.extend((10..20).map(|i| format!("t-gone-{i}")));
    let s = screen(&a, 80, 24);
    assert!(s.contains("more) · j/k scroll"), "the list scrolls:\n{s}");
    assert!(
        s.contains("reason (required, recorded in the audit trail): outage▏"),
        "{s}"
    );
    assert!(s.contains("type the reason · Enter runs · Esc back"), "{s}");
    assert_snapshot!("dialog_bulk_rollback_80x24", s);
}

/// F on marked rows: the bulk dialog says in words that the recovery of
/// the half-applied transfer completes a debit already made (not money
/// appearing), and names every lock the run releases.
#[test]
fn bulk_recover_dialog_names_the_debit_it_completes_and_the_locks() {
    let mut a = app();
    open_bulk(&mut a, estx::protocol::Procedure::Recover);
    let s = screen(&a, 100, 40);
    for want in [
        " t-pend-1: completes the debit of 100 already made on alice: credits bob +100",
        "releases 2 lock(s) as the transactions end:",
        " alice, bob",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
    assert_snapshot!("dialog_bulk_recover", s);
}

/// The audit repair's dialog says what money the repair moves, per entry
/// and net, before the operator confirms.
#[test]
fn audit_repair_dialog_names_its_balance_effect() {
    use estx::dashboard::app::Dialog;
    use estx::protocol::audit::{AuditReport, Finding, FindingKind, RepairEffect};
    use estx::protocol::intervene::{AnyPlan, AuditPlan};
    use estx::protocol::transaction::TxnState;
    let mut a = app();
    let report = AuditReport {
        total_balance: 900,
        in_flight_delta: 0,
        findings: vec![Finding {
            kind: FindingKind::DanglingPending,
            id: "alice".into(),
            detail: "carries `t-rb` (rolled-back, amount 90): applied after its rollback".into(),
        }],
        repairs: vec![],
        repair_steps: vec![],
        repair_effect: vec![RepairEffect {
            account: "alice".into(),
            txn: "t-rb".into(),
            state: TxnState::RolledBack,
            delta: 90,
        }],
        consistent_view: true,
        coverage: Default::default(),
    };
    let plan = AnyPlan::AuditRepair(AuditPlan {
        account: Some("alice".into()),
        report: Some(Box::new(report)),
    });
    a.overlays.open_dialog(Dialog {
        preview: Load::Loaded(plan),
        confirm_focused: false,
        scroll: 0,
        reason: String::new(),
        reason_for: None,
        typed: None,
        lasts: None,
        pending: Pending::One(AnyAct::AuditRepair(AuditRepair {
            account: Some("alice".into()),
            expect_total: None,
            allow_partial: false,
        })),
    });
    let s = screen(&a, 100, 30);
    for want in [
        "balance effect of the repair (net +90):",
        " undoes the debit of 90 left on alice by t-rb (rolled-back): credits alice +90",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
}

/// `K`'s dialog (issue 30 item 3's leftover): the ack's duration is a
/// field of its own under the reason (4h to start with; Tab moves to
/// it), and what is not a duration says so in place.
#[test]
fn ack_dialog_has_a_duration_field() {
    use estx::protocol::acks::Acks;
    use estx::protocol::intervene::{AckPlan, Acknowledge, AnyPlan};
    use std::time::Duration;
    let mut a = app();
    let ack = |id: &str| -> AnyAct {
        Acknowledge::ids(vec![id.into()], Duration::from_secs(4 * 3600), None).into()
    };
    open_dialog(&mut a, ack, "t-pend-1", false);
    let d = a.overlays.dialog_mut().unwrap();
    d.preview = Load::Loaded(AnyPlan::Acknowledge(AckPlan {
        lasts: Some(Duration::from_secs(4 * 3600)),
        targets: vec![],
        ids: vec!["t-pend-1".into()],
        left_out: vec![],
        acks: Acks::default(),
    }));
    d.reason_for = Some(RunChoice::Plain);
    d.reason = "finance is on it".into();
    let s = screen(&a, 100, 30);
    assert!(s.contains("finance is on it▏"), "{s}");
    assert!(s.contains("for (how long the ack holds): 4h"), "{s}");
    assert!(s.contains("Tab the duration"), "{s}");
    assert_snapshot!("dialog_ack_duration", s);

    let d = a.overlays.dialog_mut().unwrap();
    let lasts = d.lasts.as_mut().unwrap();
    lasts.focused = true;
    lasts.text = "soon".into();
    let s = screen(&a, 100, 30);
    assert!(s.contains("for (how long the ack holds): soon▏"), "{s}");
    assert!(s.contains("invalid duration `soon`"), "{s}");
}
