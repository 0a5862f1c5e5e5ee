//! The audit trail through the library, as the dashboard uses it: a
//! recorded rollback names the reason and each step; a missing reason or a
//! missing audit index refuses with nothing written; a crash part-way
//! (RunLimits) leaves an unfinished record.

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::error::Error;
use estx::protocol::intervene::Selection;
use estx::protocol::intervene::{
    self, ActRefusal, BulkAct, Choices, Intervention, NotStarted, Recover, ReleaseLocksOf,
    Rollback, Runner,
};
use estx::protocol::steps::Step;
use estx::protocol::trail::{
    history, ActOutcome, ActionKind, Ending, Interface, RecordDraft, RecordStatus, Trail, TrailStep,
};
use estx::protocol::{Procedure, RunLimits, TxnState};

fn dashboard(reason: Option<&str>) -> Choices {
    Choices::new(Interface::Dashboard, reason.map(str::to_string))
}

async fn with_trail() -> (Fx, Trail) {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let trail = Trail::open(&fx.proto).await.unwrap();
    (fx, trail)
}

async fn records(fx: &Fx, txn: &str) -> Vec<estx::protocol::trail::Record> {
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    history(&fx.proto, txn).await.unwrap()
}

#[tokio::test]
async fn a_recorded_rollback_names_reason_plan_and_steps() {
    let (fx, _trail) = with_trail().await;
    let (id, _, _) = stage(&fx, "r", 3).await;
    let i = Intervention::new(Rollback::new(id.clone()), dashboard(Some("INC-9")));
    let run = intervene::run(&fx.proto, i).await.unwrap();
    assert!(run.record_error.is_none(), "{:?}", run.record_error);
    let report = &run.value;
    assert_eq!(fx.state(&id).await, TxnState::RolledBack);
    let rs = records(&fx, &id).await;
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(r.record_id, run.record.0);
    assert_eq!(
        (r.action, r.interface),
        (ActionKind::Rollback, Interface::Dashboard)
    );
    assert_eq!(r.reason.as_deref(), Some("INC-9"));
    assert_eq!(r.status, RecordStatus::Finished);
    assert_eq!(r.outcome, Some(ActOutcome::Completed));
    assert_eq!(r.steps.len(), report.steps.len());
    let labels: Vec<&str> = r.steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        &labels[..r.plan.len()],
        r.plan.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(r.finished_at.unwrap() >= r.started_at);
    assert!(!r.bulk, "one rollback is not bulk");
}

#[tokio::test]
async fn a_bulk_act_is_flagged_needs_a_reason_and_leaves_one_record() {
    let (fx, _trail) = with_trail().await;
    let (a, _, _) = stage(&fx, "b", 2).await;
    let (b, _, _) = stage(&fx, "c", 2).await;
    let bulk = |reason: Option<&str>| {
        let act = BulkAct {
            procedure: Procedure::Recover,
            selection: Selection {
                ids: Some(vec![a.clone(), b.clone()]),
                ..Selection::default()
            },
            ids_source: Some("marks".into()),
            allow_partial: false,
            runner: Runner::Batched(Default::default()),
        };
        Intervention::new(act, dashboard(reason))
    };
    // A recovery alone needs no reason; a bulk one does.
    let e = intervene::run(&fx.proto, bulk(None)).await.unwrap_err();
    assert!(e.to_string().contains("bulk needs a reason"), "{e}");
    assert!(records(&fx, &a).await.is_empty());
    let done = intervene::run(&fx.proto, bulk(Some("INC-10")))
        .await
        .unwrap();
    assert_eq!(done.outcome, ActOutcome::Completed, "{done}");
    for id in [&a, &b] {
        assert_eq!(fx.state(id).await, TxnState::Finished);
        let rs = records(&fx, id).await;
        assert_eq!(rs.len(), 1, "one record for the selection: {rs:#?}");
        assert_eq!(rs[0].record_id, done.record.0);
        assert!(rs[0].bulk, "{:?}", rs[0]);
    }
    let raw = fx.source(&fx.ix.audit, &done.record.0).await;
    assert_eq!(raw["bulk"], serde_json::json!(true));
}

