//! What issue 9's walkthrough found cut or misleading on screen: lock
//! holders shortened differently per row, audit findings and log lines cut
//! at the edge, the sort arrow, and the capped listing of a terminal state.

use crate::drawing::screen;
use crate::fixtures::{app, lock};
use estx::dashboard::app::{LogLevel, Pane};
use estx::protocol::read::TablePage;
use estx::protocol::TxnState;
use serde_json::json;

/// Two locks of the same long-id owner, with process ids of different
/// lengths: the owner id is shortened the same way on both rows.
#[test]
fn lock_holders_are_shortened_alike_on_every_row() {
    let mut a = app();
    let owner = "txn-20261121004318-0123456789-8c484f44";
    let snap = a.snapshot.as_mut().unwrap();
    snap.locks = vec![
        lock(
            "acct-1",
            json!({"owner": owner, "process_id": "w-1:1", "created_at": crate::fixtures::ts(60)}),
            Some(TxnState::Pending),
        ),
        lock(
            "acct-2",
            json!({"owner": owner, "process_id": "worker-long-host-name:424242",
                   "created_at": crate::fixtures::ts(60)}),
            Some(TxnState::Pending),
        ),
    ];
    a.refresh_view();
    for (w, h) in [(100, 30), (160, 48), (80, 24)] {
        let s = screen(&a, w, h);
        let cut: Vec<&str> = s
            .lines()
            .filter_map(|l| {
                let at = l.find("txn txn-")?;
                l[at + 4..].split_whitespace().next()
            })
            .collect();
        assert_eq!(cut.len(), 2, "{w}x{h}:\n{s}");
        assert_eq!(cut[0], cut[1], "{w}x{h}: cut differently:\n{s}");
    }
}

/// A finding longer than the audit pane wraps: its id and amounts stay.
#[test]
fn audit_findings_wrap_whole() {
    use estx::protocol::audit::{AuditReport, Finding};
    let mut a = app();
    let detail = "carries `t-20261121-very-long-transaction-id-8c484f44` (rolled-back) \
                  with a delta of -12345: a late apply; the repair undoes it";
    a.audit.report = estx::dashboard::load::Load::Loaded(Box::new(AuditReport {
        total_balance: 1,
        in_flight_delta: 0,
        consistent_view: true,
        repair_effect: Vec::new(),
        coverage: Default::default(),
        findings: vec![Finding {
            kind: estx::protocol::audit::FindingKind::DanglingPending,
            id: "carol".into(),
            detail: detail.into(),
        }],
        repairs: vec![],
        repair_steps: vec![],
    }));
    a.overlays
        .open(estx::dashboard::layers::Overlay::Audit(Default::default()));
    let s = screen(&a, 80, 24);
    let flat: String = s
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c == ' ' || c == '┃'))
        .collect::<Vec<_>>()
        .join(" ");
    for needle in [
        "t-20261121-very-long-transaction-id-8c484f44",
        "-12345:",
        "undoes it",
    ] {
        assert!(flat.contains(needle), "{needle} cut:\n{s}");
    }
}

/// A log line longer than the pane wraps instead of being cut.
#[test]
fn long_log_lines_wrap() {
    let mut a = app();
    a.push_log(
        LogLevel::Error,
        "Roll back t-20261121-very-long-id: refused: transaction was modified 12s ago, \
         within the 120s recovery window (the end of this line is what matters)",
    );
    a.focus = Pane::Log;
    a.refresh_view();
    let s = screen(&a, 100, 30);
    assert!(s.contains("(the end of this line is what matters)"), "{s}");
}

/// The default order says what it is in words (oldest first), and `O`
/// says the reverse.
#[test]
fn the_age_sort_says_which_end_comes_first() {
    let mut a = app();
    assert!(screen(&a, 100, 30).contains("sort oldest first"));
    a.query.sort_desc = true;
    a.refresh_view();
    assert!(screen(&a, 100, 30).contains("sort newest first"));
}

/// On a terminal state the table lists that state's newest rows, and says
/// "newest N of M" when the poll capped them.
#[test]
fn a_terminal_state_pages_newest_first_with_its_total() {
    let mut a = app();
    a.query.state = Some(TxnState::RolledBack);
    a.query.listing = a.table_filter();
    let snap = a.snapshot.as_mut().unwrap();
    snap.transactions.push(crate::fixtures::txn(
        "t-undone",
        Some("rolled-back"),
        "alice",
        "bob",
        json!(5),
        40,
    ));
    snap.table = TablePage {
        filter: a.query.listing.clone(),
        listed: 1,
        total: 12,
        page_size: 500,
    };
    a.refresh_view();
    let s = screen(&a, 100, 30);
    assert!(s.contains("1 of 12 · page 1/1"), "{s}");
    assert!(s.contains("state rolled-back (newest first)"), "{s}");
    assert!(s.contains("t-undone"), "{s}");
}

