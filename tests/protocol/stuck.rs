//! The stuck query (every hit, not the article's first 100, oldest first) and
//! recovery of every stuck transaction.

use crate::common::world::Stop;
use crate::fixture::Fx;
use crate::procedures::stage;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::stuck::Pace;
use estx::protocol::time::format_timestamp;
use estx::protocol::{TxnState, Verdict};
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn seconds_ago(s: i64) -> chrono::DateTime<Utc> {
    Utc::now() - ChronoDuration::seconds(s)
}

#[tokio::test]
async fn every_stuck_transaction_is_listed_oldest_first() {
    let fx = Fx::new().await;
    fx.account("S", 1_000_000).await;
    fx.account("D", 0).await;
    let states = ["created", "pending", "committed", "terminating"];
    // Written in an order unrelated to their age.
    let mut stuck: Vec<(i64, String)> = Vec::new();
    for i in 0..250i64 {
        let age = 600 + ((i * 7919) % 250) * 37; // 10 min .. ~2.6 h, all distinct
        let id = format!("stuck-{i:03}");
        let t = seconds_ago(age);
        // Timestamps as applications write them: ours, nanoseconds, epoch millis.
        let modified: Value = match i % 3 {
            0 => json!(format_timestamp(t)),
            1 => json!(t.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string()),
            _ => json!(t.timestamp_millis()),
        };
        fx.put_txn(
            &id,
            json!({"src_acct": "S", "dest_acct": "D", "amount": 1, "transaction_state": states[i as usize % 4],
                   "creation_time": format_timestamp(t), "modification_time": modified}),
        )
        .await;
        stuck.push((age, id));
    }
    // Old but terminal, and non-terminal but recent: none of them is stuck.
    for i in 0..20i64 {
        let old = format_timestamp(seconds_ago(3600 + i * 60));
        let state = if i % 2 == 0 {
            "finished"
        } else {
            "rolled-back"
        };
        fx.put_txn(
            &format!("done-{i:02}"),
            json!({"src_acct": "S", "dest_acct": "D", "amount": 1, "transaction_state": state, "modification_time": old}),
        )
        .await;
        let fresh = format_timestamp(seconds_ago(2 + i * 5)); // well within 2 min
        fx.put_txn(
            &format!("fresh-{i:02}"),
            json!({"src_acct": "S", "dest_acct": "D", "amount": 1, "transaction_state": states[i as usize % 4], "modification_time": fresh}),
        )
        .await;
    }
    fx.refresh().await;

    stuck.sort_by_key(|s| std::cmp::Reverse(s.0));
    let expected: Vec<String> = stuck.into_iter().map(|(_, id)| id).collect();
    let found = fx.proto.stuck_transactions().await.unwrap();
    let ids: Vec<String> = found.iter().map(|t| t.id.clone()).collect();
    assert_eq!(ids.len(), 250, "stuck query capped or leaky");
    assert_eq!(ids, expected, "not exactly the stuck ones, oldest first");
    assert!(found
        .iter()
        .all(|t| t.is_well_formed() && t.state.as_ref().is_some_and(TxnState::is_in_flight)));
    // Oldest first, also by the times as parsed.
    let times: Vec<_> = found.iter().map(|t| t.modification_time.unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

#[tokio::test]
async fn recover_all_stuck_finishes_or_undoes_every_one() {
    let fx = Fx::new().await;
    let mut expected: Vec<(String, String, String, TxnState)> = Vec::new();
    // Crashed forward at every core step (twice for some).
    for (n, k) in [0, 1, 2, 3, 4, 5, 6, 2, 5].into_iter().enumerate() {
        let (id, src, dest) = stage(&fx, &format!("f{n}k{k}"), k).await;
        expected.push((id, src, dest, TxnState::Finished));
    }
    // Crashed while rolling back, after 1, 2 and 3 rollback steps.
    for j in 1..=3 {
        let (id, src, dest) = stage(&fx, &format!("u{j}"), 3).await;
        fx.kit().stop_rollback(&id, j, false).await;
        assert_eq!(fx.state(&id).await, TxnState::Terminating);
        fx.backdate(&id, 5).await;
        expected.push((id, src, dest, TxnState::RolledBack));
    }
    assert_eq!(expected.len(), 12);
    // Already finished: not stuck.
    let (done, done_src, done_dest) = stage(&fx, "done", 7).await;
    // Stuck-looking, but its worker may be alive (modified just now).
    fx.account("Alive", 500).await;
    fx.account("Balive", 500).await;
    fx.kit()
        .stop(&Stop::new("alive", "Alive", "Balive", 100, 2))
        .await;
    let alive_before = (
        fx.source(&fx.ix.transactions, "alive").await,
        fx.source(&fx.ix.accounts, "Alive").await,
        fx.source(&fx.ix.accounts, "Balive").await,
    );
    fx.refresh().await;

    let stuck: BTreeSet<String> = fx
        .proto
        .stuck_transactions()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(
        stuck,
        expected
            .iter()
            .map(|e| e.0.clone())
            .collect::<BTreeSet<_>>()
    );

    let reports = fx.proto.recover_all_stuck(4).await.unwrap().reports;
    assert_eq!(reports.len(), 12);
    for r in &reports {
        let want = &expected
            .iter()
            .find(|e| e.0 == r.txn)
            .unwrap_or_else(|| panic!("{} recovered", r.txn))
            .3;
        assert!(
            matches!(&r.verdict, Verdict::Completed(s) if s == want),
            "{}: {:?}",
            r.txn,
            r.verdict
        );
    }
    let mut total = 0;
    for (id, src, dest, end) in &expected {
        assert_eq!(&fx.state(id).await, end, "{id}");
        let (a, b) = (fx.acct(src).await, fx.acct(dest).await);
        let want = if *end == TxnState::Finished {
            (400, 600)
        } else {
            (500, 500)
        };
        assert_eq!((a.balance, b.balance), want, "{id}");
        assert!(
            a.pending.is_empty() && b.pending.is_empty(),
            "{id}: {a:?} {b:?}"
        );
        total += a.balance + b.balance;
    }
    assert_eq!(total, 12 * 1000, "money created or destroyed");
    assert_eq!(fx.state(&done).await, TxnState::Finished);
    assert_eq!(
        (
            fx.acct(&done_src).await.balance,
            fx.acct(&done_dest).await.balance
        ),
        (400, 600)
    );
    // The live one is left exactly as it was.
    let alive_after = (
        fx.source(&fx.ix.transactions, "alive").await,
        fx.source(&fx.ix.accounts, "Alive").await,
        fx.source(&fx.ix.accounts, "Balive").await,
    );
    assert_eq!(alive_after, alive_before);
    assert_eq!(fx.state("alive").await, TxnState::Pending);

    // Nothing is stuck any more; a second pass does nothing.
    fx.refresh().await;
    assert!(fx.proto.stuck_transactions().await.unwrap().is_empty());
    assert!(fx
        .proto
        .recover_all_stuck(4)
        .await
        .unwrap()
        .reports
        .is_empty());
}

/// A stuck scan some shards failed to answer (rewritten by the proxy as a
/// red shard answers: `_shards.failed`): `recover --all-stuck` refuses to act
/// on it and writes nothing; with `allow_partial` it acts on what it saw.
#[tokio::test]
async fn a_partial_stuck_scan_is_never_acted_on_unless_allowed() {
    use crate::common::proxy::{partial_search, FaultProxy};
    let fx = Fx::new().await;
    let (id, src, dest) = stage(&fx, "ps", 2).await;
    fx.refresh().await;
    let proxy = FaultProxy::start(&fx.url);
    let via = fx.proto_via(&proxy.url());
    let hit = json!({"_id": id, "_index": fx.ix.transactions,
        "_source": fx.source(&fx.ix.transactions, &id).await});
    let partial = partial_search(vec![hit], 1);
    let arm = || proxy.answer_next_scan(&fx.ix.transactions, partial.clone());
    let docs = || async {
        (
            fx.source(&fx.ix.transactions, &id).await,
            fx.source(&fx.ix.accounts, &src).await,
            fx.source(&fx.ix.accounts, &dest).await,
        )
    };
    let before = docs().await;
    arm();
    let err = via.recover_all_stuck(2).await.unwrap_err().to_string();
    assert!(
        err.contains("partial: 1 of 2 shards failed") && err.contains("--allow-partial"),
        "{err}"
    );
    assert_eq!(before, docs().await, "nothing written");
    arm();
    let reports = via
        .recover_all_stuck_with(Pace::OneAtATime { concurrency: 2 }, true)
        .await
        .unwrap()
        .reports;
    assert_eq!(reports.len(), 1);
    assert_eq!(fx.state(&id).await, TxnState::Finished);
}

/// The recovery of every stuck transaction (what the demo's recovery loop
/// and `recover --all-stuck` run) also releases the locks nobody else will:
/// those stale on evidence whose owner is not in flight (owner ended, lease
/// run out). A stuck owner's locks go with its recovery; a live owner's
/// lock stays, and so does one whose owner names no transaction while its
/// lease runs (no evidence).
#[tokio::test]
async fn recover_all_stuck_sweeps_the_locks_of_ended_or_missing_owners() {
    let fx = Fx::new().await;
    // Stuck after taking its locks and debiting the source.
    let (stuck, stuck_src, stuck_dest) = crate::procedures::stage_with(&fx, "sl", 4, true).await;
    // Finished, with a lock whose create landed after the end.
    let (done, done_src, _) = stage(&fx, "dl", 7).await;
    let lock = |owner: &str| {
        json!({"owner": owner, "process_id": "gone", "created_at": "2026-01-01T00:00:00Z",
               "expires_at": "2099-01-01T00:00:00Z"})
    };
    fx.put(&fx.ix.locks, &done_src, lock(&done)).await;
    // Owned by an id that names no transaction: no evidence while its
    // lease runs (left alone); once its lease ran out, stale (swept).
    fx.put(&fx.ix.locks, "ghostly", lock("never-created")).await;
    let expired = json!({"owner": "never-created", "process_id": "gone",
        "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-01T00:02:00Z"});
    fx.put(&fx.ix.locks, "expired", expired.clone()).await;
    // Held by a transaction in flight that is not stuck (modified just now).
    fx.account("Alive", 500).await;
    fx.account("Blive", 500).await;
    fx.kit()
        .stop(&Stop::new("live", "Alive", "Blive", 100, 1).locked(true))
        .await;
    fx.refresh().await;

    let done_all = fx.proto.recover_all_stuck(2).await.unwrap();
    assert_eq!(done_all.reports.len(), 1, "{:#?}", done_all.reports);
    assert_eq!(done_all.reports[0].txn, stuck);
    assert_eq!(fx.state(&stuck).await, TxnState::Finished);
    let sweep = done_all.locks.as_ref().expect("the sweep ran");
    assert_eq!(sweep.coverage.describe(), None);
    let mut swept: Vec<_> = sweep
        .swept
        .iter()
        .map(|s| (s.view.info.resource.clone(), s.outcome.clone()))
        .collect();
    swept.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        swept,
        vec![
            (done_src.clone(), ReleaseOutcome::Released),
            ("expired".to_string(), ReleaseOutcome::Released),
        ]
    );
    assert_eq!(done_all.released_locks(), 2);
    let ghostly = fx.cluster().get(&fx.ix.locks, "ghostly").await.unwrap();
    assert!(ghostly.is_some(), "a lock of an unknown holder was swept");
    for resource in [&stuck_src, &stuck_dest, &done_src, &"expired".to_string()] {
        assert!(
            fx.cluster()
                .get(&fx.ix.locks, resource)
                .await
                .unwrap()
                .is_none(),
            "lock on {resource} left"
        );
    }
    let live = fx.cluster().get(&fx.ix.locks, "Alive").await.unwrap();
    assert!(live.is_some(), "the live owner's lock was released");

    // The same procedure in batches sweeps the same way.
    fx.put(&fx.ix.locks, "expired", expired).await;
    fx.refresh().await;
    let batched = fx
        .proto
        .recover_all_stuck_with(Pace::Batched(Default::default()), false)
        .await
        .unwrap();
    assert!(batched.reports.is_empty(), "{:#?}", batched.reports);
    assert_eq!(batched.released_locks(), 1);
}

/// A recovery window that is not whole seconds (1.5 s), and a transaction
/// modified 1.2 s ago: the read side must not list it stuck while the
/// recovery refuses it as recent (both judge to the millisecond by one
/// rule). Time only moves on between the listing and the recovery, so a
/// transaction listed stuck is never then refused as recent.
#[tokio::test]
async fn listed_stuck_is_never_refused_as_recent_at_the_window_edge() {
    use estx::protocol::ProcedureRefusal;
    let fx = Fx::with(|c| c.recovery_window = std::time::Duration::from_millis(1500)).await;
    let (id, _, _) = stage(&fx, "edge", 2).await;
    let mut src = fx.source(&fx.ix.transactions, &id).await;
    let modified = fx.cluster().now() - ChronoDuration::milliseconds(1200);
    src.insert(
        "modification_time".into(),
        Value::String(format_timestamp(modified)),
    );
    fx.put_txn(&id, Value::Object(src)).await;
    fx.refresh().await;

    let listed = fx
        .proto
        .stuck_transactions()
        .await
        .unwrap()
        .iter()
        .any(|t| t.id == id);
    let r = fx.proto.recover(&id, false).await;
    let refused = matches!(r.verdict, Verdict::Refused(ProcedureRefusal::Recent { .. }));
    assert!(
        !(listed && refused),
        "listed stuck, then refused as recent: {:?}",
        r.verdict
    );
}
