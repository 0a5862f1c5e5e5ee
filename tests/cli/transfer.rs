//! `estx-tui` CLI tests: init and transfer.

use super::*;

#[test]
fn init_creates_the_indices_and_is_idempotent() {
    let w = World::bare();
    let first = w.run(&["init"]);
    first.code(0);
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks, &w.ix.audit] {
        first.stdout_has(&format!("{index}: created"));
        let (status, body) = common::http("HEAD", &w.url(index, ""), None);
        assert_eq!(status, 200, "{index} after init: {body}");
    }
    let second = w.run(&["init"]);
    second.code(0);
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks, &w.ix.audit] {
        second.stdout_has(&format!("{index}: already exists"));
    }
    assert!(!second.stdout.contains("created"), "{second}");
}

#[test]
fn transfer_runs_the_seven_core_steps() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let out = w.run(&["transfer", "A", "B", "100", "--id", "t1"]);
    out.code(0).stdout_has("t1").stdout_has("finished");
    let steps: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("core "))
        .collect();
    assert_eq!(steps.len(), 7, "{out}");
    for (i, line) in steps.iter().enumerate() {
        assert!(
            line.trim_start().starts_with(&format!("core {}:", i + 1)),
            "{out}"
        );
        assert!(line.contains("updated"), "{out}");
    }
    assert!(out.stderr.is_empty(), "{out}");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());
    assert_eq!(w.state("t1"), "finished");
    // Logs go to --log-file, never to the terminal.
    let log = std::fs::read_to_string(&w.g.log).unwrap_or_default();
    assert!(!log.is_empty(), "nothing logged to {}", w.g.log.display());

    // A generated id works as well.
    let out = w.run(&["transfer", "B", "A", "50"]);
    out.code(0).stdout_has("completed: transaction is finished");
    assert_eq!((w.balance("A"), w.balance("B")), (450, 550));
}

#[test]
fn invalid_transfers_are_refused_without_writing() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);

    // Same account: the library refuses (Error::Invalid), exit 1 with why.
    let out = w.run(&["transfer", "A", "A", "5", "--id", "same"]);
    out.code(1).stderr_has("both `A`");
    assert!(w.source(&w.ix.transactions, "same").is_none());

    // Unknown account: exit 1 naming it.
    let out = w.run(&["transfer", "A", "nope", "5", "--id", "nope1"]);
    out.code(1).stderr_has("`nope`").stderr_has("not found");
    assert!(w.source(&w.ix.transactions, "nope1").is_none());

    // Non-positive amounts are usage errors (clap's range check).
    for amount in ["0", "-5"] {
        let out = w.run(&["transfer", "A", "B", amount, "--id", "zero"]);
        out.code(2).stderr_has("AMOUNT");
        assert!(w.source(&w.ix.transactions, "zero").is_none());
    }
    let out = w.run(&["transfer", "A", "B", "lots"]);
    out.code(2);
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));
}

#[test]
fn transfer_with_an_existing_id_changes_nothing() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100", "--id", "X"]).code(0);
    let before = (w.acct("A"), w.acct("B"), w.txn("X"));
    let again = w.run(&["transfer", "A", "B", "100", "--id", "X"]);
    again.code(1).stderr_has("already exists");
    assert!(!again.stdout.contains("core 1"), "{again}");
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("X")), before);
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
}

#[test]
fn transfer_with_locks_takes_and_releases_both() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let out = w.run(&["transfer", "A", "B", "25", "--locks", "--id", "L"]);
    out.code(0)
        .stdout_has("holding locks on both accounts")
        .stdout_has("completed: transaction is finished");
    let count = |what: &str| {
        out.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        (count("acquire lock"), count("core "), count("release lock")),
        (2, 7, 2),
        "{out}"
    );
    assert_eq!((w.balance("A"), w.balance("B")), (475, 525));
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
    w.refresh();
    w.run(&["locks"]).code(0).stdout_has("no locks held");
}

