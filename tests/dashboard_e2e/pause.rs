//! Pausing a bulk run from the dashboard, as an operator does in an
//! incident: a page of half-applied transfers marked with `*`, rolled
//! back with `R`, a reason and `y`; `P` while it runs says PAUSED, and the
//! cluster proves it: the count of rolled-back transactions does not move
//! across several polls. `P` again and the run ends, every transfer rolled
//! back, money conserved, nothing left pending.

use crate::common;
use crate::tmux::Tmux;
use crate::world::World;
use std::time::{Duration, Instant};

/// Transfers in the run: one table page (a bulk act takes the marked rows
/// the table shows), enough that it runs for a few seconds.
const N: usize = 500;

/// How long the rest of the run may take once resumed (the debug build
/// rolls back some 50 a second on a busy machine).
const RUN_DEADLINE: Duration = Duration::from_secs(60);

/// The poll clock of the header ("as of HH:MM:SS"), if shown.
fn poll_clock(screen: &str) -> Option<String> {
    let at = screen.find("as of ")? + "as of ".len();
    screen.get(at..at + 8).map(str::to_string)
}

/// Waits until the dashboard has polled `n` more times (its "as of" clock
/// changed `n` times): time passes on something the screen shows.
fn wait_polls(tui: &Tmux, n: usize) {
    for _ in 0..n {
        let before = poll_clock(&tui.screen());
        tui.wait_for("the next poll", |s| {
            poll_clock(s).is_some() && poll_clock(s) != before
        });
    }
}

/// The "bulk roll back D/T" count of the progress bar.
fn bar_done(screen: &str) -> Option<usize> {
    let at = screen.find("bulk roll back ")? + "bulk roll back ".len();
    let (done, _) = screen[at..].split_once('/')?;
    done.parse().ok()
}

#[test]
fn a_paused_bulk_rollback_writes_nothing_until_resumed() {
    let started = Instant::now();
    let w = World::new();
    let ids = w.seed_half_applied("pz", N);
    w.refresh();
    // 100 of each transfer is in flight: debited from its source only.
    assert_eq!(w.balances(), (900 * N as i64, N as u64));
    let tui = w.dashboard("pause", &[]);
    tui.wait_for_all(&[&format!("transactions {N} of {N}")]);
    tui.keys(&["*"]);
    tui.wait_for_all(&[&format!("marked {N} row(s) of the filter; {N} marked")]);
    tui.keys(&["R"]);
    tui.wait_for_all(&[
        &format!("Roll back {N} marked transaction(s)?"),
        &format!(" {N} roll back ({N} pending)"),
    ]);
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (required"]);
    tui.type_text("INC-9 rollback, paused for the DBA");
    tui.keys(&["Enter"]);
    // Under way: some rolled back, not all.
    tui.wait_for("the run under way", |s| {
        bar_done(s).is_some_and(|d| d > 0 && d < N)
    });
    tui.keys(&["P"]);
    // (The log's "bulk run paused" line scrolls away under the lines of
    // the items that were under way: the bar says it.)
    let screen = tui.wait_for_all(&["PAUSED · P resumes"]);
    let shown = bar_done(&screen).unwrap();
    // The writes under way when P was pressed land during the next poll;
    // from then on nothing may be written.
    wait_polls(&tui, 1);
    let paused_at = w.count_in_state("rolled-back");
    wait_polls(&tui, 3);
    let still = w.count_in_state("rolled-back");
    assert_eq!(paused_at, still, "written while paused");
    assert!(
        (paused_at as usize) < N,
        "the run ended before the pause: {paused_at} of {N}"
    );
    let screen = tui.screen();
    assert!(screen.contains("PAUSED"), "{screen}");
    assert!(
        bar_done(&screen).is_some_and(|d| d >= shown && d <= paused_at as usize),
        "the bar stands still with the cluster ({paused_at}):\n{screen}"
    );
    eprintln!("paused at {paused_at} of {N} rolled back");

    tui.keys(&["P"]);
    tui.wait_for("the bar running again", |s| {
        !s.contains("PAUSED") && s.contains("P pauses")
    });
    common::wait_until_blocking("all rolled back", RUN_DEADLINE, || {
        w.count_in_state("rolled-back") == N as u64
    });
    tui.wait_for_with(
        "the run's end in the log",
        || w.refresh(),
        |s| s.contains(&format!("bulk roll back: {N} of {N} ended ({N} completed)")),
    );
    let (total, pending) = w.balances();
    assert_eq!(
        total,
        1000 * N as i64,
        "money conserved: every debit undone"
    );
    assert_eq!(pending, 0, "an account still lists a pending transaction");
    assert_eq!(w.count_in_state("pending"), 0);
    let records = w.history(&ids[0]);
    let [r] = records.as_slice() else {
        panic!("one record: {records:?}")
    };
    assert!(
        r.bulk && r.reason.as_deref() == Some("INC-9 rollback, paused for the DBA"),
        "{r:?}"
    );
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "a_paused_bulk_rollback_writes_nothing_until_resumed took {:?}",
        started.elapsed()
    );
}
