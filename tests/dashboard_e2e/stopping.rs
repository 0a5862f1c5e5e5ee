//! A bulk run in the dashboard ends only when the operator says so, on 500
//! half-applied transfers marked with `*` and rolled back with `R`, a
//! reason and Enter:
//! - `q` during the run asks "stop it and quit, or keep running"; "keep
//!   running" keeps it running to the end (every transfer rolled back);
//! - `Esc` during the run changes nothing: it runs to the end;
//! - the stop key `S`, confirmed, stops it cleanly: the log's counts agree
//!   with each other and with the cluster, the ids left are written to a
//!   file in the state directory, and that file carries on with
//!   `rollback --ids-from` until every transfer is rolled back;
//! - closing the terminal (SIGHUP) stops it cleanly before the end.
//!
//! Each run is held (see [`run_under_way`]): the dashboard talks to the
//! cluster through a proxy that, past the run's first transactions, holds
//! every write of a transaction's state until the test lets the run go on,
//! after the key under test. So the key lands while the run is certainly
//! under way, however fast the run or loaded the machine.

use crate::common;
use crate::common::proxy::Gate;
use crate::common::FaultProxy;
use crate::tmux::Tmux;
use crate::world::World;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Transfers in the run: one table page (a bulk act takes the marked rows
/// the table shows).
const N: usize = 500;

/// Writes of a transaction's state the proxy lets through before it holds
/// the run: each transfer writes its state twice (`pending` to
/// `terminating`, then to `rolled-back`) and at most 4 run at once, so
/// between 8 and 10 of them end before the run waits.
const PASSED_WRITES: usize = 20;

/// How long a whole run may take (the debug build rolls back some 50 a
/// second on a busy machine).
const RUN_DEADLINE: Duration = Duration::from_secs(90);

/// A request the proxy holds outlives the time the test needs before it
/// lets the run go on, however loaded the machine: no write times out (a
/// timed-out write is retried, which these tests are not about).
const REQUEST_TIMEOUT: &str = "90s";

/// The "bulk roll back D/T" count of the progress bar.
fn bar_done(screen: &str) -> Option<usize> {
    let at = screen.find("bulk roll back ")? + "bulk roll back ".len();
    let (done, _) = screen[at..].split_once('/')?;
    done.parse().ok()
}

/// A bulk run under way in the dashboard, held at the proxy until
/// [`UnderWay::go_on`].
struct UnderWay {
    /// The dashboard (dropped first: it talks through the proxy).
    tui: Tmux,
    /// Where the run's writes wait.
    gate: Arc<Gate>,
    /// Between the dashboard and the cluster.
    _proxy: FaultProxy,
}

impl UnderWay {
    /// Lets the held writes go: the run goes on as the keys pressed since
    /// left it (to its end, or to a clean stop).
    fn go_on(&self) {
        self.gate.open();
    }
}

/// Seeds `N` half-applied transfers, starts the dashboard (with `env`)
/// behind a proxy, marks them all and confirms their rollback; returns
/// once the run is under way and held: some rolled back (the bar shows
/// them), the others waiting for [`UnderWay::go_on`].
fn run_under_way(w: &World, tag: &str, env: &[(&str, &str)]) -> UnderWay {
    w.seed_half_applied(tag, N);
    w.refresh();
    let proxy = w.proxy();
    let tui = w.dashboard_behind(&proxy, tag, &["--timeout", REQUEST_TIMEOUT], env);
    tui.wait_for_all(&[&format!("transactions {N} of {N}")]);
    tui.keys(&["*"]);
    tui.wait_for_all(&[&format!("marked {N} row(s) of the filter; {N} marked")]);
    tui.keys(&["R"]);
    tui.wait_for_all(&[&format!(" {N} roll back ({N} pending)")]);
    tui.keys(&["y"]);
    tui.wait_for_all(&["reason (required"]);
    tui.type_text("INC-11 rollback");
    let gate = proxy.hold_after("POST", &w.transaction_writes(), PASSED_WRITES);
    tui.keys(&["Enter"]);
    common::wait_until_blocking("the run waits at the proxy", crate::tmux::DEADLINE, || {
        gate.held() > 0
    });
    tui.wait_for("the run under way", |s| {
        bar_done(s).is_some_and(|d| d > 0 && d < N)
    });
    UnderWay {
        tui,
        gate,
        _proxy: proxy,
    }
}

/// Waits until every transfer is rolled back and the log says the run
/// ended whole; checks the money.
fn runs_to_the_end(w: &World, tui: &Tmux) {
    common::wait_until_blocking("all rolled back", RUN_DEADLINE, || {
        w.count_in_state("rolled-back") == N as u64
    });
    tui.wait_for_with(
        "the run's end in the log",
        || w.refresh(),
        |s| s.contains(&format!("bulk roll back: {N} of {N} ended ({N} completed)")),
    );
    assert_eq!(w.balances(), (1000 * N as i64, 0), "money conserved");
}

#[test]
fn q_during_a_bulk_run_asks_and_keep_running_keeps_it_running() {
    let started = Instant::now();
    let w = World::new();
    let run = run_under_way(&w, "qkeep", &[]);
    let tui = &run.tui;
    tui.keys(&["q"]);
    let screen = tui.wait_for_all(&[
        "Quit during a bulk run?",
        "stop it and quit, or keep running?",
        "[ Keep running (n) ]",
        "[ Stop and quit (y) ]",
    ]);
    assert!(!screen.contains("EXITED="), "{screen}");
    // Enter presses the focused button: keep running.
    tui.keys(&["Enter"]);
    // The question closes and the dashboard stays (its log's "the bulk run
    // keeps running" may already have scrolled away under the run's end).
    tui.wait_for("the question closed, the dashboard still up", |s| {
        !s.contains("Quit during a bulk run?") && !s.contains("EXITED=")
    });
    run.go_on();
    runs_to_the_end(&w, tui);
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0, "the run had ended: q quits at once");
    eprintln!(
        "q_during_a_bulk_run_asks_and_keep_running_keeps_it_running took {:?}",
        started.elapsed()
    );
}