/// `transfer --json`: every exit path prints the transaction, the state it
/// reached and by whom, each step, the verdict and the exit code.
#[test]
fn transfer_json_outcome_for_every_exit_path() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);

    // Done by this process: 0.
    let out = w.run(&["transfer", "A", "B", "10", "--id", "j-done", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["txn"], "j-done", "{out}");
    assert_eq!(j["final_state"], "finished");
    assert_eq!(j["reached_by"], "this process");
    assert_eq!(j["started_in"], Value::Null);
    assert_eq!(j["verdict"]["kind"], "completed");
    assert_eq!(j["exit_code"], 0);
    let steps = j["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 7, "{out}");
    assert!(steps.iter().all(|s| s["result"] == "updated"), "{out}");
    assert_eq!(steps[1]["label"], "core 2: apply to source");
    assert_eq!(steps[1]["target"], format!("{}/A", w.ix.accounts));
    // Nothing but the JSON on stdout, nothing on stderr.
    assert!(out.stderr.is_empty(), "{out}");

    // Refused with nothing written: 1.
    let out = w.run(&["transfer", "A", "nope", "10", "--id", "j-ref", "--json"]);
    out.code(1);
    assert_eq!(out.json()["verdict"]["kind"], "failed", "{out}");
    assert_eq!(out.json()["exit_code"], 1);
    assert!(w.source(&w.ix.transactions, "j-ref").is_none());
    let out = w.run(&["transfer", "A", "B", "10", "--id", "j-done", "--json"]);
    out.code(1);
    assert_eq!(out.json()["verdict"]["kind"], "refused", "{out}");
    assert_eq!(out.json()["steps"], json!([]));

    // Stopped part-way and left for recovery: 5. Every read of B is lost
    // once the source is applied, so the destination step gives up.
    let proxy = common::FaultProxy::start(&w.g.url);
    proxy.drop_responses("GET", &format!("/{}/_doc/B", w.ix.accounts), 1000);
    let mut via = w.g.clone();
    via.url = proxy.url();
    let out = via.run(&[
        "--timeout",
        "2s",
        "transfer",
        "A",
        "B",
        "10",
        "--id",
        "j-part",
        "--json",
    ]);
    out.code(5);
    let j = out.json();
    assert_eq!(j["final_state"], "pending", "{out}");
    assert_eq!(j["reached_by"], "this process");
    assert_eq!(j["verdict"]["kind"], "failed");
    assert_eq!(j["exit_code"], 5);
    let steps = j["steps"].as_array().unwrap();
    assert_eq!(steps.last().unwrap()["result"], "failed", "{out}");
    assert_eq!(
        steps.last().unwrap()["target"],
        format!("{}/B", w.ix.accounts)
    );
    assert_eq!(w.state("j-part"), "pending");
    // ... and recovery finishes it.
    let out = w.run(&["recover", "j-part", "--force", "--json"]);
    out.code(0);
    assert_eq!(out.json()["started_in"], "pending", "{out}");
    assert_eq!(out.json()["final_state"], "finished");
    assert_eq!((w.balance("A"), w.balance("B")), (480, 520));

    // Cluster unreachable: 3, nothing to report but the error (the audit
    // record cannot even be written, so the transfer does not start).
    let mut nowhere = w.g.clone();
    nowhere.url = "http://127.0.0.1:9".into();
    let out = nowhere.run(&["transfer", "A", "B", "10", "--id", "j-unr", "--json"]);
    out.code(3).stderr_has("unreachable");
    let j = out.json();
    assert_eq!(j["exit_code"], 3, "{out}");
    assert!(j["error"].as_str().unwrap().contains("nothing was written"));
    let out = nowhere.run(&["recover", "--all-stuck", "--json"]);
    out.code(3);
    assert_eq!(out.json()["exit_code"], 3, "{out}");
    assert!(out.json()["error"]
        .as_str()
        .unwrap()
        .contains("unreachable"));
}

/// A locked transfer whose transaction another process finishes while it
/// waits for a lock reports it done by another process (exit 0), not
/// "cancelled".
#[test]
fn transfer_finished_by_another_process_is_done() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let now = ago(0);
    w.put(
        &w.ix.transactions,
        "holder",
        &json!({"src_acct": "X", "dest_acct": "Y", "amount": 1, "transaction_state": "pending",
                "creation_time": now, "modification_time": now}),
    );
    w.put(
        &w.ix.locks,
        "B",
        &json!({"owner": "holder", "process_id": "other", "created_at": now, "expires_at": ago(-10)}),
    );
    let (mut c, cmd) = w.g.command(
        &[],
        &[
            "transfer", "A", "B", "10", "--id", "j-else", "--locks", "--json",
        ],
    );
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It holds A (taken first) and waits for B.
    common::wait_until_blocking("the transfer holds A", Duration::from_secs(10), || {
        w.source(&w.ix.locks, "A")
            .is_some_and(|l| l["owner"] == "j-else")
    });
    let r = w.block(w.proto.recover("j-else", true));
    assert!(
        matches!(r.verdict, Verdict::Completed(_)),
        "{:?}",
        r.verdict
    );
    w.block(w.proto.release_lock("B", true)).unwrap();
    let output = child.wait_with_output().unwrap();
    let out = Out {
        cmd,
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    out.code(0);
    let j = out.json();
    assert_eq!(j["verdict"]["kind"], "done_elsewhere", "{out}");
    assert_eq!(j["final_state"], "finished");
    assert_eq!(j["reached_by"], "another process");
    assert!(!out.stdout.contains("cancelled"), "{out}");
    assert_eq!((w.balance("A"), w.balance("B")), (490, 510));
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
}
