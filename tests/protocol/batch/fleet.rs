//! The concurrency test on the batched path: a fleet of workers making
//! transfers (some dying mid-way), two batched recovery loops racing them and
//! each other (one through a proxy that swallows `_bulk` answers after the
//! server applied them, and crashing now and then), and an operator forcing
//! rollbacks. Every act of the tool is a recorded intervention. At the end:
//! every transaction terminal, each account moved by exactly the finished
//! transfers naming it, nothing pending, total kept, audit clean, and
//! `audit --receipts` verifies one record per act.

use crate::common::FaultProxy;
use crate::concurrency::actors::{pick_recent, Race, MAX_LOOP_ROUNDS};
use crate::concurrency::recorded::Recorded;
use crate::fixture::Fx;
use estx::protocol::batch::BatchOptions;
use estx::protocol::intervene::{NotStarted, Runner};
use estx::protocol::{Protocol, RunLimits, Verdict};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCOUNTS: usize = 5;
const WORKERS: usize = 4;
const TRANSFERS_PER_WORKER: usize = 20;

async fn worker(
    race: Arc<Race>,
    w: usize,
    seed: u64,
    recent: Arc<Mutex<Vec<String>>>,
    failed: Arc<AtomicUsize>,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..TRANSFERS_PER_WORKER {
        let (req, limits) = race.random_transfer(&mut rng, w, i, 0.4);
        let id = req.id.clone().unwrap_or_default();
        recent.lock().unwrap().push(id.clone());
        let report = race.fx.proto.transfer(&req, false, limits).await;
        if let Verdict::Failed(e) = &report.verdict {
            eprintln!("worker {w}: transfer {id} failed: {e}");
            failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A batched recovery loop until `done`, each round `recover --all-stuck`
/// recorded; returns (rounds, completed, failed).
async fn recovery_loop(
    fx: Arc<Fx>,
    rec: Arc<Recorded>,
    proto: Protocol,
    proxy: Option<Arc<FaultProxy>>,
    seed: u64,
    done: Arc<AtomicBool>,
) -> (usize, usize, usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut rounds, mut completed, mut failed) = (0, 0, 0);
    while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
        rounds += 1;
        fx.refresh().await;
        if let Some(p) = &proxy {
            if rng.random_bool(0.3) {
                p.drop_responses("POST", "_bulk", 1);
            }
        }
        let opts = BatchOptions {
            batch_size: rng.random_range(1..=16),
            limits: RunLimits {
                max_steps: rng.random_bool(0.2).then(|| rng.random_range(0..5)),
            },
            ..BatchOptions::default()
        };
        // Forced over the other loop's live job (its record names it), so
        // the two loops race on the same transactions as two operators
        // forcing would: the fence, not the held-by-job rule, keeps them
        // from moving money twice.
        let run = rec.try_recover_all_stuck(&proto, Runner::Batched(opts), true);
        match run.await {
            Ok(done) => {
                for r in &done.reports {
                    match &r.verdict {
                        Verdict::Completed(_) => completed += 1,
                        Verdict::Failed(e) => {
                            failed += 1;
                            eprintln!("batched recovery of {} failed: {e}", r.txn);
                        }
                        _ => {}
                    }
                }
            }
            // A lost answer to the stuck search itself: nothing written.
            Err(NotStarted::Plan(e)) if e.is_transient() => {}
            Err(e) => {
                failed += 1;
                eprintln!("batched recovery round {rounds}: {e}");
            }
        }
    }
    (rounds, completed, failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batched_recovery_racing_workers_keeps_every_invariant() {
    let race = Arc::new(Race::new(ACCOUNTS, |_| {}).await);
    let (fx, base_seed) = (Arc::clone(&race.fx), race.seed);
    let proxy = Arc::new(FaultProxy::start(&fx.url));
    let lossy = race.racing(&fx.proto_via(&proxy.url()));
    let direct = race.racing(&fx.proto);
    let done = Arc::new(AtomicBool::new(false));
    let recent: Arc<Mutex<Vec<String>>> = Arc::default();
    let worker_failures = Arc::new(AtomicUsize::new(0));
    let rec = Recorded::new(&fx.proto).await;

    let loops = [
        tokio::spawn(recovery_loop(
            Arc::clone(&fx),
            Arc::clone(&rec),
            lossy,
            Some(Arc::clone(&proxy)),
            base_seed ^ 1,
            Arc::clone(&done),
        )),
        tokio::spawn(recovery_loop(
            Arc::clone(&fx),
            Arc::clone(&rec),
            direct,
            None,
            base_seed ^ 2,
            Arc::clone(&done),
        )),
    ];
    let operator = {
        let (fx, done, recent) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recent));
        let rec = Arc::clone(&rec);
        let mut rng = StdRng::seed_from_u64(base_seed ^ 3);
        tokio::spawn(async move {
            let (mut rounds, mut failed) = (0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                if let Some(id) = pick_recent(&recent, &mut rng) {
                    let report = rec.rollback(&fx.proto, &id, true).await;
                    match &report.verdict {
                        Verdict::Failed(estx::Error::NotFound { .. }) => {}
                        Verdict::Failed(e) => {
                            failed += 1;
                            eprintln!("operator rollback of {id} failed: {e}");
                        }
                        _ => {}
                    }
                }
                // Pacing, not synchronisation.
                tokio::time::sleep(Duration::from_millis(rng.random_range(5..=20))).await;
            }
            failed
        })
    };
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            tokio::spawn(worker(
                Arc::clone(&race),
                w,
                base_seed.wrapping_add(w as u64 + 10),
                Arc::clone(&recent),
                Arc::clone(&worker_failures),
            ))
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let mut recovery_failures = 0;
    for l in loops {
        let (rounds, completed, failed) = l.await.unwrap();
        println!("batched recovery loop: {rounds} rounds, {completed} completed, {failed} failed");
        recovery_failures += failed;
    }
    let operator_failures = operator.await.unwrap();
    proxy.clear_rules();
    println!("{} _bulk answers swallowed", proxy.dropped());

    // Drain with batched recovery (forced), until nothing is in flight.
    let drain = race.racing(&fx.proto);
    let mut clean = false;
    for _ in 0..10 {
        fx.refresh().await;
        let forced = BatchOptions {
            force: true,
            ..BatchOptions::default()
        };
        let done = rec.recover_all_stuck(&drain, Runner::Batched(forced)).await;
        if done.reports.is_empty() {
            clean = true;
            break;
        }
    }
    assert!(clean, "transactions still in flight after draining");

    let (all, by_state) = race.check_books().await;
    assert_eq!(all.len(), WORKERS * TRANSFERS_PER_WORKER);
    println!("{by_state:?}");
    race.assert_audit_clean().await;
    let v = rec.verify_every_record(&fx).await;
    println!(
        "receipts: {} records of {} acts, {} writes verified",
        v.verified,
        rec.acts(),
        v.writes
    );
    assert_eq!(
        worker_failures.load(Ordering::Relaxed),
        0,
        "a transfer failed"
    );
    assert_eq!(recovery_failures, 0, "a batched recovery failed");
    assert_eq!(operator_failures, 0, "a rollback failed");
}
