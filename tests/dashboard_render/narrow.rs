//! What an 80×24 screen cut (issue 18's leftovers): the group opened in
//! the table's title, the jobs view's lines, ids in the accounts, locks
//! and transaction panes, the by-cause view's "more" hint and its counts.

use crate::drawing::screen;
use crate::fixtures::app;
use estx::dashboard::app::App;
use estx::protocol::read::{Group, GroupKind, TableFilter, TablePage};

/// `a` with the group `label` opened and its page answered: 5,400 matches.
fn with_group(mut a: App, label: &str) -> App {
    a.query.group = Some(Group {
        kind: GroupKind::Process,
        label: label.into(),
        count: 5_400,
        filter: TableFilter::default(),
        cause: None,
    });
    a.query.listing = a.table_filter();
    let snap = a.snapshot.as_mut().unwrap();
    snap.table = TablePage {
        filter: a.query.listing.clone(),
        listed: snap.transactions.len(),
        total: 5_400,
        page_size: 500,
    };
    a.refresh_view();
    a
}

/// The title of the transactions pane (the line it starts on).
fn table_title(s: &str) -> String {
    s.lines()
        .find(|l| l.contains(" of 5,400 "))
        .unwrap_or_else(|| panic!("no table title:\n{s}"))
        .to_string()
}

/// With a group open, its name stays whole in the table's title at 80
/// columns (the sort and the hints give way first), marks and all.
#[test]
fn the_group_opened_stays_named_in_the_title_at_80_columns() {
    let mut a = with_group(app(), "payments-worker:31337@app-7");
    a.selection.marks.insert("t-pend-1".into());
    a.refresh_view();
    let s = screen(&a, 80, 24);
    let title = table_title(&s);
    assert!(title.contains("group payments-worker:31337@app-7"), "{s}");
    assert!(title.contains("of 5,400"), "{s}");
    assert!(title.contains("1 marked"), "{s}");
    // Wider, the pane's name comes back; the sort and "(Esc closes)"
    // with room for them.
    let wide = table_title(&screen(&a, 160, 48));
    assert!(
        wide.contains(
            "┏ transactions 8 of 5,400 · page 1/11 · 1 marked · group payments-worker:31337@app-7 "
        ),
        "{wide}"
    );
    a.selection.marks.clear();
    let wide = table_title(&screen(&a, 160, 48));
    assert!(
        wide.contains("page 1/11 · group payments-worker:31337@app-7 (Esc closes)"),
        "{wide}"
    );
    // Typing a filter over a state and the group: all of them stay said.
    let mut typing = a.clone();
    typing.selection.marks.clear();
    typing.query.state = Some(estx::protocol::TxnState::Pending);
    typing.query.text = "txn-2026112705".into();
    typing
        .overlays
        .open(estx::dashboard::layers::Overlay::Filter);
    let title = table_title(&screen(&typing, 80, 24));
    for needle in [
        "/txn-2026112705█",
        "group payments-",
        "@app-7",
        "state pending",
    ] {
        assert!(title.contains(needle), "{needle}: {title}");
    }
    // A label longer than the title is shortened in its middle, its tail kept.
    let long = with_group(
        a,
        "payments-worker-eu-west-1-very-long-host-name:31337@app-7",
    );
    let title = table_title(&screen(&long, 80, 24));
    assert!(
        title.contains("group payments-worker") && title.contains("@app-7"),
        "{title}"
    );
}

/// Ids as an application at scale writes them: accounts `acct-000042`,
/// transactions `txn-<time>-<hex>`.
const TXN: &str = "txn-20261127041041-0adc74ca";
const TXN2: &str = "txn-20261127051041-879498ba";

/// The rows of `s` that contain `needle`.
fn rows_with<'a>(s: &'a str, needle: &str) -> Vec<&'a str> {
    s.lines().filter(|l| l.contains(needle)).collect()
}

