//! The operator audit trail from the command line: what a rollback records,
//! a crash part-way leaving an unfinished record that `history` shows,
//! `--read-only` writing nothing, a missing reason or audit index refused
//! with nothing written.

use super::*;

#[test]
fn a_rollback_records_operator_reason_plan_and_each_step() {
    let w = World::new();
    w.stage_old_pending();
    let out = w.g.run_env(
        &[("ESTX_REASON", ""), ("USER", "alice")],
        &["rollback", "t1", "--reason", "INC-42 duplicate charge"],
    );
    out.code(0).stdout_has("rolled-back");
    let records = w.audit_records();
    assert_eq!(records.len(), 1, "{records:#?}");
    let r = &records[0];
    assert_eq!(r["action"], "rollback");
    assert_eq!(r["transactions"], json!(["t1"]));
    assert_eq!(r["reason"], "INC-42 duplicate charge");
    assert_eq!(r["operator"]["user"], "alice", "{r:#}");
    assert_eq!(r["operator"]["source"], "os");
    assert_eq!(r["status"], "finished");
    assert_eq!(r["outcome"], "completed");
    // The build that wrote it, with its commit, as `--version` says.
    let version = w.run(&["--version"]);
    let version = version.stdout.trim().trim_start_matches("estx-tui ");
    assert_eq!(r["tool_version"], version);
    if std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert!(version.contains(" ("), "built in a checkout: {version}");
    }
    assert!(r["finished_at"].as_str().is_some(), "{r:#}");
    let plan: Vec<&str> = r["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let steps: Vec<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert!(!plan.is_empty(), "{r:#}");
    // Every planned step ran and was recorded (lock releases may follow).
    assert_eq!(&steps[..plan.len()], &plan[..], "{r:#}");
    for s in r["steps"].as_array().unwrap() {
        assert!(
            ["updated", "noop"].contains(&s["result"].as_str().unwrap()),
            "{r:#}"
        );
    }
    let h = w.run(&["history", "t1"]);
    h.code(0)
        .stdout_has("rollback")
        .stdout_has("alice (OS user)")
        .stdout_has("INC-42 duplicate charge")
        .stdout_has("completed");
    let json = w.run(&["history", "t1", "--json"]).json();
    assert_eq!(json[0]["reason"], "INC-42 duplicate charge");
}

#[test]
fn a_crash_part_way_leaves_an_unfinished_record_that_history_shows() {
    let w = World::new();
    w.stage_old_pending();
    // What the CLI does, with the process "dying" after two steps: the
    // record is written first, and nothing completes it.
    let trail = w
        .block(estx::protocol::trail::Trail::open(&w.proto))
        .unwrap();
    let mut i = estx::protocol::trail::RecordDraft::new(
        estx::protocol::trail::ActionKind::Rollback,
        vec!["t1".into()],
        estx::protocol::trail::Interface::Cli,
    );
    i.reason = Some("INC-7".into());
    i.plan = vec!["terminate".into()];
    w.block(trail.begin(&i)).unwrap();
    w.stage_terminating("t1", 2);
    let h = w.run(&["history", "t1"]);
    h.code(0).stdout_has("UNFINISHED").stdout_has("INC-7");
    let json = w.run(&["history", "t1", "--json"]).json();
    assert_eq!(json[0]["status"], "running");
    assert_eq!(json[0]["finished_at"], Value::Null);
    // Finishing the rollback later is a second, complete record.
    w.run(&["rollback", "t1", "--force", "--reason", "finish INC-7"])
        .code(0);
    let json = w.run(&["history", "t1", "--json"]).json();
    assert_eq!(json.as_array().unwrap().len(), 2, "{json:#}");
    assert_eq!(json[1]["status"], "finished");
    assert_eq!(w.state("t1"), "rolled-back");
}

#[test]
fn read_only_writes_nothing_not_even_the_trail() {
    let w = World::new();
    w.stage_old_pending();
    let before = w.txn("t1");
    w.run(&["rollback", "t1", "--read-only"])
        .code(1)
        .stderr_has("read-only");
    w.g.run_env(
        &[("ESTX_READ_ONLY", "1")],
        &["release-lock", "A", "--force"],
    )
    .code(1);
    assert_eq!(w.txn("t1"), before);
    assert!(w.audit_records().is_empty());
}

#[test]
fn a_missing_reason_is_refused_with_nothing_written() {
    let w = World::new();
    w.stage_old_pending();
    let before = w.txn("t1");
    for args in [
        &["rollback", "t1"][..],
        &["recover", "t1", "--force"][..],
        &["release-lock", "A", "--force"][..],
        &["recover", "--all-stuck"][..],
    ] {
        w.g.run_env(&[("ESTX_REASON", "")], args)
            .code(2)
            .stderr_has("--reason");
    }
    w.g.run_env(
        &[("ESTX_REASON", "")],
        &["rollback", "t1", "--reason", "  "],
    )
    .code(2);
    assert_eq!(w.txn("t1"), before);
    assert!(w.audit_records().is_empty());
    // A plain recovery needs no reason (recorded without one).
    w.g.run_env(&[("ESTX_REASON", "")], &["recover", "t1"])
        .code(0);
    assert_eq!(w.audit_records().len(), 1);
}

#[test]
fn a_missing_audit_index_refuses_up_front() {
    let w = World::new();
    w.stage_old_pending();
    let (status, body) = common::http("DELETE", &w.url(&w.ix.audit, ""), None);
    assert_eq!(status, 200, "{body}");
    let before = w.txn("t1");
    w.run(&["rollback", "t1"])
        .code(1)
        .stderr_has("estx-tui init");
    assert_eq!(w.txn("t1"), before);
    w.run(&["init"])
        .code(0)
        .stdout_has(&format!("{}: created", w.ix.audit));
    w.run(&["rollback", "t1"]).code(0);
}
