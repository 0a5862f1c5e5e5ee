//! `rollback`/`recover --rehearse` (issue 31, item 3): the selection copied
//! into a local osmem-server, the act run and audited there. On a quiet
//! cluster its counts and net balance effect are the real run's, it sends
//! the cluster no write (counted at the proxy), its `--json` has the shape
//! the docs give, and a server that cannot start is said so.

use super::*;

const ACCOUNTS: [&str; 8] = ["A", "B", "C", "D", "E", "F", "G", "H"];
const TXNS: [&str; 5] = [
    "old-pending",
    "old-created",
    "old-committed",
    "mid-pending",
    "fresh",
];

/// Accounts A-H with 1000 each; transactions stopped in every in-flight
/// state, three untouched for two hours, one for ten minutes and `fresh`
/// just now (refused as recent by an unforced run).
fn mess(w: &World) {
    for a in ACCOUNTS {
        w.account(a, 1000);
    }
    w.stage("old-pending", "A", "B", 10, 2);
    w.stage("old-created", "C", "D", 20, 0);
    w.stage("old-committed", "E", "F", 30, 4);
    w.stage("mid-pending", "G", "H", 40, 3);
    w.stage("fresh", "H", "A", 50, 1);
    for id in ["old-pending", "old-created", "old-committed"] {
        w.backdate(id, 120);
    }
    w.backdate("mid-pending", 10);
    w.refresh();
}

impl World {
    /// Every transaction's and account's `_seq_no`, by `index/id`.
    fn versions(&self) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        for (index, ids) in [
            (&self.ix.transactions, &TXNS[..]),
            (&self.ix.accounts, &ACCOUNTS[..]),
        ] {
            for id in ids {
                let (status, body) =
                    common::http("GET", &self.url(index, &format!("_doc/{id}")), None);
                assert_eq!(status, 200, "{body}");
                let v: Value = serde_json::from_str(&body).unwrap();
                out.insert(format!("{index}/{id}"), v["_seq_no"].as_i64().unwrap());
            }
        }
        out
    }

    /// The sum of the accounts' balances.
    fn total(&self) -> i64 {
        ACCOUNTS.iter().map(|a| self.balance(a)).sum()
    }
}

/// The requests in a proxy's log that write: any but a `GET` or `HEAD`
/// naming `_update`, `_bulk`, `_doc` or `_create`, and any `PUT` or
/// `DELETE` but the closing of a read's point-in-time or scroll.
fn writes(log: &[String]) -> Vec<&String> {
    log.iter()
        .filter(|l| {
            let read = l.starts_with("GET ") || l.starts_with("HEAD ");
            let names_a_write = ["_update", "_bulk", "_doc", "_create"]
                .iter()
                .any(|w| l.contains(w));
            let closes_a_read =
                l.contains("/_search/point_in_time") || l.contains("/_search/scroll");
            (!read && names_a_write)
                || ((l.starts_with("PUT ") || l.starts_with("DELETE ")) && !closes_a_read)
        })
        .collect()
}

