//! The layout across terminal sizes: the too-small notice, hit-testing of the
//! panes, and every screen rendering without panicking at any size.

use crate::drawing::screen;
use crate::fixtures::{app, now, open_dialog, recover, release_locks_of, rollback, settings};
use estx::dashboard::app::{App, Pane};
use estx::dashboard::layout::{layout, layout_for};
use ratatui::layout::Rect;
use std::time::Duration;

#[test]
fn too_small() {
    let s = screen(&app(), 60, 20);
    assert!(
        s.contains("estx-tui needs at least 80×24 (now 60×20)")
            && s.contains("keys are ignored until it is larger; q quits"),
        "{s}"
    );
    assert_snapshot!("too_small_60x20", s);
    // During a bulk run even q waits for a screen that can ask first.
    let mut a = app();
    a.bulk = Some(estx::dashboard::progress::BulkProgress::new(
        estx::dashboard::event::OnMarks::Procedure(estx::protocol::Procedure::Recover),
        500,
        a.now,
    ));
    let s = screen(&a, 60, 20);
    assert!(
        s.contains("a bulk recover is running (0/500): enlarge the terminal to")
            && s.contains("stop it or to quit; keys are ignored"),
        "{s}"
    );
}

/// The question the stop key asks during a bulk run: what stopping does,
/// where the ids left go, the line that carries on; "keep running"
/// focused first.
#[test]
fn the_stop_question_says_what_stopping_does() {
    use estx::dashboard::layers::Overlay;
    use estx::dashboard::stop::StopAsk;
    let mut a = app();
    let mut b = estx::dashboard::progress::BulkProgress::new(
        estx::dashboard::event::OnMarks::Procedure(estx::protocol::Procedure::Rollback),
        500,
        a.now,
    );
    b.left_file = Some("/home/op/.local/state/estx-tui/ids/r-7.ids".into());
    a.bulk = Some(b);
    a.overlays.open(Overlay::StopRun(StopAsk {
        quit: true,
        confirm_focused: false,
    }));
    let s = screen(&a, 100, 30);
    for want in [
        "Quit during a bulk run?",
        "A bulk roll back is running (0/500): stop it and quit, or keep running?",
        "each started transaction is brought to a",
        "state a resume or the application's recovery finishes.",
        "The ids left are written to /home/op/.local/state/estx-tui/ids/r-7.ids",
        "Then resume with: estx-tui rollback --ids-from",
        "/home/op/.local/state/estx-tui/ids/r-7.ids --reason TEXT",
        "The dashboard quits once the run has stopped.",
        "[ Keep running (n) ]",
        "[ Stop and quit (y) ]",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
    assert_snapshot!("stop_question_100x30", s);
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
        .open(estx::dashboard::layers::Overlay::Help(Default::default()));
    states.push(help);
    for (action, id) in [
        (rollback as fn(&str) -> _, "t-pend-1"),
        (rollback, "t-commit-1"),
        (release_locks_of, "t-pend-1"),
        (recover, "t-broken"),
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
