//! `check` against the test server: every count from real documents, each
//! Nagios exit code at its threshold, the Prometheus text and JSON, and
//! UNKNOWN (3) when the cluster cannot be read.

use super::*;

/// The counts `check --json` printed, by key.
fn counts(out: &Out) -> BTreeMap<String, u64> {
    out.json()["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap().to_string(),
                m["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Every count's thresholds off (an empty range), then the ones given.
fn only<'a>(given: &[&'a str]) -> Vec<&'a str> {
    let mut argv = vec!["check"];
    for off in [
        "-w=stuck=",
        "-c=stuck=",
        "-w=needs_investigation=",
        "-c=needs_investigation=",
        "-w=odd_documents=",
        "-c=odd_documents=",
        "-w=stale_locks=",
        "-c=stale_locks=",
        "-w=audit_findings=",
        "-c=audit_findings=",
        "-w=recovery_stalled=",
        "-c=recovery_stalled=",
    ] {
        argv.push(off);
    }
    argv.extend(given);
    argv
}

#[test]
fn every_count_and_exit_code_from_real_documents() {
    let w = World::new();
    // A healthy, empty cluster: OK with the default thresholds.
    w.run(&["check"])
        .code(0)
        .stdout_has("ESTX OK - 0 stuck, 0 needing investigation");

    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.stage("s1", "A", "B", 10, 2);
    w.backdate("s1", 10); // stuck
    w.stage("s2", "C", "D", 10, 5);
    w.backdate("s2", 180); // stuck for 3 h: needs investigation
    w.stage("fresh", "A", "C", 10, 2); // recent: not stuck
    w.put(
        &w.ix.transactions,
        "odd",
        &json!({"src_acct": "A", "dest_acct": "B", "amount": 1, "transaction_state": "paused",
                "modification_time": ago(5)}),
    );
    w.put(
        &w.ix.locks,
        "Z",
        &json!({"owner": "ghost", "process_id": "w", "created_at": ago(30), "expires_at": ago(20)}),
    );
    w.refresh();

    let out = w.run(&["check", "--json"]);
    let c = counts(&out);
    assert_eq!(c["stuck"], 2, "{out}");
    assert_eq!(c["needs_investigation"], 1, "{out}");
    assert_eq!(c["odd_documents"], 1, "{out}");
    assert_eq!(c["stale_locks"], 1, "{out}");
    assert!(c["audit_findings"] >= 1, "{out}");
    assert_eq!(out.json()["status"], "CRITICAL", "{out}");
    out.code(2);

    // Each count alone, by Monitoring Plugins ranges: n within the warning
    // range -> 0, above it -> 1, inside an @ critical range -> 2.
    // Nobody recovers the stuck ones: the application's recovery reads
    // stalled (s1 has waited longer than three recovery windows).
    assert_eq!(c["recovery_stalled"], 1, "{out}");
    let cases: [(&str, u64); 6] = [
        ("stuck", 2),
        ("needs_investigation", 1),
        ("odd_documents", 1),
        ("stale_locks", 1),
        ("audit_findings", c["audit_findings"]),
        ("recovery_stalled", 1),
    ];
    for (key, n) in cases {
        let run = |flags: [String; 2]| {
            let given: Vec<&str> = flags.iter().map(String::as_str).collect();
            w.run(&only(&given)).code
        };
        let (within, below) = (format!("-w={key}={n}"), format!("-w={key}={}", n - 1));
        let (crit_off, crit_in) = (format!("-c={key}="), format!("-c={key}=@{n}:{n}"));
        assert_eq!(
            run([within.clone(), crit_off.clone()]),
            0,
            "{key}: within the warning range"
        );
        assert_eq!(
            run([below.clone(), crit_off]),
            1,
            "{key}: above the warning range"
        );
        assert_eq!(
            run([within, format!("-c={key}={}:", n + 1)]),
            2,
            "{key}: below the critical range"
        );
        assert_eq!(
            run([below, crit_in]),
            2,
            "{key}: inside the @ critical range"
        );
    }
    w.run(&only(&[])).code(0).stdout_has("ESTX OK - 2 stuck");

    // The old flags still work, with a deprecation line naming the range.
    let old = w.run(&[
        "check",
        "--warn-stuck",
        "2",
        "--crit-investigate",
        "0",
        "-w=odd_documents=",
        "-w=stale_locks=",
        "-c=audit_findings=",
    ]);
    old.code(1)
        .stderr_has("--warn-stuck is deprecated; --warn-stuck 2 is -w stuck=1")
        .stderr_has("--crit-investigate 0 is -c needs_investigation=")
        .stdout_has("stuck=2;1;;0 needs_investigation=1;;;0");

    let prom = w.run(&["check", "--format", "prometheus", "-w", "3"]);
    prom.code(2)
        .stdout_has("# TYPE estx_stuck_transactions gauge\nestx_stuck_transactions 2\n")
        .stdout_has("# HELP estx_stale_locks ")
        .stdout_has("estx_odd_transaction_documents 1\n")
        .stdout_has("estx_check_up 1\n")
        .stdout_has("estx_check_status 2");
    // --output writes the same text atomically.
    let file = w.g.log.with_file_name("estx.prom");
    let path = file.display().to_string();
    w.run(&["check", "--format", "prometheus", "--output", &path])
        .code(2);
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("estx_stuck_transactions 2\n"), "{written}");
}

