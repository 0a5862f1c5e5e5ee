//! `estx-tui` CLI tests: rollback and recover.

use super::*;

#[test]
fn rollback_respects_the_recovery_window_unless_forced() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("live", "A", "B", 100, 2);
    let before = (w.acct("A"), w.acct("B"), w.txn("live"));

    let out = w.run(&["rollback", "live"]);
    out.code(1)
        .stderr_has("recovery window")
        .stderr_has("--force");
    assert_eq!(
        (w.acct("A"), w.acct("B"), w.txn("live")),
        before,
        "a refusal changed something"
    );

    let out = w.run(&["recover", "live"]);
    out.code(1)
        .stderr_has("recovery window")
        .stderr_has("--force");
    assert_eq!(
        (w.acct("A"), w.acct("B"), w.txn("live")),
        before,
        "a refusal changed something"
    );

    let out = w.run(&["rollback", "live", "--force"]);
    out.code(0).stdout_has("rolled-back");
    assert_eq!(w.state("live"), "rolled-back");
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());

    // Once rolled back, both commands have nothing to do.
    w.run(&["rollback", "live"])
        .code(0)
        .stdout_has("nothing to do");
    w.run(&["recover", "live", "--force"])
        .code(0)
        .stdout_has("nothing to do");

    w.run(&["rollback", "nope"]).code(1).stderr_has("`nope`");
}

#[test]
fn rollback_refuses_committed_and_has_nothing_to_do_when_finished() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("com", "A", "B", 100, 4); // committed
    w.backdate("com", 10);
    let before = (w.acct("A"), w.acct("B"), w.txn("com"));
    for force in [false, true] {
        let mut args = vec!["rollback", "com"];
        if force {
            args.push("--force");
        }
        let out = w.run(&args);
        out.code(1).stderr_has("committed");
        assert_eq!((w.acct("A"), w.acct("B"), w.txn("com")), before);
    }

    // Recovery finishes it (three steps from committed).
    let out = w.run(&["recover", "com"]);
    out.code(0)
        .stdout_has("finished")
        .stdout_has("was committed");
    assert_eq!(w.state("com"), "finished");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));

    w.run(&["transfer", "B", "A", "50", "--id", "fin"]).code(0);
    let before = (w.acct("A"), w.acct("B"), w.txn("fin"));
    let out = w.run(&["rollback", "fin"]);
    out.code(0)
        .stdout_has("nothing to do")
        .stdout_has("finished");
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("fin")), before);
}

#[test]
fn recover_one_transaction_with_force() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("r", "A", "B", 100, 3); // pending, applied to both
    let out = w.run(&["recover", "r", "--force"]);
    out.code(0)
        .stdout_has("completed: transaction is finished")
        .stdout_has("was pending");
    assert!(out.stdout.contains("core 4"), "{out}");
    assert_eq!(w.state("r"), "finished");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());

    w.run(&["recover", "r"]).code(0).stdout_has("nothing to do");
    w.run(&["recover", "nope", "--force"])
        .code(1)
        .stderr_has("`nope`");
}

#[test]
fn recover_all_stuck_finishes_every_stuck_transaction() {
    recover_all_stuck_case(&["--concurrency", "2"]);
}

#[test]
fn recover_all_stuck_in_small_batches_and_sequentially_agree() {
    recover_all_stuck_case(&["--batch-size", "2"]);
    recover_all_stuck_case(&["--sequential", "--concurrency", "2"]);
}

