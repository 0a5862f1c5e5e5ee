//! The dashboard's bulk dialog shows exactly the plan `rollback`/`recover
//! --ids-from FILE --dry-run` prints for the same ids: the same ids would
//! run, the same refusals (by kind, with their ids), the same ids left out,
//! the same balance effect. The dialog's plan is the one bulk act's,
//! previewed by the protocol (`task::bulk_preview`, what R/F on the marked
//! rows asks for), derived as the dialog shows it (`bulk::plan_of`).

use super::World;
use estx::dashboard::event::OnMarks;
use estx::dashboard::layers::dialog::BulkPlan;
use estx::dashboard::{bulk, task};
use estx::protocol::Procedure;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A plan as both front ends can state it: the ids that would run; the
/// ids refused, and how many per kind of refusal; the ids with nothing to
/// do; the ids left out, by why; the balance effect per account.
#[derive(Debug, PartialEq)]
struct Stated {
    runs: Vec<String>,
    refused: BTreeSet<String>,
    refused_by_kind: BTreeMap<String, usize>,
    nothing_to_do: Vec<String>,
    left_out: BTreeMap<String, Vec<String>>,
    effect: BTreeMap<String, i64>,
}

/// What `--dry-run --json` printed.
fn of_dry_run(v: &Value) -> Stated {
    let mut s = Stated {
        runs: Vec::new(),
        refused: BTreeSet::new(),
        refused_by_kind: serde_json::from_value(v["summary"]["refused"].clone()).unwrap(),
        nothing_to_do: Vec::new(),
        left_out: BTreeMap::new(),
        effect: serde_json::from_value(v["summary"]["balance_effect"].clone()).unwrap(),
    };
    for row in v["plan"].as_array().unwrap() {
        let id = row["txn"].as_str().unwrap().to_string();
        match row["would"].as_str().unwrap() {
            "refused" => drop(s.refused.insert(id)),
            "nothing_to_do" => s.nothing_to_do.push(id),
            _ => s.runs.push(id),
        }
    }
    for l in v["left_out"].as_array().unwrap() {
        let why = l["verdict"]["message"].as_str().unwrap().to_string();
        s.left_out
            .entry(why)
            .or_default()
            .push(l["txn"].as_str().unwrap().into());
    }
    s
}

/// What the dialog shows (its groups: "refused: KIND", "nothing to do",
/// the selection's why).
fn of_dialog(d: &BulkPlan) -> Stated {
    let mut s = Stated {
        runs: d.runs.iter().map(|r| r.subject().to_string()).collect(),
        refused: BTreeSet::new(),
        refused_by_kind: BTreeMap::new(),
        nothing_to_do: Vec::new(),
        left_out: BTreeMap::new(),
        effect: d.effect.clone(),
    };
    for (why, ids) in &d.left_out {
        if let Some(kind) = why.strip_prefix("refused: ") {
            s.refused.extend(ids.iter().cloned());
            s.refused_by_kind.insert(kind.to_string(), ids.len());
        } else if why == "nothing to do" {
            s.nothing_to_do = ids.clone();
        } else {
            s.left_out.insert(why.clone(), ids.clone());
        }
    }
    s
}

#[test]
fn the_bulk_dialog_shows_the_plan_the_dry_run_prints() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.stage("t1", "A", "B", 100, 2); // pending, old: both run
    w.backdate("t1", 10);
    w.stage("t2", "C", "D", 40, 4); // committed, old: rollback refused
    w.backdate("t2", 10);
    w.stage("t3", "A", "C", 7, 2); // pending, new: refused unforced
    w.refresh();
    let ids = ["t-none", "t1", "t2", "t3"];
    let file = w.g.log.with_file_name("ids.txt");
    std::fs::write(&file, ids.join("\n")).unwrap();
    let path = file.display().to_string();
    let marks: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    for (procedure, cmd) in [
        (Procedure::Rollback, "rollback"),
        (Procedure::Recover, "recover"),
    ] {
        let on = OnMarks::Procedure(procedure);
        let out = w.run(&[cmd, "--ids-from", &path, "--dry-run", "--json"]);
        out.code(1);
        let cli = of_dry_run(&out.json());
        let plan = w
            .block(task::bulk_preview(&w.proto, on, marks.clone()))
            .unwrap();
        let dialog = bulk::plan_of(on, &plan);
        assert_eq!(of_dialog(&dialog), cli, "{cmd}");
        // Every marked id is either run or left out, with why.
        let named = dialog.runs.len() + dialog.left_out.values().map(Vec::len).sum::<usize>();
        assert_eq!(named, ids.len(), "{cmd}: {dialog:?}");
        let recent = &dialog.left_out["refused: modified within the recovery window"];
        assert_eq!(recent, &["t3"], "{cmd}: {dialog:?}");
        let runs = match procedure {
            Procedure::Rollback => vec!["t1"],
            _ => vec!["t1", "t2"],
        };
        assert_eq!(cli.runs, runs, "{cmd}");
    }
    // Nothing was written by either preview.
    assert_eq!(w.state("t1"), "pending");
    assert!(w.audit_records().is_empty());
}

