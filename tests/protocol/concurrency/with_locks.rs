//! The concurrency test with locks: workers (half of their transfers under
//! locks, a quarter dying part-way) talk to the cluster through a proxy that
//! keeps swallowing the answer of one write or lock read after another (lost
//! responses); a recovery loop with no recovery window races them and sweeps
//! abandoned locks, as `recover --all-stuck` does; an operator forces
//! rollbacks. Every act of the tool (the recoveries, the rollbacks, the
//! drain) is a recorded intervention, as the CLI runs it. At the end, after
//! the next recovery: no lock is held by a terminal (or missing)
//! transaction, nothing is pending, the total is conserved, the audit is
//! clean, every worker's report says what really became of its
//! transaction, and `audit --receipts` verifies every record the acts left
//! (one per act), the workers' own writes between them breaking no chain.

use super::actors::{account_id, Race, MAX_LOOP_ROUNDS};
use super::recorded::Recorded;
use crate::common::FaultProxy;
use estx::protocol::batch::BatchOptions;
use estx::protocol::intervene::Runner;
use estx::protocol::{ProcedureRefusal, Protocol, StepResult, TxnState, Verdict};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCOUNTS: usize = 6;
const WORKERS: usize = 4;
const TRANSFERS_PER_WORKER: usize = 20;

/// What a worker's report said, to check against where its transaction ended.
#[derive(Debug, Clone, PartialEq)]
enum Said {
    /// Completed by this process, in this state.
    Completed(TxnState),
    /// Done by another process, in this state.
    Elsewhere(TxnState),
    /// Refused on a held lock: it cancelled its transaction.
    LockRefused,
    /// A simulated crash.
    Crashed,
    /// Stopped: another process moved it on.
    Stopped,
    /// Failed: a burst of lost lock answers outlasted the retries (the
    /// transaction is cancelled, or left `created` for recovery).
    Failed,
    /// Anything else (refused otherwise, failed): a bug here.
    Other(String),
}

/// Steps of the workers that show locks being lost track of and recovered:
/// stale locks taken over, releases that failed.
#[derive(Default)]
struct LockEvents {
    taken_over: AtomicUsize,
    failed_releases: AtomicUsize,
}

