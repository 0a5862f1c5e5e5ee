//! The same act leaves the same audit record whichever front end made it:
//! a rollback (and a bulk rollback of two) from the command line, then the
//! same act on the same documents, restored, through the dashboard's
//! action task (`spawn_action` / `spawn_bulk_run`, what `y` in the
//! dialog starts). The records agree but for their id, times and
//! interface (and the bulk record's `--ids-from` source).

use super::World;
use crate::common;
use estx::dashboard::event::{Event, Expected, OnMarks, Run};
use estx::dashboard::task;
use estx::protocol::intervene::Stop;
use estx::protocol::intervene::{Act, AnyAct, ReleaseLock, Rollback, Subject};
use estx::protocol::Procedure;
use serde_json::{json, Value};
use std::sync::Arc;

impl World {
    /// Pending transfers `ids` (A -> B, 100 each, both accounts at 500
    /// again), ten minutes old: the same documents every time.
    fn restage(&self, ids: &[&str]) {
        for id in ids {
            let (status, body) = common::http(
                "DELETE",
                &self.url(&self.ix.transactions, &format!("_doc/{id}")),
                None,
            );
            assert!(status == 200 || status == 404, "{body}");
        }
        self.account("A", 500);
        self.account("B", 500);
        for id in ids {
            self.stage(id, "A", "B", 100, 2);
            self.backdate(id, 10);
        }
        self.refresh();
    }

    /// The dashboard's confirmed run of `act`, as `y` with `reason`
    /// starts it; waits for its end.
    fn dashboard_act(&self, act: AnyAct, reason: &str) -> String {
        let target = act.subject().to_string();
        let target = target.as_str();
        let expected = if matches!(act.subject(), Subject::Lock(_)) {
            let v = self.block(self.proto.lock_view(target)).unwrap().unwrap();
            Expected {
                state: v.owner_state,
                modified: v.info.created_at,
            }
        } else {
            let (t, _) = self
                .block(self.proto.read_transaction(target))
                .unwrap()
                .unwrap();
            Expected {
                state: t.state,
                modified: t.modification_time,
            }
        };
        let run = Run::new(act, false, Some(reason.into()), None, expected);
        self.block(async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            task::spawn_action(self.proto.clone(), run, tx);
            loop {
                match rx.recv().await {
                    Some(Event::ActionDone(o)) => break o.summary,
                    Some(_) => {}
                    None => panic!("the action task ended without a word"),
                }
            }
        })
    }

    /// The dashboard's bulk run `on` the marked `ids`.
    fn dashboard_bulk(&self, on: OnMarks, ids: &[&str], reason: &str) -> String {
        let runs = ids
            .iter()
            .map(|id| {
                let expected = Expected {
                    state: None,
                    modified: None,
                };
                Run::new(
                    on.item(id.to_string()),
                    false,
                    Some(reason.into()),
                    None,
                    expected,
                )
            })
            .collect();
        self.block(async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            task::spawn_bulk_run(
                self.proto.clone(),
                on,
                runs,
                Arc::new(Stop::default()),
                Arc::new(estx::protocol::jobs::Pace::new(None)),
                tx,
            );
            loop {
                match rx.recv().await {
                    Some(Event::BulkDone { summary, .. }) => break summary,
                    Some(_) => {}
                    None => panic!("the bulk task ended without a word"),
                }
            }
        })
    }

    /// The records in the audit index, oldest first, each without what
    /// differs between two runs of one act: its id, times (a bulk run's
    /// heartbeat too), interface, its receipts but for the change each
    /// made (the versions differ with each world's history, the balances
    /// with the order concurrent rollbacks of one account ran in) and
    /// `source` in the selection's `--ids-from=source`.
    fn comparable_records(&self) -> Vec<Value> {
        let mut records = self.audit_records();
        records.sort_by_key(|r| r["started_at"].as_str().unwrap_or_default().to_string());
        records
            .into_iter()
            .map(|mut r| {
                let o = r.as_object_mut().unwrap();
                for k in ["record_id", "started_at", "finished_at", "interface"] {
                    assert!(o.remove(k).is_some(), "{k} missing: {o:?}");
                }
                o.remove("alive_at");
                for step in o["steps"].as_array_mut().into_iter().flatten() {
                    if let Some(receipt) = step.get_mut("receipt") {
                        let change = receipt["after"].as_i64().unwrap_or_default()
                            - receipt["before"].as_i64().unwrap_or_default();
                        *receipt = json!({ "change": change });
                    }
                }
                for t in o["targets"].as_array_mut().unwrap() {
                    if let Some(s) = t.as_str().and_then(|s| s.strip_prefix("--ids-from=")) {
                        let n = s.rsplit_once(" (").map_or("", |(_, n)| n);
                        *t = Value::String(format!("--ids-from=… ({n}"));
                    }
                }
                r
            })
            .collect()
    }
}

