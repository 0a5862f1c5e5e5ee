//! Batched recovery (`Protocol::recover_batched`): it must decide exactly as
//! one-at-a-time recovery does (same steps, same outcomes, same verdicts,
//! same refusals), survive lost `_bulk` answers and crashes, and keep every
//! invariant against a fleet of concurrent workers (`fleet`).

use crate::common::FaultProxy;
use crate::fixture::Fx;
use estx::protocol::batch::BatchOptions;
use estx::protocol::{ProcedureReport, RunLimits, Verdict};
use serde_json::json;

mod fleet;
mod held;
pub mod seed;

/// What a report says, without the ids that differ between two seeded twins:
/// the starting state, each step's label and result, and the verdict.
fn shape(r: &ProcedureReport) -> String {
    let steps: Vec<String> = r
        .steps
        .iter()
        .map(|s| format!("{} => {:?}", s.label, s.result))
        .collect();
    format!("{:?} | {} | {}", r.started_in, steps.join(" ; "), r.verdict)
}

/// Every account has its expected balance and carries nothing; the total is
/// kept.
async fn check_recovered(fx: &Fx, seeded: &seed::Seeded) {
    let mut total = 0;
    for a in &seeded.accounts {
        let st = fx.acct(a).await;
        assert!(st.pending.is_empty(), "{a} still carries {:?}", st.pending);
        assert!(st.deltas.is_empty(), "{a} still records {:?}", st.deltas);
        assert_eq!(st.balance, seeded.expected[a], "balance of {a}");
        total += st.balance;
    }
    assert_eq!(total, seeded.total);
    for t in &seeded.txns {
        assert!(fx.state(t).await.is_terminal(), "{t} is not terminal");
    }
}