async fn worker(
    race: Arc<Race>,
    proto: Protocol,
    w: usize,
    seed: u64,
    said: Arc<Mutex<BTreeMap<String, Said>>>,
    events: Arc<LockEvents>,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..TRANSFERS_PER_WORKER {
        let with_locks = rng.random_bool(0.5);
        let (req, limits) = race.random_transfer(&mut rng, w, i, 0.25);
        let id = req.id.clone().unwrap_or_default();
        let report = proto.transfer(&req, with_locks, limits).await;
        for s in &report.steps {
            if s.label.starts_with("take over stale lock") {
                events.taken_over.fetch_add(1, Ordering::Relaxed);
            }
            if s.label == "release lock" && matches!(s.result, StepResult::Error(_)) {
                events.failed_releases.fetch_add(1, Ordering::Relaxed);
            }
        }
        let s = match &report.verdict {
            Verdict::Completed(s) => Said::Completed(s.clone()),
            Verdict::EndedElsewhere(s) => Said::Elsewhere(s.clone()),
            Verdict::Refused(ProcedureRefusal::LockHeld { .. }) => Said::LockRefused,
            Verdict::Stopped(why) if why.starts_with("simulated crash") => Said::Crashed,
            Verdict::Stopped(_) => Said::Stopped,
            Verdict::Failed(e) if e.is_transient() => Said::Failed,
            other => Said::Other(format!("{other}: {:#?}", report.steps)),
        };
        said.lock().unwrap().insert(id, s);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn locked_transfers_with_crashes_and_lost_responses_leak_no_lock() {
    let race = Arc::new(Race::new(ACCOUNTS, |c| c.lock_wait = Duration::from_secs(1)).await);
    let (fx, seed) = (Arc::clone(&race.fx), race.seed);
    let proxy = Arc::new(FaultProxy::start(&fx.url));
    let via_proxy = fx.proto_via(&proxy.url());
    let recoverer = race.racing(&fx.proto).with_holder("recoverer");
    let recorded = Recorded::new(&fx.proto).await;
    let done = Arc::new(AtomicBool::new(false));
    let said: Arc<Mutex<BTreeMap<String, Said>>> = Arc::default();
    let events = Arc::new(LockEvents::default());

    // Lost responses: one armed at a time, on a random write or lock read;
    // now and then a burst on one lock that outlasts the retries, so that
    // holders lose track of their locks (a release that cannot read the
    // lock; a create whose answer and then reads are lost): only the sweep
    // of abandoned locks releases those.
    let chaos = {
        let (fx, done, proxy) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&proxy));
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
        tokio::spawn(async move {
            let ix = &fx.ix;
            let mut rounds = 0;
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                let acct = account_id(rng.random_range(0..ACCOUNTS));
                let lock_read = format!("/{}/_doc/{acct}", ix.locks);
                proxy.clear_rules();
                if rng.random_bool(0.1) {
                    if rng.random_bool(0.5) {
                        proxy.drop_responses("GET", &lock_read, 12);
                    } else {
                        let create = format!("/{}/_create/{acct}", ix.locks);
                        proxy.drop_responses_then("POST", &create, 1, ("GET", &lock_read, 12));
                    }
                    tokio::time::sleep(Duration::from_millis(rng.random_range(300..600))).await;
                    continue;
                }
                let (method, path) = match rng.random_range(0..6) {
                    0 => ("POST", format!("/{}/_create/", ix.transactions)),
                    1 => ("POST", format!("/{}/_update/", ix.transactions)),
                    2 => ("POST", format!("/{}/_update/{acct}?", ix.accounts)),
                    3 => ("POST", format!("/{}/_create/{acct}", ix.locks)),
                    4 => ("DELETE", format!("/{}/_doc/{acct}?", ix.locks)),
                    _ => ("GET", lock_read),
                };
                proxy.drop_responses(method, &path, 1);
                // Pacing, not synchronisation.
                tokio::time::sleep(Duration::from_millis(rng.random_range(5..30))).await;
            }
            proxy.clear_rules();
        })
    };

    let recovery = {
        let (fx, done, recorded) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recorded));
        tokio::spawn(async move {
            let (mut rounds, mut swept) = (0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                fx.refresh().await;
                let done = recorded
                    .recover_all_stuck(&recoverer, Runner::OneByOne(4))
                    .await;
                for r in &done.reports {
                    if let Verdict::Failed(e) = &r.verdict {
                        panic!("recovery of {} failed: {e}\n{:#?}", r.txn, r.steps);
                    }
                }
                swept += done.swept.len();
            }
            (rounds, swept)
        })
    };

    let operator = {
        let (fx, done, recorded) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recorded));
        let mut rng = StdRng::seed_from_u64(seed ^ 0x0e7a);
        tokio::spawn(async move {
            let (mut rounds, mut rolled_back) = (0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                let id = format!(
                    "w{}-{}",
                    rng.random_range(0..WORKERS),
                    rng.random_range(0..TRANSFERS_PER_WORKER)
                );
                let r = recorded.rollback(&fx.proto, &id, true).await;
                match &r.verdict {
                    Verdict::Completed(TxnState::RolledBack) => rolled_back += 1,
                    Verdict::Failed(estx::Error::NotFound { .. }) => {}
                    Verdict::Failed(e) => panic!("operator rollback of {id} failed: {e}"),
                    _ => {}
                }
                tokio::time::sleep(Duration::from_millis(rng.random_range(5..20))).await;
            }
            (rounds, rolled_back)
        })
    };

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            tokio::spawn(worker(
                Arc::clone(&race),
                via_proxy.clone(),
                w,
                seed.wrapping_add(w as u64 + 1),
                Arc::clone(&said),
                Arc::clone(&events),
            ))
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    done.store(true, Ordering::SeqCst);
    chaos.await.unwrap();
    let (recovery_rounds, swept) = recovery.await.unwrap();
    let (operator_rounds, rolled_back) = operator.await.unwrap();

    // Drain what is still in flight (forced), then the next recovery, as an
    // operator runs it: `recover --all-stuck` with the default window finds
    // nothing stuck, and sweeps the abandoned locks.
    recorded.drain(&race).await;
    fx.refresh().await;
    let last = recorded
        .recover_all_stuck(&fx.proto, Runner::Batched(BatchOptions::default()))
        .await;
    assert!(last.reports.is_empty(), "{:#?}", last.reports);
    let final_sweep = last.swept;

    // No lock is left: every transaction is terminal, so any lock would be
    // held by a terminal transaction.
    fx.refresh().await;
    let left = fx.proto.list_locks().await.unwrap();
    assert!(left.is_empty(), "locks left: {left:#?}");

    // Every transaction is terminal, the books balance (nothing pending,
    // total kept), and every report told the truth.
    let (all, _) = race.check_books().await;
    let states: BTreeMap<String, TxnState> = all
        .iter()
        .map(|t| (t.id.clone(), t.state.clone().unwrap()))
        .collect();
    let said = said.lock().unwrap().clone();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, s) in &said {
        let state = states.get(id);
        match s {
            Said::Completed(st) | Said::Elsewhere(st) => {
                assert_eq!(state, Some(st), "{id}: said {s:?}")
            }
            Said::LockRefused => {
                assert_eq!(state, Some(&TxnState::RolledBack), "{id}: said cancelled")
            }
            Said::Crashed | Said::Stopped | Said::Failed => {}
            Said::Other(what) => panic!("{id}: {what}"),
        }
        let key = match s {
            Said::Completed(_) => "completed",
            Said::Elsewhere(_) => "done elsewhere",
            Said::LockRefused => "refused on a lock",
            Said::Crashed => "crashed",
            Said::Stopped => "stopped",
            Said::Failed => "failed (lock answers lost)",
            Said::Other(_) => "other",
        };
        *counts.entry(key).or_default() += 1;
    }
    assert_eq!(said.len(), WORKERS * TRANSFERS_PER_WORKER);
    for (id, s) in &states {
        assert!(s.is_terminal(), "{id} is {s}");
    }

    race.assert_audit_clean().await;
    // Every record the acts left verifies, the workers' own writes (their
    // answers lost now and then) between them breaking no chain.
    let v = recorded.verify_every_record(&fx).await;
    println!(
        "receipts: {} records of {} acts, {} writes verified",
        v.verified,
        recorded.acts(),
        v.writes
    );
    println!(
        "{} transfers {counts:?}; {} responses lost; {} stale lock(s) taken over, {} release(s) failed; recovery: {recovery_rounds} rounds, {swept} abandoned lock(s) swept; operator: {operator_rounds} rounds, {rolled_back} rolled back; final sweep: {}",
        said.len(),
        proxy.dropped(),
        events.taken_over.load(Ordering::Relaxed),
        events.failed_releases.load(Ordering::Relaxed),
        final_sweep.len()
    );
}