/// On a production profile a bulk act runs only once confirmed by its
/// count (or the profile's name): unconfirmed or miscounted it is refused
/// with nothing written; confirmed, its record names the profile.
#[tokio::test]
async fn a_production_profiles_bulk_act_is_confirmed_and_its_record_names_the_profile() {
    let fx = Fx::with(|c| {
        c.profile = Some("prod-eu".into());
        c.production = true;
    })
    .await;
    fx.proto.ensure_indices().await.unwrap();
    let (a, _, _) = stage(&fx, "p", 2).await;
    let (b, _, _) = stage(&fx, "q", 2).await;
    let bulk = |typed: Option<&str>| {
        let act = BulkAct {
            procedure: Procedure::Recover,
            selection: Selection {
                ids: Some(vec![a.clone(), b.clone()]),
                ..Selection::default()
            },
            ids_source: Some("marks".into()),
            allow_partial: false,
            runner: Runner::Batched(Default::default()),
        };
        let choices = dashboard(Some("INC-11")).confirmed(typed.map(str::to_string));
        Intervention::new(act, choices)
    };
    for typed in [None, Some("3"), Some("y")] {
        let e = intervene::run(&fx.proto, bulk(typed)).await.unwrap_err();
        assert!(
            matches!(&e, NotStarted::Refused(ActRefusal::Unconfirmed(g)) if g.count == Some(2)),
            "{typed:?}: {e}"
        );
    }
    assert!(records(&fx, &a).await.is_empty());
    assert_eq!(fx.state(&a).await, TxnState::Pending);
    let done = intervene::run(&fx.proto, bulk(Some("2"))).await.unwrap();
    assert_eq!(done.outcome, ActOutcome::Completed, "{done}");
    let rs = records(&fx, &a).await;
    assert_eq!(
        (rs[0].profile.as_deref(), rs[0].production),
        (Some("prod-eu"), true)
    );
    // A forced act on one transaction is confirmed by the profile's name.
    let (c, _, _) = stage(&fx, "r", 2).await;
    let forced = |typed: &str| {
        let choices = dashboard(Some("INC-12"))
            .forced(true)
            .confirmed(Some(typed.to_string()));
        Intervention::new(Rollback::new(c.clone()), choices)
    };
    let e = intervene::run(&fx.proto, forced("1")).await.unwrap_err();
    assert!(e.to_string().contains("typing `prod-eu`"), "{e}");
    intervene::run(&fx.proto, forced("prod-eu")).await.unwrap();
    assert_eq!(fx.state(&c).await, TxnState::RolledBack);
}

#[tokio::test]
async fn a_missing_reason_writes_nothing() {
    let (fx, _trail) = with_trail().await;
    let (id, _, _) = stage(&fx, "m", 2).await;
    let i = Intervention::new(Rollback::new(id.clone()), dashboard(Some(" ")));
    let e = intervene::run(&fx.proto, i).await.unwrap_err();
    assert!(
        matches!(&e, NotStarted::Refused(ActRefusal::ReasonMissing { .. })),
        "{e}"
    );
    let release = ReleaseLocksOf {
        txn: id.clone(),
        allow_partial: true,
    };
    let i = Intervention::new(release, dashboard(None).forced(true));
    let e = intervene::run(&fx.proto, i).await.unwrap_err();
    assert!(e.to_string().contains("forced"), "{e}");
    assert_eq!(fx.state(&id).await, TxnState::Pending);
    assert!(records(&fx, &id).await.is_empty());
    // Recovery without force needs none.
    let i = Intervention::new(Recover::new(id.clone()), dashboard(None));
    let run = intervene::run(&fx.proto, i).await.unwrap();
    assert_eq!(run.outcome, ActOutcome::Completed);
    assert_eq!(records(&fx, &id).await.len(), 1);
}