/// The accounts and locks panes at 80 columns show account ids whole
/// (what the operator types into `/` and `--ids-from`); the pending and
/// holder columns give way first.
#[test]
fn account_and_lock_ids_stay_whole_at_80_columns() {
    use crate::fixtures::{account, lock, ts};
    use estx::protocol::TxnState;
    use serde_json::json;
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.accounts
        .insert("acct-000042".into(), account(1_250_000, &[TXN, TXN2]));
    snap.accounts
        .insert("acct-000043".into(), account(990, &[TXN]));
    snap.locks.insert(
        0,
        lock(
            "acct-000042",
            json!({"owner": TXN, "process_id": "payments-worker:31337@app-7",
                   "created_at": ts(7200), "expires_at": ts(7080)}),
            Some(TxnState::Pending),
        ),
    );
    a.refresh_view();
    let s = screen(&a, 80, 24);
    let accounts: Vec<&str> = s.lines().map(|l| l.split("││").next().unwrap()).collect();
    let accounts = accounts.join("\n");
    assert_eq!(rows_with(&accounts, "acct-000042 ").len(), 1, "{s}");
    assert_eq!(rows_with(&accounts, "acct-000043 ").len(), 1, "{s}");
    // The pending column still says how many, and the first id's tail.
    assert!(
        rows_with(&accounts, "acct-000042 ")[0].contains(" 2 "),
        "{s}"
    );
    let lock_row = rows_with(&s, "stale")
        .into_iter()
        .find(|l| l.contains("acct-000042"));
    assert!(lock_row.is_some(), "resource whole:\n{s}");
    assert!(lock_row.unwrap().contains("74ca"), "owner's tail:\n{s}");
    assert_snapshot!("narrow_ids_80x24", s);
}

/// The transaction table at 80 columns keeps its ids whole, a marked one
/// too: the route gives way first (down to its least), then the amount.
#[test]
fn transaction_ids_stay_whole_at_80_columns() {
    use crate::fixtures::txn;
    use serde_json::json;
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.transactions = vec![
        txn(
            TXN,
            Some("terminating"),
            "acct-000042",
            "acct-000043",
            json!(123_456),
            3_599,
        ),
        txn(
            TXN2,
            Some("committed"),
            "acct-000043",
            "acct-000042",
            json!(5),
            600,
        ),
    ];
    snap.table.listed = 2;
    snap.table.total = 2;
    a.selection.marks.insert(TXN.into());
    a.refresh_view();
    let s = screen(&a, 80, 24);
    assert!(s.contains(&format!("✓ {TXN} ")), "{s}");
    assert!(s.contains(&format!(" {TXN2} ")), "{s}");
    assert!(s.contains("123456"), "the amount still fits:\n{s}");
}

/// The jobs view at 80×24: each job wraps between its parts, so its life,
/// run id, size and progress, operator and start stay whole; the list
/// scrolls by whole jobs and the title says what is below.
#[test]
fn the_jobs_view_wraps_each_job_at_80_columns() {
    use crate::fixtures::job;
    use estx::protocol::trail::TrailStep;
    let mut a = app();
    let mut dead = job(
        "20260301T110000.000Z-recover-5e6f7a8b",
        60,
        "ops-bob",
        Some(1140),
    );
    // Its checkpoints recorded the steps of two transactions.
    dead.steps = ["t-1", "t-1", "t-2"]
        .map(|t| TrailStep {
            txn: t.into(),
            label: "repair".into(),
            target: String::new(),
            result: "updated".into(),
            detail: "applied".into(),
            wrote_state: None,
            receipt: None,
        })
        .into();
    let mut jobs = estx::dashboard::layers::jobs::JobsView {
        list: estx::dashboard::load::Load::Loaded(vec![
            job(
                "20260301T114000.000Z-recover-1a2b3c4d",
                20,
                "ops-ann",
                Some(6),
            ),
            dead,
            job("20260301T100000.000Z-recover-9c0d1e2f", 120, "ops-cy", None),
            job(
                "20260301T090000.000Z-recover-3a4b5c6d",
                180,
                "ops-dee",
                None,
            ),
            job(
                "20260301T080000.000Z-recover-7e8f9a0b",
                240,
                "ops-eve",
                None,
            ),
        ]),
        ..Default::default()
    };
    jobs.judge(a.now);
    a.overlays
        .open(estx::dashboard::layers::Overlay::Jobs(jobs));
    let s = screen(&a, 80, 24);
    for needle in [
        "▶ live, beat 6s ago · 20260301T114000.000Z-recover-1a2b3c4d",
        "presumed dead, silent 19m00s · 20260301T110000.000Z-recover-5e6f7a8b",
        "recover of 300 transaction(s) · from the cli · profile prod-eu",
        "recover of 300 transaction(s) · ≥2 ended · from the cli",
        "by ops-ann (cluster user) on bastion · started 11:40:00 (20m00s ago)",
        "by ops-bob (cluster user) on bastion · started 11:00:00 (1h00m ago)",
        "reason: INC-5 outage",
        "jobs: 5 unfinished · 1 live · 1 presumed dead · 3 unknown (+1 more)",
    ] {
        assert!(s.contains(needle), "{needle}:\n{s}");
    }
    assert_snapshot!("jobs_view_80x24", s);
    // The last job selected: the list scrolls to it, whole.
    (a.overlays
        .get_mut::<estx::dashboard::layers::jobs::JobsView>())
    .unwrap()
    .cursor = 4;
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("▶ unknown, no heartbeat · 20260301T080000.000Z-recover-7e8f9a0b"),
        "{s}"
    );
    assert!(s.contains("by ops-eve (cluster user) on bastion"), "{s}");
    assert!(s.contains("(+1 above)"), "{s}");
}

