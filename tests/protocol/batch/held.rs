//! A batch held after its claims, right before its account writes, while
//! another actor moves one of its transactions on (rolls it back, or
//! recovers it to the end). Released, the batch's write to the shared
//! account fails (the account moved), the next round's claim finds the
//! transaction moved on, and only the others are applied: no unit moves
//! twice or from nowhere.

use crate::fixture::Fx;
use estx::protocol::batch::BatchOptions;
use estx::protocol::executor::ApplyGate;
use estx::protocol::{Procedure, RunLimits, TxnState, Verdict};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_batch_cannot_apply_a_transaction_another_actor_moved_on() {
    for (n, other) in [Procedure::Rollback, Procedure::Recover]
        .into_iter()
        .enumerate()
    {
        race(n, other).await;
    }
}

async fn race(n: usize, other: Procedure) {
    let fx = Fx::new().await;
    let (a, b, c) = (format!("A{n}"), format!("B{n}"), format!("C{n}"));
    for acct in [&a, &b, &c] {
        fx.account(acct, 500).await;
    }
    let old =
        estx::protocol::time::format_timestamp(chrono::Utc::now() - chrono::Duration::hours(1));
    for (id, src, dest, amount) in [("x", &a, &b, 100), ("y", &a, &c, 50), ("z", &c, &b, 10)] {
        fx.put_txn(
            id,
            json!({"src_acct": src, "dest_acct": dest, "amount": amount,
                   "transaction_state": "pending", "creation_time": old, "modification_time": old}),
        )
        .await;
    }
    let reached = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let gate: ApplyGate = {
        let (reached, release, calls, held) =
            (reached.clone(), release.clone(), calls.clone(), a.clone());
        Arc::new(move |acct: &str| {
            let hold = acct == held && calls.fetch_add(1, Ordering::SeqCst) == 0;
            let (reached, release) = (reached.clone(), release.clone());
            Box::pin(async move {
                if hold {
                    reached.notify_one();
                    release.notified().await;
                }
            })
        })
    };
    let batch = fx.proto.clone().with_apply_gate(gate);
    let ids: Vec<String> = ["x", "y", "z"].map(String::from).to_vec();
    let running =
        tokio::spawn(async move { batch.recover_batched(&ids, BatchOptions::default()).await });
    reached.notified().await;

    // The batch has read A, B, C, claimed x, y, z while pending, and decided
    // one write to A carrying the applies of x and y. Another actor moves x on.
    let moved = fx
        .proto
        .run_procedure("x", other, true, RunLimits::default())
        .await;
    let x_end = match other {
        Procedure::Rollback => TxnState::RolledBack,
        Procedure::Recover => TxnState::Finished,
    };
    assert!(
        matches!(&moved.verdict, Verdict::Completed(s) if *s == x_end),
        "{other:?}: {}",
        moved.verdict
    );
    release.notify_one();
    let reports = running.await.unwrap();

    let verdict = |id: &str| {
        reports
            .iter()
            .find(|r| r.txn == id)
            .unwrap()
            .verdict
            .to_string()
    };
    assert!(
        verdict("x").starts_with("stopped"),
        "{other:?}: x {}",
        verdict("x")
    );
    assert_eq!(
        verdict("y"),
        "completed: transaction is finished",
        "{other:?}"
    );
    assert_eq!(
        verdict("z"),
        "completed: transaction is finished",
        "{other:?}"
    );
    assert_eq!(fx.state("x").await, x_end);
    let x_moved = if other == Procedure::Recover { 100 } else { 0 };
    assert_eq!(fx.acct(&a).await.balance, 500 - 50 - x_moved, "{other:?}");
    assert_eq!(fx.acct(&b).await.balance, 500 + 10 + x_moved, "{other:?}");
    assert_eq!(fx.acct(&c).await.balance, 500 + 50 - 10, "{other:?}");
    for acct in [&a, &b, &c] {
        let st = fx.acct(acct).await;
        assert!(
            st.pending.is_empty() && st.deltas.is_empty(),
            "{other:?}: {acct} {st:?}"
        );
    }
    assert!(calls.load(Ordering::SeqCst) >= 1);
}
