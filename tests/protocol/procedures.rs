//! Every procedure from every state: a transfer is stopped after each core
//! step (as if its worker died there), then recovered or rolled back, and the
//! final state, balances and pending lists are checked, and that the accounts
//! keep no history (the fence needs none).

use crate::common::world::Stop;
use crate::fixture::Fx;
use estx::protocol::{
    NewTransfer, Procedure, ProcedureRefusal, RunLimits, StepResult, TxnState, Verdict,
};

/// Starts a transfer of 100 from `src` (500) to `dest` (500) and stops it
/// after `k` core steps; backdates it past the recovery window.
pub async fn stage(fx: &Fx, tag: &str, k: usize) -> (String, String, String) {
    stage_with(fx, tag, k, false).await
}

/// [`stage`], optionally holding locks on both accounts (a crashed locked
/// worker leaves them behind).
pub async fn stage_with(
    fx: &Fx,
    tag: &str,
    k: usize,
    with_locks: bool,
) -> (String, String, String) {
    let (src, dest, id) = (format!("A{tag}"), format!("B{tag}"), format!("t{tag}"));
    fx.account(&src, 500).await;
    fx.account(&dest, 500).await;
    let t = Stop::new(&id, &src, &dest, 100, k).locked(with_locks);
    fx.kit().stop(&t).await;
    fx.backdate(&id, 5).await;
    (id, src, dest)
}

/// The state a transfer is in after `k` core steps.
pub fn state_after(k: usize) -> TxnState {
    match k {
        0 => TxnState::Created,
        1..=3 => TxnState::Pending,
        4..=6 => TxnState::Committed,
        _ => TxnState::Finished,
    }
}

/// Both accounts have `balances`, carry nothing, and keep no record of the
/// transaction: no pending delta, no settled record.
pub async fn assert_settled(fx: &Fx, src: &str, dest: &str, balances: (i64, i64)) {
    let (a, b) = (fx.acct(src).await, fx.acct(dest).await);
    assert_eq!((a.balance, b.balance), balances, "balances of {src}/{dest}");
    for acct in [&a, &b] {
        assert!(
            acct.pending.is_empty() && acct.deltas.is_empty() && acct.settled.is_empty(),
            "history left: {acct:?}"
        );
    }
}

#[tokio::test]
async fn a_transfer_runs_all_seven_core_steps() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    let req = NewTransfer {
        id: None,
        src: "A".into(),
        dest: "B".into(),
        amount: 120,
    };
    let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        report.verdict
    );
    assert_eq!(report.steps.len(), 7);
    assert!(
        report
            .steps
            .iter()
            .all(|s| matches!(s.result, StepResult::Updated(_))),
        "{:#?}",
        report.steps
    );
    assert_eq!(fx.state(&report.txn).await, TxnState::Finished);
    assert_settled(&fx, "A", "B", (380, 620)).await;
}

#[tokio::test]
async fn recovery_finishes_a_transfer_stopped_after_any_core_step() {
    let fx = Fx::new().await;
    for k in 0..=7 {
        let (id, src, dest) = stage(&fx, &format!("r{k}"), k).await;
        assert_eq!(fx.state(&id).await, state_after(k), "after {k} steps");
        let report = fx.proto.recover(&id, false).await;
        let expected_steps = [7, 6, 6, 6, 3, 3, 3, 0][k];
        assert_eq!(
            report.steps.len(),
            expected_steps,
            "k={k}: {:#?}",
            report.steps
        );
        if k == 7 {
            assert!(matches!(
                report.verdict,
                Verdict::NothingToDo(TxnState::Finished)
            ));
        } else {
            assert!(
                matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
                "k={k}: {:?}",
                report.verdict
            );
        }
        assert_eq!(fx.state(&id).await, TxnState::Finished);
        assert_settled(&fx, &src, &dest, (400, 600)).await;
    }
}