/// Four stuck transactions in every non-terminal state, one too recent to
/// touch: `recover --all-stuck` with `extra` finishes exactly the four.
fn recover_all_stuck_case(extra: &[&str]) {
    let w = World::new();
    for a in ["A", "B", "C", "D", "E", "F"] {
        w.account(a, 1000);
    }
    w.stage("s-created", "A", "B", 10, 0);
    w.stage("s-pending", "B", "C", 20, 2);
    w.stage("s-committed", "C", "D", 30, 5);
    w.stage("s-terminating", "D", "E", 40, 3);
    w.stage_terminating("s-terminating", 2);
    for id in ["s-created", "s-pending", "s-committed", "s-terminating"] {
        w.backdate(id, 10);
    }
    w.stage("fresh", "E", "F", 50, 2); // within the window: left alone
    w.refresh();

    let mut args = vec!["recover", "--all-stuck"];
    args.extend_from_slice(extra);
    let out = w.run(&args);
    out.code(0)
        .stdout_has("4 stuck transactions")
        .stdout_has("4 completed");
    for id in ["s-created", "s-pending", "s-committed", "s-terminating"] {
        assert!(
            out.stdout.contains(&format!("{id}: completed")),
            "{id}: {out}"
        );
    }
    assert!(!out.stdout.contains("fresh"), "{out}");
    assert_eq!(w.state("s-created"), "finished");
    assert_eq!(w.state("s-pending"), "finished");
    assert_eq!(w.state("s-committed"), "finished");
    assert_eq!(w.state("s-terminating"), "rolled-back");
    assert_eq!(w.state("fresh"), "pending");
    let balances: Vec<i64> = ["A", "B", "C", "D", "E", "F"]
        .iter()
        .map(|a| w.balance(a))
        .collect();
    // A->B 10, B->C 20, C->D 30 finished; D->E rolled back; E->F half applied.
    assert_eq!(balances, vec![990, 990, 990, 1030, 950, 1000]);
    assert_eq!(w.pending("E"), vec!["fresh".to_string()]);

    // Nothing stuck any more.
    w.refresh();
    let out = w.run(&["recover", "--all-stuck"]);
    out.code(0).stdout_has("nothing to do");
}

#[test]
fn malformed_and_unknown_transactions_are_refused() {
    let w = World::new();
    w.account("B", 500);
    w.put(
        &w.ix.transactions,
        "bad",
        &json!({"transaction_state": "pending", "dest_acct": "B", "modification_time": ago(600)}),
    );
    w.put(
        &w.ix.transactions,
        "odd",
        &json!({"transaction_state": "paused", "src_acct": "B", "dest_acct": "C", "amount": 5,
                "modification_time": ago(600)}),
    );
    let before = (w.txn("bad"), w.txn("odd"), w.acct("B"));

    // show still shows it, with its problems and no next step.
    let out = w.run(&["show", "bad", "--json"]);
    out.code(0);
    let d = out.json();
    assert!(
        !d["transaction"]["problems"].as_array().unwrap().is_empty(),
        "{out}"
    );
    assert_eq!(d["next_step"], Value::Null, "{out}");
    w.run(&["show", "odd"]).code(0).stdout_has("paused");

    for cmd in ["rollback", "recover"] {
        for force in [false, true] {
            let mut args = vec![cmd, "bad"];
            if force {
                args.push("--force");
            }
            w.run(&args).code(1).stderr_has("malformed");
            args[1] = "odd";
            w.run(&args).code(1).stderr_has("unknown state `paused`");
        }
    }
    w.refresh();
    let out = w.run(&["recover", "--all-stuck"]);
    out.code(1)
        .stdout_has("1 refused")
        .stderr_has("bad: refused");
    let out = w.run(&["audit", "--json"]);
    out.code(1);
    let kinds: BTreeSet<String> = out.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(
        kinds.contains("malformed_transaction") && kinds.contains("unknown_state"),
        "{out}"
    );
    assert_eq!(
        (w.txn("bad"), w.txn("odd"), w.acct("B")),
        before,
        "a refusal changed something"
    );
}

#[test]
fn recover_needs_exactly_one_target() {
    let w = World::new();
    let out = w.run(&["recover"]);
    out.code(2);
    assert!(out.stdout.is_empty(), "{out}");
    w.run(&["recover", "t1", "--all-stuck"]).code(2);
    w.run(&["recover", "--all-stuck", "--force"]).code(2);
    w.run(&["recover", "t1", "--concurrency", "2"]).code(2);
    w.run(&["recover", "--all-stuck", "--concurrency", "0"])
        .code(2);
    w.run(&["recover", "--all-stuck", "--batch-size", "0"])
        .code(2);
    w.run(&[
        "recover",
        "--all-stuck",
        "--sequential",
        "--batch-size",
        "9",
    ])
    .code(2);
    w.run(&["recover", "t1", "--sequential"]).code(2);
}

