//! Bulk interventions through the library (issue 10): a bulk rollback of
//! 50 transactions whose process dies part-way leaves every transaction in
//! a protocol state with the total conserved and its bulk audit record
//! unfinished; recovering the selection then finishes everything with
//! nothing pending. Also: a stop flag keeps new items from starting.

use crate::common::world::Stop;
use crate::fixture::Fx;
use estx::protocol::batch::BatchOptions;
use estx::protocol::intervene::{BulkOptions, Selection};
use estx::protocol::trail::{history, ActionKind, Interface, RecordDraft, RecordStatus, Trail};
use estx::protocol::{Procedure, RunLimits, TxnState, Verdict};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const ACCOUNTS: usize = 10;
const BALANCE: i64 = 10_000;
const TXNS: usize = 50;

/// Ten accounts and fifty transfers stopped after 0 to 5 core steps
/// (created, pending with none/one/both applies, committed with none or
/// one pending entry removed), ten minutes ago. No recovery window, so a
/// recovery right after the crash is not refused.
async fn fifty_stuck() -> (Fx, Vec<String>) {
    let fx = Fx::with(|c| c.recovery_window = Duration::ZERO).await;
    fx.proto.ensure_indices().await.unwrap();
    for a in 0..ACCOUNTS {
        fx.account(&format!("acct-{a}"), BALANCE).await;
    }
    let mut ids = Vec::new();
    for i in 0..TXNS {
        let id = format!("bulk-{i:02}");
        let (src, dest) = (
            format!("acct-{}", i % ACCOUNTS),
            format!("acct-{}", (i + 3) % ACCOUNTS),
        );
        let t = Stop::new(&id, &src, &dest, 10 + i as i64, i % 6);
        fx.kit().stop(&t).await;
        // Long enough ago to be stuck whatever the clocks say.
        fx.backdate(&id, 10).await;
        ids.push(id);
    }
    fx.refresh().await;
    (fx, ids)
}

/// The sum of balances with the transfers in flight completed or undone
/// (the audit's reckoning) must be what was seeded.
async fn assert_conserved(fx: &Fx, when: &str) -> estx::protocol::audit::AuditReport {
    fx.refresh().await;
    let expected = BALANCE * ACCOUNTS as i64;
    let audit = fx.proto.audit(Some(expected), false).await.unwrap();
    assert_eq!(
        audit.total_balance - audit.in_flight_delta,
        expected,
        "{when}: total not conserved: {audit:#?}"
    );
    assert!(
        !audit
            .findings
            .iter()
            .any(|f| f.kind.as_str() == "total_mismatch"),
        "{when}: {audit:#?}"
    );
    audit
}

#[tokio::test]
async fn a_bulk_rollback_crashed_part_way_leaves_protocol_states_then_recovery_finishes_all() {
    let (fx, ids) = fifty_stuck().await;
    assert_conserved(&fx, "before").await;

    // The selection, as `rollback --all-stuck` makes it: all fifty.
    let selected = fx
        .proto
        .select(&Selection::all_stuck(), false)
        .await
        .unwrap();
    let mut found = selected.ids();
    found.sort();
    assert_eq!(found, ids);

    // The bulk record, written before the first step.
    let trail = Trail::open(&fx.proto).await.unwrap();
    let mut i = RecordDraft::new(ActionKind::Rollback, found.clone(), Interface::Cli);
    i.bulk = true;
    i.reason = Some("INC-10 outage".into());
    let record = trail.begin(&i).await.unwrap();

    // The crash: once forty steps have ended, the whole run is dropped at
    // whatever it awaits (a request in flight, its answer never read), as
    // if the process died; four workers are mid-procedure then.
    const CONCURRENCY: usize = 4;
    let steps = Arc::new(AtomicUsize::new(0));
    let crash = Arc::new(Notify::new());
    let observer = {
        let (steps, crash) = (steps.clone(), crash.clone());
        Arc::new(move |_: &estx::protocol::StepReport| {
            if steps.fetch_add(1, Ordering::SeqCst) + 1 == 40 {
                crash.notify_one();
            }
        })
    };
    let dying = fx.proto.clone().with_observer(observer);
    let stop = AtomicBool::new(false);
    let mut ended = Vec::new();
    let opts = BulkOptions {
        concurrency: CONCURRENCY,
        limits: RunLimits::default(),
    };
    tokio::select! {
        run = dying.run_many(&found, Procedure::Rollback, opts, &stop, |r| ended.push(r.txn.clone())) => {
            panic!("the run should have died part-way: {} ended", run.reports.len())
        }
        () = crash.notified() => {}
    }
    drop(dying);
    assert!(
        !ended.is_empty() && ended.len() < TXNS - CONCURRENCY,
        "the crash should come part-way: {} ended",
        ended.len()
    );

    // Every transaction is in a protocol state, the total is conserved.
    let mut states = std::collections::BTreeMap::<String, usize>::new();
    for id in &ids {
        let s = fx.state(id).await;
        assert!(
            !matches!(s, TxnState::Unknown(_)),
            "{id} left in a state the protocol does not know: {s:?}"
        );
        *states.entry(s.as_str().to_string()).or_default() += 1;
    }
    assert!(
        states.contains_key("rolled-back") && states.len() > 2,
        "expected a mix of states after the crash: {states:?}"
    );
    assert_conserved(&fx, "after the crash").await;
    // The record stays unfinished, visible in every transaction's history.
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let h = history(&fx.proto, &ids[0]).await.unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].record_id, record.0);
    assert_eq!(h[0].status, RecordStatus::Running);
    assert!(h[0].bulk);

    // Recovering the same selection, in batches, finishes every one. The
    // crashed run's heartbeat is not silent yet (its process died a moment
    // ago): its transactions read as held by a live job, which the
    // operator overrides, as `--force` does.
    fx.refresh().await;
    let stuck = fx
        .proto
        .select(
            &Selection {
                ids: Some(ids.clone()),
                include_held: true,
                ..Selection::default()
            },
            false,
        )
        .await
        .unwrap();
    assert!(stuck.left_out.is_empty(), "{:?}", stuck.left_out);
    let opts = BatchOptions {
        batch_size: 16,
        ..BatchOptions::default()
    };
    let run = fx
        .proto
        .recover_many_batched(&stuck.ids(), opts, &AtomicBool::new(false), |_| {})
        .await
        .unwrap();
    assert!(run.not_started.is_empty());
    assert_eq!(run.reports.len(), TXNS);
    for r in &run.reports {
        assert!(r.verdict.is_done(), "{}: {:?}", r.txn, r.verdict);
    }
    for id in &ids {
        let s = fx.state(id).await;
        assert!(s.is_terminal(), "{id} is {s:?}");
    }
    for a in 0..ACCOUNTS {
        let acct = fx.acct(&format!("acct-{a}")).await;
        assert!(acct.pending.is_empty(), "acct-{a}: {acct:?}");
    }
    let audit = assert_conserved(&fx, "after recovery").await;
    assert_eq!(audit.in_flight_delta, 0);
    assert_eq!(audit.total_balance, BALANCE * ACCOUNTS as i64);
}