/// Right after `s` onto a terminal state its rows are not there yet (the
/// poll it asked for is running): the table says it is loading them, in
/// its title and its body, rather than showing an empty state.
#[test]
fn a_terminal_listing_not_yet_polled_says_loading() {
    let mut a = app();
    a.query.state = Some(TxnState::Finished);
    a.query.listing = a.table_filter();
    a.refresh_view();
    assert_eq!(a.state_filter(), Some(&TxnState::Finished));
    let s = screen(&a, 100, 30);
    assert!(s.contains("· loading… "), "{s}");
    assert!(
        s.contains("loading the filter's matches… (polling now)"),
        "{s}"
    );
    // Once the listing of that state arrives, the title says the state.
    a.snapshot.as_mut().unwrap().table = TablePage {
        filter: a.query.listing.clone(),
        listed: 0,
        total: 0,
        page_size: 500,
    };
    a.refresh_view();
    let s = screen(&a, 100, 30);
    assert!(s.contains("· state finished "), "{s}");
    assert!(s.contains("no finished transaction"), "{s}");
    assert!(!s.contains("loading"), "{s}");
}

/// A long pending transaction id in the accounts pane is shortened in the
/// middle (its tail stays), never cut at the pane's edge.
#[test]
fn pending_ids_in_the_accounts_pane_keep_their_tail() {
    let mut a = app();
    let long = "txn-20261123124258-263319b2";
    let snap = a.snapshot.as_mut().unwrap();
    snap.accounts
        .insert("alice".into(), crate::fixtures::account(400, &[long]));
    a.refresh_view();
    for (w, h) in [(80, 24), (100, 30)] {
        let s = screen(&a, w, h);
        let row = s
            .lines()
            .find(|l| l.contains("alice") && l.contains("1 txn-"))
            .unwrap_or_else(|| panic!("{w}x{h}: no alice row:\n{s}"));
        assert!(row.contains('…') && row.contains("19b2"), "{w}x{h}: {row}");
    }
}

/// A filter run by the cluster over every document: the title says the
/// rows shown of how many match in all, and which page of how many.
#[test]
fn the_paged_title_says_the_total_and_the_page() {
    let mut a = app();
    a.query.text = "alice".into();
    a.query.page = 1;
    a.query.listing = a.table_filter();
    let snap = a.snapshot.as_mut().unwrap();
    snap.table = TablePage {
        filter: a.query.listing.clone(),
        listed: snap.transactions.len(),
        total: 5_912,
        page_size: 500,
    };
    a.refresh_view();
    let s = screen(&a, 100, 30);
    assert!(s.contains("of 5,912 · page 2/12"), "{s}");
    assert_snapshot!("paged_title_100x30", s);
}

/// Judged groups say their cause and safe act, the selected one its
/// evidence and the profile's runbook for its cause.
#[test]
fn the_view_by_cause_says_each_groups_cause_and_runbook() {
    use estx::dashboard::layers::{groups::GroupsView, Overlay};
    use estx::dashboard::load::Load;
    use estx::protocol::read::verdict::{Cause, CauseKind, Runbooks, UnknownCause};
    use estx::protocol::read::{Group, GroupKind, Groups, TableFilter};
    let mut a = app();
    a.settings.runbooks = Runbooks(
        [(
            CauseKind::HotAccount,
            "https://runbooks.example/hot-account".to_string(),
        )]
        .into(),
    );
    let g = |kind, label: &str, count, cause| Group {
        kind,
        label: label.into(),
        count,
        filter: TableFilter::default(),
        cause: Some(cause),
    };
    let live = Cause::HolderLive {
        lock: "acct-7".into(),
        holder: "process worker-2".into(),
        own: true,
    };
    let hot = Cause::HotAccount {
        account: "acct-hot".into(),
        stuck: 3_000,
    };
    let view = GroupsView {
        cursor: 2,
        counts: Load::Loaded(Groups {
            stuck: 6_000,
            groups: vec![
                g(
                    GroupKind::StateAge,
                    "pending · 1h–6h",
                    4_200,
                    Cause::Unknown(UnknownCause::NoEvidence),
                ),
                g(GroupKind::Process, "worker-2", 5_400, live),
                g(GroupKind::Account, "acct-hot", 3_000, hot),
            ],
            unavailable: vec![],
        }),
    };
    a.overlays.open(Overlay::Groups(view));
    a.refresh_view();
    let s = screen(&a, 100, 30);
    assert!(s.contains("contention · wait"), "{s}");
    assert!(s.contains("hot account · investigate"), "{s}");
    assert!(
        s.contains("3000 stuck transactions on account acct-hot"),
        "{s}"
    );
    assert!(
        s.contains("runbook: https://runbooks.example/hot-account"),
        "{s}"
    );
    assert_snapshot!("by_cause_judged_100x30", s);
}

