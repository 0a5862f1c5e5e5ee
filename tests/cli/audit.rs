//! `estx-tui` CLI tests: audit.

use super::*;

#[test]
fn audit_of_a_clean_world() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100"]).code(0);
    w.refresh();

    let out = w.run(&["audit", "--json"]);
    out.code(0);
    let r = out.json();
    assert_eq!(r["findings"], json!([]), "{out}");
    assert_eq!(r["total_balance"], 1000, "{out}");

    w.run(&["audit", "--expect-total", "1000"])
        .code(0)
        .stdout_has("no findings")
        .stdout_has("1000");

    let out = w.run(&["audit", "--json", "--expect-total", "999"]);
    out.code(1);
    let r = out.json();
    let kinds: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["total_mismatch"], "{out}");

    w.run(&["audit", "--expect-total", "-3"])
        .code(1)
        .stdout_has("total_mismatch");
}

#[test]
fn audit_finds_and_repairs_a_dangling_pending_entry() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("rb", "A", "B", 100, 2);
    w.run(&["rollback", "rb", "--force"]).code(0);
    assert_eq!(w.state("rb"), "rolled-back");
    // A late, unfenced writer applies the rolled-back transfer to A again.
    w.put(
        &w.ix.accounts,
        "A",
        &json!({"balance": 400, "pending_transactions": ["rb"]}),
    );
    w.refresh();

    let out = w.run(&["audit", "--json"]);
    out.code(1);
    let r = out.json();
    let findings = r["findings"].as_array().unwrap();
    let dangling = findings
        .iter()
        .find(|f| f["kind"] == "dangling_pending")
        .unwrap_or_else(|| panic!("no dangling_pending: {out}"));
    assert_eq!(dangling["id"], "A", "{out}");
    assert!(dangling["detail"].as_str().unwrap().contains("rb"), "{out}");
    assert_eq!(r["total_balance"], 900, "{out}");

    // The text form names it too.
    w.run(&["audit"]).code(1).stdout_has("dangling_pending");

    let out = w.run(&["audit", "--json", "--repair"]);
    out.code(0);
    let r = out.json();
    assert_eq!(r["findings"], json!([]), "{out}");
    assert_eq!(r["repairs"].as_array().map(Vec::len), Some(1), "{out}");
    assert_eq!(r["total_balance"], 1000, "{out}");
    assert_eq!(w.balance("A"), 500);
    assert!(w.pending("A").is_empty());

    w.refresh();
    let out = w.run(&["audit", "--json", "--expect-total", "1000"]);
    out.code(0);
    assert_eq!(out.json()["findings"], json!([]), "{out}");
}
