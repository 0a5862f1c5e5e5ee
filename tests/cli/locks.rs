//! `estx-tui` CLI tests: locks and release-lock.

use super::*;

#[test]
fn locks_and_release_lock() {
    let w = World::new();
    for a in ["A", "B", "D", "E"] {
        w.account(a, 500);
    }
    w.stage("live", "A", "B", 100, 2);
    w.run(&["transfer", "D", "E", "10", "--id", "fin"]).code(0);
    fn leased(owner: &str, created: i64, expires_in: i64) -> Lock<'_> {
        Lock::Leased {
            owner,
            process: "worker-1",
            created,
            expires_in,
        }
    }
    let lock = |resource: &str, owner: &str, created_min_ago: i64| {
        w.block(w.kit().lock(resource, &leased(owner, created_min_ago, 60)));
    };
    lock("A", "live", 1); // owner pending: live
                          // Its owner names no transaction (no evidence) but its lease ran out: stale.
    w.block(w.kit().lock("C", &leased("ghost", 30, -25)));
    lock("D", "fin", 20); // owner finished: stale
    lock("E", "fin", 20);
    w.refresh();

    let out = w.run(&["locks", "--json"]);
    out.code(0);
    let rows = out.json();
    let arr = rows.as_array().expect("locks --json prints an array");
    assert_eq!(arr.len(), 4, "{out}");
    for row in arr {
        for key in ["resource", "owner", "age_seconds", "stale"] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
    }
    let by = |r: &str| arr.iter().find(|x| x["resource"] == r).unwrap().clone();
    assert_eq!(
        (by("A")["owner"].clone(), by("A")["stale"].clone()),
        (json!("live"), json!(false))
    );
    assert!(by("A")["age_seconds"].as_i64().unwrap() >= 50, "{out}");
    assert_eq!(by("C")["stale"], true, "{out}");
    assert_eq!(by("D")["stale"], true, "{out}");
    // Oldest first.
    assert_eq!(arr[0]["resource"], "C", "{out}");

    let out = w.run(&["locks"]);
    out.code(0).stdout_has("4 locks: 3 stale");

    // A live lock is refused without --force.
    let out = w.run(&["release-lock", "A"]);
    out.code(1).stderr_has("--force").stderr_has("`A`");
    assert!(w.source(&w.ix.locks, "A").is_some());
    let out = w.run(&["release-lock", "--txn", "live"]);
    out.code(1).stderr_has("--force");
    assert!(w.source(&w.ix.locks, "A").is_some());

    // A stale one is released.
    let out = w.run(&["release-lock", "C"]);
    out.code(0).stdout_has("C: released");
    assert!(w.source(&w.ix.locks, "C").is_none());

    // --force releases a live one.
    let out = w.run(&["release-lock", "A", "--force"]);
    out.code(0).stdout_has("A: released");
    assert!(w.source(&w.ix.locks, "A").is_none());

    // --txn releases every lock of the transaction.
    let out = w.run(&["release-lock", "--txn", "fin"]);
    out.code(0)
        .stdout_has("D: released")
        .stdout_has("E: released");
    assert!(w.source(&w.ix.locks, "D").is_none() && w.source(&w.ix.locks, "E").is_none());

    // No lock document under that id (any more): not found, nothing to do
    // (issue 28, item 8: an id that names nothing is not a success).
    w.run(&["release-lock", "A"])
        .code(1)
        .stderr_has("lock `A` not found")
        .stderr_has("nothing to release");
    w.refresh();
    w.run(&["release-lock", "--txn", "fin"])
        .code(0)
        .stdout_has("no locks held");
    w.run(&["locks", "--json"]).code(0);
    assert_eq!(w.run(&["locks", "--json"]).json(), json!([]));
    w.run(&["locks"]).code(0).stdout_has("no locks held");
    // The transfer's documents were not touched by any of it.
    assert_eq!(w.state("live"), "pending");
    assert_eq!(w.balance("A"), 400);
}

#[test]
fn release_lock_with_txn_and_force_releases_live_locks() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("live", "A", "B", 100, 2);
    for r in ["A", "B"] {
        w.put(
            &w.ix.locks,
            r,
            &json!({"owner": "live", "process_id": "worker-1", "created_at": ago(0), "expires_at": ago(-60)}),
        );
    }
    w.refresh();
    let out = w.run(&["release-lock", "--txn", "live", "--force"]);
    out.code(0)
        .stdout_has("A: released")
        .stdout_has("B: released");
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
}

