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

/// Every threshold off but the ones given.
fn only<'a>(given: &[&'a str]) -> Vec<&'a str> {
    let mut argv = vec!["check"];
    for flag in [
        "--warn-stuck",
        "--crit-stuck",
        "--warn-investigate",
        "--crit-investigate",
        "--warn-odd",
        "--crit-odd",
        "--warn-stale-locks",
        "--crit-stale-locks",
        "--warn-findings",
        "--crit-findings",
    ] {
        if !given.contains(&flag) {
            argv.extend([flag, "0"]);
        }
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

    // Each metric alone, at each threshold: below -> 0, at warn -> 1, at crit -> 2.
    let cases: [(&str, &str, u64); 5] = [
        ("--warn-stuck", "--crit-stuck", 2),
        ("--warn-investigate", "--crit-investigate", 1),
        ("--warn-odd", "--crit-odd", 1),
        ("--warn-stale-locks", "--crit-stale-locks", 1),
        ("--warn-findings", "--crit-findings", c["audit_findings"]),
    ];
    for (warn, crit, n) in cases {
        let (at, above) = (n.to_string(), (n + 1).to_string());
        let run = |w_t: &str, c_t: &str| w.run(&only(&[warn, w_t, crit, c_t])).code;
        assert_eq!(run(&above, "0"), 0, "{warn} {above}: below the warning");
        assert_eq!(run(&at, "0"), 1, "{warn} {at}: at the warning");
        assert_eq!(run(&at, &above), 1, "{warn}: warning, below critical");
        assert_eq!(run("1", &at), 2, "{crit} {at}: at the critical");
    }
    w.run(&only(&[])).code(0).stdout_has("ESTX OK - 2 stuck");

    let prom = w.run(&["check", "--format", "prometheus", "--warn-stuck", "3"]);
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
