//! The dashboard's session as a whole: quitting with `q` restores the
//! terminal, `--read-only` disables the actions, and an unreachable cluster is
//! shown and retried instead of ending the program.

use crate::common;
use crate::tmux;
use crate::world::{quit, start_dashboard, World};
use std::time::Instant;

/// `q` exits with 0 and leaves the terminal as it found it: main screen
/// (nothing of the dashboard left on it), cooked mode, mouse reporting off.
#[test]
fn q_quits_with_0_and_restores_the_terminal() {
    let started = Instant::now();
    let w = World::new();
    let s = w.stage("quit", 2, false, Some(90));
    w.refresh();
    let tui = w.dashboard("quit", &[]);
    tui.wait_for_all(&[&s.id, "estx-tui"]);
    assert_eq!(
        tui.format("#{alternate_on}"),
        "1",
        "the dashboard draws on the alternate screen"
    );
    assert_eq!(
        tui.format("#{mouse_any_flag}"),
        "1",
        "the dashboard captures the mouse"
    );

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    let screen = tui.wait_for("the terminal state", |s| s.contains("TTY="));
    assert!(screen.contains("TTY=cooked"), "raw mode left on:\n{screen}");
    assert_eq!(
        tui.format("#{alternate_on}"),
        "0",
        "still on the alternate screen:\n{screen}"
    );
    assert_eq!(
        tui.format("#{mouse_any_flag}"),
        "0",
        "mouse capture left on"
    );
    assert_eq!(tui.format("#{cursor_flag}"), "1", "cursor left hidden");
    let leftovers: Vec<&str> = screen
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("EXITED=") && !l.starts_with("TTY="))
        .collect();
    assert!(
        leftovers.is_empty(),
        "the dashboard left output behind:\n{screen}"
    );
    eprintln!(
        "q_quits_with_0_and_restores_the_terminal took {:?}",
        started.elapsed()
    );
}

/// `--read-only` says so, and R opens no dialog and writes nothing.
#[test]
fn read_only_disables_the_actions() {
    let started = Instant::now();
    let w = World::new();
    let s = w.stage("ro", 2, false, Some(90));
    w.refresh();
    let before = w.documents_of(&s);
    let tui = w.dashboard("readonly", &["--read-only"]);
    let screen = tui.wait_for_all(&[&s.id, "READ-ONLY"]);
    assert!(screen.contains("read-only: actions disabled"), "{screen}");
    assert!(screen.contains("R F L V K read-only"), "{screen}");

    for key in ["R", "F", "L"] {
        tui.keys(&[key]);
    }
    let refused = "read-only mode: R rollback, F recover, L release, V reverse, K ack are disabled";
    let screen = tui.wait_for(&format!("{refused:?} three times"), |s| {
        s.matches(refused).count() == 3
    });
    for title in ["Roll back", "Force recovery of", "Release the locks of"] {
        assert!(
            !screen.contains(&format!("{title} {}?", s.id)),
            "a dialog opened:\n{screen}"
        );
    }
    assert_eq!(w.documents_of(&s), before, "read-only mode wrote");

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(w.documents_of(&s), before, "read-only mode wrote");
    eprintln!(
        "read_only_disables_the_actions took {:?}",
        started.elapsed()
    );
}

/// Against an unreachable cluster the dashboard opens, says it cannot reach
/// it, keeps retrying (and answering keys) instead of exiting, and quits
/// with `q`.
#[test]
fn an_unreachable_cluster_is_shown_and_retried() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("estx-tui.log");
    let url = "http://127.0.0.1:9";
    let ix = common::TestIndices::unique();
    let tui = start_dashboard("unreachable", url, &ix, &log, &[]);
    let screen = tui.wait_for_all(&[&format!("cannot reach {url}"), "retrying", "no data yet"]);
    assert!(!screen.contains("EXITED="), "{screen}");

    // Still polling: the poller logs every failed attempt (1 s, then backoff).
    common::wait_until_blocking("two failed polls in the log", tmux::DEADLINE, || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.matches("poll failed").count() >= 2)
    });
    // Still running and answering keys.
    tui.keys(&["?"]);
    tui.wait_for_all(&["any other key closes help"]);
    tui.keys(&["Escape"]);
    let screen = tui.wait_for("help closed", |s| !s.contains("any other key closes help"));
    assert!(screen.contains(&format!("cannot reach {url}")), "{screen}");
    assert!(!screen.contains("EXITED="), "{screen}");

    quit(&tui, "an_unreachable_cluster_is_shown_and_retried", started);
}