/// The stuck transactions by cause (`c`): each grouping under its heading
/// with counts and bars, the selected group highlighted, and a grouping
/// the mapping cannot aggregate named, not silently missing.
#[test]
fn the_view_by_cause() {
    use estx::dashboard::layers::{groups::GroupsView, Overlay};
    use estx::dashboard::load::Load;
    use estx::protocol::read::{Group, GroupKind, Groups, TableFilter};
    let mut a = app();
    let g = |kind, label: &str, count| Group {
        kind,
        label: label.into(),
        count,
        filter: TableFilter::default(),
        cause: None,
    };
    let mut view = GroupsView {
        cursor: 3,
        ..Default::default()
    };
    view.counts = Load::Loaded(Groups {
        stuck: 6_000,
        groups: vec![
            g(GroupKind::StateAge, "pending · 1h–6h", 4_200),
            g(GroupKind::StateAge, "committed · 1h–6h", 1_790),
            g(GroupKind::StateAge, "created · under 1h", 10),
            g(GroupKind::Process, "worker-7", 5_400),
            g(GroupKind::Account, "acct-hot", 3_000),
            g(GroupKind::Account, "acct-0042", 12),
            g(GroupKind::Band, "11-21 10:40–10:50", 5_990),
            g(GroupKind::Band, "11-21 11:20–11:30", 10),
        ],
        unavailable: vec![
            "lock holders: `process_id` has no exact (keyword) field to aggregate".into(),
        ],
    });
    a.overlays.open(Overlay::Groups(view));
    a.refresh_view();
    let s = screen(&a, 100, 30);
    assert!(s.contains("stuck by cause: 6,000 stuck "), "{s}");
    assert!(s.contains("▶ worker-7"), "{s}");
    assert!(s.contains("not grouped: lock holders"), "{s}");
    assert_snapshot!("by_cause_100x30", s);
    // Its key hint names the keys as the config rebinds them.
    let hint = "j/k select · Enter open its rows · then * marks them for R/F/L · r count again · Esc close";
    assert!(s.contains(hint), "{s}");
    // At 80 columns it keeps what matters whole, never a cut word.
    let narrow = screen(&a, 80, 24);
    let hint = "│ Enter open its rows · then * marks them for R/F/L · Esc close ";
    assert!(narrow.contains(hint), "{narrow}");
    assert!(
        narrow.contains("field to  │"),
        "wrapped between words:\n{narrow}"
    );
    assert!(
        narrow.contains("│ aggregate "),
        "wrapped between words:\n{narrow}"
    );
    assert_snapshot!("by_cause_80x24", narrow);
    use estx::dashboard::keymap::{KeyOverride, Keymap};
    let rebind = |action: &str, key: &str| KeyOverride {
        action: action.into(),
        keys: vec![key.into()],
        line: 1,
    };
    a.keys = Keymap::with_overrides(
        &[
            rebind("mark_all", "M"),
            rebind("rollback", "Z"),
            rebind("refresh", "F5"),
        ],
        &[],
    )
    .unwrap();
    let s = screen(&a, 100, 30);
    let hint = "j/k select · Enter open its rows · then M marks them for Z/F/L · F5 count again · Esc close";
    assert!(s.contains(hint), "{s}");
}

/// At scale the header says what the page shows of what is in flight:
/// "showing 6 of 5,912", not a bare "showing 6" read as the count of
/// something else; its counts group thousands alike (at 80 columns too).
#[test]
fn the_header_says_what_the_page_shows_of_the_total() {
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.in_flight_total = 5_912;
    snap.read.attention = Some(estx::protocol::read::poll::AttentionCounts {
        stuck: Some(5_912),
        needs_investigation: Some(5_675),
        odd: 2,
    });
    a.refresh_view();
    let s = screen(&a, 160, 48);
    assert!(
        s.contains(" in flight: showing 6 of 5,912 · !! investigate 5,675 · ! stuck 5,912 "),
        "{s}"
    );
    // Narrow: the same counts in the table's marks, none left out.
    let s = screen(&a, 80, 24);
    assert!(
        s.contains(" 6/5,912 in flight · !! 5,675 · ! 5,912 · ? 2 · locks 4 (1 stale) · audit"),
        "{s}"
    );
}