#[test]
fn release_lock_needs_exactly_one_target() {
    let w = World::new();
    w.run(&["release-lock", "A", "--txn", "t"]).code(2);
    w.run(&["release-lock"]).code(2);
    w.run(&["release-lock", "--force"]).code(2);
}

/// `release-lock --json`: each lock and what its release did; refused is 1.
#[test]
fn release_lock_json() {
    let w = World::new();
    let now = ago(0);
    w.put(
        &w.ix.transactions,
        "live",
        &json!({"src_acct": "A", "dest_acct": "B", "amount": 1, "transaction_state": "pending",
                "creation_time": now, "modification_time": now}),
    );
    // `ghost` names no transaction (no evidence): its lease ran out.
    for (r, owner, expires) in [("A", "live", ago(-60)), ("G", "ghost", ago(1))] {
        w.put(
            &w.ix.locks,
            r,
            &json!({"owner": owner, "process_id": "w", "created_at": now, "expires_at": expires}),
        );
    }
    let out = w.run(&["release-lock", "A", "--json"]);
    out.code(1);
    let j = out.json();
    assert_eq!(j["locks"][0]["resource"], "A", "{out}");
    assert_eq!(j["locks"][0]["result"], "refused");
    assert!(j["locks"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("--force"));
    assert_eq!(j["verdict"]["kind"], "refused");
    assert_eq!(j["exit_code"], 1);
    assert!(w.source(&w.ix.locks, "A").is_some());

    let out = w.run(&["release-lock", "G", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["locks"][0]["result"], "released", "{out}");
    assert_eq!(j["verdict"]["kind"], "released");
    assert_eq!(j["exit_code"], 0);

    let out = w.run(&["release-lock", "--txn", "live", "--force", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["txn"], "live", "{out}");
    assert_eq!(j["locks"][0]["resource"], "A");
    assert_eq!(j["locks"][0]["owner"], "live");
    assert_eq!(j["locks"][0]["result"], "released");
    assert!(w.source(&w.ix.locks, "A").is_none());
}

/// A lock of a missing owner (`ghost`) on `C`, and the CLI through a proxy
/// that can answer a scan of the locks with it on a page some shards failed
/// to fill, `total` locks matching: the proxy, the CLI, the lock and that
/// page.
fn ghost_lock_behind_a_red_shard(
    w: &World,
    total: u64,
) -> (common::FaultProxy, Globals, Value, Value) {
    let doc = json!({"owner": "ghost", "process_id": "worker-1", "created_at": ago(30),
        "expires_at": ago(20)});
    w.put(&w.ix.locks, "C", &doc);
    w.refresh();
    let proxy = common::FaultProxy::start(&w.g.url);
    let mut g = w.g.clone();
    g.url = proxy.url();
    let hit = json!({"_id": "C", "_index": w.ix.locks, "_source": doc});
    let partial = common::proxy::partial_search(vec![hit], total);
    (proxy, g, doc, partial)
}

/// `locks` reads through the read side: a listing some shards failed to
/// answer (rewritten by the proxy as a red shard answers) is refused unless
/// `--allow-partial`, which shows what was read and how many of how many.
#[test]
fn locks_refuses_a_partial_view_unless_allowed() {
    let w = World::new();
    let (proxy, g, _, partial) = ghost_lock_behind_a_red_shard(&w, 3);
    let arm = || proxy.answer_next_scan(&w.ix.locks, partial.clone());
    arm();
    let out = g.run(&["locks"]);
    out.code(1)
        .stderr_has("partial: 1 of 2 shards failed")
        .stderr_has("--allow-partial");
    assert!(
        !out.stdout.contains("ghost"),
        "no row of a partial page: {out}"
    );
    arm();
    g.run(&["locks", "--allow-partial"])
        .code(0)
        .stdout_has("ghost")
        .stdout_has("1 of 3 locks read")
        .stderr_has("locks may be missing");
    assert!(w.source(&w.ix.locks, "C").is_some(), "nothing released");
}

/// A search some shards failed to answer (rewritten by the proxy as a red
/// shard answers): `release-lock --txn` refuses it unless `--allow-partial`,
/// and `recover --all-stuck --allow-partial --json` carries the lock sweep's
/// partial-listing note, as both say on stderr in text.
#[test]
fn partial_lock_searches_are_refused_or_reported_by_releases() {
    let w = World::new();
    let (proxy, g, doc, partial) = ghost_lock_behind_a_red_shard(&w, 1);
    let arm = || proxy.answer_next_scan(&w.ix.locks, partial.clone());

    arm();
    g.run(&["release-lock", "--txn", "ghost"])
        .code(1)
        .stderr_has("partial: 1 of 2 shards failed")
        .stderr_has("--allow-partial");
    assert!(w.source(&w.ix.locks, "C").is_some(), "nothing released");
    proxy.clear_rules();

    arm();
    let out = g.run(&[
        "release-lock",
        "--txn",
        "ghost",
        "--allow-partial",
        "--json",
    ]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["locks"][0]["resource"], "C", "{out}");
    assert_eq!(j["locks"][0]["result"], "released", "{out}");
    assert_eq!(
        j["locks_listing_partial"], "partial: 1 of 2 shards failed",
        "{out}"
    );
    assert!(w.source(&w.ix.locks, "C").is_none());
    proxy.clear_rules();

    w.put(&w.ix.locks, "C", &doc);
    w.refresh();
    arm();
    let out = g.run(&[
        "recover",
        "--all-stuck",
        "--allow-partial",
        "--json",
        "--reason",
        "partial sweep",
    ]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["released_locks"][0]["resource"], "C", "{out}");
    assert_eq!(
        j["locks_listing_partial"], "partial: 1 of 2 shards failed",
        "{out}"
    );
    assert!(w.source(&w.ix.locks, "C").is_none());
}

/// One lock of each shape: only evidence makes a lock stale. Kestra's lock
/// (owner = a server instance) is shown with its age and refused without
/// `--force`; forced, the audit record names its holder; `check` counts
/// only the stale one.
#[test]
fn locks_of_every_shape_are_judged_on_evidence() {
    let w = World::new();
    w.account("D", 500);
    w.account("E", 500);
    w.run(&["transfer", "D", "E", "10", "--id", "fin"]).code(0);
    let seed = [
        (
            "flow_nightly",
            json!({"category": "flow", "id": "nightly", "owner": "inst-1", "createdAt": ago(5)}),
        ),
        ("global", json!({})),
        ("doc-1", json!({"process_id": 123})),
        ("tree-a-b", json!({"lock_type": "exclusive"})),
        ("tree-a", json!({"lock_type": "shared", "lock_count": 2})),
        ("odd", json!({"holder": "someone", "since": "yesterday"})),
        (
            "D",
            json!({"owner": "fin", "process_id": "w", "created_at": ago(20), "expires_at": ago(-60)}),
        ),
    ];
    for (id, doc) in &seed {
        w.put(&w.ix.locks, id, doc);
    }
    w.refresh();

    let out = w.run(&["locks"]);
    out.code(0)
        .stdout_has("kestra")
        .stdout_has("guide tree shared")
        .stdout_has("unknown: held by instance inst-1, age ")
        .stdout_has("the guide global lock names no holder")
        .stdout_has("7 locks: 1 stale (!), 6 with a holder that cannot be judged (?)");
    let check = w.run(&["check", "--json"]);
    let stale = check.json()["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "stale_locks")
        .map(|m| m["count"].clone());
    assert_eq!(stale, Some(json!(1)), "{check}");

    let out = w.run(&["release-lock", "flow_nightly"]);
    out.code(1)
        .stderr_has("instance inst-1")
        .stderr_has("cannot tell whether it is alive")
        .stderr_has("--force");
    assert!(w.source(&w.ix.locks, "flow_nightly").is_some());
    let out = w.run(&[
        "release-lock",
        "flow_nightly",
        "--force",
        "--reason",
        "INC-7",
    ]);
    out.code(0).stdout_has("flow_nightly: released");
    let records = w.audit_records();
    let plans: Vec<String> = records.iter().map(|r| r["plan"].to_string()).collect();
    assert!(
        plans
            .iter()
            .any(|p| p.contains("release lock flow_nightly held by instance inst-1")),
        "{plans:#?}"
    );
}