/// `recover --all-stuck --dry-run` names every lock the run will release:
/// those its recoveries release as each transaction ends, and those of the
/// closing sweep (stale on evidence, owner not in flight), the sweep named
/// in the words the record keeps; the run then releases exactly those.
#[test]
fn the_all_stuck_dry_run_names_the_sweep_and_every_lock_the_run_releases() {
    use super::ago;
    use serde_json::json;
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.stage("t1", "A", "B", 90, 2); // pending, old: recovered
    w.backdate("t1", 10);
    let lock = |resource: &str, owner: Option<&str>, expires_in_minutes: i64| {
        let mut doc = json!({"process_id": "worker-1", "created_at": ago(120),
                             "expires_at": ago(-expires_in_minutes)});
        if let Some(o) = owner {
            doc["owner"] = json!(o);
        }
        w.put(&w.ix.locks, resource, &doc);
    };
    lock("A", Some("t1"), 60); // released by t1's recovery
    lock("B", Some("t1"), 60);
    lock("C", None, -30); // lease run out, no owner: swept
    lock("D", Some("t-gone"), -30); // owner missing: swept
    lock("E", None, 60); // live: kept
    w.refresh();
    let all = ["A", "B", "C", "D", "E"];
    let held = || -> BTreeSet<String> {
        all.iter()
            .filter(|r| w.source(&w.ix.locks, r).is_some())
            .map(|r| r.to_string())
            .collect()
    };
    let out = w.run(&["recover", "--all-stuck", "--dry-run"]);
    out.code(0)
        .stdout_has(&format!("then: {}:", estx::protocol::intervene::SWEEP_STEP))
        .stdout_has("release lock C held by")
        .stdout_has("release lock D held by")
        .stdout_has("releases 4 locks");
    let out = w.run(&["recover", "--all-stuck", "--dry-run", "--json"]);
    out.code(0);
    let v = out.json();
    let planned: BTreeSet<String> =
        serde_json::from_value(v["summary"]["lock_releases"].clone()).unwrap();
    let swept: BTreeSet<String> = v["summary"]["sweep"]["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["resource"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(swept, ["C", "D"].map(String::from).into(), "{out}");
    let before = held();
    w.run(&["recover", "--all-stuck", "--reason", "test"])
        .code(0);
    let released: BTreeSet<String> = before.difference(&held()).cloned().collect();
    assert_eq!(
        planned, released,
        "the run released other locks than its dry run named"
    );
    assert_eq!(held(), ["E"].map(String::from).into());
}

/// `show ID`'s "recover would" and "rollback would" are the plans the
/// dashboard's dialog confirms (the lock releases that end the transaction
/// included), and say in words that a recovery completes a debit already made.
#[test]
fn show_lists_the_steps_the_dialog_confirms() {
    use super::ago;
    use estx::protocol::intervene::{Choices, Intervention};
    use estx::protocol::trail::Interface;
    use serde_json::json;
    let w = World::new();
    for a in ["A", "B"] {
        w.account(a, 500);
    }
    w.stage("t1", "A", "B", 90, 2); // pending, A debited
    w.backdate("t1", 10);
    for resource in ["A", "B"] {
        w.put(
            &w.ix.locks,
            resource,
            &json!({"owner": "t1", "process_id": "worker-1", "created_at": ago(120),
                    "expires_at": ago(-60)}),
        );
    }
    w.refresh();
    let shown = w.run(&["show", "t1", "--json"]).code(0).json();
    for (procedure, key) in [
        (Procedure::Recover, "recover"),
        (Procedure::Rollback, "rollback"),
    ] {
        let listed: Vec<String> = shown[key]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["step"].as_str().unwrap().to_string())
            .collect();
        let i = Intervention::new(
            OnMarks::Procedure(procedure).item("t1".into()),
            Choices::new(Interface::Dashboard, None),
        );
        let dialog = w.block(i.preview(&w.proto)).unwrap().plan;
        let labels = estx::protocol::intervene::Planned::labels(&dialog);
        assert_eq!(listed, labels, "{key}: {shown:#}");
        assert!(listed.iter().any(|l| l == "release lock A"), "{listed:?}");
    }
    w.run(&["show", "t1"])
        .code(0)
        .stdout_has("release lock B")
        .stdout_has("balance: completes the debit of 90 already made on A: credits B +90");
}

/// The audit's repair previews the money it moves (what the dashboard's
/// dialog confirms), and the repair then moves exactly that.
#[test]
fn the_audit_repair_preview_names_its_balance_effect() {
    use estx::protocol::audit::RepairEffect;
    use estx::protocol::intervene::{AuditRepair, Choices, Intervention};
    use estx::protocol::trail::Interface;
    use serde_json::json;
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("rb", "A", "B", 100, 2);
    w.run(&["rollback", "rb", "--force", "--reason", "test"])
        .code(0);
    // A late, unfenced writer applies the rolled-back transfer to A again.
    w.put(
        &w.ix.accounts,
        "A",
        &json!({"balance": 400, "pending_transactions": ["rb"]}),
    );
    w.refresh();
    let act = AuditRepair {
        account: Some("A".into()),
        expect_total: None,
        allow_partial: false,
    };
    let i = Intervention::new(act, Choices::new(Interface::Dashboard, None));
    let plan = w.block(i.preview(&w.proto)).unwrap().plan;
    assert_eq!(plan.balance_change(), vec![("A".to_string(), 100)]);
    let Some(report) = &plan.report else {
        panic!("no audit: {plan:?}");
    };
    let words: Vec<String> = report
        .repair_effect
        .iter()
        .map(RepairEffect::to_string)
        .collect();
    assert_eq!(
        words,
        ["undoes the debit of 100 left on A by rb (rolled-back): credits A +100"]
    );
    w.run(&["audit", "--repair", "--reason", "test"]);
    assert_eq!(
        w.balance("A"),
        500,
        "the repair moved other money than previewed"
    );
}