#[test]
fn a_rollback_leaves_the_same_record_from_the_cli_and_the_dashboard() {
    let w = World::new();
    w.restage(&["t1"]);
    w.run(&["rollback", "t1", "--reason", "INC-77"]).code(0);
    w.restage(&["t1"]);
    let said = w.dashboard_act(Rollback::new("t1").into(), "INC-77");
    assert!(said.contains("rolled-back · audit record "), "{said}");
    assert_eq!(w.state("t1"), "rolled-back");
    let records = w.comparable_records();
    let [cli, dashboard] = records.as_slice() else {
        panic!("two records expected: {records:#?}")
    };
    assert_eq!(cli["status"], "finished", "{cli:#}");
    assert!(!cli["steps"].as_array().unwrap().is_empty(), "{cli:#}");
    assert_eq!(cli, dashboard);
}

#[test]
fn a_bulk_rollback_leaves_the_same_one_record_from_the_cli_and_the_dashboard() {
    let w = World::new();
    let ids = ["t1", "t2"];
    w.restage(&ids);
    let file = w.g.log.with_file_name("ids.txt");
    std::fs::write(&file, "t1\nt2\n").unwrap();
    let path = file.display().to_string();
    w.run(&["rollback", "--ids-from", &path, "--reason", "INC-78"])
        .code(0);
    w.restage(&ids);
    let said = w.dashboard_bulk(OnMarks::Procedure(Procedure::Rollback), &ids, "INC-78");
    assert!(said.contains("2 completed · audit record "), "{said}");
    assert_eq!(
        (w.state("t1"), w.state("t2")),
        ("rolled-back".into(), "rolled-back".into())
    );
    let records = w.comparable_records();
    let [cli, dashboard] = records.as_slice() else {
        panic!("one record per bulk run expected: {records:#?}")
    };
    assert_eq!(cli["bulk"], true, "{cli:#}");
    assert_eq!(cli["transactions"], json!(["t1", "t2"]), "{cli:#}");
    assert_eq!(cli, dashboard);
}

#[test]
fn a_lock_release_leaves_the_same_record_from_the_cli_and_the_dashboard() {
    let w = World::new();
    // Its owner names no transaction, and its lease ran out: stale.
    let lock = serde_json::json!({"owner": "ghost", "process_id": "worker-1",
        "created_at": super::ago(30), "expires_at": super::ago(25)});
    w.put(&w.ix.locks, "C", &lock);
    w.refresh();
    w.run(&["release-lock", "C", "--reason", "INC-79"])
        .code(0)
        .stdout_has("C: released");
    w.put(&w.ix.locks, "C", &lock);
    w.refresh();
    let said = w.dashboard_act(ReleaseLock::new("C").into(), "INC-79");
    assert!(said.contains("C released · audit record "), "{said}");
    assert!(w.source(&w.ix.locks, "C").is_none());
    let records = w.comparable_records();
    let [cli, dashboard] = records.as_slice() else {
        panic!("two records expected: {records:#?}")
    };
    // Filed under the lock's owner, its step too.
    assert_eq!(cli["transactions"], serde_json::json!(["ghost"]), "{cli:#}");
    assert_eq!(cli["steps"][0]["txn"], "ghost", "{cli:#}");
    assert_eq!(cli, dashboard);
}
