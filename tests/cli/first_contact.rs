//! First contact without the audit index (issue 18, item 8): `doctor`
//! names the missing audit index and never says everything works when
//! every intervention would be refused; the refusal itself writes nothing.

use super::*;

#[test]
fn doctor_names_a_missing_audit_index_and_does_not_say_all_works() {
    let w = World::new();
    w.stage_old_pending();
    let (status, body) = common::http("DELETE", &w.url(&w.ix.audit, ""), None);
    assert_eq!(status, 200, "{body}");
    let out = w.run(&["doctor"]);
    out.code(1)
        .stdout_has(&format!(
            "warn  audit index `{}` does not exist",
            w.ix.audit
        ))
        .stdout_has("run `estx-tui init`");
    assert!(
        !out.stdout.contains("everything the tool needs works here"),
        "{out}"
    );
    let j = w.run(&["doctor", "--json"]).json();
    let named = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["text"].as_str().unwrap_or("").contains(&w.ix.audit));
    assert!(named, "{j:#}");
    w.run(&["recover", "t1"])
        .code(1)
        .stderr_has("does not exist");
    assert_eq!(w.state("t1"), "pending", "nothing written");
    // With the index back, doctor says all works again.
    w.run(&["init"]).code(0);
    w.run(&["doctor"])
        .code(0)
        .stdout_has("everything the tool needs works here");
}

#[test]
fn without_the_audit_index_a_file_trail_records_every_intervention() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    w.stage_old_pending();
    w.stage("t2", "A", "B", 10, 2);
    w.backdate("t2", 10);
    let (status, body) = common::http("DELETE", &w.url(&w.ix.audit, ""), None);
    assert_eq!(status, 200, "{body}");
    // The refusal names both ways forward, and writes nothing.
    w.run(&["rollback", "t1"])
        .code(1)
        .stderr_has("run `estx-tui init` first")
        .stderr_has("--audit-trail file:PATH");
    assert_eq!(w.state("t1"), "pending");

    let path = w._dir.path().join("trail.jsonl");
    let spec = format!("file:{}", path.display());
    w.run(&["rollback", "t1", "--audit-trail", &spec]).code(0);
    assert_eq!(w.state("t1"), "rolled-back");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "begun, then completed: {lines:#?}");
    assert_eq!(lines[0]["status"], "running");
    assert_eq!(lines[1]["status"], "finished");
    assert_eq!(lines[1]["outcome"], "completed");
    assert_eq!(lines[0]["record_id"], lines[1]["record_id"]);
    for l in &lines {
        let targets: Vec<&str> = l["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(
            targets.contains(&format!("--audit-trail={spec}").as_str()),
            "every record names the file: {l}"
        );
    }
    assert!(!lines[1]["steps"].as_array().unwrap().is_empty());

    // Never through a symlink: refused, nothing written.
    let link = w._dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let out = w.run(&[
        "rollback",
        "t2",
        "--audit-trail",
        &format!("file:{}", link.display()),
    ]);
    assert_ne!(out.code, 0, "{out}");
    assert_eq!(w.state("t2"), "pending", "nothing written: {out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
}
