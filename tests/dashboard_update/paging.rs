//! The table's filter runs on the cluster: a changed filter asks the
//! poller for its first page, `]`/`[` turn pages once the page asked for
//! came, the rows of a page the operator asked for select its first row,
//! and a poll alone never moves the selection. Text being typed is sent
//! to the cluster once kept (Enter).

use super::*;
use estx::protocol::read::{TableFilter, TablePage};

/// The listing each event asked the poller for.
fn listings(cmds: Vec<IoRequest>) -> Vec<TableFilter> {
    cmds.into_iter()
        .filter_map(|c| match c {
            IoRequest::SetListing(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// A poll answering `filter` with `txns` of `total` matches.
fn page(filter: &TableFilter, txns: Vec<Transaction>, total: u64) -> Event {
    let mut snap = snapshot(txns);
    snap.table = TablePage {
        filter: filter.clone(),
        listed: snap.transactions.len(),
        total,
        page_size: 2,
    };
    Event::Polled(Ok(Box::new(snap)))
}

#[test]
fn a_typed_filter_asks_the_cluster_for_its_first_page_once_kept() {
    let mut app = app(false);
    update(&mut app, key('/'));
    // Each prefix narrows the loaded rows only: no poll per key.
    assert!(listings(update(&mut app, key('A'))).is_empty());
    assert!(
        listings(update(&mut app, key('x'))).is_empty(),
        "x is typed"
    );
    let asked = listings(update(&mut app, code(KeyCode::Enter)));
    assert_eq!(
        asked,
        vec![TableFilter {
            text: "Ax".into(),
            ..Default::default()
        }]
    );
    let asked = listings(update(&mut app, key('x')));
    assert_eq!(asked.len(), 1);
    assert!(asked[0].stuck_only && asked[0].text == "Ax" && asked[0].page == 0);
}

#[test]
fn pages_turn_once_the_page_asked_for_came_and_a_new_filter_starts_at_the_first() {
    let mut app = app(false);
    let unfiltered = TableFilter::default();
    update(
        &mut app,
        page(
            &unfiltered,
            vec![txn("t-1", "pending", 90), txn("t-2", "pending", 80)],
            5,
        ),
    );
    assert_eq!(app.view.table.page.as_ref().map(TablePage::pages), Some(3));
    let asked = listings(update(&mut app, key(']')));
    assert_eq!(asked.iter().map(|t| t.page).collect::<Vec<_>>(), vec![1]);
    // Page 2 not there yet: `]` waits for it.
    assert!(listings(update(&mut app, key(']'))).is_empty());
    assert!(app.view.table.page.is_none(), "the title says loading");
    // The selection stays on the old page's row until its rows come.
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    let second = app.query.listing.clone();
    update(
        &mut app,
        page(
            &second,
            vec![txn("t-3", "pending", 70), txn("t-4", "pending", 60)],
            5,
        ),
    );
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("t-3"),
        "the page's first row"
    );
    // A poll of the same page does not move the selection.
    update(&mut app, key('j'));
    update(
        &mut app,
        page(
            &second,
            vec![txn("t-3", "pending", 70), txn("t-4", "pending", 60)],
            5,
        ),
    );
    assert_eq!(app.selection.txn.as_deref(), Some("t-4"));
    // A new filter starts at its first page.
    let asked = listings(update(&mut app, key('s')));
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].page, asked[0].state.clone()),
        (0, Some(TxnState::Created))
    );
    // `[` on the first page stays there.
    assert!(listings(update(&mut app, key('['))).is_empty());
}

#[test]
fn past_the_last_page_the_log_says_so() {
    let mut app = app(false);
    update(
        &mut app,
        page(&TableFilter::default(), vec![txn("t-1", "pending", 90)], 1),
    );
    assert!(listings(update(&mut app, key(']'))).is_empty());
    assert_eq!(app.log.back().unwrap().text, "last page");
}
