//! What an 80×24 screen cut (issue 18's leftovers): the group opened in
//! the table's title, the jobs view's lines, ids in the accounts, locks
//! and transaction panes, the by-cause view's "more" hint and its counts.

use crate::drawing::screen;
use crate::fixtures::app;
use estx::dashboard::app::App;
use estx::protocol::read::{Group, GroupKind, TableFilter, TablePage};

/// `a` with the group `label` opened and its page answered: 5,400 matches.
fn with_group(mut a: App, label: &str) -> App {
    a.group = Some(Group {
        kind: GroupKind::Process,
        label: label.into(),
        count: 5_400,
        filter: TableFilter::default(),
    });
    a.listing = a.table_filter();
    let snap = a.snapshot.as_mut().unwrap();
    snap.table = TablePage {
        filter: a.listing.clone(),
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
        .find(|l| l.contains(" · page "))
        .unwrap_or_else(|| panic!("no table title:\n{s}"))
        .to_string()
}

/// With a group open, its name stays whole in the table's title at 80
/// columns (the sort and the hints give way first), marks and all.
#[test]
fn the_group_opened_stays_named_in_the_title_at_80_columns() {
    let mut a = with_group(app(), "payments-worker:31337@app-7");
    a.marks.insert("t-pend-1".into());
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
    a.marks.clear();
    let wide = table_title(&screen(&a, 160, 48));
    assert!(
        wide.contains("page 1/11 · group payments-worker:31337@app-7 (Esc closes)"),
        "{wide}"
    );
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