/// `rollback --json` and `recover --json`: refused (nothing written),
/// completed, nothing to do.
#[test]
fn rollback_and_recover_json_outcomes() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("com", "A", "B", 100, 5);
    w.backdate("com", 10);
    let before = (w.acct("A"), w.acct("B"), w.txn("com"));
    let out = w.run(&["rollback", "com", "--json"]);
    out.code(1);
    let j = out.json();
    assert_eq!(j["txn"], "com", "{out}");
    assert_eq!(j["verdict"]["kind"], "refused");
    assert!(j["verdict"]["message"]
        .as_str()
        .unwrap()
        .contains("committed"));
    assert_eq!(j["started_in"], "committed");
    assert_eq!(j["final_state"], "committed");
    assert_eq!(j["reached_by"], Value::Null);
    assert_eq!(j["steps"], json!([]));
    assert_eq!(j["exit_code"], 1);
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("com")), before);

    let out = w.run(&["recover", "com", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["verdict"]["kind"], "completed", "{out}");
    assert_eq!(j["final_state"], "finished");
    assert_eq!(j["reached_by"], "this process");
    let labels: Vec<&str> = j["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "core 5: remove from source",
            "core 6: remove from destination",
            "core 7: committed -> finished"
        ],
        "{out}"
    );

    // Already done (by whoever): nothing to do, 0, reached by nobody here.
    for cmd in ["recover", "rollback"] {
        let out = w.run(&[cmd, "com", "--json"]);
        out.code(0);
        let j = out.json();
        assert_eq!(j["verdict"]["kind"], "nothing_to_do", "{out}");
        assert_eq!(j["final_state"], "finished");
        assert_eq!(j["reached_by"], Value::Null);
    }
}

/// `recover ID` of a terminal transaction releases the locks it still holds;
/// `recover --all-stuck --json` lists every stuck transaction and every lock
/// whose owner is terminal that it released; a lock whose owner names no
/// transaction is no evidence and stays.
#[test]
fn recover_releases_leftover_locks_and_all_stuck_lists_every_item() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.run(&["transfer", "A", "B", "10", "--id", "fin"]).code(0);
    w.stage("stuck", "C", "D", 10, 2);
    w.backdate("stuck", 10);
    let lock = |resource: &str, owner: &str| {
        w.put(
            &w.ix.locks,
            resource,
            &json!({"owner": owner, "process_id": "dead", "created_at": ago(5), "expires_at": ago(-60)}),
        );
    };
    // The finished transfer's holder died before releasing.
    lock("A", "fin");
    let out = w.run(&["recover", "fin", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["verdict"]["kind"], "nothing_to_do", "{out}");
    assert_eq!(
        j["steps"],
        json!([{"label": "release lock", "target": format!("{}/A", w.ix.locks),
                "result": "updated", "detail": "lock released"}]),
        "{out}"
    );
    assert!(w.source(&w.ix.locks, "A").is_none());

    // Leaks again, plus a lock whose owner never existed and a live one.
    lock("B", "fin");
    lock("X", "ghost");
    lock("C", "stuck");
    w.refresh();
    let out = w.run(&["recover", "--all-stuck", "--json"]);
    out.code(0);
    let j = out.json();
    let txns = j["transactions"].as_array().unwrap();
    assert_eq!(txns.len(), 1, "{out}");
    assert_eq!(txns[0]["txn"], "stuck");
    assert_eq!(txns[0]["final_state"], "finished");
    assert_eq!(j["recovery_window_seconds"], 120.0);
    // The stuck transaction's own lock went with its recovery; the sweep
    // took the finished one's; the ghost's stays (unknown).
    let released: BTreeSet<String> = j["released_locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert_eq!(l["result"], "released", "{l}");
            l["resource"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(released, set(&["B"]), "{out}");
    assert_eq!(j["exit_code"], 0);
    w.refresh();
    assert_eq!(w.count(&w.ix.locks), 1);
    assert!(w.source(&w.ix.locks, "X").is_some());

    // Text form: says what it released.
    lock("B", "fin");
    w.refresh();
    let out = w.run(&["recover", "--all-stuck"]);
    out.code(0)
        .stdout_has("no stuck transactions")
        .stdout_has("lock `B` (owner `fin` is finished): released");
}
