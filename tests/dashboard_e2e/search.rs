//! Issue 18's "a filter by account at 6,000 stuck finds them all": the
//! filter runs on the cluster over every document, so the table's total
//! says 6,000 (not the 500 a poll lists) and `]` pages through them to the
//! last page; `e` exports every match, not the page.

use crate::screen::filter_to;
use crate::world::{quit, World};
use std::time::Instant;

#[test]
fn a_filter_by_account_at_6000_stuck_finds_them_all_and_pages_to_the_last() {
    let started = Instant::now();
    let w = World::new();
    w.seed_stuck("hot", 6_000, "acct-hot");
    w.seed_stuck("cold", 30, "acct-cold");
    w.refresh();
    let state_dir = tempfile::tempdir().unwrap();
    let state = state_dir.path().display().to_string();
    let tui = w.dashboard_with_env("search", &[], &[("XDG_STATE_HOME", &state)]);
    tui.wait_for_all(&["transactions 500 of 6,030 · page 1/13"]);

    filter_to(&tui, "ACCT-HOT");
    let first = tui.wait_for_all(&["transactions 500 of 6,000 · page 1/12"]);
    assert!(!first.contains("acct-cold"), "{first}");
    for page in 2..=12 {
        tui.keys(&["]"]);
        tui.wait_for_all(&[&format!("transactions 500 of 6,000 · page {page}/12")]);
    }
    tui.keys(&["]"]);
    tui.wait_for_all(&["last page"]);
    tui.keys(&["e"]);
    tui.wait_for_all(&["exported 6000 row(s) to"]);
    let dir = state_dir.path().join("estx-tui");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let csv = std::fs::read_to_string(file).unwrap();
    assert_eq!(csv.lines().count(), 6_001, "a header and every match");
    assert!(csv.contains(",hot-5999,") && !csv.contains("acct-cold"));
    // Back one page, then `#` finds a transaction of another page by id.
    tui.keys(&["["]);
    tui.wait_for_all(&["· page 11/12"]);
    tui.keys(&["#"]);
    tui.type_text("cold-7");
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["detail: cold-7", "acct-cold"]);
    quit(
        &tui,
        "a_filter_by_account_at_6000_stuck_finds_them_all_and_pages_to_the_last",
        started,
    );
}