#[test]
fn a_rehearsal_writes_nothing_to_the_cluster_and_prints_its_json() {
    let w = World::new();
    mess(&w);
    let versions = w.versions();
    let proxy = common::FaultProxy::start(&w.g.url);
    let mut via = w.g.clone();
    via.url = proxy.url();
    let text = via.run(&[
        "recover",
        "--state",
        "created,pending,committed",
        "--rehearse",
    ]);
    text.code(1)
        .stdout_has(
            "rehearsal: recover of 5 transactions selected by --state=created,pending,committed",
        )
        .stdout_has("copied: 5 transactions, 8 accounts, 0 locks")
        .stdout_has("outcome on the copy: 4 completed, 0 done by another process")
        .stdout_has("1 refused")
        .stdout_has("net balance effect ")
        .stdout_has("audit of the copy: every receipt verifies (1 record, ")
        .stdout_has("estimated time: ")
        .stdout_has("new _seq_no");
    let out = via.run(&[
        "recover",
        "--state",
        "created,pending,committed",
        "--rehearse",
        "--json",
    ]);
    let log = proxy.log();
    assert!(
        writes(&log).is_empty(),
        "writes: {:#?}\n{out}",
        writes(&log)
    );
    assert!(
        !log.is_empty(),
        "the rehearsal read through the proxy: {out}"
    );
    assert_eq!(w.versions(), versions, "no document moved: {out}");
    assert_eq!(w.count(&w.ix.audit), 0, "no record on the cluster: {out}");
    let j = out.json();
    assert_eq!(j["rehearsal"], true, "{out}");
    assert_eq!(j["action"], "recover");
    assert_eq!(j["selected"], 5, "{out}");
    assert_eq!(j["selected_on_copy"], 5, "{out}");
    assert_eq!(
        j["copied"],
        json!({"transactions": 5, "accounts": 8, "locks": 0}),
        "{out}"
    );
    assert_eq!(j["outcomes"]["completed"], 4, "{out}");
    assert_eq!(j["outcomes"]["refused"], 1, "fresh is recent: {out}");
    assert_eq!(j["balance"]["accounts"], 8, "{out}");
    let net = j["balance"]["after"].as_i64().unwrap() - j["balance"]["before"].as_i64().unwrap();
    assert_eq!(j["balance"]["net_effect"], net, "{out}");
    assert_eq!(j["audit"]["ok"], true, "{out}");
    assert_eq!(j["audit"]["records"], 1, "{out}");
    assert!(j["audit"]["writes"].as_u64().unwrap() > 0, "{out}");
    assert!(j["estimated_seconds"].as_f64().unwrap() > 0.0, "{out}");
    assert!(j["record"].as_str().is_some_and(|r| !r.is_empty()), "{out}");
    assert!(
        j["notes"].to_string().contains("_seq_no"),
        "says the copy re-plans: {out}"
    );
    assert_eq!(j["exit_code"], 1, "one refused: {out}");
    out.code(1);
    // What the dry run predicts, the rehearsal did.
    let dry = w.run(&[
        "recover",
        "--state",
        "created,pending,committed",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(
        dry.json()["summary"]["net_balance_effect"],
        net,
        "{dry}\n{out}"
    );
}

#[test]
fn a_rehearsals_counts_and_net_effect_are_the_real_runs() {
    let w = World::new();
    mess(&w);
    let ids = w._dir.path().join("ids");
    std::fs::write(&ids, TXNS.join("\n")).unwrap();
    let ids = ids.to_str().unwrap();
    // The rehearsal through a proxy that counts what reaches the cluster.
    let proxy = common::FaultProxy::start(&w.g.url);
    let mut via = w.g.clone();
    via.url = proxy.url();
    let rehearsed = via.run(&["rollback", "--ids-from", ids, "--rehearse", "--json"]);
    let log = proxy.log();
    assert!(!log.is_empty(), "the rehearsal read through the proxy");
    assert_eq!(writes(&log), Vec::<&String>::new(), "{rehearsed}");
    let r = rehearsed.json();
    let before = w.total();
    let real = w.run(&["rollback", "--ids-from", ids, "--format", "ndjson"]);
    let after = w.total();
    let summary: Value = serde_json::from_str(real.stdout.lines().last().unwrap())
        .unwrap_or_else(|e| panic!("{e}: {real}"));
    for outcome in [
        "completed",
        "done_elsewhere",
        "nothing_to_do",
        "refused",
        "stopped",
        "failed",
    ] {
        assert_eq!(
            r["outcomes"][outcome], summary[outcome],
            "{outcome}: {rehearsed}\n{real}"
        );
    }
    assert_eq!(
        r["outcomes"]["completed"], 3,
        "old-committed is refused too: {rehearsed}"
    );
    assert_eq!(
        r["balance"]["net_effect"],
        json!(after - before),
        "{rehearsed}\n{real}"
    );
    assert_eq!(r["exit_code"], json!(real.code), "{rehearsed}\n{real}");
    rehearsed.code(real.code);
}

#[test]
fn a_rehearsal_whose_server_cannot_start_says_so() {
    let w = World::new();
    mess(&w);
    let Some(not_a_server) = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
    else {
        return;
    };
    let out = w.g.run_env(
        &[("OSMEM_SERVER_BIN", not_a_server)],
        &["recover", "--all-stuck", "--rehearse"],
    );
    out.code(1)
        .stderr_has("cannot rehearse: the local server did not start")
        .stderr_has("without printing its URL")
        .stderr_has("nothing was done");
    assert_eq!(w.count(&w.ix.audit), 0, "{out}");
}

#[test]
fn a_rehearsal_releases_the_locks_the_real_run_does() {
    let w = World::new();
    mess(&w);
    w.run(&["transfer", "D", "E", "10", "--id", "fin"]).code(0);
    let leased = |owner, expires_in| Lock::Leased {
        owner,
        process: "worker-1",
        created: 30,
        expires_in,
    };
    // Owner stuck: released by its recovery; owner finished: stale; owner
    // names nothing and its lease ran out: stale; owner in flight and not
    // stuck: kept.
    w.block(w.kit().lock("A", &leased("old-pending", 60)));
    w.block(w.kit().lock("D", &leased("fin", 60)));
    w.block(w.kit().lock("C", &leased("ghost", -25)));
    w.block(w.kit().lock("H", &leased("fresh", 60)));
    w.refresh();
    // No reason needed, and allowed read-only: nothing real is written.
    let rehearsed = w.g.run_env(
        &[("ESTX_REASON", "")],
        &[
            "recover",
            "--all-stuck",
            "--rehearse",
            "--json",
            "--read-only",
        ],
    );
    let r = rehearsed.json();
    assert_eq!(
        r["copied"]["locks"], 3,
        "old-pending's and the sweep's two: {rehearsed}"
    );
    let locks_before = w.count(&w.ix.locks);
    let real = w.run(&["recover", "--all-stuck", "--format", "ndjson"]);
    let released = locks_before - w.count(&w.ix.locks);
    assert_eq!(released, 3, "{real}");
    assert_eq!(r["locks_released"], json!(released), "{rehearsed}\n{real}");
    let summary: Value = serde_json::from_str(real.stdout.lines().last().unwrap())
        .unwrap_or_else(|e| panic!("{e}: {real}"));
    assert_eq!(
        r["outcomes"]["completed"], summary["completed"],
        "{rehearsed}\n{real}"
    );
    assert_eq!(
        r["outcomes"]["refused"], summary["refused"],
        "{rehearsed}\n{real}"
    );
}

/// Issue 31 leftover: a rehearsal prints the hash of the plan it
/// rehearsed (text and `--json`), and with `--plan-out FILE` writes that
/// very plan (same hash), still writing nothing to the cluster; the plan
/// then applies as any `--plan-out` plan.
#[test]
fn a_rehearsal_prints_the_hash_of_the_plan_it_rehearsed_and_can_write_it() {
    let w = World::new();
    mess(&w);
    let versions = w.versions();
    let plan = w.g.log.with_file_name("rehearsed-plan.json");
    let plan_arg = plan.to_str().unwrap();
    let selection = ["recover", "--state", "created,pending,committed"];
    let text = w.run(&[&selection[..], &["--rehearse", "--plan-out", plan_arg]].concat());
    text.code(1).stdout_has("plan rehearsed: sha256:");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let hash = written["hash"].as_str().unwrap().to_string();
    text.stdout_has(&format!("plan rehearsed: {hash}"));
    assert_eq!(w.versions(), versions, "no document moved: {text}");
    assert_eq!(w.count(&w.ix.audit), 0, "no record on the cluster: {text}");
    let json = w.run(&[&selection[..], &["--rehearse", "--json"]].concat());
    let j = json.json();
    assert!(
        j["plan_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:")),
        "{json}"
    );
    // The plan written is the one rehearsed: applied, it runs the same.
    let applied = w.run(&["apply", plan_arg, "--reason", "INC-31 rehearsed"]);
    assert_eq!(w.state("old-pending"), "finished", "{applied}");
    let records = w.audit_records();
    assert_eq!(records.len(), 1, "{applied}");
    assert_eq!(
        records[0]["approval"]["plan_hash"],
        hash.as_str(),
        "{applied}"
    );
}

/// Issue 31 leftover: `apply` of a `recover --all-stuck` plan closes with
/// the sweep that act runs (the locks stale on evidence, judged when
/// applied): the same locks released as the act run directly.
#[test]
fn apply_of_an_all_stuck_plan_sweeps_as_the_act_does() {
    let w = World::new();
    mess(&w);
    w.run(&["transfer", "D", "E", "10", "--id", "fin"]).code(0);
    let leased = |owner, expires_in| Lock::Leased {
        owner,
        process: "worker-1",
        created: 30,
        expires_in,
    };
    w.block(w.kit().lock("A", &leased("old-pending", 60)));
    w.block(w.kit().lock("D", &leased("fin", 60)));
    w.block(w.kit().lock("C", &leased("ghost", -25)));
    w.block(w.kit().lock("H", &leased("fresh", 60)));
    w.refresh();
    let plan = w.g.log.with_file_name("all-stuck-plan.json");
    let plan_arg = plan.to_str().unwrap();
    w.run(&["recover", "--all-stuck", "--plan-out", plan_arg])
        .stderr_has("plan written to");
    let locks_before = w.count(&w.ix.locks);
    let applied = w.run(&["apply", plan_arg, "--reason", "INC-31 sweep"]);
    w.refresh();
    let released = locks_before - w.count(&w.ix.locks);
    assert_eq!(
        released, 3,
        "old-pending's by its recovery, fin's and ghost's by the sweep: {applied}"
    );
}
