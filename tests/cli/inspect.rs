//! `estx-tui` CLI tests: list and show.

use super::*;

#[test]
fn list_json_shape_and_filters() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.run(&["transfer", "A", "B", "10", "--id", "done"]).code(0);
    w.stage("half", "C", "D", 20, 2); // pending, fresh
    w.stage("old", "A", "C", 30, 0); // created, two hours old
    w.backdate("old", 120);
    w.put(
        &w.ix.transactions,
        "bad",
        &json!({"transaction_state": "pending", "dest_acct": "B", "modification_time": ago(0)}),
    );
    w.refresh();

    // By default: everything not finished or rolled back.
    let out = w.run(&["list", "--json"]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["half", "old", "bad"]), "{out}");
    let out = w.run(&["list", "--json", "--all"]);
    out.code(0);
    let rows = out.json();
    let arr = rows.as_array().expect("list --json prints an array");
    assert_eq!(ids(&rows), set(&["done", "half", "old", "bad"]), "{out}");
    for row in arr {
        for key in [
            "id",
            "state",
            "src_acct",
            "dest_acct",
            "amount",
            "modification_time",
            "age_seconds",
            "stuck",
            "needs_investigation",
            "problems",
        ] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
        assert!(row["problems"].is_array(), "{row}");
    }
    // Oldest modification first.
    assert_eq!(arr[0]["id"], "old", "{out}");
    let by_id = |id: &str| arr.iter().find(|r| r["id"] == id).unwrap().clone();
    let old = by_id("old");
    assert_eq!(old["state"], "created");
    assert_eq!(
        (old["src_acct"].clone(), old["amount"].clone()),
        (json!("A"), json!(30))
    );
    assert!(old["age_seconds"].as_i64().unwrap() >= 7190, "{old}");
    assert_eq!(
        (old["stuck"].clone(), old["needs_investigation"].clone()),
        (json!(true), json!(true))
    );
    let half = by_id("half");
    assert_eq!(half["state"], "pending");
    assert_eq!(half["stuck"], false, "fresh is not stuck: {half}");
    assert_eq!(half["problems"], json!([]));
    let done = by_id("done");
    assert_eq!(
        (done["state"].clone(), done["stuck"].clone()),
        (json!("finished"), json!(false))
    );
    let bad = by_id("bad");
    let problems = bad["problems"].as_array().unwrap();
    assert!(!problems.is_empty(), "{bad}");
    let text = bad["problems"].to_string();
    assert!(
        text.contains("amount") && text.contains("src_acct"),
        "{bad}"
    );

    let out = w.run(&["list", "--json", "--state", "pending"]);
    out.code(0);
    let pending = out.json();
    assert_eq!(ids(&pending), set(&["half", "bad"]), "{out}");
    assert!(pending
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["state"] == "pending"));

    let out = w.run(&[
        "list", "--json", "--state", "created", "--state", "finished",
    ]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["old", "done"]), "{out}");

    let out = w.run(&["list", "--json", "--older-than", "1h"]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["old"]), "{out}");

    let out = w.run(&["list", "--json", "--older-than", "3h"]);
    out.code(0);
    assert_eq!(out.json(), json!([]), "{out}");

    // The table: the same rows, `!!` on the old one, a summary line whose
    // counts are the rows'.
    let out = w.run(&["list", "--all"]);
    out.code(0)
        .stdout_has("4 transactions: 1 stuck, of which 1 need investigation (!!)");
    let old_line = out.stdout.lines().find(|l| l.contains(" old ")).unwrap();
    assert!(old_line.starts_with("!!"), "{out}");

    // Only what needs an operator.
    let out = w.run(&["list", "--json", "--stuck"]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["old"]), "{out}");
    let out = w.run(&["list", "--json", "--investigate"]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["old"]), "{out}");
    w.run(&["list", "--all", "--stuck"]).code(2);

    let out = w.run(&["list", "--state", "terminating"]);
    out.code(0).stdout_has("no transactions match");

    let out = w.run(&["list", "--older-than", "soon"]);
    out.code(2);
}

