//! Concurrency: workers, a recovery loop that races them, and an operator
//! forcing rollbacks, all at once on five accounts; then the invariants. And
//! two deterministic interleavings showing that the fencing records are what
//! keeps a slow worker from moving money twice.

use crate::common::wait_until;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::account::SettledOutcome;
use estx::protocol::audit::AuditReport;
use estx::protocol::decide::{Effect, Fencing, NoopReason};
use estx::protocol::executor::Outcome;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::{
    NewTransfer, Procedure, Protocol, ProtocolConfig, Refusal, RunLimits, Step, TxnState, Verdict,
};
use estx::Error;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ACCOUNTS: usize = 5;
const INITIAL: i64 = 1000;
const TOTAL: i64 = ACCOUNTS as i64 * INITIAL;
const WORKERS: usize = 4;
const TRANSFERS_PER_WORKER: usize = 25;
/// Upper bound on the iterations of the background loops (they normally stop
/// long before, when the workers are done).
const MAX_LOOP_ROUNDS: usize = 100_000;
fn account_id(i: usize) -> String {
    format!("acc{i}")
}

/// What the workers did, counted.
#[derive(Default)]
struct Tally {
    completed: AtomicUsize,
    crashed: AtomicUsize,
    stopped: AtomicUsize,
    lock_refused: AtomicUsize,
    refused: AtomicUsize,
    failed: AtomicUsize,
    locked: AtomicUsize,
    /// Transfers whose worker "died" (a simulated crash).
    crashed_ids: Mutex<HashSet<String>>,
}