/// The done-when: `check -c 0` with one stuck transaction exits 2
/// (0 alerts above 0), and the long output names it: id, state, age, route
/// and its cause (no lock, no hot account, the application not seen
/// recovering: unknown, investigate).
#[test]
fn c_zero_with_one_stuck_transaction_is_critical_and_names_it() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("t-stuck", "A", "B", 10, 2);
    w.backdate("t-stuck", 10);
    w.refresh();
    let out = w.run(&["check", "-c", "0"]);
    out.code(2)
        .stdout_has("ESTX CRITICAL - 1 stuck")
        .stdout_has("| stuck=1;0;0;0 ")
        .stdout_has("\nstuck transactions, oldest first (1 of 1):\nt-stuck pending 10m")
        .stdout_has(
            " A -> B - cause: unknown (no lock, no hot account, and the application is \
             not seen recovering): safe act: investigate\n",
        );
    let j = w.run(&["check", "--format", "json", "-c", "stuck=0"]);
    j.code(2);
    assert_eq!(j.json()["stuck"][0]["id"], "t-stuck", "{j}");
    assert_eq!(j.json()["stuck"][0]["cause"]["cause"], "unknown", "{j}");
    assert_eq!(j.json()["metrics"][0]["crit"], "0", "{j}");
    // --top 0: the status line only.
    let short = w.run(&["check", "-c", "0", "--top", "0"]);
    assert_eq!(short.code(2).stdout.lines().count(), 1, "{short}");
}

#[test]
fn an_unreadable_cluster_is_unknown() {
    let mut w = World::bare();
    w.g.url = "http://127.0.0.1:9".into();
    let out = w.run(&["--timeout", "2s", "check"]);
    out.code(3)
        .stdout_has("ESTX UNKNOWN - cannot read the cluster");
    let prom = w.run(&["--timeout", "2s", "check", "--format", "prometheus"]);
    prom.code(3)
        .stdout_has("estx_check_up 0\n")
        .stdout_has("estx_check_status 3");
    let json = w.run(&["--timeout", "2s", "check", "--json"]);
    json.code(3);
    assert_eq!(json.json()["status"], "UNKNOWN");
}

/// The healing verdict from real documents: nothing stuck is idle (no
/// alert); stuck ones nobody moves read stalled, with the evidence in the
/// long output and the JSON; one the operator recovered is no healing; one
/// the application moved out of its stuck state (no operator record) reads
/// healing.
#[test]
fn the_healing_verdict_idle_stalled_then_healing() {
    let w = World::new();
    for a in ["A", "B"] {
        w.account(a, 500);
    }
    let idle = w.run(&["check", "--json"]);
    assert_eq!(idle.json()["healing"]["verdict"], "idle", "{idle}");
    assert_eq!(counts(&idle)["recovery_stalled"], 0, "{idle}");
    idle.code(0);
    w.run(&["check"])
        .code(0)
        .stdout_has("\nrecovery: idle (nothing is stuck)");
    // Three transfers stuck in `created` for 10 minutes (five recovery
    // windows of the default 2 minutes), created then.
    let stuck = || {
        json!({"src_acct": "A", "dest_acct": "B", "amount": 1,
            "transaction_state": "created", "creation_time": ago(10), "modification_time": ago(10)})
    };
    for id in ["by-op", "by-app", "left"] {
        w.put(&w.ix.transactions, id, &stuck());
    }
    w.refresh();
    let out = w.run(&["check", "-w=stuck="]);
    out.code(1)
        .stdout_has(", 1 recovery stalled | ")
        .stdout_has("recovery_stalled=1;0;;0")
        .stdout_has("\nrecovery: stalled since ")
        .stdout_has("(3 stuck, none recovered by the application for 8m");
    // The operator recovers one: an operator's record, no healing.
    w.run(&["recover", "by-op"]).code(0);
    w.refresh();
    let j = w.run(&["check", "--json"]);
    assert_eq!(j.json()["healing"]["verdict"], "stalled", "{j}");
    // The application finishes another (no record of the tool's).
    let mut done = stuck();
    done["transaction_state"] = json!("finished");
    done["modification_time"] = json!(ago(0));
    w.put(&w.ix.transactions, "by-app", &done);
    w.refresh();
    let j = w.run(&["check", "--json"]);
    let h = &j.json()["healing"];
    assert_eq!(h["verdict"], "healing", "{j}");
    assert_eq!(h["sign"], "recovered", "{j}");
    assert_eq!(h["count"], 1, "only the application's: {j}");
    assert_eq!(counts(&j)["recovery_stalled"], 0, "{j}");
    w.run(&["check", "-w=stuck="]).code(0).stdout_has(
        "\nrecovery: healing (1 transaction(s) left a stuck state with no operator record",
    );
}