#[tokio::test]
async fn a_missing_audit_index_refuses_to_open() {
    let fx = Fx::new().await;
    let e = Trail::open(&fx.proto).await.unwrap_err();
    assert!(
        matches!(&e, Error::IndexMissing(ix) if *ix == fx.ix.audit),
        "{e}"
    );
    // An act refuses, saying what to do: the audit index is the tool's own.
    let (id, _, _) = stage(&fx, "noaudit", 3).await;
    let i = Intervention::new(Recover::new(id), dashboard(None));
    let e = intervene::run(&fx.proto, i).await.unwrap_err();
    assert!(
        matches!(&e, NotStarted::Refused(ActRefusal::AuditIndexMissing(ix)) if *ix == fx.ix.audit),
        "{e}"
    );
    let said = e.to_string();
    assert!(said.contains("estx-tui init"), "{said}");
    assert!(said.contains("--audit-trail file:PATH"), "{said}");
}

#[tokio::test]
async fn a_crash_part_way_leaves_the_record_unfinished() {
    let (fx, trail) = with_trail().await;
    let (id, _, _) = stage(&fx, "c", 3).await;
    let mut i = RecordDraft::new(ActionKind::Rollback, vec![id.clone()], Interface::Cli);
    i.reason = Some("INC-10".into());
    trail.begin(&i).await.unwrap();
    let report = fx
        .proto
        .run_procedure(
            &id,
            Procedure::Rollback,
            false,
            RunLimits { max_steps: Some(2) },
        )
        .await;
    assert_eq!(report.steps.len(), 2);
    // The process "died": nobody finishes the record.
    let rs = records(&fx, &id).await;
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].status, RecordStatus::Running);
    assert_eq!((rs[0].outcome, rs[0].finished_at), (None, None));
}

/// An audit index made by an earlier `init` (every step's fields and the
/// plan indexed, `tests/protocol/old_audit_mapping.json`) keeps working
/// with the packed record of a lean trail: a bulk run's record whose plan
/// and steps overflow into parts (written in one `_bulk`) is written, and
/// read back whole, exactly as it was given.
#[tokio::test]
async fn an_audit_index_with_the_old_mapping_takes_and_gives_back_the_packed_record() {
    let fx = Fx::new().await;
    let old: serde_json::Value =
        serde_json::from_str(include_str!("old_audit_mapping.json")).unwrap();
    assert!(fx.cluster().create_index(&fx.ix.audit, old).await.unwrap());
    fx.proto.ensure_indices().await.unwrap();
    let trail = Trail::open(&fx.proto).await.unwrap();
    let n = 10_000;
    let mut draft = RecordDraft::new(ActionKind::Recover, Vec::new(), Interface::Cli);
    draft.bulk = true;
    draft.reason = Some("INC-31".into());
    draft.transactions = (0..n).map(|k| format!("old-{k}")).collect();
    let labels = [Step::Commit, Step::RemoveSource, Step::Finish].map(Step::label);
    draft.plan = draft
        .transactions
        .iter()
        .map(|t| format!("{t}: {}", labels.join(", ")))
        .chain(["release locks stale on evidence".to_string()])
        .collect();
    let (id, plan_parts) = trail.begin_run(&draft).await.unwrap();
    assert!(plan_parts >= 1, "the plan overflows into parts");
    let steps: Vec<TrailStep> = draft
        .transactions
        .iter()
        .flat_map(|t| {
            [
                (
                    labels[0],
                    format!("{}/{t}", fx.ix.transactions),
                    "state pending -> committed",
                ),
                (
                    labels[1],
                    format!("{}/a-{t}", fx.ix.accounts),
                    "removed from pending",
                ),
                (
                    labels[2],
                    format!("{}/{t}", fx.ix.transactions),
                    "state committed -> finished",
                ),
            ]
            .map(|(label, target, detail)| TrailStep {
                txn: t.clone(),
                label: label.into(),
                target,
                result: "updated".into(),
                detail: detail.into(),
                wrote_state: detail.split_once(" -> ").map(|(_, to)| to.to_string()),
                receipt: None,
            })
        })
        .collect();
    let ending = Ending::of(ActOutcome::Completed, "recovered", steps.clone());
    trail.finish(&id, ending).await.unwrap();
    // The first part of the steps, as stored: packed.
    let part = estx::protocol::trail::pages::part_id(&id.0, plan_parts + 1);
    let raw = fx.source(&fx.ix.audit, &part).await;
    assert!(
        raw.contains_key("st"),
        "{:?}",
        raw.keys().collect::<Vec<_>>()
    );
    let rs = records(&fx, &format!("old-{}", n - 1)).await;
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(r.status, RecordStatus::Finished);
    assert_eq!(r.transactions, draft.transactions);
    assert_eq!(r.plan, draft.plan);
    assert_eq!(r.steps, steps);
}

