//! A production profile (`production = true`, `read_only = false`) as an
//! operator meets it: the whole screen framed with `PRODUCTION`, and a
//! bulk rollback that runs only once its count is typed — a wrong count
//! does nothing, the right one runs, and the one audit record names the
//! profile.

use crate::common;
use crate::tmux;
use crate::world::{quit, World};
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn a_production_bulk_rollback_runs_only_with_its_count_typed() {
    let started = Instant::now();
    let w = World::new();
    let staged: Vec<_> = ["p1", "p2"]
        .into_iter()
        .map(|tag| w.stage(tag, 2, false, Some(90)))
        .collect();
    w.refresh();
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("estx-tui")).unwrap();
    std::fs::write(
        xdg.path().join("estx-tui/config.toml"),
        "[profiles.prod]\nproduction = true\nread_only = false\n",
    )
    .unwrap();
    let xdg_home = xdg.path().display().to_string();
    let tui = w.dashboard_with_env(
        "production",
        &["--profile", "prod"],
        &[("XDG_CONFIG_HOME", xdg_home.as_str())],
    );
    let screen = tui.wait_for_all(&["transactions 2 of 2", "[prod]", " PRODUCTION "]);
    let first = screen.lines().next().unwrap_or_default();
    assert!(
        first.starts_with('┏') && first.contains(" PRODUCTION "),
        "the frame's top edge:\n{screen}"
    );
    assert!(!screen.contains("READ-ONLY"), "{screen}");

    tui.keys(&["*", "R"]);
    tui.wait_for_all(&["Roll back 2 marked transaction(s)?", " 2 roll back"]);
    tui.keys(&["y"]);
    tui.type_text("INC-42 outage");
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["to run, type 2 (the count) or `prod` (the profile)"]);
    // A wrong count does nothing.
    tui.type_text("3");
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["`3` does not confirm it"]);
    for s in &staged {
        assert_eq!(w.state(&s.id), Some(TxnState::Pending), "a wrong count ran");
    }
    assert!(w.history(&staged[0].id).is_empty(), "nothing recorded");
    // The right one runs.
    tui.type_text("2");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("both rolled back", tmux::DEADLINE, || {
        staged
            .iter()
            .all(|s| w.state(&s.id) == Some(TxnState::RolledBack))
    });
    // The run has ended for the dashboard too (q during a run would ask).
    tui.wait_for_with(
        "the run's end in the log",
        || w.refresh(),
        |s| s.contains("bulk roll back: 2 of 2 ended (2 completed)"),
    );
    let records = w.history(&staged[0].id);
    let [r] = records.as_slice() else {
        panic!("one record: {records:?}")
    };
    assert_eq!(
        (r.profile.as_deref(), r.production, r.bulk),
        (Some("prod"), true, true)
    );
    quit(
        &tui,
        "a_production_bulk_rollback_runs_only_with_its_count_typed",
        started,
    );
}