#[test]
fn show_json_of_a_half_applied_transfer() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("half", "A", "B", 100, 2); // pending, applied to the source only

    let out = w.run(&["show", "half", "--json"]);
    out.code(0);
    let d = out.json();
    for key in ["transaction", "accounts", "locks", "next_step"] {
        assert!(d.get(key).is_some(), "{key} missing: {out}");
    }
    assert_eq!(d["transaction"]["id"], "half");
    assert_eq!(d["transaction"]["state"], "pending");
    assert_eq!(d["transaction"]["amount"], 100);
    let accounts = d["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 2, "{out}");
    for a in accounts {
        for key in [
            "id",
            "balance",
            "pending_transactions",
            "has_this_transaction",
        ] {
            assert!(a.get(key).is_some(), "{key} missing in {a}");
        }
    }
    assert_eq!(accounts[0]["id"], "A");
    assert_eq!(accounts[0]["balance"], 400);
    assert_eq!(accounts[0]["pending_transactions"], json!(["half"]));
    assert_eq!(accounts[0]["has_this_transaction"], true);
    assert_eq!(accounts[1]["id"], "B");
    assert_eq!(accounts[1]["balance"], 500);
    assert_eq!(accounts[1]["has_this_transaction"], false);
    assert_eq!(d["locks"], json!([]));
    let next = d["next_step"].as_str().expect("a next step");
    assert!(next.contains("apply to destination"), "{out}");
    assert_eq!(d["recover"]["ends_in"], "finished", "{out}");
    assert_eq!(d["rollback"]["ends_in"], "rolled-back", "{out}");

    let text = w.run(&["show", "half"]);
    text.code(0)
        .stdout_has("half")
        .stdout_has("pending")
        .stdout_has("next step")
        .stdout_has("apply to destination")
        .stdout_has("recover would:")
        .stdout_has("rollback would:");

    // The transaction is `list --json`'s row, every column (undated, cause
    // and in_job too), without the as-of time (the age, and with it the
    // cause's evidence in words, may have ticked between the runs).
    w.backdate("half", 120);
    let shown = w.run(&["show", "half", "--json"]).code(0).json()["transaction"].clone();
    let listed = w.run(&["list", "--json"]).code(0).json()[0].clone();
    let without = |v: &Value, drop: &[&str]| {
        let mut m = v.as_object().expect("an object").clone();
        for k in drop {
            m.shift_remove(*k);
        }
        m
    };
    let shown_keys: Vec<&String> = shown.as_object().expect("an object").keys().collect();
    // `as_of` is the listing's (when it was read); the cause and the live
    // job holding the row (`in_job`) are judged alike by both.
    let listed_row = without(&listed, &["as_of"]);
    assert_eq!(
        shown_keys,
        listed_row.keys().collect::<Vec<_>>(),
        "{shown:#}"
    );
    assert_eq!(
        without(&shown, &["age_seconds", "cause"]),
        without(&listed, &["as_of", "age_seconds", "cause"])
    );
    assert_eq!(
        shown["cause"]["cause"], listed["cause"]["cause"],
        "{shown:#}"
    );
    assert!(shown["cause"]["cause"].is_string(), "{shown:#}");
    assert_eq!(shown["needs_investigation"], true, "{shown:#}");
    assert_eq!(shown["undated"], false, "{shown:#}");

    // Read-only: nothing changed.
    assert_eq!((w.balance("A"), w.balance("B")), (400, 500));
    assert_eq!(w.state("half"), "pending");

    for json_flag in [true, false] {
        let mut args = vec!["show", "nope"];
        if json_flag {
            args.push("--json");
        }
        let out = w.run(&args);
        out.code(1).stderr_has("`nope`").stderr_has("not found");
        assert!(out.stdout.is_empty(), "{out}");
    }
}

/// Issue 9: `list` on a cluster whose history holds 50 000 finished
/// transactions prints only the in-flight ones (finished documents seeded
/// with `_bulk`, not through the protocol).
#[test]
fn list_on_a_large_history_prints_only_the_in_flight() {
    const FINISHED: usize = 50_000;
    const CHUNK: usize = 5_000;
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    let stamp = ago(30);
    for start in (0..FINISHED).step_by(CHUNK) {
        let mut body = String::new();
        for i in start..start + CHUNK {
            let state = if i % 2 == 0 {
                "finished"
            } else {
                "rolled-back"
            };
            body.push_str(&json!({"index": {"_id": format!("hist-{i:05}")}}).to_string());
            body.push('\n');
            body.push_str(
                &json!({
                    "transaction_state": state,
                    "src_acct": "A",
                    "dest_acct": "B",
                    "amount": 1,
                    "modification_time": stamp,
                })
                .to_string(),
            );
            body.push('\n');
        }
        let (status, resp) = common::http("POST", &w.url(&w.ix.transactions, "_bulk"), Some(&body));
        assert!((200..300).contains(&status), "_bulk: {status} {resp}");
        let resp: Value = serde_json::from_str(&resp).unwrap();
        assert_eq!(resp["errors"], json!(false), "_bulk reported item errors");
    }
    w.stage("half", "C", "D", 20, 2); // pending
    w.stage("old", "A", "C", 30, 0); // created, two hours old
    w.backdate("old", 120);
    w.stage("committed", "B", "D", 5, 5); // committed
    w.refresh();
    assert_eq!(w.count(&w.ix.transactions), FINISHED as u64 + 3);

    let out = w.run(&["list", "--json"]);
    out.code(0);
    assert_eq!(
        ids(&out.json()),
        set(&["half", "old", "committed"]),
        "{out}"
    );

    // The table: one row per in-flight transaction, none from the history,
    // and a summary that counts the rows printed.
    let out = w.run(&["list"]);
    out.code(0)
        .stdout_has("3 transactions: 1 stuck, of which 1 need investigation (!!)");
    assert!(
        !out.stdout.contains("hist-"),
        "a finished row was printed: {out}"
    );
    for id in [" half ", " old ", " committed "] {
        assert_eq!(
            out.stdout.lines().filter(|l| l.contains(id)).count(),
            1,
            "{id}: {out}"
        );
    }
}
