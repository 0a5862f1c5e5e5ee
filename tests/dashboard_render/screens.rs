//! Snapshots of the main screen with live data: the standard sizes, filters,
//! each pane focused, the detail of awkward transactions, the help overlay and
//! read-only mode.

use crate::drawing::screen;
use crate::fixtures::{app, select};
use estx::dashboard::app::Pane;

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
    a.filter = "erin".into();
    a.editing_filter = true;
    a.state_filter = 2; // pending
    a.select_index(0);
    let s = screen(&a, 100, 30);
    assert!(s.contains("/erin█"), "{s}");
    assert_snapshot!("filtered_state_pending", s);
}

#[test]
fn filter_matching_nothing() {
    let mut a = app();
    a.filter = "zzz".into();
    a.sort_desc = true;
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
            a.scroll[0] = 2;
        }
        if pane == Pane::Log {
            a.scroll[2] = 1;
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
    assert!(s.contains("src alice: 400 · carries it"), "{s}");
    assert!(s.contains("dst bob: 500 · not applied"), "{s}");
    assert_snapshot!("detail_half_applied", s);
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
    a.help = true;
    assert_snapshot!("help_100x30", screen(&a, 100, 30));
    assert_snapshot!("help_80x24", screen(&a, 80, 24));
}

#[test]
fn read_only_mode() {
    let mut a = app();
    a.settings.read_only = true;
    let s = screen(&a, 100, 30);
    assert!(s.contains("READ-ONLY"), "{s}");
    assert!(s.contains("read-only: actions disabled"), "{s}");
    assert!(s.contains("R F L read-only"), "{s}");
    assert_snapshot!("read_only", s);
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
