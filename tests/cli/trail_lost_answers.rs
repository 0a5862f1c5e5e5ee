//! Audit-record writes under lost answers (issue 17): the record's create
//! and its completing write resolve an unknown outcome as the protocol's
//! writes do (re-read, recognise their own write), so an act that completed
//! ends with a finished record and exit code 0, never an UNFINISHED record
//! and a cluster error.

use super::*;

/// Pending transactions `p1`, `p2`, `s1`, `s2` untouched for ten minutes,
/// a stale lock `C` (its owner names no transaction and its lease ran
/// out: stale on evidence), accounts A-H.
fn mess(w: &World) {
    for a in ["A", "B", "C", "D", "E", "F", "G", "H"] {
        w.account(a, 1000);
    }
    w.stage("p1", "A", "B", 10, 2);
    w.stage("p2", "C", "D", 20, 3);
    w.stage("s1", "E", "F", 30, 1);
    w.stage("s2", "G", "H", 40, 4);
    for id in ["p1", "p2", "s1", "s2"] {
        w.backdate(id, 10);
    }
    w.put(
        &w.ix.locks,
        "C",
        &json!({"owner": "ghost", "process_id": "worker-1", "created_at": ago(30),
                "expires_at": ago(25)}),
    );
    w.refresh();
}

#[test]
fn lost_answers_on_the_audit_index_leave_every_completed_act_finished_and_exit_0() {
    let w = World::new();
    mess(&w);
    let proxy = common::FaultProxy::start(&w.g.url);
    let mut via = w.g.clone();
    via.url = proxy.url();
    let acts: [&[&str]; 6] = [
        &["rollback", "p1"],
        &["recover", "p2"],
        &["release-lock", "C"],
        &["transfer", "A", "B", "10", "--id", "t-new"],
        &["reverse", "t-new"],
        &["recover", "--all-stuck"],
    ];
    for (n, act) in acts.iter().enumerate() {
        // The answer to the record's create and to its completing write are
        // lost once each: both landed, the tool never heard.
        proxy.clear_rules();
        proxy.drop_responses("POST", &format!("/{}/_create/", w.ix.audit), 1);
        proxy.drop_responses("POST", &format!("/{}/_update/", w.ix.audit), 1);
        via.run(act).code(0);
        assert_eq!(proxy.dropped(), 2 * (n + 1), "{:#?}", proxy.log());
        w.refresh();
    }
    for id in ["p2", "s1", "s2", "t-new", "t-new-reversal"] {
        assert_eq!(w.state(id), "finished", "{id}");
    }
    assert_eq!(w.state("p1"), "rolled-back");
    assert!(w.source(&w.ix.locks, "C").is_none());
    let records: Vec<Value> = w
        .audit_records()
        .into_iter()
        .filter(|r| r.get("run_id").is_none())
        .collect();
    let actions: BTreeSet<String> = records
        .iter()
        .map(|r| r["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        records.len(),
        acts.len(),
        "one record per act: {records:#?}"
    );
    assert_eq!(
        actions,
        set(&["rollback", "recover", "release-lock", "transfer", "reverse"])
    );
    for r in &records {
        assert_eq!(r["status"], "finished", "{r:#}");
        assert_eq!(r["outcome"], "completed", "{r:#}");
    }
    let h = w.run(&["history", "s1"]);
    h.code(0).stdout_has("recover");
    assert!(!h.stdout.contains("UNFINISHED"), "{h}");
}
