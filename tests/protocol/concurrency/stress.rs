//! The stress test: workers (some under locks, some dying mid-way), a
//! recovery loop racing them and an operator forcing rollbacks, all at once on
//! five accounts; then the invariants are checked. Every act of the tool is
//! a recorded intervention, and `audit --receipts` verifies every record.

use super::actors::{pick_recent, Race, MAX_LOOP_ROUNDS};
use super::recorded::Recorded;
use estx::protocol::intervene::Runner;
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::{ProcedureRefusal, TxnState, Verdict};
use estx::Error;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ACCOUNTS: usize = 5;
const WORKERS: usize = 4;
const TRANSFERS_PER_WORKER: usize = 25;

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
    race: Arc<Race>,
    w: usize,
    seed: u64,
    recent: Arc<Mutex<Vec<String>>>,
    tally: Arc<Tally>,
) {
    let proto = race.fx.proto.clone();
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..TRANSFERS_PER_WORKER {
        let with_locks = rng.random_bool(0.3);
        let (req, limits) = race.random_transfer(&mut rng, w, i, 0.3);
        let id = req.id.clone().unwrap_or_default();
        recent.lock().unwrap().push(id.clone());
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
            Verdict::Refused(ProcedureRefusal::LockHeld { .. }) => &tally.lock_refused,
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
    let race = Arc::new(Race::new(ACCOUNTS, |c| c.lock_wait = Duration::from_secs(1)).await);
    let (fx, base_seed) = (Arc::clone(&race.fx), race.seed);

    // A recovery process with no recovery window: it races live workers.
    let recoverer = race.racing(&fx.proto).with_holder("recoverer");
    let recorded = Recorded::new(&fx.proto).await;
    let done = Arc::new(AtomicBool::new(false));
    let recent: Arc<Mutex<Vec<String>>> = Arc::default();
    let tally = Arc::new(Tally::default());

    let recovery_loop = {
        let (fx, done, recorded) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recorded));
        tokio::spawn(async move {
            let (mut rounds, mut recovered, mut errors) = (0usize, 0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                fx.refresh().await;
                // A run that fails part-way panics here.
                let done = recorded
                    .recover_all_stuck(&recoverer, Runner::OneByOne(4))
                    .await;
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
            (rounds, recovered, errors)
        })
    };

    let operator = {
        let (fx, done, recent) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recent));
        let recorded = Arc::clone(&recorded);
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
                            && recorded
                                .release_lock(&fx.proto, &lock.info.resource, false)
                                .await
                                == ReleaseOutcome::Released
                        {
                            released += 1;
                        }
                    }
                }
                if let Some(id) = pick_recent(&recent, &mut rng) {
                    let report = recorded.rollback(&fx.proto, &id, true).await;
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
                Arc::clone(&race),
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

    // Drain: finish everything still in flight (forced, directly); then
    // every transaction is terminal and the books balance.
    let drained = recorded.drain(&race).await;
    let (all, by_state) = race.check_books().await;
    let finished = by_state.get("finished").copied().unwrap_or(0);
    let rolled_back = by_state.get("rolled-back").copied().unwrap_or(0);

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
        let released = recorded
            .release_lock(&fx.proto, &lock.info.resource, false)
            .await;
        assert_eq!(released, ReleaseOutcome::Released, "{lock:#?}");
        left_by_the_dead += 1;
    }

    race.assert_audit_clean().await;
    let v = recorded.verify_every_record(&fx).await;

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
        "receipts: {} records of {} acts, {} writes verified",
        v.verified,
        recorded.acts(),
        v.writes
    );
    println!(
        "recovery: {recovery_rounds} rounds, {recovered} completed, {recovery_errors} errors; operator: {operator_rounds} rounds, {operator_rollbacks} rolled back, {stale_released} stale lock(s) released, {operator_failures} failed; drain completed {drained}; {left_by_the_dead} lock(s) of crashed workers released at the end"
    );
    assert_eq!(t.failed.load(Ordering::Relaxed), 0, "a transfer failed");
    assert_eq!(recovery_errors, 0, "a recovery failed");
    assert_eq!(operator_failures, 0, "a rollback failed");
    assert_eq!(all.len(), WORKERS * TRANSFERS_PER_WORKER);
}
