//! Plan files through the binary (issue 31 item 1): `recover --plan-out`
//! writes the plan and nothing to the cluster; `apply` runs it, refuses a
//! drifted item (exit 1) and an edited file whole (exit 2); under a profile
//! with `approval = "second-operator"` an act without a plan and the
//! planner's own `apply` are refused (exit 2, the apply's refusal recorded)
//! and another operator's runs, its record naming the plan's hash, the
//! planner and the approver.

use super::*;

/// Three pending transfers `t1`..`t3` (A->B, C->D, E->F, 100 each),
/// old enough for recovery; their ids in a file for `--ids-from`.
fn three_pending(w: &World) -> PathBuf {
    for (id, src, dest) in [("t1", "A", "B"), ("t2", "C", "D"), ("t3", "E", "F")] {
        w.account(src, 500);
        w.account(dest, 500);
        w.stage(id, src, dest, 100, 2);
        w.backdate(id, 10);
    }
    w.refresh();
    let ids = w.g.log.with_file_name("ids.txt");
    std::fs::write(&ids, "t1\nt2\nt3\n").unwrap();
    ids
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn apply_runs_the_plan_refusing_a_drifted_item_and_an_edited_file() {
    let w = World::new();
    let ids = three_pending(&w);
    let plan = w.g.log.with_file_name("plan.json");
    w.run(&[
        "recover",
        "--ids-from",
        path(&ids),
        "--plan-out",
        path(&plan),
    ])
    .code(0)
    .stderr_has("plan written to");
    assert_eq!(w.state("t1"), "pending", "--plan-out writes nothing");
    assert!(w.audit_records().is_empty(), "nor a record");
    // An edited copy is refused whole.
    let text = std::fs::read_to_string(&plan).unwrap();
    let edited = w.g.log.with_file_name("edited.json");
    std::fs::write(&edited, text.replacen("\"t2\"", "\"t9\"", 1)).unwrap();
    w.run(&["apply", path(&edited), "--reason", "INC-31"])
        .code(2)
        .stderr_has("the plan was altered");
    assert_eq!(w.state("t2"), "pending");
    // The application writes t2 after the plan was made.
    let mut t2 = w.txn("t2");
    t2["modification_time"] = json!(chrono::Utc::now().to_rfc3339());
    w.put(&w.ix.transactions, "t2", &t2);
    let out = w.run(&["apply", path(&plan), "--reason", "INC-31", "--json"]);
    out.code(1).stderr_has("1 drifted");
    let v = out.json();
    let drifted = v["left_out"].as_array().unwrap();
    assert_eq!(drifted.len(), 1, "{v:#}");
    assert_eq!(drifted[0]["txn"], "t2");
    assert!(drifted[0]["verdict"]["message"]
        .as_str()
        .unwrap()
        .starts_with("drifted: transaction `t2` changed since the plan"));
    assert_eq!(w.state("t1"), "finished");
    assert_eq!(
        w.state("t2"),
        "pending",
        "a drifted item is not decided again"
    );
    assert_eq!(w.state("t3"), "finished");
}

#[test]
fn a_second_operator_must_apply_the_plan() {
    let w = World::new();
    let ids = three_pending(&w);
    let home = w.g.log.with_file_name("xdg");
    std::fs::create_dir_all(home.join("estx-tui")).unwrap();
    std::fs::write(
        home.join("estx-tui/config.toml"),
        "default_profile = \"four-eyes\"\n[profiles.four-eyes]\napproval = \"second-operator\"\n",
    )
    .unwrap();
    let xdg = home.display().to_string();
    let as_user = |user: &'static str| [("XDG_CONFIG_HOME", xdg.clone()), ("USER", user.into())];
    let run = |user: &'static str, args: &[&str]| {
        let env = as_user(user);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        w.g.run_env(&env, args)
    };
    run("alice", &["recover", "t1", "--reason", "INC-31"])
        .code(2)
        .stderr_has("wants a second operator's approval");
    // Acts that move no money (an acknowledgement and its undoing) need no
    // second operator.
    run(
        "alice",
        &["ack", "t3", "--for", "1h", "--reason", "finance is on it"],
    )
    .code(0);
    run("alice", &["unack", "t3", "--reason", "done"]).code(0);
    let plan = w.g.log.with_file_name("plan.json");
    run(
        "alice",
        &[
            "recover",
            "--ids-from",
            path(&ids),
            "--plan-out",
            path(&plan),
        ],
    )
    .code(0);
    run("alice", &["apply", path(&plan), "--reason", "INC-31"])
        .code(2)
        .stderr_has("made by alice");
    assert_eq!(
        w.state("t1"),
        "pending",
        "the planner's apply writes nothing"
    );
    run("bob", &["apply", path(&plan), "--reason", "INC-31"]).code(0);
    for id in ["t1", "t2", "t3"] {
        assert_eq!(w.state(id), "finished", "{id}");
    }
    // Both recorded: alice's refused apply (no step) and bob's run.
    let mut records: Vec<Value> = w
        .audit_records()
        .into_iter()
        .filter(|r| !r["approval"].is_null())
        .collect();
    records.sort_by_key(|r| r["outcome"].to_string());
    assert_eq!(records.len(), 2, "{records:#?}");
    let refused = &records[1];
    assert_eq!(refused["outcome"], "refused", "{refused:#}");
    assert_eq!(refused["operator"]["user"], "alice", "{refused:#}");
    assert_eq!(refused["approval"]["planner"]["user"], "alice");
    assert!(
        refused["steps"].as_array().is_none_or(Vec::is_empty),
        "{refused:#}"
    );
    assert_eq!(records[0]["outcome"], "completed", "{records:#?}");
    let a = &records[0]["approval"];
    assert_eq!(a["planner"]["user"], "alice", "{a:#}");
    assert_eq!(a["approver"]["user"], "bob", "{a:#}");
    let text = std::fs::read_to_string(&plan).unwrap();
    let hash = serde_json::from_str::<Value>(&text).unwrap()["hash"].clone();
    assert_eq!(a["plan_hash"], hash);
}
