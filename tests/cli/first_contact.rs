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
