//! Snapshots of the main screen with live data: the standard sizes, filters,
//! each pane focused, the detail of awkward transactions, the help overlay and
//! read-only mode.

use crate::drawing::screen;
use crate::fixtures::{app, detail, select};
use estx::dashboard::app::Pane;
use estx::protocol::TxnState;

#[test]
fn main_screen() {
    assert_snapshot!("main_100x30", screen(&app(), 100, 30));
}

#[test]
fn main_screen_minimum_size() {
    assert_snapshot!("main_80x24", screen(&app(), 80, 24));
}

#[test]
fn main_screen_wide() {
    // From 200 columns the accounts and locks move under the detail.
    assert_snapshot!("main_200x45", screen(&app(), 200, 45));
}

#[test]
fn filtered_with_state_filter() {
    let mut a = app();
    a.query.text = "erin".into();
    a.overlays.open(estx::dashboard::layers::Overlay::Filter);
    a.query.state = Some(estx::protocol::TxnState::Pending);
    a.refresh_view();
    a.select_index(0);
    let s = screen(&a, 100, 30);
    assert!(s.contains("/erin█"), "{s}");
    assert_snapshot!("filtered_state_pending", s);
}

#[test]
fn filter_matching_nothing() {
    let mut a = app();
    a.query.text = "zzz".into();
    a.query.sort_desc = true;
    assert_snapshot!("filtered_nothing", screen(&a, 100, 30));
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
            a.selection.account = Some(a.view.accounts.ids[2].clone());
        }
        if pane == Pane::Log {
            a.selection.log_top = Some(1);
        }
        assert_snapshot!(
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
    // Pending: the source applied it (carries it), the destination not yet.
    assert!(
        s.contains("src alice: 400 · applied (carries it, not committed yet)"),
        "{s}"
    );
    assert!(s.contains("dst bob: 500 · not applied yet"), "{s}");
    assert_snapshot!("detail_half_applied", s);
}

/// The detail says why a stuck transaction is stuck, the act that is
/// safe, and the profile's runbook for the cause: its lock's lease ran out
/// (holder dead: recover); once a live holder is on one of its locks,
/// contention: wait.
#[test]
fn detail_says_the_cause_its_safe_act_and_runbook() {
    use estx::protocol::locks::Staleness;
    use estx::protocol::read::verdict::{CauseKind, Runbooks};
    let mut a = app();
    a.settings.runbooks = Runbooks(
        [(
            CauseKind::HolderDead,
            "https://runbooks.example/holder-dead".to_string(),
        )]
        .into(),
    );
    a.focus = Pane::Detail;
    select(&mut a, "t-pend-1");
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("cause: holder dead · safe act: recover · its lock on alice: lease expired"),
        "{s}"
    );
    assert!(
        s.contains("runbook: https://runbooks.example/holder-dead"),
        "{s}"
    );
    assert_snapshot!("detail_cause_runbook", s);
    let snap = a.snapshot.as_mut().expect("snapshot");
    for l in snap.locks.iter_mut().filter(|l| l.info.resource == "bob") {
        l.holder = Staleness::Live;
    }
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("cause: contention · safe act: wait · its lock on bob is held by"),
        "{s}"
    );
    assert!(!s.contains("runbook:"), "{s}");
}

#[test]
fn detail_of_malformed_and_unknown() {
    let mut a = app();
    select(&mut a, "t-broken");
    assert_snapshot!("detail_malformed", screen(&a, 100, 30));
    select(&mut a, "t-weird");
    assert_snapshot!("detail_unknown_state", screen(&a, 100, 30));
}

