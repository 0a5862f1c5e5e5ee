//! The layout across terminal sizes: the too-small notice, hit-testing of the
//! panes, and every screen rendering without panicking at any size.

use crate::drawing::screen;
use crate::fixtures::{app, now, open_dialog, settings};
use estx::dashboard::app::{App, Pane};
use estx::dashboard::event::Action;
use estx::dashboard::layout::{layout, layout_for};
use ratatui::layout::Rect;
use std::time::Duration;

#[test]
fn too_small() {
    let s = screen(&app(), 60, 20);
    assert!(
        s.contains("estx-tui needs at least 80×24 (now 60×20)"),
        "{s}"
    );
    assert_snapshot!("too_small_60x20", s);
}

#[test]
fn layout_hit_testing() {
    let a = layout(Rect::new(0, 0, 160, 48));
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
    // Below 120 columns the table takes the width; the detail its place when focused.
    let narrow = Rect::new(0, 0, 100, 30);
    let t = layout(narrow).transactions;
    assert_eq!(t.width, 100);
    let d = layout_for(narrow, Pane::Detail);
    assert_eq!(
        d.pane_at(d.detail.x + 1, d.detail.y + 1),
        Some(Pane::Detail)
    );
    assert_eq!(d.pane_at(t.x + 1, t.y + 1), Some(Pane::Detail));
    assert_eq!(a.keys.y, 47);
}

#[test]
fn every_screen_renders_at_every_size() {
    let mut states = vec![app(), App::new(settings(), Duration::from_secs(5), now())];
    let mut help = app();
    help.overlays
        .open(estx::dashboard::overlay::Overlay::Help { scroll: 0 });
    states.push(help);
    for (action, id) in [
        (Action::Rollback, "t-pend-1"),
        (Action::Rollback, "t-commit-1"),
        (Action::ReleaseLocks, "t-pend-1"),
        (Action::Recover, "t-broken"),
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
