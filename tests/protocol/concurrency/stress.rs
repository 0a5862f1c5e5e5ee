//! The stress test: workers (some under locks, some dying mid-way), a
//! recovery loop racing them and an operator forcing rollbacks, all at once on
//! five accounts; then the invariants are checked.

use crate::fixture::Fx;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::{
    NewTransfer, Protocol, ProtocolConfig, Refusal, RunLimits, TxnState, Verdict,
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
            Verdict::Completed(_) | Verdict::NothingToDo(_) | Verdict::EndedElsewhere(_) => {
                &tally.completed
            }
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
                    Ok(done) => {
                        for r in &done.reports {
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
                    assert!(
                        !state.carries(&t.id) && state.delta_of(&t.id).is_none(),
                        "finished {} still pending on {acct}: {state:?}",
                        t.id
                    );
                }
            }
            TxnState::RolledBack => {
                rolled_back += 1;
                for (acct, state) in [(&tr.src, src), (&tr.dest, dest)] {
                    assert!(
                        !state.carries(&t.id) && state.delta_of(&t.id).is_none(),
                        "rolled-back {} still pending on {acct}: {state:?}",
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