#[test]
fn help_overlay() {
    let mut a = app();
    a.overlays
        .open(estx::dashboard::layers::Overlay::Help(Default::default()));
    assert_snapshot!("help_100x30", screen(&a, 100, 30));
    let narrow = screen(&a, 80, 24);
    // One column where two would cut the descriptions.
    assert!(narrow.contains("back / clear filter"), "{narrow}");
    assert_snapshot!("help_80x24", narrow);
    a.terminal.size = (80, 24);
    let scroll = estx::dashboard::layers::help::draw::rows(&a.draw_cx()).saturating_sub(
        estx::dashboard::layers::help::draw::visible_rows(a.screen().height),
    );
    a.overlays.open(estx::dashboard::layers::Overlay::Help(
        estx::dashboard::layers::help::Help { scroll },
    ));
    let end = screen(&a, 80, 24);
    assert!(
        end.contains("mark row (R F L act on marks)") || end.contains("focused pane"),
        "{end}"
    );
    // Every mark a row can carry is in the legend (issue 30: `@`), and
    // the cause column's words.
    for mark in [
        "acknowledged (ack)",
        "held by another operator's live job",
        "cause: dead holder contention",
        "hot acct refused app recovering unkn.",
    ] {
        assert!(end.contains(mark), "{mark:?} not in:\n{end}");
    }
}

#[test]
fn read_only_mode() {
    let mut a = app();
    a.settings.read_only = true;
    a.focus = Pane::Detail;
    let s = screen(&a, 100, 30);
    assert!(s.contains("READ-ONLY"), "{s}");
    assert!(s.contains("read-only: actions disabled"), "{s}");
    assert!(s.contains("R F L V K read-only"), "{s}");
    assert_snapshot!("read_only", s);
}

#[test]
fn main_screen_160x48() {
    assert_snapshot!("main_160x48", screen(&app(), 160, 48));
}

#[test]
fn detail_at_80x24_replaces_the_table_and_scrolls() {
    let mut a = app();
    a.focus = Pane::Detail;
    let top = screen(&a, 80, 24);
    assert!(top.contains("detail: t-pend-1"), "{top}");
    assert!(top.contains("more)"), "a +N more hint: {top}");
    assert_snapshot!("detail_80x24", top);
    a.selection.detail_scroll = 3;
    assert_snapshot!("detail_80x24_scrolled", screen(&a, 80, 24));
}

#[test]
fn a_selected_transaction_that_left_the_list_says_what_became_of_it() {
    let mut a = app();
    let mut d = detail(&a, "t-pend-2");
    d.txn.state = Some(TxnState::Finished);
    d.txn.id = "t-done".into();
    a.selection.txn = Some("t-done".into());
    a.reads.looked_up = Some(("t-done".into(), Ok(Some(Box::new(d)))));
    let s = screen(&a, 160, 48);
    assert!(s.contains("now finished (read by id"), "{s}");
    assert!(!s.contains('▶'), "no row is selected: {s}");
    assert_snapshot!("detail_left_the_list_160x48", s);
}

#[test]
fn account_drill_down_at_80x24() {
    let mut a = app();
    a.selection.drill = Some("erin".into());
    a.query.text = "erin".into();
    a.focus = Pane::Detail;
    let s = screen(&a, 80, 24);
    assert!(s.contains("account: erin"), "{s}");
    assert_snapshot!("account_drill_80x24", s);
}

#[test]
fn audit_pane_lists_findings_and_the_header_counts_them() {
    use estx::protocol::audit::{AuditReport, Finding};
    let mut a = app();
    let f = |kind: &str, id: &str, detail: &str| Finding {
        kind: kind.parse().unwrap(),
        id: id.into(),
        detail: detail.into(),
    };
    a.audit.report = estx::dashboard::load::Load::Loaded(Box::new(AuditReport {
        total_balance: 8_150,
        in_flight_delta: -100,
        consistent_view: true,
        repair_effect: Vec::new(),
        coverage: Default::default(),
        findings: vec![
            f(
                "dangling_pending",
                "carol",
                "carries `t-gone`, which is rolled-back: a late apply; the repair undoes it",
            ),
            f(
                "missing_account",
                "t-broken",
                "names account `heidi`, which does not exist",
            ),
            f(
                "stale_lock",
                "alice",
                "held by txn t-pend-1 (worker-7:4242): lease expired",
            ),
        ],
        repairs: vec![],
        repair_steps: vec![],
    }));
    a.audit.asked_at = Some(crate::fixtures::now());
    a.overlays.open(estx::dashboard::layers::Overlay::Audit(
        estx::dashboard::layers::audit::Audit { cursor: 2 },
    ));
    let s = screen(&a, 80, 24);
    assert!(s.contains("audit: 3 finding(s)"), "{s}");
    assert!(s.contains("Enter: release it"), "{s}");
    assert_snapshot!("audit_80x24", s);
    a.overlays
        .close(estx::dashboard::layers::OverlayKind::Audit);
    let s = screen(&a, 160, 48);
    assert!(s.contains("audit 3 (A)"), "{s}");
}

