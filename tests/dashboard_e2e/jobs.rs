//! The jobs view: a bulk recovery whose process died right after writing
//! its record is listed with its operator under `J`, presumed dead (its
//! heartbeat silent); Enter, `y`, Enter
//! resumes it from the dashboard, which runs it to the end and completes
//! the same record, which notes the resume.

use crate::common;
use crate::tmux;
use crate::world::World;
use estx::protocol::trail::RecordStatus;
use estx::protocol::TxnState;
use std::time::Instant;

#[test]
fn an_unfinished_job_is_listed_and_resumed_from_the_jobs_view() {
    let started = Instant::now();
    let w = World::new();
    let staged: Vec<_> = ["j1", "j2"]
        .into_iter()
        .map(|tag| w.stage(tag, 2, false, Some(90)))
        .collect();
    let ids: Vec<&str> = staged.iter().map(|s| s.id.as_str()).collect();
    let run = w.unfinished_job(&ids);
    let tui = w.dashboard("jobs", &[]);
    tui.wait_for_all(&["transactions 2 of 2"]);
    tui.keys(&["J"]);
    tui.wait_for_all(&[
        "jobs: 1 unfinished bulk run(s) · 1 presumed dead",
        "presumed dead, silent",
        &run,
        "recover of 2 transaction(s) · from the cli",
        "reason: INC-7 the worker died",
    ]);
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["type y then Enter:"]);
    tui.type_text("y");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("both recovered", tmux::DEADLINE, || {
        staged
            .iter()
            .all(|s| w.state(&s.id) == Some(TxnState::Finished))
    });
    tui.wait_for_with(
        "the resumed run's end in the log",
        || w.refresh(),
        |s| s.contains("bulk recover: 2 of 2 ended (2 completed)"),
    );
    let records = w.history(&staged[0].id);
    let [r] = records.as_slice() else {
        panic!("the one record, completed: {records:?}")
    };
    assert_eq!(
        (r.record_id.as_str(), r.status),
        (run.as_str(), RecordStatus::Finished)
    );
    assert!(
        r.summary
            .as_deref()
            .is_some_and(|s| s.starts_with("resumed after 0 transaction(s)")),
        "{r:?}"
    );
    // The resume is on record: from the dashboard, unforced (the job was
    // presumed dead), the record not forced.
    let [resumed] = r.resumed.as_slice() else {
        panic!("one resume noted: {r:?}")
    };
    assert_eq!(
        resumed.interface,
        estx::protocol::trail::Interface::Dashboard
    );
    assert!(!resumed.forced && !r.forced, "{r:?}");
    assert!(resumed.life.starts_with("presumed dead"), "{r:?}");
    // Finished (and refreshed by `history`): no longer listed.
    tui.keys(&["J"]);
    tui.wait_for_all(&["jobs: 0 unfinished bulk run(s)", "no unfinished bulk run"]);
    tui.keys(&["Escape", "q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "an_unfinished_job_is_listed_and_resumed_from_the_jobs_view took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_live_job_resumed_forced_from_the_jobs_view_is_recorded_forced_with_the_reason() {
    let w = World::new();
    let staged = w.stage("f1", 2, false, Some(90));
    // Its heartbeat promised every ten minutes: live for the whole test.
    let run = w.job_beating(&[&staged.id], std::time::Duration::from_secs(600));
    let tui = w.dashboard("jobs-forced", &[]);
    tui.wait_for_all(&["transactions 1 of 1"]);
    tui.keys(&["J"]);
    tui.wait_for_all(&["1 live", "live, beat", &run]);
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["reason to force it, then Enter:"]);
    tui.type_text("INC-8 its host is gone");
    tui.keys(&["Enter"]);
    tui.wait_for_all(&["FORCED", "type y then Enter:"]);
    tui.type_text("y");
    tui.keys(&["Enter"]);
    common::wait_until_blocking("recovered", tmux::DEADLINE, || {
        w.state(&staged.id) == Some(TxnState::Finished)
    });
    common::wait_until_blocking("the record finished", tmux::DEADLINE, || {
        w.history(&staged.id)
            .first()
            .is_some_and(|r| r.status == RecordStatus::Finished)
    });
    let records = w.history(&staged.id);
    let r = &records[0];
    assert!(r.forced, "a forced resume makes the record forced: {r:?}");
    let [resumed] = r.resumed.as_slice() else {
        panic!("one resume noted: {r:?}")
    };
    assert!(resumed.forced, "{r:?}");
    assert_eq!(resumed.reason.as_deref(), Some("INC-8 its host is gone"));
    assert_eq!(
        resumed.interface,
        estx::protocol::trail::Interface::Dashboard
    );
    assert!(resumed.life.starts_with("live"), "{r:?}");
    // The run has ended for the dashboard too (q during a run would ask).
    tui.wait_for_with(
        "the resumed run's end in the log",
        || w.refresh(),
        |s| s.contains("bulk recover: 1 of 1 ended (1 completed)"),
    );
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
}
