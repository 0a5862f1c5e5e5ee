//! Plan files (issue 31 item 1) through the library: a recovery planned
//! over 1,000 transactions, 10 of which the application writes before the
//! plan is applied, runs exactly the 990 others and refuses the 10 as
//! drifted, money conserved; a plan from another cluster, an expired one
//! and an edited one are refused whole with nothing written; and with
//! `approval = "second-operator"` the planner's own apply is refused and
//! another operator's runs, both recorded: the refusal as a record that
//! ended refused with no step, the run's record naming planner and
//! approver.

use crate::fixture::Fx;
use estx::protocol::batch::BatchOptions;
use estx::protocol::intervene::{
    self, ActRefusal, BulkAct, Choices, Found, Intervention, NotApplied, NotStarted, PlanFile,
    PlanRefusal, Recover, Runner, Selection,
};
use estx::protocol::trail::receipts::verify_since;
use estx::protocol::trail::{ActOutcome, Interface, Record, RecordStatus};
use estx::protocol::{ApprovalRule, Procedure, Protocol, TxnState};
use std::collections::HashMap;
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

/// Every transfer of `ids` is 100 between its own two accounts of 500.
fn seeded_total(ids: &[String]) -> i64 {
    1_000 * ids.len() as i64
}

/// `n` transfers stopped after the source's debit, 90 minutes ago.
async fn half_applied(fx: &Fx, n: usize) -> Vec<String> {
    fx.proto.ensure_indices().await.unwrap();
    let ids = fx.kit().seed_half_applied("pf", n).await;
    fx.refresh().await;
    ids
}

/// The recovery of exactly `ids`, planned as `--plan-out` plans it.
async fn planned(p: &Protocol, ids: &[String]) -> PlanFile {
    let act = BulkAct::on(
        Procedure::Recover,
        Selection::ids(ids.to_vec()),
        Runner::Batched(BatchOptions::default()),
    );
    // Planned as `--force` plans: the resume test's jobs, their processes
    // gone, leave records whose heartbeats are not yet silent, so their
    // transactions read as held by a live job.
    let forced = Choices {
        force: true,
        ..Choices::new(Interface::Cli, None)
    };
    let preview = Intervention::new(act, forced).preview(p).await.unwrap();
    intervene::plan_file(p, &preview.plan).await.unwrap()
}

fn choices() -> Choices {
    Choices::new(Interface::Cli, Some("INC-31 reviewed plan".into()))
}

fn runner() -> Runner {
    Runner::Batched(BatchOptions::default())
}

/// The sum of balances with the transfers in flight completed (the
/// audit's reckoning) is what was seeded.
async fn assert_conserved(fx: &Fx, expected: i64) {
    fx.refresh().await;
    let audit = fx.proto.audit(Some(expected), false).await.unwrap();
    assert_eq!(
        audit.total_balance - audit.in_flight_delta,
        expected,
        "total not conserved: {audit:#?}"
    );
}

/// Each transaction's and account's `(_seq_no, _primary_term)` now.
async fn versions(fx: &Fx, ids: &[String]) -> HashMap<String, Option<(i64, i64)>> {
    let mut out = HashMap::new();
    let accounts: Vec<String> = ids
        .iter()
        .flat_map(|id| {
            let i = id.trim_start_matches("pf-");
            [format!("pf-src-{i}"), format!("pf-dst-{i}")]
        })
        .collect();
    for (index, ids) in [
        (&fx.ix.transactions, ids.to_vec()),
        (&fx.ix.accounts, accounts),
    ] {
        let docs = fx.cluster().mget(index, &ids).await.unwrap();
        for (id, d) in ids.into_iter().zip(docs) {
            out.insert(id, d.map(|d| (d.seq_no, d.primary_term)));
        }
    }
    out
}

/// The audit record `id`, as the trail reads it back (through the
/// transaction `txn` it names).
async fn record(fx: &Fx, txn: &str, id: &str) -> Record {
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let records = estx::protocol::trail::history(&fx.proto, txn)
        .await
        .unwrap();
    records
        .into_iter()
        .find(|r| r.record_id == id)
        .unwrap_or_else(|| panic!("no record {id} on {txn}"))
}

