//! The locks of a transfer whose transaction another process ended while it
//! waited for a lock: once it gets the locks and finds its transaction
//! terminal, it must still release them.

use crate::common::wait_until;
use crate::fixture::Fx;
use estx::protocol::{NewTransfer, Procedure, RunLimits, Verdict};
use std::time::Duration;

/// A locked transfer waits for a lock someone else holds; meanwhile another
/// process ends its (still `created`) transaction: an operator forces a
/// rollback, or a recovery forced by an operator finishes it. That process
/// releases the transaction's locks — it holds none yet. Then the lock frees
/// up, the transfer takes both locks, finds its transaction terminal at its
/// first step and stops... and must release the locks it took.
///
/// Found by the concurrency test: `Protocol::execute` (now `follow_plan`) used to release the
/// transfer's locks only when it ran its plan to a terminal state itself; on
/// `Verdict::Stopped` ("another process has moved it") it returned without
/// releasing them, leaving locks owned by a finished/rolled-back transaction
/// that `acquire_lock` never takes over, so every later locked transfer on
/// either account waited `lock_wait` and was refused until an operator
/// released them (and the audit reported `stale_lock`).
#[tokio::test]
async fn a_transfer_releases_locks_it_took_after_another_process_ended_its_transaction() {
    let fx = Fx::new().await;
    for (tag, procedure) in [("rb", Procedure::Rollback), ("rc", Procedure::Recover)] {
        let (id, src, dest) = (format!("t{tag}"), format!("A{tag}"), format!("B{tag}"));
        fx.account(&src, 500).await;
        fx.account(&dest, 500).await;
        let now = chrono::Utc::now();
        // The holder's transaction is live (a lock whose owner is missing
        // would be stale, and taken over).
        let stamp = estx::protocol::time::format_timestamp(now);
        fx.put_txn(
            "someone-else",
            serde_json::json!({"src_acct": "X", "dest_acct": "Y", "amount": 1,
                "transaction_state": "pending", "creation_time": stamp, "modification_time": stamp}),
        )
        .await;
        fx.put(
            &fx.ix.locks,
            &src,
            serde_json::json!({
                "owner": "someone-else", "process_id": "other",
                "created_at": estx::protocol::time::format_timestamp(now),
                "expires_at": estx::protocol::time::format_timestamp(now + chrono::Duration::minutes(2)),
            }),
        )
        .await;
        let req = NewTransfer {
            id: Some(id.clone()),
            src: src.clone(),
            dest: dest.clone(),
            amount: 100,
        };
        let worker = fx.proto.transfer(&req, true, RunLimits::default());
        let other_process = async {
            let fxr = &fx;
            let idr = id.as_str();
            wait_until(
                "the transfer's transaction exists",
                Duration::from_secs(5),
                move || async move {
                    fxr.cluster()
                        .get(&fxr.ix.transactions, idr)
                        .await
                        .unwrap()
                        .is_some()
                },
            )
            .await;
            let ended = fx
                .proto
                .run_procedure(&id, procedure, true, RunLimits::default())
                .await;
            assert!(
                matches!(ended.verdict, Verdict::Completed(_)),
                "{:?}",
                ended.verdict
            );
            // The other holder lets go of the source account.
            fx.proto.release_lock(&src, true).await.unwrap();
        };
        let (report, ()) = tokio::join!(worker, other_process);
        let ctx = format!("{procedure:?}: {:?}\n{:#?}", report.verdict, report.steps);
        // Reported as what it is: ended by another process.
        assert!(
            matches!(report.verdict, Verdict::EndedElsewhere(_)),
            "{ctx}"
        );
        let expected = if procedure == Procedure::Recover {
            (400, 600)
        } else {
            (500, 500)
        };
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            expected,
            "{ctx}"
        );
        for acct in [&src, &dest] {
            let view = fx.proto.lock_view(acct).await.unwrap();
            assert!(view.is_none(), "{ctx}\nlock on {acct} leaked: {view:#?}");
        }
    }
}
