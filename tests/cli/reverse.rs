//! `reverse ID` from the command line: the JSON outcome, a second run
//! refused naming the first reversal, the audit record with its reason, and
//! the refusals that write nothing (no reason, read-only, not finished).

use super::*;

/// A finished transfer `t1` (A -> B, 100) on accounts of 500.
fn finished(w: &World) {
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100", "--id", "t1"]).code(0);
    assert_eq!(w.state("t1"), "finished");
}

#[test]
fn reverse_prints_json_records_the_reason_and_refuses_a_second_time() {
    let w = World::new();
    finished(&w);
    let out = w.g.run_env(
        &[("ESTX_REASON", "")],
        &["reverse", "t1", "--json", "--reason", "INC-7 wrong payee"],
    );
    out.code(0);
    let v = out.json();
    assert_eq!(v["outcome"], "reversed", "{out}");
    assert_eq!(v["reversal"], "t1-reversal");
    assert_eq!(v["src"], "B");
    assert_eq!(v["dest"], "A");
    assert_eq!(v["amount"], 100);
    assert_eq!(v["exit_code"], 0);
    assert!(v["steps"].as_array().unwrap().len() >= 9, "{v:#}");
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));
    assert_eq!(w.txn("t1")["reversed_by"], "t1-reversal");
    assert_eq!(w.txn("t1-reversal")["reverses"], "t1");

    let again = w.run(&["reverse", "t1"]);
    again
        .code(1)
        .stderr_has("already reversed by `t1-reversal`");
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));

    let h = w.run(&["history", "t1-reversal", "--json"]);
    let records = h.code(0).json();
    let reverse: Vec<&Value> = records
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "reverse")
        .collect();
    assert_eq!(reverse.len(), 2, "{records:#}");
    assert_eq!(reverse[0]["reason"], "INC-7 wrong payee");
    assert_eq!(reverse[0]["outcome"], "completed");
    assert_eq!(reverse[0]["transactions"], json!(["t1", "t1-reversal"]));
    assert_eq!(reverse[1]["outcome"], "refused");
}

#[test]
fn refusals_write_nothing() {
    let w = World::new();
    finished(&w);
    w.g.run_env(&[("ESTX_REASON", "")], &["reverse", "t1"])
        .code(2)
        .stderr_has("--reason");
    w.run(&["--read-only", "reverse", "t1"])
        .code(1)
        .stderr_has("read-only");
    assert!(w.source(&w.ix.transactions, "t1-reversal").is_none());
    assert!(w.txn("t1").get("reversed_by").is_none());
    // Committed: refused without --finish-committed, finished with it.
    w.stage("t2", "A", "B", 50, 5);
    w.run(&["reverse", "t2"])
        .code(1)
        .stderr_has("--finish-committed");
    assert_eq!(w.state("t2"), "committed");
    w.run(&["reverse", "t2", "--finish-committed", "--force"])
        .code(0)
        .stdout_has("t2: reversed by t2-reversal (B -> A, amount 50)");
    assert_eq!(w.state("t2"), "finished");
    // t1 (100) still stands; t2 (50) and its reversal cancel out.
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
}