#[test]
fn esc_during_a_bulk_run_changes_nothing() {
    let started = Instant::now();
    let w = World::new();
    let run = run_under_way(&w, "esc", &[]);
    let tui = &run.tui;
    tui.keys(&["Escape"]);
    tui.keys(&["Escape"]);
    // Held, the run is still under way when the next poll lands (long
    // after the keys were read): nothing stops it.
    let before = poll_clock(&tui.screen());
    let screen = tui.wait_for("the next poll", |s| {
        poll_clock(s).is_some() && poll_clock(s) != before
    });
    assert!(
        bar_done(&screen).is_some_and(|d| d < N) && !screen.contains("stopping"),
        "{screen}"
    );
    run.go_on();
    runs_to_the_end(&w, tui);
    let screen = tui.screen();
    assert!(!screen.contains("stopping"), "{screen}");
    assert!(!screen.contains("left ("), "{screen}");
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "esc_during_a_bulk_run_changes_nothing took {:?}",
        started.elapsed()
    );
}

#[test]
fn the_stop_key_stops_cleanly_writes_the_ids_left_and_they_carry_on() {
    let started = Instant::now();
    let w = World::new();
    let state = w.dir("state");
    let state_s = state.display().to_string();
    let env = [("XDG_STATE_HOME", state_s.as_str())];
    let run = run_under_way(&w, "stop", &env);
    let tui = &run.tui;
    tui.keys(&["S"]);
    tui.wait_for_all(&[
        "Stop the bulk run?",
        "each started transaction is brought to a",
        "The ids left are written to",
        "[ Stop (y) ]",
    ]);
    tui.keys(&["y"]);
    tui.wait_for_all(&["stopping: started items reach their next state"]);
    run.go_on();
    // The counts' line first, as it lands: the lines after it (receipts,
    // the ids file on two lines, a background audit's) can scroll it out
    // of the log's four lines before both show at once.
    let screen = tui.wait_for_with(
        "the stopped run's counts in the log",
        || w.refresh(),
        |s| s.contains("bulk roll back stopped: "),
    );
    tui.wait_for_with(
        "its ids file in the log",
        || w.refresh(),
        |s| s.contains("transaction(s) left: their ids are in"),
    );
    // "bulk roll back stopped: E of 500 ended (E completed); L left (not started: L)"
    let line = screen
        .lines()
        .find(|l| l.contains("bulk roll back stopped: "))
        .unwrap();
    let after = line.split("bulk roll back stopped: ").nth(1).unwrap();
    let ended: usize = after.split(' ').next().unwrap().parse().unwrap();
    assert!(
        after.starts_with(&format!("{ended} of {N} ended ({ended} completed); ")),
        "{line}"
    );
    let left = N - ended;
    assert!(
        after.contains(&format!("{left} left (not started: {left})")),
        "the counts add up to {N}: {line}"
    );
    assert!(!line.contains("failed"), "{line}");
    // The cluster agrees: the ended ones rolled back, the others untouched.
    assert_eq!(w.count_in_state("rolled-back"), ended as u64);
    assert_eq!(w.count_in_state("pending"), left as u64);
    // The ids left, one a line, in the state directory.
    let ids_dir = state.join("estx-tui").join("ids");
    let files: Vec<_> = std::fs::read_dir(&ids_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let [file] = files.as_slice() else {
        panic!("one ids file in {}: {files:?}", ids_dir.display())
    };
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(ids_in(&text), left, "{text}");
    assert!(
        screen.contains(&format!("{left} transaction(s) left: their ids are in")),
        "{screen}"
    );
    // The dashboard goes on after a stop; q quits at once (0).
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    // The job is listed with how it ended and what it left.
    let (code, out, err) = w.cli(&["jobs", "--all", "--json"], &env);
    assert_eq!(code, 0, "{err}");
    let jobs: serde_json::Value = serde_json::from_str(&out).unwrap();
    let job = &jobs.as_array().unwrap()[0];
    let summary = job["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(&format!("{left} not started")), "{job:#}");
    // The line the log named carries on with what was left.
    let path = file.display().to_string();
    let (code, out, err) = w.cli(
        &[
            "rollback",
            "--ids-from",
            &path,
            "--reason",
            "INC-11 carry on",
        ],
        &env,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(w.count_in_state("rolled-back"), N as u64);
    assert_eq!(w.balances(), (1000 * N as i64, 0), "money conserved");
    eprintln!(
        "the_stop_key_stops_cleanly_writes_the_ids_left_and_they_carry_on took {:?}",
        started.elapsed()
    );
}

#[test]
fn q_then_stop_quits_once_the_run_has_stopped_with_the_stopped_code() {
    let w = World::new();
    let state = w.dir("state");
    let state_s = state.display().to_string();
    let run = run_under_way(&w, "qstop", &[("XDG_STATE_HOME", state_s.as_str())]);
    let tui = &run.tui;
    tui.keys(&["q"]);
    tui.wait_for_all(&["[ Stop and quit (y) ]"]);
    tui.keys(&["y"]);
    tui.wait_for_all(&["stopping, then quitting"]);
    run.go_on();
    assert_eq!(
        tui.wait_exit(),
        5,
        "the command line's code for a stopped run"
    );
    let rolled = w.count_in_state("rolled-back") as usize;
    let pending = w.count_in_state("pending") as usize;
    assert_eq!(rolled + pending, N, "each one ended or untouched");
    assert!(pending > 0, "stopped before the end");
    let file = std::fs::read_dir(state.join("estx-tui").join("ids"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(ids_in(&text), pending, "{text}");
}

/// Closing the terminal during a run (SIGHUP, then writes to it fail)
/// stops it cleanly before the dashboard ends: its record is completed
/// `stopped`, never left running, and the ids left are in their file.
#[test]
fn closing_the_terminal_during_a_bulk_run_stops_it_cleanly() {
    use estx::protocol::trail::{ActOutcome, RecordStatus};
    let w = World::new();
    let state = w.dir("state");
    let state_s = state.display().to_string();
    let run = run_under_way(&w, "hup", &[("XDG_STATE_HOME", state_s.as_str())]);
    run.tui.close_window();
    // No screen to read any more: its log says when it began to stop.
    common::wait_until_blocking(
        "the dashboard stopping the run",
        crate::tmux::DEADLINE,
        || {
            let log = std::fs::read_to_string(w.log_file()).unwrap_or_default();
            log.contains("stopping on a signal")
                || log.contains("cannot draw: stopping the bulk run")
        },
    );
    run.go_on();
    common::wait_until_blocking("the run's record completed", RUN_DEADLINE, || {
        w.history("hup-0")
            .first()
            .is_some_and(|r| r.status == RecordStatus::Finished)
    });
    let r = &w.history("hup-0")[0];
    assert_eq!(r.outcome, Some(ActOutcome::Stopped), "{r:?}");
    let pending = w.count_in_state("pending") as usize;
    assert_eq!(w.count_in_state("rolled-back") as usize + pending, N);
    assert!(pending > 0, "stopped before the end");
    let file = state
        .join("estx-tui")
        .join("ids")
        .join(format!("{}.ids", r.record_id));
    common::wait_until_blocking("the ids file", crate::tmux::DEADLINE, || file.exists());
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(ids_in(&text), pending, "{text}");
    // Its first line names the job, so `--ids-from` it knows the job's writes.
    assert_eq!(
        estx::local_files::job_of(&text),
        Some(r.record_id.clone()),
        "{text}"
    );
}

/// The poll clock of the header ("as of HH:MM:SS"), if shown.
fn poll_clock(screen: &str) -> Option<String> {
    let at = screen.find("as of ")? + "as of ".len();
    screen.get(at..at + 8).map(str::to_string)
}

/// The ids an ids file lists (its comment line naming the job aside).
fn ids_in(text: &str) -> usize {
    text.lines().filter(|l| !l.starts_with('#')).count()
}