/// One worker: `TRANSFERS_PER_WORKER` transfers between random distinct
/// accounts, some under locks, some dying after a random number of steps.
async fn worker(
    proto: Protocol,
    w: usize,
    seed: u64,
    recent: Arc<Mutex<Vec<String>>>,
    tally: Arc<Tally>,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..TRANSFERS_PER_WORKER {
        let src = rng.random_range(0..ACCOUNTS);
        let dest = (src + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.random_range(1..=50);
        let with_locks = rng.random_bool(0.3);
        let crash = rng.random_bool(0.3);
        let limits = RunLimits {
            max_steps: crash.then(|| rng.random_range(0..7)),
        };
        let id = format!("w{w}-{i}");
        recent.lock().unwrap().push(id.clone());
        let req = NewTransfer {
            id: Some(id.clone()),
            src: account_id(src),
            dest: account_id(dest),
            amount,
        };
        if with_locks {
            tally.locked.fetch_add(1, Ordering::Relaxed);
        }
        let report = proto.transfer(&req, with_locks, limits).await;
        let counter = match &report.verdict {
            Verdict::Completed(_) | Verdict::NothingToDo(_) => &tally.completed,
            Verdict::Stopped(why) if why.starts_with("simulated crash") => {
                tally.crashed_ids.lock().unwrap().insert(id.clone());
                &tally.crashed
            }
            Verdict::Stopped(_) => &tally.stopped,
            Verdict::Refused(Refusal::LockHeld { .. }) => &tally.lock_refused,
            Verdict::Refused(_) => &tally.refused,
            Verdict::Failed(e) => {
                eprintln!("worker {w}: transfer {id} failed: {e}");
                &tally.failed
            }
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_recovery_and_forced_rollbacks_keep_every_invariant() {
    let started = Instant::now();
    let fx = Fx::with(|c| c.lock_wait = Duration::from_secs(1)).await;
    for i in 0..ACCOUNTS {
        fx.account(&account_id(i), INITIAL).await;
    }
    let fx = Arc::new(fx);
    let base_seed: u64 = std::env::var("ESTX_CONCURRENCY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("seed: {base_seed} (rerun with ESTX_CONCURRENCY_SEED={base_seed}; thread timing still varies)");

    // A recovery process with no recovery window: it races live workers.
    let recoverer = Protocol::new(
        fx.cluster().clone(),
        ProtocolConfig {
            recovery_window: Duration::ZERO,
            ..fx.proto.config().clone()
        },
    )
    .with_holder("recoverer");
    let done = Arc::new(AtomicBool::new(false));
    let recent: Arc<Mutex<Vec<String>>> = Arc::default();
    let tally = Arc::new(Tally::default());

    let recovery_loop = {
        let (fx, done) = (Arc::clone(&fx), Arc::clone(&done));
        tokio::spawn(async move {
            let (mut rounds, mut recovered, mut errors) = (0usize, 0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                fx.refresh().await;
                match recoverer.recover_all_stuck(4).await {
                    Ok(reports) => {
                        for r in &reports {
                            match &r.verdict {
                                Verdict::Completed(_) => recovered += 1,
                                Verdict::Failed(e) => {
                                    errors += 1;
                                    eprintln!("recovery of {} failed: {e}", r.txn);
                                }
                                _ => {}
                            }
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        eprintln!("recovery round {rounds}: {e}");
                    }
                }
            }
            (rounds, recovered, errors)
        })
    };

    let operator = {
        let (fx, done, recent) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recent));
        let mut rng = StdRng::seed_from_u64(base_seed ^ 0x09e2_a7a7);
        tokio::spawn(async move {
            let (mut rounds, mut rolled_back, mut released, mut failed) =
                (0usize, 0usize, 0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                if rounds % 25 == 0 {
                    // Now and then, release the locks that are stale (owner
                    // transaction over, e.g. its worker died holding them),
                    // as `locks release` would, so locked transfers keep
                    // running instead of waiting for them and being refused.
                    fx.refresh().await;
                    for lock in fx.proto.list_locks().await.unwrap() {
                        if lock.staleness.is_stale()
                            && fx
                                .proto
                                .release_lock(&lock.info.resource, false)
                                .await
                                .unwrap()
                                == ReleaseOutcome::Released
                        {
                            released += 1;
                        }
                    }
                }
                let pick = {
                    let recent = recent.lock().unwrap();
                    let window = recent.len().saturating_sub(8)..recent.len();
                    (!window.is_empty()).then(|| recent[rng.random_range(window)].clone())
                };
                if let Some(id) = pick {
                    let report = fx.proto.rollback(&id, true).await;
                    match &report.verdict {
                        Verdict::Completed(TxnState::RolledBack) => rolled_back += 1,
                        // Picked before its worker created it.
                        Verdict::Failed(Error::NotFound { .. }) => {}
                        Verdict::Failed(e) => {
                            failed += 1;
                            eprintln!("operator rollback of {id} failed: {e}");
                        }
                        _ => {}
                    }
                }
                // Pacing, not synchronisation.
                tokio::time::sleep(Duration::from_millis(rng.random_range(1..=5))).await;
            }
            (rounds, rolled_back, released, failed)
        })
    };

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let seed = base_seed.wrapping_add(w as u64 + 1);
            tokio::spawn(worker(
                fx.proto.clone(),
                w,
                seed,
                Arc::clone(&recent),
                Arc::clone(&tally),
            ))
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let (recovery_rounds, recovered, recovery_errors) = recovery_loop.await.unwrap();
    let (operator_rounds, operator_rollbacks, stale_released, operator_failures) =
        operator.await.unwrap();
    let busy = started.elapsed();

    // Drain: finish everything still in flight (forced, directly).
    let non_terminal: Vec<String> = TxnState::NON_TERMINAL_NAMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut drained = 0usize;
    let mut clean = false;
    for _ in 0..10 {
        fx.refresh().await;
        let left = fx
            .proto
            .list_transactions(&non_terminal, None)
            .await
            .unwrap();
        if left.is_empty() {
            clean = true;
            break;
        }
        for t in left {
            let report = fx.proto.recover(&t.id, true).await;
            if matches!(report.verdict, Verdict::Completed(_)) {
                drained += 1;
            }
        }
    }
    assert!(clean, "transactions still in flight after draining");

    // Every transaction is terminal.
    fx.refresh().await;
    let all = fx.proto.list_transactions(&[], None).await.unwrap();
    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    for t in &all {
        let state = t
            .state
            .clone()
            .unwrap_or(TxnState::Unknown("<none>".into()));
        *by_state.entry(state.to_string()).or_default() += 1;
        assert!(state.is_terminal(), "{} is {state}", t.id);
    }

    // Balances: the total is kept, and each account moved by exactly the
    // finished transfers that name it.
    let ids: Vec<String> = (0..ACCOUNTS).map(account_id).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut accounts = BTreeMap::new();
    for id in &ids {
        accounts.insert(id.clone(), fx.acct(id).await);
    }
    let mut expected: BTreeMap<String, i64> = ids.iter().map(|id| (id.clone(), INITIAL)).collect();
    let (mut finished, mut rolled_back) = (0usize, 0usize);
    for t in &all {
        let tr = t.transfer().unwrap();
        let (src, dest) = (&accounts[&tr.src], &accounts[&tr.dest]);
        match t.state.as_ref().unwrap() {
            TxnState::Finished => {
                finished += 1;
                *expected.get_mut(&tr.src).unwrap() -= tr.amount;
                *expected.get_mut(&tr.dest).unwrap() += tr.amount;
                for (acct, state) in [(&tr.src, src), (&tr.dest, dest)] {
                    assert_eq!(
                        state.settled_of(&t.id).map(|s| s.outcome),
                        Some(SettledOutcome::Applied),
                        "finished {} not settled as applied on {acct}: {state:?}",
                        t.id
                    );
                }
            }
            TxnState::RolledBack => {
                rolled_back += 1;
                for (acct, state) in [(&tr.src, src), (&tr.dest, dest)] {
                    assert!(
                        !state.carries(&t.id),
                        "rolled-back {} still pending on {acct}",
                        t.id
                    );
                    let outcome = state.settled_of(&t.id).map(|s| s.outcome);
                    assert!(
                        matches!(outcome, None | Some(SettledOutcome::Undone)),
                        "rolled-back {} settled as {outcome:?} on {acct}",
                        t.id
                    );
                }
            }
            other => panic!("{} is {other}", t.id),
        }
    }
    for (id, state) in &accounts {
        assert!(
            state.pending.is_empty(),
            "{id} still carries {:?}",
            state.pending
        );
        assert_eq!(
            state.balance, expected[id],
            "balance of {id} (all: {accounts:?})"
        );
    }
    assert_eq!(fx.total(&refs).await, TOTAL);

    // Locks: a worker that died right after taking its locks (crash after
    // 0 steps) never releases them; if another process had already ended its
    // transaction by then, nobody else will either: they are stale, and an
    // operator releases them (`locks release`). Any other lock left behind
    // was leaked by a live process.
    fx.refresh().await;
    let crashed = tally.crashed_ids.lock().unwrap().clone();
    let mut left_by_the_dead = 0;
    for lock in fx.proto.list_locks().await.unwrap() {
        let owner = lock.info.owner.clone().unwrap_or_default();
        assert!(
            crashed.contains(&owner) && lock.staleness.is_stale(),
            "lock left behind by a transfer that did not crash: {lock:#?}"
        );
        let released = fx
            .proto
            .release_lock(&lock.info.resource, false)
            .await
            .unwrap();
        assert_eq!(released, ReleaseOutcome::Released, "{lock:#?}");
        left_by_the_dead += 1;
    }

    fx.refresh().await;
    let audit = fx.proto.audit(Some(TOTAL), false).await.unwrap();
    assert!(
        audit.findings.is_empty(),
        "audit findings:\n{}",
        audit
            .findings
            .iter()
            .map(|f| format!("  {} {}: {}", f.kind, f.id, f.detail))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(audit.total_balance, TOTAL);

    let t = &tally;
    println!(
        "{} transactions in {busy:?} (+ drain, total {:?}): {finished} finished, {rolled_back} rolled back {by_state:?}",
        all.len(),
        started.elapsed()
    );
    println!(
        "workers: {} completed, {} crashed, {} stopped (moved on by another process), {} refused on a lock, {} refused, {} failed; {} used locks",
        t.completed.load(Ordering::Relaxed),
        t.crashed.load(Ordering::Relaxed),
        t.stopped.load(Ordering::Relaxed),
        t.lock_refused.load(Ordering::Relaxed),
        t.refused.load(Ordering::Relaxed),
        t.failed.load(Ordering::Relaxed),
        t.locked.load(Ordering::Relaxed),
    );
    println!(
        "recovery: {recovery_rounds} rounds, {recovered} completed, {recovery_errors} errors; operator: {operator_rounds} rounds, {operator_rollbacks} rolled back, {stale_released} stale lock(s) released, {operator_failures} failed; drain completed {drained}; {left_by_the_dead} lock(s) of crashed workers released at the end"
    );
    assert_eq!(t.failed.load(Ordering::Relaxed), 0, "a transfer failed");
    assert_eq!(recovery_errors, 0, "a recovery failed");
    assert_eq!(operator_failures, 0, "a rollback failed");
    assert_eq!(all.len(), WORKERS * TRANSFERS_PER_WORKER);
}

// ---------------------------------------------------------------------------
// Deterministic interleavings: why the fencing records matter.

/// The slow worker's view: it read the transaction (pending) and built the
/// transfer from it before stalling.
async fn slow_worker_view(fx: &Fx, id: &str) -> estx::protocol::Transfer {
    let txn = fx.txn(id).await;
    assert_eq!(txn.state, Some(TxnState::Pending));
    txn.transfer().unwrap()
}

fn findings_of(kind: &str, audit: &AuditReport) -> Vec<String> {
    audit
        .findings
        .iter()
        .filter(|f| f.kind == kind)
        .map(|f| f.id.clone())
        .collect()
}

#[tokio::test]
async fn a_late_apply_after_the_transaction_finished_is_fenced() {
    for fencing in [Fencing::On, Fencing::Off] {
        let fx = Fx::with(|c| c.fencing = fencing).await;
        // Begin done, nothing applied: the worker read it as pending and stalls.
        let (id, src, dest) = stage(&fx, "late", 1).await;
        let slow = slow_worker_view(&fx, &id).await;
        // Meanwhile another process completes the transaction.
        let report = fx.proto.recover(&id, true).await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "{:?}",
            report.verdict
        );
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            (400, 600)
        );
        // The slow worker wakes up and applies to the source.
        let late = fx.proto.run_step(&slow, Step::ApplySource).await.unwrap();
        let (a, b) = (fx.acct(&src).await, fx.acct(&dest).await);
        match fencing {
            Fencing::On => {
                assert_eq!(
                    late.outcome,
                    Outcome::Noop(NoopReason::Settled(SettledOutcome::Applied))
                );
                assert_eq!((a.balance, b.balance), (400, 600));
                assert!(a.pending.is_empty());
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), false).await.unwrap();
                assert!(audit.findings.is_empty(), "{:?}", audit.findings);
            }
            Fencing::Off => {
                // The reference protocol debits the source a second time.
                assert_eq!(
                    late.outcome,
                    Outcome::Updated(Effect::Applied { delta: -100 })
                );
                assert_eq!(
                    (a.balance, b.balance),
                    (300, 600),
                    "the hole: a double debit"
                );
                assert_eq!(a.pending, vec![id.clone()]);
                // The audit sees it, but cannot repair it unambiguously: the
                // account kept no record of having settled the transaction.
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), true).await.unwrap();
                assert!(audit.repairs.is_empty(), "{:?}", audit.repairs);
                assert_eq!(
                    findings_of("dangling_pending", &audit),
                    vec![src.clone()],
                    "{:?}",
                    audit.findings
                );
                assert_eq!(
                    findings_of("total_mismatch", &audit).len(),
                    1,
                    "{:?}",
                    audit.findings
                );
                assert_eq!(fx.acct(&src).await.balance, 300);
            }
        }
    }
}