/// Issue 31 item 4, the trail's share: a bulk run's record indexes each of
/// its transactions once. The run record is rewritten by its heartbeat and
/// its completion, and each rewrite indexes its lists again, so it keeps
/// only a small first page (`RECORD_BUDGET`) and its plan's parts the
/// rest; the job's checkpoints keep the planned transactions they list
/// unindexed (`planned`). What `history` reads back is whole all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_runs_record_indexes_each_of_its_transactions_once() {
    use estx::protocol::batch::BatchOptions;
    use estx::protocol::trail::pages::RECORD_BUDGET;
    use serde_json::json;
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let n = 300;
    let seeded =
        crate::batch::seed::seed(fx.cluster(), &fx.ix.indices(), "once", n, 20, 10_000).await;
    let act = BulkAct::all_stuck(Procedure::Recover, Runner::Batched(BatchOptions::default()));
    let i = Intervention::new(act, dashboard(Some("INC-31")));
    let begun = intervene::start(&fx.proto, i).await.unwrap();
    let done = begun.run(&fx.proto).await;
    assert!(done.record_error.is_none(), "{:?}", done.record_error);
    assert_eq!(done.value.reports.len(), n);
    let run = done.record.0.clone();

    // The run's documents as the index holds them.
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let query = json!({"bool": {"should": [
        {"term": {"record_id": run}},
        {"term": {"run_id": run}},
    ]}});
    let docs = fx
        .cluster()
        .scan(&fx.ix.audit, json!({"query": query, "size": 100}))
        .await
        .unwrap();
    // The record, its plan's part, its steps' parts.
    assert!(docs.len() >= 3, "{}", docs.len());
    let mut indexed: std::collections::HashMap<&str, usize> = Default::default();
    for d in &docs {
        for t in d.source["transactions"].as_array().into_iter().flatten() {
            *indexed.entry(t.as_str().unwrap()).or_default() += 1;
        }
    }
    for t in &seeded.txns {
        assert_eq!(
            indexed.get(t.as_str()),
            Some(&1),
            "{t} indexed once: {indexed:?}"
        );
    }
    let record = &docs.iter().find(|d| d.id == run).unwrap().source;
    let lists = serde_json::to_vec(&[&record["transactions"], &record["plan"]]).unwrap();
    assert!(lists.len() <= RECORD_BUDGET + 1024, "{}", lists.len());
    assert!(
        record["parts"].as_u64().unwrap() >= 1,
        "{:#}",
        record["parts"]
    );
    // Found by any of them, whole: every transaction, every step.
    let last = seeded.txns.last().unwrap();
    assert_eq!(
        fx.cluster()
            .count(&fx.ix.audit, json!({"term": {"transactions": last}}))
            .await
            .unwrap(),
        1
    );
    let rs = records(&fx, last).await;
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(r.status, RecordStatus::Finished);
    let mut listed = r.transactions.clone();
    listed.sort();
    let mut want = seeded.txns.clone();
    want.sort();
    assert_eq!(listed, want);
    let steps: usize = done.value.reports.iter().map(|p| p.steps.len()).sum();
    assert_eq!(r.steps.len(), steps);
}