#[tokio::test]
async fn rollback_from_every_core_state() {
    let fx = Fx::new().await;
    for k in 0..=7 {
        let (id, src, dest) = stage(&fx, &format!("b{k}"), k).await;
        let before = (fx.acct(&src).await, fx.acct(&dest).await, fx.txn(&id).await);
        let report = fx.proto.rollback(&id, false).await;
        match k {
            0 => {
                assert!(
                    matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
                    "{:?}",
                    report.verdict
                );
                assert_eq!(fx.state(&id).await, TxnState::RolledBack);
                assert_eq!(
                    (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
                    (500, 500)
                );
            }
            1..=3 => {
                assert!(
                    matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
                    "k={k}: {:?}",
                    report.verdict
                );
                assert_eq!(report.steps.len(), 4, "{:#?}", report.steps);
                assert_eq!(fx.state(&id).await, TxnState::RolledBack);
                assert_settled(&fx, &src, &dest, (500, 500)).await;
            }
            4..=6 => {
                assert!(
                    matches!(
                        report.verdict,
                        Verdict::Refused(ProcedureRefusal::Committed)
                    ),
                    "k={k}: {:?}",
                    report.verdict
                );
                assert!(report.steps.is_empty());
                assert_eq!(
                    (fx.acct(&src).await, fx.acct(&dest).await, fx.txn(&id).await),
                    before,
                    "refusal changed something"
                );
            }
            _ => {
                assert!(matches!(
                    report.verdict,
                    Verdict::NothingToDo(TxnState::Finished)
                ));
                assert_eq!(
                    (fx.acct(&src).await, fx.acct(&dest).await, fx.txn(&id).await),
                    before
                );
            }
        }
    }
}

#[tokio::test]
async fn an_interrupted_rollback_is_resumed_by_recovery_or_rollback() {
    let fx = Fx::new().await;
    for j in 1..=3 {
        for resume in [Procedure::Recover, Procedure::Rollback] {
            let (id, src, dest) = stage(&fx, &format!("t{j}{resume:?}"), 3).await;
            let report = fx
                .proto
                .run_procedure(
                    &id,
                    Procedure::Rollback,
                    false,
                    RunLimits { max_steps: Some(j) },
                )
                .await;
            assert!(matches!(report.verdict, Verdict::Stopped(_)));
            assert_eq!(fx.state(&id).await, TxnState::Terminating);
            fx.backdate(&id, 5).await;
            let report = fx
                .proto
                .run_procedure(&id, resume, false, RunLimits::default())
                .await;
            assert!(
                matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
                "{:?}",
                report.verdict
            );
            assert_eq!(report.steps.len(), 3);
            assert_settled(&fx, &src, &dest, (500, 500)).await;
            let again = fx.proto.rollback(&id, false).await;
            assert!(matches!(
                again.verdict,
                Verdict::NothingToDo(TxnState::RolledBack)
            ));
            let again = fx.proto.recover(&id, false).await;
            assert!(matches!(
                again.verdict,
                Verdict::NothingToDo(TxnState::RolledBack)
            ));
        }
    }
}

#[tokio::test]
async fn the_recovery_window_protects_a_live_worker_unless_forced() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    let req = NewTransfer {
        id: Some("live".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 100,
    };
    fx.proto
        .transfer(&req, false, RunLimits { max_steps: Some(2) })
        .await;
    let before = (fx.acct("A").await, fx.acct("B").await, fx.txn("live").await);
    for report in [
        fx.proto.recover("live", false).await,
        fx.proto.rollback("live", false).await,
    ] {
        match &report.verdict {
            Verdict::Refused(ProcedureRefusal::Recent { age, window }) => {
                assert!(*age < chrono::TimeDelta::seconds(120));
                assert_eq!(*window, std::time::Duration::from_secs(120));
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert_eq!(estx::cli::exit::of_report(&report), 1);
    }
    assert_eq!(
        (fx.acct("A").await, fx.acct("B").await, fx.txn("live").await),
        before
    );
    let forced = fx.proto.rollback("live", true).await;
    assert!(
        matches!(forced.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{:?}",
        forced.verdict
    );
    assert_eq!(
        (fx.acct("A").await.balance, fx.acct("B").await.balance),
        (500, 500)
    );
}

#[tokio::test]
async fn an_existing_id_is_never_run_twice() {
    let fx = Fx::new().await;
    let (id, src, dest) = stage(&fx, "dup", 2).await;
    let before = (fx.acct(&src).await, fx.acct(&dest).await, fx.txn(&id).await);
    let req = NewTransfer {
        id: Some(id.clone()),
        src: src.clone(),
        dest: dest.clone(),
        amount: 100,
    };
    let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
    assert!(
        matches!(
            report.verdict,
            Verdict::Refused(ProcedureRefusal::AlreadyExists(_))
        ),
        "{:?}",
        report.verdict
    );
    assert_eq!(
        (fx.acct(&src).await, fx.acct(&dest).await, fx.txn(&id).await),
        before
    );
}

#[tokio::test]
async fn invalid_transfers_are_refused_before_anything_is_written() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    for (src, dest, amount) in [
        ("A", "A", 10),
        ("A", "nope", 10),
        ("A", "B", 0),
        ("A", "B", -5),
    ] {
        let req = NewTransfer {
            id: Some("bad".into()),
            src: src.into(),
            dest: dest.into(),
            amount,
        };
        let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
        assert!(
            matches!(report.verdict, Verdict::Failed(_)),
            "{src}->{dest} {amount}: {:?}",
            report.verdict
        );
        assert_eq!(estx::cli::exit::of_report(&report), 1);
        assert!(fx
            .cluster()
            .get(&fx.ix.transactions, "bad")
            .await
            .unwrap()
            .is_none());
    }
    assert_eq!(fx.acct("A").await.balance, 500);
}

#[tokio::test]
async fn legacy_settled_records_are_honoured_kept_and_never_written() {
    let fx = Fx::new().await;
    let legacy = |id: &str, outcome: &str| {
        serde_json::json!({"balance": 500, "pending_transactions": [], "owner": "ops",
            "settled_transactions": [{"id": id, "outcome": outcome, "at": "2026-01-01T00:00:00.000Z"}]})
    };
    fx.put(&fx.ix.accounts, "A", legacy("old", "applied")).await;
    fx.put(&fx.ix.accounts, "B", legacy("old", "applied")).await;
    // A new transfer between them: the old records stay as they were.
    let req = NewTransfer {
        id: Some("new".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 10,
    };
    let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        report.verdict
    );
    for (id, balance) in [("A", 490), ("B", 510)] {
        let src = fx.source(&fx.ix.accounts, id).await;
        assert_eq!(src["balance"], balance);
        assert_eq!(src["owner"], "ops");
        assert_eq!(
            src["settled_transactions"],
            legacy("old", "applied")["settled_transactions"]
        );
        assert_eq!(src["pending_deltas"], serde_json::json!([]));
    }
    // Reusing the settled id is refused before anything is written.
    let before = (fx.acct("A").await, fx.acct("B").await);
    let reuse = NewTransfer {
        id: Some("old".into()),
        ..req
    };
    let report = fx.proto.transfer(&reuse, false, RunLimits::default()).await;
    match &report.verdict {
        Verdict::Refused(r @ ProcedureRefusal::Unsafe(_)) => {
            let text = r.to_string();
            assert!(
                text.contains("`old` was used before") && text.contains("choose another id"),
                "{text}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(fx
        .cluster()
        .get(&fx.ix.transactions, "old")
        .await
        .unwrap()
        .is_none());
    assert_eq!((fx.acct("A").await, fx.acct("B").await), before);
}