#[tokio::test]
async fn a_plan_runs_exactly_its_items_and_refuses_the_ones_the_application_moved() {
    let fx = Fx::new().await;
    let ids = half_applied(&fx, 1_000).await;
    let plan = planned(&fx.proto, &ids).await;
    assert_eq!(plan.body.runs().count(), 1_000, "every item planned to run");
    // The application writes 10 of them after the plan was made (its own
    // worker touching them: a direct write, not through the tool).
    let moved: Vec<String> = ids.iter().step_by(100).cloned().collect();
    for id in &moved {
        let mut doc = fx.source(&fx.ix.transactions, id).await;
        doc.insert(
            "modification_time".into(),
            serde_json::json!(chrono::Utc::now()),
        );
        fx.put_txn(id, serde_json::Value::Object(doc)).await;
    }
    let applying = intervene::prepare_apply(&fx.proto, &plan, HOUR, runner(), choices())
        .await
        .unwrap();
    let mut drifted: Vec<String> = applying.drifted.iter().map(|(t, _)| t.clone()).collect();
    drifted.sort();
    let mut expected = moved.clone();
    expected.sort();
    assert_eq!(drifted, expected, "exactly the moved ones drifted");
    assert!(applying
        .drifted
        .iter()
        .all(|(_, d)| matches!(d.found, Found::At(Some(_)))));
    let done = intervene::run(&fx.proto, applying.intervention)
        .await
        .unwrap_or_else(|n| panic!("{n}"));
    assert_eq!(done.value.reports.len(), 990, "the 990 others ran");
    fx.refresh().await;
    for id in &ids {
        let want = if moved.contains(id) {
            TxnState::Pending
        } else {
            TxnState::Finished
        };
        assert_eq!(fx.state(id).await, want, "{id}");
    }
    assert_conserved(&fx, seeded_total(&ids)).await;
    // The apply's one record proves it: the 990 credits of 100 each, every
    // receipt verified (`audit --receipts`), none for the drifted 10.
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let v = verify_since(&fx.proto, None).await.unwrap();
    assert_eq!(v.mismatches, vec![], "{v:#?}");
    assert_eq!((v.records, v.verified, v.writes), (1, 1, 990), "{v:#?}");
    let ran = ids.iter().find(|id| !moved.contains(id)).unwrap();
    let r = record(&fx, ran, &done.record.0).await;
    let approval = r
        .approval
        .unwrap_or_else(|| panic!("no approval in {:?}", r.record_id));
    assert_eq!(approval.plan_hash, plan.hash);
    assert_eq!(approval.planner, plan.body.planner);
    assert_eq!(approval.approver, r.operator);
    let mut named = approval.drifted.clone();
    named.sort();
    assert_eq!(named, expected, "the record names the drifted items");
}

#[tokio::test]
async fn a_plan_from_another_cluster_an_expired_one_and_an_edited_one_are_refused_whole() {
    let fx = Fx::new().await;
    let ids = half_applied(&fx, 20).await;
    let plan = planned(&fx.proto, &ids).await;
    let before = versions(&fx, &ids).await;
    // Another cluster's: the uuid changed AND the hash made again, so only
    // the uuid check can tell.
    let mut other = plan.body.clone();
    other.cluster_uuid = "another-cluster".into();
    let other = PlanFile::seal(other);
    // Planned two hours ago, sealed as such.
    let mut old = plan.body.clone();
    old.planned_at -= chrono::Duration::hours(2);
    let old = PlanFile::seal(old);
    // Edited by hand after sealing: an item's balance change.
    let mut edited = plan.clone();
    edited.body.items[0]
        .balance_change
        .insert("pf-dst-0".into(), 1_000_000);
    for (plan, want) in [
        (&other, "another cluster"),
        (&old, "expired"),
        (&edited, "edited"),
    ] {
        let refused = intervene::prepare_apply(&fx.proto, plan, HOUR, runner(), choices()).await;
        let ok = matches!(
            (&refused, want),
            (
                Err(NotApplied::Refused(PlanRefusal::OtherCluster { .. })),
                "another cluster"
            ) | (
                Err(NotApplied::Refused(PlanRefusal::Expired { .. })),
                "expired"
            ) | (
                Err(NotApplied::Refused(PlanRefusal::Altered { .. })),
                "edited"
            )
        );
        assert!(ok, "{want}: {:?}", refused.map(|a| a.drifted));
    }
    fx.refresh().await;
    assert_eq!(versions(&fx, &ids).await, before, "nothing was written");
    let records = estx::protocol::trail::history(&fx.proto, &ids[0])
        .await
        .unwrap();
    assert!(records.is_empty(), "no record: {records:?}");
    // The plan itself still applies.
    let applying = intervene::prepare_apply(&fx.proto, &plan, HOUR, runner(), choices())
        .await
        .unwrap();
    assert!(applying.drifted.is_empty());
}

