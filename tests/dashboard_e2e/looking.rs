//! Looking at the cluster from the dashboard: the state filter on a
//! terminal state lists that state's transactions (so a rollback's result
//! can be confirmed), the export key writes the rows shown where the log
//! says, and an Esc glued to the next key (as tmux and terminals send a
//! quick Esc-Tab: one Alt-Tab) still counts as Esc then Tab.

use crate::screen::filter_to;
use crate::world::{quit, World};
use estx::protocol::TxnState;
use std::time::Instant;

/// `s` onto rolled-back lists the rolled-back transactions (the poll
/// fetches them), hiding the ones in flight; Esc glued to Tab moves the
/// focus on (Alt-Tab is Esc then Tab).
#[test]
fn the_state_filter_lists_rolled_back_transactions_and_esc_tab_moves_on() {
    let started = Instant::now();
    let w = World::new();
    let done = w.stage("undone", 2, false, Some(90));
    w.roll_back(&done);
    assert_eq!(w.state(&done.id), Some(TxnState::RolledBack));
    let live = w.stage("inflight", 2, false, Some(90));
    w.refresh();

    let tui = w.dashboard("terminal", &[]);
    tui.wait_for_all(&[&live.id, "transactions 1 of 1"]);
    // None, created, pending, committed, terminating, finished, rolled-back.
    tui.keys(&["s", "s", "s", "s", "s", "s"]);
    let screen = tui.wait_for("the rolled-back transaction listed", |s| {
        s.contains("· state rolled-back")
            && s.contains(&done.id)
            && s.contains("transactions 1 of 1")
    });
    assert!(
        !screen
            .lines()
            .any(|l| l.contains(&live.id) && l.contains("pending")),
        "the in-flight one is filtered out:\n{screen}"
    );

    // Esc and Tab in one write arrive as Alt-Tab: Esc still clears the
    // text filter, and Tab still moves the focus on.
    filter_to(&tui, "undone");
    tui.keys(&["Escape", "Tab"]);
    tui.wait_for("the filter cleared and the detail focused", |s| {
        s.contains("┏ detail:") && !s.contains("· /undone")
    });
    quit(
        &tui,
        "the_state_filter_lists_rolled_back_transactions_and_esc_tab_moves_on",
        started,
    );
}

/// `e` exports the table as filtered into the state directory `paths`
/// shows (`~/.local/state/estx-tui` when `XDG_STATE_HOME` is unset, never
/// the current directory): the log pane and the log file say where, and the
/// file there is CSV with exactly the rows shown, ids whole.
#[test]
fn the_export_key_writes_the_filtered_rows_where_the_log_says() {
    let started = Instant::now();
    let w = World::new();
    let a = w.stage("expa", 2, false, Some(90));
    let b = w.stage("expb", 1, false, Some(90));
    w.refresh();
    let home_dir = tempfile::tempdir().unwrap();
    let home = home_dir.path().display().to_string();
    // An empty XDG_STATE_HOME counts as unset (the XDG spec): HOME decides.
    let tui = w.dashboard_with_env("export", &[], &[("XDG_STATE_HOME", ""), ("HOME", &home)]);
    tui.wait_for_all(&[&a.id, &b.id, "transactions 2 of 2"]);
    filter_to(&tui, &a.id);
    tui.wait_for_all(&["transactions 1 of 1"]);
    tui.keys(&["e"]);
    tui.wait_for_all(&["exported 1 row(s) to", "estx-tui-transactions-"]);

    let dir = home_dir.path().join(".local/state/estx-tui");
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    let [file] = files.as_slice() else {
        panic!("one export expected in {}: {files:?}", dir.display())
    };
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("estx-tui-transactions-") && name.ends_with(".csv"),
        "{name}"
    );
    let csv = std::fs::read_to_string(file).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], &["as_of", "id", "state"], "{csv}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1, "only the filtered row:\n{csv}");
    assert_eq!(rows[0].len(), header.len(), "{csv}");
    assert_eq!(
        (rows[0][1], rows[0][2]),
        (a.id.as_str(), "pending"),
        "{csv}"
    );
    assert!(!csv.contains(&b.id), "a row the filter hides:\n{csv}");

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    let log = std::fs::read_to_string(w.log_file()).unwrap_or_default();
    assert!(
        log.contains("exported the table's matches") && log.contains(&name),
        "the log file names the export:\n{log}"
    );
    eprintln!(
        "the_export_key_writes_the_filtered_rows_where_the_log_says took {:?}",
        started.elapsed()
    );
}