#[tokio::test]
async fn a_late_apply_after_a_rollback_is_fenced() {
    for fencing in [Fencing::On, Fencing::Off] {
        let fx = Fx::with(|c| c.fencing = fencing).await;
        // The worker did begin and read the transaction as pending, then stalled.
        let (id, src, dest) = stage(&fx, "rb", 1).await;
        let slow = slow_worker_view(&fx, &id).await;
        // An operator rolls it back: nothing to undo on either account.
        let report = fx.proto.rollback(&id, true).await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
            "{:?}",
            report.verdict
        );
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            (500, 500)
        );
        // The slow worker wakes up and applies to the destination.
        let late = fx
            .proto
            .run_step(&slow, Step::ApplyDestination)
            .await
            .unwrap();
        let b = fx.acct(&dest).await;
        match fencing {
            Fencing::On => {
                assert_eq!(
                    late.outcome,
                    Outcome::Noop(NoopReason::Settled(SettledOutcome::Undone))
                );
                // And the source too: a late apply is fenced on both accounts.
                let late_src = fx.proto.run_step(&slow, Step::ApplySource).await.unwrap();
                assert_eq!(
                    late_src.outcome,
                    Outcome::Noop(NoopReason::Settled(SettledOutcome::Undone))
                );
                assert_eq!((fx.acct(&src).await.balance, b.balance), (500, 500));
                assert!(b.pending.is_empty());
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), false).await.unwrap();
                assert!(audit.findings.is_empty(), "{:?}", audit.findings);
            }
            Fencing::Off => {
                // The reference protocol creates 100 units from nothing.
                assert_eq!(
                    late.outcome,
                    Outcome::Updated(Effect::Applied { delta: 100 })
                );
                assert_eq!(
                    (fx.acct(&src).await.balance, b.balance),
                    (500, 600),
                    "the hole: units appear"
                );
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), false).await.unwrap();
                assert_eq!(
                    findings_of("dangling_pending", &audit),
                    vec![dest.clone()],
                    "{:?}",
                    audit.findings
                );
                assert_eq!(
                    findings_of("total_mismatch", &audit).len(),
                    1,
                    "{:?}",
                    audit.findings
                );
                // The transaction is rolled back, so the repair is unambiguous.
                let repaired = fx.proto.audit(Some(1000), true).await.unwrap();
                assert_eq!(repaired.repairs.len(), 1, "{:?}", repaired);
                assert!(
                    repaired.repairs[0].starts_with(&dest),
                    "{:?}",
                    repaired.repairs
                );
                assert_eq!(
                    (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
                    (500, 500)
                );
                fx.refresh().await;
                let after = fx.proto.audit(Some(1000), false).await.unwrap();
                assert!(after.findings.is_empty(), "{:?}", after.findings);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Locks of a transfer whose transaction another process ended.

/// A locked transfer waits for a lock someone else holds; meanwhile another
/// process ends its (still `created`) transaction: an operator forces a
/// rollback, or a recovery forced by an operator finishes it. That process
/// releases the transaction's locks — it holds none yet. Then the lock frees
/// up, the transfer takes both locks, finds its transaction terminal at its
/// first step and stops... and must release the locks it took.
///
/// Found by the concurrency test: `Protocol::execute` used to release the
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
        assert!(matches!(report.verdict, Verdict::Stopped(_)), "{ctx}");
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