#[tokio::test]
async fn a_second_operator_applies_the_plan_the_planner_may_not() {
    let fx = Fx::with(|c| {
        c.approval = ApprovalRule::SecondOperator;
        c.profile = Some("four-eyes".into());
    })
    .await;
    let ids = half_applied(&fx, 5).await;
    // Without a plan, no act runs.
    let direct = intervene::run(
        &fx.proto,
        Intervention::new(Recover::new(&ids[0]), choices()),
    )
    .await;
    assert!(
        matches!(direct, Err(NotStarted::Refused(ActRefusal::NeedsPlan(_)))),
        "{:?}",
        direct.err()
    );
    let plan = planned(&fx.proto, &ids).await;
    let before = versions(&fx, &ids).await;
    // The planner applies his own plan: refused before anything is written.
    let own = intervene::prepare_apply(&fx.proto, &plan, HOUR, runner(), choices()).await;
    assert!(
        matches!(
            own,
            Err(NotApplied::NotStarted(NotStarted::Refused(
                ActRefusal::OwnPlan { .. }
            )))
        ),
        "{:?}",
        own.map(|a| a.drifted)
    );
    fx.refresh().await;
    assert_eq!(versions(&fx, &ids).await, before, "no document was written");
    // The refusal is in the trail: a finished record that ended refused,
    // no step, naming the plan, its planner the operator refused.
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let trail = estx::protocol::trail::history(&fx.proto, &ids[0])
        .await
        .unwrap();
    let [refusal] = trail.as_slice() else {
        panic!("one record of the refused apply: {trail:#?}")
    };
    assert_eq!(
        (refusal.status, refusal.outcome),
        (RecordStatus::Finished, Some(ActOutcome::Refused)),
        "{refusal:#?}"
    );
    assert!(refusal.steps.is_empty(), "{refusal:#?}");
    let named = refusal.approval.as_ref().expect("the refused plan named");
    assert_eq!(named.plan_hash, plan.hash);
    assert!(named.planner.same_identity(&refusal.operator), "{named:#?}");
    // The same plan made by another operator (sealed as such) runs.
    let mut body = plan.body.clone();
    body.planner.user = format!("{}-colleague", body.planner.user);
    let theirs = PlanFile::seal(body);
    let applying = intervene::prepare_apply(&fx.proto, &theirs, HOUR, runner(), choices())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let done = intervene::run(&fx.proto, applying.intervention)
        .await
        .unwrap_or_else(|n| panic!("{n}"));
    assert_eq!(done.value.reports.len(), 5);
    let r = record(&fx, &ids[0], &done.record.0).await;
    let approval = r.approval.unwrap_or_else(|| panic!("no approval"));
    assert_eq!(approval.planner, theirs.body.planner);
    assert_eq!(approval.approver, r.operator);
    assert!(!approval.planner.same_identity(&approval.approver));
    assert_eq!(approval.plan_hash, theirs.hash);
    // Both in the trail: the refusal and the approved run.
    let trail = estx::protocol::trail::history(&fx.proto, &ids[0])
        .await
        .unwrap();
    let mut outcomes: Vec<_> = trail.iter().map(|r| r.outcome).collect();
    outcomes.sort_by_key(|o| format!("{o:?}"));
    assert_eq!(
        outcomes,
        [Some(ActOutcome::Completed), Some(ActOutcome::Refused)]
    );
}