/// A job's checkpoints list the planned transactions they ended without
/// indexing them (`planned`), and read back as they were written: a
/// resume skips every one of them, and a transaction the plan did not
/// list is indexed there, found by `history`.
#[tokio::test]
async fn a_checkpoint_keeps_its_planned_transactions_unindexed_and_reads_them_back() {
    use estx::protocol::trail::pages::{EndedAs, Listed};
    use serde_json::json;
    let (fx, trail) = with_trail().await;
    let mut draft = RecordDraft::new(ActionKind::Recover, Vec::new(), Interface::Cli);
    draft.bulk = true;
    draft.reason = Some("INC-31".into());
    draft.transactions = (0..1000).map(|k| format!("ck-{k}")).collect();
    let (id, plan_parts) = trail.begin_run(&draft).await.unwrap();
    assert!(plan_parts >= 1, "past the record's first page");
    let step = |t: &str| TrailStep {
        txn: t.to_string(),
        label: Step::Finish.label().into(),
        target: format!("{}/{t}", fx.ix.transactions),
        result: "updated".into(),
        detail: "state committed -> finished".into(),
        wrote_state: Some("finished".into()),
        receipt: None,
    };
    let mut ended: Vec<_> = draft.transactions[..600]
        .iter()
        .map(|t| (t.clone(), EndedAs::Done, vec![step(t)]))
        .collect();
    ended.push(("stray".to_string(), EndedAs::Refused, vec![step("stray")]));
    let listed = Listed::of(&draft.transactions);
    let pages = trail.checkpoint_pages(ended);
    let w = trail.checkpoints(&id, plan_parts + 1, pages, &listed).await;
    assert!(w.error.is_none(), "{:?}", w.error);
    let raw = fx
        .source(
            &fx.ix.audit,
            &estx::protocol::trail::pages::part_id(&id.0, plan_parts + 1),
        )
        .await;
    assert_eq!(raw["transactions"], json!(["stray"]), "{:?}", raw.keys());
    assert_eq!(raw["planned"].as_array().map(Vec::len), Some(600));
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    for (txn, docs) in [("ck-3", 1), ("ck-999", 1), ("stray", 1)] {
        let q = json!({"term": {"transactions": txn}});
        assert_eq!(
            fx.cluster().count(&fx.ix.audit, q).await.unwrap(),
            docs,
            "{txn}"
        );
    }
    let back = trail.unfinished(&id.0).await.unwrap();
    assert_eq!(back.ended.len(), 601);
    assert!(back.ended.contains("ck-0") && back.ended.contains("stray"));
    assert_eq!(back.left(), draft.transactions[600..].to_vec());
    assert_eq!(back.earlier.refused, 1);
    let rs = records(&fx, "stray").await;
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].transactions.len(), 1001);
}