/// The view by cause longer than its pane says how many groups are above
/// and below, and counts thousands as the header does (`6,000`).
#[test]
fn the_view_by_cause_says_what_is_below_and_groups_thousands() {
    use estx::dashboard::layers::{groups::GroupsView, Overlay};
    use estx::dashboard::load::Load;
    use estx::protocol::read::Groups;
    let mut a = app();
    let g = |kind, label: String, count| Group {
        kind,
        label,
        count,
        filter: TableFilter::default(),
        cause: None,
    };
    let mut groups = vec![
        g(GroupKind::StateAge, "pending · 1h–6h".into(), 4_200),
        g(
            GroupKind::Process,
            "payments-worker-eu-west-1-very-long-host-name:31337@app-7".into(),
            5_400,
        ),
    ];
    groups.extend((0..20).map(|i| g(GroupKind::Account, format!("acct-{i:04}"), 90 - i)));
    let view = GroupsView {
        counts: Load::Loaded(Groups {
            stuck: 6_000,
            groups,
            unavailable: vec![],
        }),
        ..Default::default()
    };
    a.overlays.open(Overlay::Groups(view));
    let s = screen(&a, 80, 24);
    let title = s.lines().find(|l| l.contains("stuck by cause")).unwrap();
    assert!(title.contains("stuck by cause: 6,000 stuck (+"), "{s}");
    assert!(s.contains("pending · 1h–6h") && s.contains("4,200 "), "{s}");
    // A process too long for the row keeps its head and its tail.
    assert!(
        s.contains("payments-worker-eu…-name:31337@app-7   5,400 "),
        "{s}"
    );
    // 17 lines: three headings and 14 groups; 8 below.
    assert!(title.contains("(+8 more)"), "{s}");
    // At the last group: 17 lines from the 9th (5 groups and the three
    // headings above), none below.
    a.overlays.get_mut::<GroupsView>().unwrap().cursor = 21;
    let s = screen(&a, 80, 24);
    assert!(s.contains("▶ acct-0019"), "{s}");
    assert!(s.contains("stuck by cause: 6,000 stuck (+5 above)"), "{s}");
}

/// The locks pane names a holder as the lock's shape does, as the CLI and
/// the detail do: a Kestra lock is held by a server instance
/// (`instance …`), a guide document lock by a process; only this tool's
/// own locks are held by a transaction (`txn …`).
#[test]
fn the_locks_pane_names_each_holder_by_its_lock_shape() {
    use crate::fixtures::{lock, ts};
    use serde_json::json;
    let mut a = app();
    let snap = a.snapshot.as_mut().unwrap();
    snap.locks.insert(
        0,
        lock(
            "invoice_inv-77",
            json!({"category": "invoice", "id": "inv-77", "owner": "kestra-worker-2",
                   "createdAt": ts(7200)}),
            None,
        ),
    );
    snap.locks.insert(
        1,
        lock("acct-guide", json!({"process_id": "batch-9"}), None),
    );
    a.refresh_view();
    for (w, h) in [(80, 24), (160, 48)] {
        let s = screen(&a, w, h);
        let kestra = rows_with(&s, "invoice_inv-77");
        assert_eq!(kestra.len(), 1, "{s}");
        assert!(kestra[0].contains("instance kest"), "{w}x{h}:\n{s}");
        assert!(!kestra[0].contains("txn kestra"), "{w}x{h}:\n{s}");
        let guide = rows_with(&s, "acct-guide");
        assert_eq!(guide.len(), 1, "{s}");
        assert!(guide[0].contains("process batch-9"), "{w}x{h}:\n{s}");
    }
}
