//! The dashboard never acts unseen: in a 60×20 window (below the 80×24 it
//! draws itself in) `R`, `y`, a reason and Enter roll nothing back, and a
//! dialog open when the window shrinks is closed, so nothing is confirmed
//! blind. Checked in the documents: nothing written, nothing recorded.

use crate::screen::filter_to;
use crate::world::{quit, World};
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn a_window_too_small_to_show_the_dashboard_ignores_r_y_reason_enter() {
    let started = Instant::now();
    let w = World::new();
    let pend = w.stage("unseen", 2, false, Some(90));
    w.refresh();
    let before = w.documents_of(&pend);
    let tui = w.dashboard("unseen", &[]);
    tui.wait_for_all(&[&pend.id, "transactions 1 of 1"]);
    filter_to(&tui, &pend.id);

    // A dialog open when the window shrinks is closed.
    tui.keys(&["R"]);
    tui.wait_for_all(&[&format!("Roll back {}?", pend.id), "[ Confirm (y) ]"]);
    tui.resize(60, 20);
    tui.wait_for_all(&["needs at least 80×24 (now 60×20)", "keys are ignored"]);
    tui.keys(&["y"]);
    tui.type_text("blind");
    tui.keys(&["Enter"]);
    // And in the small window, R y reason Enter from the start.
    tui.keys(&["R", "y"]);
    tui.type_text("typed blind");
    tui.keys(&["Enter"]);

    // Back to a size that shows it: the log says what happened, in order
    // after the keys (so they have all been handled).
    tui.resize(140, 40);
    let screen = tui.wait_for_all(&[
        "dialog closed: the terminal became too small to show it; nothing done",
        "key(s) ignored while the terminal was too small to show the dashboard",
    ]);
    assert!(!screen.contains("confirmed"), "{screen}");
    assert!(
        !screen.contains(&format!("Roll back {}?", pend.id)),
        "{screen}"
    );
    assert_eq!(w.state(&pend.id), Some(TxnState::Pending));
    assert_eq!(w.documents_of(&pend), before, "nothing written");
    assert!(w.history(&pend.id).is_empty(), "nothing recorded");
    quit(
        &tui,
        "a_window_too_small_to_show_the_dashboard_ignores_r_y_reason_enter",
        started,
    );
}