/// The bulk recovery of exactly `ids`, as a plan's apply or `--ids-from` runs it.
fn recovery_of(ids: &[String]) -> BulkAct {
    BulkAct::on(Procedure::Recover, Selection::ids(ids.to_vec()), runner())
}

/// Issue 31 leftover: under `approval = "second-operator"` a job's
/// `--resume` moves money like a new run, so it needs what a new run
/// needs: a job begun without a plan, or from a plan the resuming operator
/// made, is refused with nothing written; one begun from another
/// operator's plan resumes.
#[tokio::test]
async fn under_a_second_operator_a_job_resumes_only_from_another_operators_plan() {
    let fx = Fx::new().await;
    let ids = half_applied(&fx, 5).await;
    let four_eyes = Protocol::new(
        fx.cluster().clone(),
        estx::protocol::ProtocolConfig {
            approval: ApprovalRule::SecondOperator,
            profile: Some("four-eyes".into()),
            ..fx.proto.config().clone()
        },
    );
    let forced = Choices {
        force: true,
        ..choices()
    };
    let resumed_entries = |r: &Record| r.resumed.len();
    // A job begun without a plan (before the profile asked for one), its
    // process gone before its first step: its record stays running.
    let plain = intervene::start(&fx.proto, Intervention::new(recovery_of(&ids), choices()))
        .await
        .unwrap_or_else(|n| panic!("{n}"));
    let run = plain.record().0.clone();
    drop(plain);
    let before = versions(&fx, &ids).await;
    let refused = intervene::resume(&four_eyes, &run, runner(), forced.clone()).await;
    assert!(
        matches!(
            refused,
            Err(NotStarted::Refused(ActRefusal::ResumeNeedsPlan { .. }))
        ),
        "{:?}",
        refused.err()
    );
    // A job begun from the resuming operator's own plan (applied where
    // no approval was asked).
    let own_plan = planned(&fx.proto, &ids).await;
    // Forced: the job above left its record running and its heartbeat is
    // not yet silent, so its transactions read as held by a live job.
    let applying = intervene::prepare_apply(&fx.proto, &own_plan, HOUR, runner(), forced.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let own = intervene::start(&fx.proto, applying.intervention)
        .await
        .unwrap_or_else(|n| panic!("{n}"));
    let own_run = own.record().0.clone();
    drop(own);
    let refused = intervene::resume(&four_eyes, &own_run, runner(), forced.clone()).await;
    assert!(
        matches!(
            refused,
            Err(NotStarted::Refused(ActRefusal::OwnPlan { .. }))
        ),
        "{:?}",
        refused.err()
    );
    fx.refresh().await;
    assert_eq!(
        record(&fx, &ids[0], &run).await.resumed.len(),
        0,
        "the refused resume wrote nothing"
    );
    assert_eq!(resumed_entries(&record(&fx, &ids[0], &own_run).await), 0);
    // The apply fenced the transactions (a write that sets nothing); no
    // account was written.
    let now = versions(&fx, &ids).await;
    for (id, v) in now.iter().filter(|(id, _)| !ids.contains(id)) {
        assert_eq!(before.get(id), Some(v), "account {id} written");
    }
    // A job begun from another operator's plan resumes under the profile.
    let mut body = planned(&four_eyes, &ids).await.body;
    body.planner.user = format!("{}-colleague", body.planner.user);
    let theirs = PlanFile::seal(body);
    let applying = intervene::prepare_apply(&four_eyes, &theirs, HOUR, runner(), forced.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let started = intervene::start(&four_eyes, applying.intervention)
        .await
        .unwrap_or_else(|n| panic!("{n}"));
    let approved_run = started.record().0.clone();
    drop(started);
    let resumed = intervene::resume(&four_eyes, &approved_run, runner(), forced)
        .await
        .unwrap_or_else(|n| panic!("{n}"));
    let done = resumed.run(&four_eyes).await;
    assert_eq!(done.value.reports.len(), 5);
    assert_conserved(&fx, seeded_total(&ids)).await;
    let r = record(&fx, &ids[0], &approved_run).await;
    assert_eq!(resumed_entries(&r), 1, "{r:?}");
    assert_eq!(r.approval.map(|a| a.plan_hash), Some(theirs.hash));
}
