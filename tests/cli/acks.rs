//! `ack` and `unack` (issue 30 item 3): an acknowledged stuck transaction
//! is listed by `check` without alerting, left out of `recover
//! --all-stuck` (named, with who and until when) unless `--include-acked`,
//! comes back when its ack lapses or is taken back, and every ack and
//! unack is in the audit trail.

use super::*;

/// Two stuck pending transfers, `s1` (A -> B) and `s2` (C -> D).
fn two_stuck(w: &World) {
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.stage("s1", "A", "B", 10, 2);
    w.backdate("s1", 10);
    w.stage("s2", "C", "D", 10, 2);
    w.backdate("s2", 10);
    w.refresh();
}

/// `check --json`'s stuck count and the ids it lists as acknowledged.
fn check_stuck_and_acked(w: &World) -> (u64, Vec<String>, Value) {
    let out = w.run(&[
        "check",
        "--json",
        "-w=stuck=",
        "-c=stuck=",
        "-w=audit_findings=",
        "-c=audit_findings=",
    ]);
    let j = out.json();
    let stuck = j["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "stuck")
        .and_then(|m| m["count"].as_u64())
        .unwrap_or_else(|| panic!("no stuck count: {out}"));
    let acked = j["acked"]
        .as_array()
        .unwrap_or_else(|| panic!("no acked list: {out}"))
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    (stuck, acked, j)
}

fn state(w: &World, id: &str) -> String {
    w.source(&w.ix.transactions, id).unwrap()["transaction_state"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn an_acked_transaction_is_listed_not_alerted_and_left_out_of_bulk_acts() {
    let w = World::new();
    two_stuck(&w);
    assert_eq!(check_stuck_and_acked(&w).0, 2);

    w.run(&[
        "ack",
        "s1",
        "--for",
        "2h",
        "--reason",
        "finance is on it",
        "--ticket",
        "https://t/9",
    ])
    .code(0)
    .stdout_has("s1: acknowledged until");

    let (stuck, acked, j) = check_stuck_and_acked(&w);
    assert_eq!(stuck, 1, "{j:#}");
    assert_eq!(acked, vec!["s1"], "{j:#}");
    assert_eq!(j["acked"][0]["reason"], "finance is on it", "{j:#}");
    assert_eq!(j["acked"][0]["ticket"], "https://t/9", "{j:#}");
    assert!(
        j["acked"][0]["acked_by"]
            .as_str()
            .is_some_and(|b| !b.is_empty()),
        "{j:#}"
    );
    // The long output names it apart, with its ack.
    w.run(&["check", "-w=audit_findings=", "-c=audit_findings="])
        .stdout_has("1 stuck")
        .stdout_has("1 acknowledged")
        .stdout_has("acknowledged stuck transactions, not alerting (1 of 1):")
        .stdout_has("finance is on it");

    // `recover --all-stuck` leaves it out, named with who and until when.
    let out = w.run(&["recover", "--all-stuck", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["left_out"][0]["txn"], "s1", "{out}");
    assert_eq!(j["left_out"][0]["verdict"]["kind"], "acked", "{out}");
    let why = j["left_out"][0]["verdict"]["message"].as_str().unwrap();
    assert!(
        why.contains("acknowledged by ") && why.contains(" until "),
        "{why}"
    );
    assert_eq!(state(&w, "s1"), "pending");
    assert_eq!(state(&w, "s2"), "finished");

    // `--include-acked` takes it.
    w.refresh();
    let out = w.run(&["recover", "--all-stuck", "--include-acked", "--json"]);
    out.code(0);
    assert_eq!(out.json()["left_out"], json!([]), "{out}");
    assert_eq!(state(&w, "s1"), "finished");
}

#[test]
fn an_ack_lapses_on_its_own_and_unack_takes_it_back() {
    let w = World::new();
    two_stuck(&w);
    w.run(&["ack", "s1", "s2", "--for", "1h", "--reason", "known"])
        .code(0);
    assert_eq!(check_stuck_and_acked(&w).0, 0);

    // s1's ack lapses: its `until` backdated, as documents are.
    let mut ack = w.source(&w.ix.acks, "s1").expect("the ack document");
    ack["until"] = json!(ago(1));
    w.put(&w.ix.acks, "s1", &ack);
    common::refresh(&w.g.url, &w.ix.acks);
    let (stuck, acked, j) = check_stuck_and_acked(&w);
    assert_eq!((stuck, acked), (1, vec!["s2".to_string()]), "{j:#}");

    // s2's is taken back.
    w.run(&["unack", "s2", "--reason", "finance is done"])
        .code(0)
        .stdout_has("s2: ack taken back");
    common::refresh(&w.g.url, &w.ix.acks);
    let (stuck, acked, j) = check_stuck_and_acked(&w);
    assert_eq!((stuck, acked.len()), (2, 0), "{j:#}");
    // Taking back what is not there says so and writes nothing.
    w.run(&["unack", "s2"])
        .code(0)
        .stdout_has("not acknowledged");

    // An ack wants a reason and a duration.
    w.g.run_env(&[("ESTX_REASON", "")], &["ack", "s1", "--for", "1h"])
        .code(2)
        .stderr_has("reason");
    w.run(&["ack", "s1"]).code(2).stderr_has("--for");

    // Every ack and unack is in the audit trail, under its transaction.
    let h = w.run(&["history", "s2", "--json"]);
    h.code(0);
    let actions: Vec<String> = h
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap().to_string())
        .collect();
    assert!(actions.contains(&"ack".to_string()), "{h}");
    assert_eq!(actions.iter().filter(|a| *a == "unack").count(), 2, "{h}");
    w.run(&["history", "s2"]).stdout_has("finance is done");
}