#[tokio::test]
async fn a_stopped_bulk_run_starts_nothing_new_and_filters_compose() {
    let (fx, ids) = fifty_stuck().await;
    // --state pending only: k = 1, 2, 3 of every six.
    let pending = fx
        .proto
        .select(
            &Selection {
                states: vec!["pending".into()],
                ..Selection::all_stuck()
            },
            false,
        )
        .await
        .unwrap();
    assert_eq!(pending.transactions.len(), 25);
    assert!(pending
        .transactions
        .iter()
        .all(|t| t.state == Some(TxnState::Pending)));
    // ids narrowed by the filters; unknown ids left out with why.
    let narrowed = fx
        .proto
        .select(
            &Selection {
                states: vec!["created".into()],
                ids: Some(vec![ids[0].clone(), ids[1].clone(), "nope".into()]),
                ..Selection::default()
            },
            false,
        )
        .await
        .unwrap();
    assert_eq!(narrowed.ids(), vec![ids[0].clone()]);
    let why: Vec<&str> = narrowed.left_out.iter().map(|l| l.why.as_str()).collect();
    assert!(
        why[0].contains("not selected") && why[0].contains("pending"),
        "{why:?}"
    );
    assert!(why[1].contains("no transaction `nope`"), "{why:?}");

    // Stopped before it starts: nothing runs, nothing changes.
    let stop = AtomicBool::new(true);
    let opts = BulkOptions {
        concurrency: 4,
        limits: RunLimits::default(),
    };
    let run = fx
        .proto
        .run_many(&pending.ids(), Procedure::Rollback, opts, &stop, |_| {})
        .await;
    assert!(run.reports.is_empty());
    assert_eq!(run.not_started.len(), 25);
    for t in &pending.transactions {
        assert_eq!(fx.state(&t.id).await, TxnState::Pending);
    }

    // Stopped part-way (as SIGINT does): the two running finish their
    // procedure, nothing new starts.
    let stop = AtomicBool::new(false);
    let opts = BulkOptions {
        concurrency: 2,
        limits: RunLimits::default(),
    };
    let mut ended = 0;
    let run = fx
        .proto
        .run_many(&pending.ids(), Procedure::Rollback, opts, &stop, |_| {
            ended += 1;
            if ended == 3 {
                stop.store(true, Ordering::SeqCst);
            }
        })
        .await;
    assert!(
        (3..=4).contains(&run.reports.len()),
        "{} ran",
        run.reports.len()
    );
    assert_eq!(run.reports.len() + run.not_started.len(), 25);
    for r in &run.reports {
        assert!(
            matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)),
            "{}: {:?}",
            r.txn,
            r.verdict
        );
    }
    for id in &run.not_started {
        assert_eq!(fx.state(id).await, TxnState::Pending, "{id} was touched");
    }
}
