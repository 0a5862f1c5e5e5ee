//! Cell colours that carry meaning: destructive dialogs are red with Cancel
//! focused, a focused Confirm is filled red, force recovery is yellow, stuck
//! transactions are coloured in the list, and an actionable cause is green.

use crate::drawing::{assert_danger_dialog, draw, find, is_red};
use crate::fixtures::{app, open_dialog, recover, release_locks_of, rollback};
use ratatui::style::{Color, Modifier};

#[test]
fn rollback_dialog_is_red_and_cancel_is_focused() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", true);
    assert_danger_dialog(&draw(&a, 100, 30), "Roll back t-pend-1?");
}

#[test]
fn release_dialog_is_red_and_cancel_is_focused() {
    let mut a = app();
    // Only its stale lock, so `y` may release it (a live one needs force).
    let snap = a.snapshot.as_mut().unwrap();
    snap.locks.retain(|l| l.info.resource != "bob");
    open_dialog(&mut a, release_locks_of, "t-pend-1", true);
    assert_danger_dialog(&draw(&a, 100, 30), "Release the locks of t-pend-1?");
}

#[test]
fn focused_confirm_is_filled_red() {
    let mut a = app();
    open_dialog(&mut a, rollback, "t-pend-1", true);
    a.overlays.dialog_mut().unwrap().confirm_focused = true;
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
    open_dialog(&mut a, recover, "t-pend-1", true);
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
fn an_actionable_cause_is_green_in_its_row() {
    let buf = draw(&app(), 100, 30);
    // t-pend-1's lock has a dead holder: recover (the detail pane says so).
    let (x, y) = find(&buf, "dead holder").unwrap();
    let (_, row) = find(&buf, "▶!! t-pend-1").unwrap();
    assert_eq!(y, row, "on t-pend-1's row");
    assert_eq!(buf[(x, y)].fg, Color::Green, "dead holder");
    // An unknown cause keeps its row's colour (stuck: yellow).
    let (x, y) = find(&buf, "committed   unkn.").unwrap();
    let q = x + "committed   ".len() as u16;
    assert_eq!(buf[(q, y)].symbol(), "u");
    assert_eq!(buf[(q, y)].fg, Color::Yellow, "unknown cause");
}