/// Recovers twin stuck sets, one transaction at a time and in batches that
/// share accounts, and compares every report.
async fn compare_with_sequential(
    fx: &Fx,
    batched_via: &estx::protocol::Protocol,
    opts: BatchOptions,
) {
    let (n, m) = (60, 4);
    let one = seed::seed(fx.cluster(), &fx.ix.indices(), "q", n, m, 10_000).await;
    let many = seed::seed(fx.cluster(), &fx.ix.indices(), "b", n, m, 10_000).await;
    let mut sequential = Vec::new();
    for id in &one.txns {
        sequential.push(fx.proto.recover(id, false).await);
    }
    let mut batched = batched_via.recover_batched(&many.txns, opts).await;
    assert_eq!(batched.len(), n);
    batched.sort_by_key(|r| many.txns.iter().position(|t| *t == r.txn));
    for (s, b) in sequential.iter().zip(&batched) {
        assert!(
            matches!(b.verdict, Verdict::Completed(_)),
            "{}: {}",
            b.txn,
            b.verdict
        );
        assert_eq!(shape(s), shape(b), "{} vs {}", s.txn, b.txn);
    }
    check_recovered(fx, &one).await;
    check_recovered(fx, &many).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_recovery_decides_as_one_at_a_time() {
    let fx = Fx::new().await;
    let opts = BatchOptions {
        batch_size: 25,
        ..BatchOptions::default()
    };
    compare_with_sequential(&fx, &fx.proto, opts).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_bulk_answers_are_recognised_and_nothing_is_applied_twice() {
    let fx = Fx::new().await;
    let proxy = FaultProxy::start(&fx.url);
    // The answers of the first rounds' bulks (transitions and claims, then
    // account writes) are swallowed after the server applied them.
    proxy.drop_responses("POST", "_bulk", 5);
    let via = fx.proto_via(&proxy.url());
    compare_with_sequential(&fx, &via, BatchOptions::default()).await;
    assert_eq!(proxy.dropped(), 5, "{:#?}", proxy.log());
}

/// Behind a front that refuses bodies over a few KiB (nginx's 413 past
/// `client_max_body_size`), each refused `_bulk` is halved until it passes:
/// the batch decides exactly as one at a time, nothing lost or doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulks_refused_as_too_large_are_halved_until_they_pass() {
    let fx = Fx::new().await;
    let proxy = FaultProxy::start(&fx.url);
    let limit = 6 * 1024;
    proxy.limit_body_size(limit);
    let via = fx.proto_via(&proxy.url());
    compare_with_sequential(&fx, &via, BatchOptions::default()).await;
    assert!(
        proxy.largest_body() > limit,
        "a body over the limit was tried and refused (the halving was exercised): {}",
        proxy.largest_body()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_batch_is_finished_by_the_next() {
    let fx = Fx::new().await;
    let seeded = seed::seed(fx.cluster(), &fx.ix.indices(), "c", 40, 3, 1_000).await;
    for crash_after in [1, 2, 3] {
        let opts = BatchOptions {
            batch_size: 15,
            force: true,
            limits: RunLimits {
                max_steps: Some(crash_after),
            },
            ..BatchOptions::default()
        };
        let reports = fx.proto.recover_batched(&seeded.txns, opts).await;
        for r in &reports {
            assert!(
                !matches!(r.verdict, Verdict::Failed(_) | Verdict::Refused(_)),
                "{}: {}",
                r.txn,
                r.verdict
            );
        }
    }
    let opts = BatchOptions {
        force: true,
        ..BatchOptions::default()
    };
    let reports = fx.proto.recover_batched(&seeded.txns, opts).await;
    for r in &reports {
        assert!(
            matches!(r.verdict, Verdict::Completed(_) | Verdict::NothingToDo(_)),
            "{}: {}",
            r.txn,
            r.verdict
        );
    }
    check_recovered(&fx, &seeded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_those_of_one_at_a_time() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    fx.account("X", i64::MAX).await;
    let now = estx::protocol::time::format_timestamp(chrono::Utc::now());
    let old =
        estx::protocol::time::format_timestamp(chrono::Utc::now() - chrono::Duration::hours(1));
    let txn = |src: &str, dest: &str, amount: i64, state: &str, at: &str| {
        json!({"src_acct": src, "dest_acct": dest, "amount": amount,
               "transaction_state": state, "creation_time": at, "modification_time": at})
    };
    fx.put_txn("recent", txn("A", "B", 10, "pending", &now))
        .await;
    fx.put_txn("weird", txn("A", "B", 10, "paused", &old)).await;
    fx.put_txn("orphan", txn("A", "nobody", 10, "pending", &old))
        .await;
    fx.put_txn("done", txn("A", "B", 10, "finished", &old))
        .await;
    fx.put_txn("overflow", txn("A", "X", 10, "pending", &old))
        .await;
    fx.put_txn(
        "broken",
        json!({"transaction_state": "pending", "modification_time": old}),
    )
    .await;
    let ids: Vec<String> = [
        "recent", "weird", "orphan", "done", "overflow", "broken", "missing",
    ]
    .map(String::from)
    .to_vec();
    let batched = fx
        .proto
        .recover_batched(&ids, BatchOptions::default())
        .await;
    assert_eq!(batched.len(), ids.len());
    for id in &ids {
        let b = batched.iter().find(|r| &r.txn == id).unwrap();
        let s = fx.proto.recover(id, false).await;
        assert!(b.steps.is_empty(), "{id}: {:?}", b.steps);
        match (&b.verdict, &s.verdict) {
            // The age is read at each refusal (and shown to the
            // hundredth): the same refusal, a moment apart.
            (
                Verdict::Refused(estx::protocol::ProcedureRefusal::Recent { window: wb, .. }),
                Verdict::Refused(estx::protocol::ProcedureRefusal::Recent { window: ws, .. }),
            ) => assert_eq!(wb, ws, "{id}"),
            _ => assert_eq!(b.verdict.to_string(), s.verdict.to_string(), "{id}"),
        }
        assert_eq!(
            estx::cli::exit::of_report(b),
            estx::cli::exit::of_report(&s),
            "{id}"
        );
        assert_eq!(b.started_in, s.started_in, "{id}");
    }
    assert_eq!(fx.acct("A").await.balance, 500);
    assert_eq!(fx.acct("X").await.balance, i64::MAX);
}