#[test]
fn the_header_names_the_profile() {
    let mut a = app();
    a.settings.profile = Some("prod-eu".into());
    a.settings.read_only = true;
    let s = screen(&a, 100, 30);
    let header = s.lines().next().unwrap_or_default().to_string();
    assert!(header.contains("[prod-eu]"), "{s}");
    assert!(header.contains("READ-ONLY"), "{s}");
}

#[test]
fn detail_lists_the_recorded_interventions_and_marks_the_unfinished() {
    use estx::protocol::trail::{
        ActOutcome, ActionKind, Interface, Operator, Record, RecordStatus,
    };
    let mut a = app();
    select(&mut a, "t-pend-1");
    a.focus = Pane::Detail;
    let record = |minutes: i64, action, status, outcome, reason: Option<&str>| {
        let op = Operator::os("ops-ann", "bastion");
        let started = crate::fixtures::now() - chrono::Duration::minutes(minutes);
        Record {
            transactions: vec!["t-pend-1".into()],
            reason: reason.map(str::to_string),
            forced: action == ActionKind::Rollback,
            status,
            outcome,
            tool_version: "0".into(),
            ..Record::new(
                format!("r{minutes}"),
                action,
                Interface::Dashboard,
                op,
                started,
            )
        }
    };
    a.reads.history = estx::dashboard::load::Load::Loaded((
        "t-pend-1".into(),
        Ok(vec![
            record(
                50,
                ActionKind::Recover,
                RecordStatus::Finished,
                Some(ActOutcome::Refused),
                None,
            ),
            record(
                20,
                ActionKind::Rollback,
                RecordStatus::Running,
                None,
                Some("worker died"),
            ),
        ]),
    ));
    let s = screen(&a, 200, 45);
    assert!(s.contains("interventions (2):"), "{s}");
    assert!(
        s.contains("rollback FORCED by ops-ann (dashboard) — UNFINISHED"),
        "{s}"
    );
    assert!(s.contains("· \"worker died\""), "{s}");
    assert!(
        s.contains("recover by ops-ann (dashboard) — refused"),
        "{s}"
    );
    assert_snapshot!("detail_interventions_200x45", s);
}

/// Every key's description shows whole in the help, on a screen tall
/// enough for all of it, whatever its width: two columns only where both
/// fit whole.
#[test]
fn help_shows_every_description_whole() {
    use estx::dashboard::keymap::{DIALOG, MAIN};
    let mut a = app();
    a.overlays
        .open(estx::dashboard::layers::Overlay::Help(Default::default()));
    let descriptions: Vec<&str> = MAIN
        .iter()
        .map(|b| b.help)
        .chain(DIALOG.iter().map(|b| b.help))
        .collect();
    for width in [80, 100, 120, 160] {
        a.terminal.size = (width, 80);
        let text = screen(&a, width, 80);
        for d in &descriptions {
            assert!(text.contains(d), "{width} columns cut {d:?}:\n{text}");
        }
    }
}

/// Issue 30 item 3: an acknowledged transaction's row carries `~`, its
/// ack is a line of the detail, and the header counts the acks.
#[test]
fn an_acked_row_is_marked_and_the_header_counts_it() {
    use crate::fixtures::{ago, now};
    use estx::protocol::acks::{Ack, Acks};
    let mut a = app();
    let ack = Ack {
        txn: "t-pend-1".into(),
        by: "ana".into(),
        reason: "finance is on it".into(),
        ticket: Some("https://t/9".into()),
        since: ago(600),
        until: ago(-3600),
    };
    a.snapshot.as_mut().unwrap().acks = Acks::live([ack], now());
    a.refresh_view();
    select(&mut a, "t-pend-1");
    let s = screen(&a, 160, 48);
    assert!(s.contains("~ acked 1"), "{s}");
    assert!(s.contains("~ t-pend-1"), "{s}");
    assert!(s.contains("~ acknowledged by ana until"), "{s}");
    assert_snapshot!("acked_row_160x48", s);
}