/// Issue 31 item 4, the trail's share on the test server: a record's
/// steps are stored as ONE string (`st`), not as a tree of small arrays
/// (osmem keeps every stored document parsed, and its collector walks that
/// tree on every collection for as long as the record lives: a bulk run's
/// 8 600 steps made some 40 000 objects). Every step reads back exactly,
/// receipts and the characters the string separates with included.
#[tokio::test]
async fn a_runs_steps_are_stored_as_one_string_and_read_back_exactly() {
    use estx::protocol::receipt::Receipt;
    let (fx, trail) = with_trail().await;
    let mut draft = RecordDraft::new(ActionKind::Recover, Vec::new(), Interface::Cli);
    draft.bulk = true;
    draft.reason = Some("INC-31".into());
    draft.transactions = (0..1500).map(|k| format!("s#{k};%")).collect();
    let (id, plan_parts) = trail.begin_run(&draft).await.unwrap();
    let step = |t: &str, k: usize| TrailStep {
        txn: t.to_string(),
        label: Step::ApplySource.label().into(),
        target: format!("{}/a|{k}$", fx.ix.accounts),
        result: "updated".into(),
        detail: format!("applied -{k}; odd|chars#here$%24"),
        wrote_state: None,
        receipt: Some(Receipt::new(100, 100 - k as i64, (7, 1), Some((9, 1)))),
    };
    let steps: Vec<TrailStep> = draft
        .transactions
        .iter()
        .enumerate()
        .flat_map(|(k, t)| {
            let finish = TrailStep {
                txn: t.clone(),
                label: Step::Finish.label().into(),
                target: format!("{}/{t}", fx.ix.transactions),
                result: "updated".into(),
                detail: "state committed -> finished".into(),
                wrote_state: Some("finished".into()),
                receipt: None,
            };
            [step(t, k), finish]
        })
        .collect();
    let ending = Ending::of(ActOutcome::Completed, "recovered", steps.clone());
    trail.finish(&id, ending).await.unwrap();
    let part = estx::protocol::trail::pages::part_id(&id.0, plan_parts + 1);
    let raw = fx.source(&fx.ix.audit, &part).await;
    assert!(raw["st"].is_string(), "{:.300}", raw["st"].to_string());
    let rs = records(&fx, "s#1499;%").await;
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].steps, steps);
}

/// A record written before the steps were one string (`st` as arrays of
/// arrays, a receipt an array of numbers) reads as it was written.
#[tokio::test]
async fn a_record_with_its_steps_stored_as_arrays_reads_as_written() {
    use serde_json::json;
    let (fx, _trail) = with_trail().await;
    let (txn, _, _) = stage(&fx, "arr", 3).await;
    let i = Intervention::new(Recover::new(txn.clone()), dashboard(None));
    let run = intervene::run(&fx.proto, i).await.unwrap();
    let id = run.record.0.clone();
    let mut raw = serde_json::Value::Object(fx.source(&fx.ix.audit, &id).await);
    raw["ix"] = json!([fx.ix.transactions, fx.ix.accounts]);
    raw["st"] = json!([[
        txn,
        ["c4", "0"],
        ["c2", "1/a|1", "u", "applied -5; #1", [100, 95, 2, 41, 44]],
        ["c5", "1/a1", "n", "not in pending_transactions"]
    ]]);
    fx.put(&fx.ix.audit, &id, raw).await;
    let rs = records(&fx, &txn).await;
    assert_eq!(rs.len(), 1);
    let steps: Vec<(&str, &str, &str, &str)> = rs[0]
        .steps
        .iter()
        .map(|s| {
            (
                s.label.as_str(),
                s.target.as_str(),
                s.result.as_str(),
                s.detail.as_str(),
            )
        })
        .collect();
    let (t, a) = (
        format!("{}/{txn}", fx.ix.transactions),
        format!("{}/a|1", fx.ix.accounts),
    );
    let a1 = format!("{}/a1", fx.ix.accounts);
    assert_eq!(
        steps,
        [
            (
                Step::Commit.label(),
                t.as_str(),
                "updated",
                "state pending -> committed"
            ),
            (
                Step::ApplySource.label(),
                a.as_str(),
                "updated",
                "applied -5; #1"
            ),
            (
                Step::RemoveSource.label(),
                a1.as_str(),
                "noop",
                "not in pending_transactions"
            ),
        ]
    );
    let receipt = rs[0].steps[1].receipt.as_ref().expect("the receipt");
    assert_eq!((receipt.before, receipt.after), (100, 95));
}
