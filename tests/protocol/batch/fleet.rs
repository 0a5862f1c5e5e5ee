//! The concurrency test on the batched path: a fleet of workers making
//! transfers (some dying mid-way), two batched recovery loops racing them and
//! each other (one through a proxy that swallows `_bulk` answers after the
//! server applied them, and crashing now and then), and an operator forcing
//! rollbacks. At the end: every transaction terminal, each account moved by
//! exactly the finished transfers naming it, nothing pending, total kept,
//! audit clean.

use crate::common::FaultProxy;
use crate::fixture::Fx;
use estx::protocol::batch::BatchOptions;
use estx::protocol::{NewTransfer, Protocol, ProtocolConfig, RunLimits, TxnState, Verdict};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCOUNTS: usize = 5;
const INITIAL: i64 = 1000;
const TOTAL: i64 = ACCOUNTS as i64 * INITIAL;
const WORKERS: usize = 4;
const TRANSFERS_PER_WORKER: usize = 20;
const MAX_LOOP_ROUNDS: usize = 100_000;

fn account_id(i: usize) -> String {
    format!("acc{i}")
}

async fn worker(
    proto: Protocol,
    w: usize,
    seed: u64,
    recent: Arc<Mutex<Vec<String>>>,
    failed: Arc<AtomicUsize>,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..TRANSFERS_PER_WORKER {
        let src = rng.random_range(0..ACCOUNTS);
        let dest = (src + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
        let crash = rng.random_bool(0.4);
        let limits = RunLimits {
            max_steps: crash.then(|| rng.random_range(0..7)),
        };
        let id = format!("w{w}-{i}");
        recent.lock().unwrap().push(id.clone());
        let req = NewTransfer {
            id: Some(id.clone()),
            src: account_id(src),
            dest: account_id(dest),
            amount: rng.random_range(1..=50),
        };
        let report = proto.transfer(&req, false, limits).await;
        if let Verdict::Failed(e) = &report.verdict {
            eprintln!("worker {w}: transfer {id} failed: {e}");
            failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A batched recovery loop until `done`; returns (rounds, completed, failed).
async fn recovery_loop(
    fx: Arc<Fx>,
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
        match proto.recover_all_stuck_batched(opts, false).await {
            Ok(reports) => {
                for r in &reports {
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
            // A lost answer to the stuck search itself.
            Err(e) if e.is_transient() => {}
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
    let fx = Fx::new().await;
    for i in 0..ACCOUNTS {
        fx.account(&account_id(i), INITIAL).await;
    }
    let fx = Arc::new(fx);
    let base_seed: u64 = std::env::var("ESTX_CONCURRENCY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("seed: {base_seed} (rerun with ESTX_CONCURRENCY_SEED={base_seed})");
    let racing = |p: &Protocol| {
        Protocol::new(
            p.cluster().clone(),
            ProtocolConfig {
                recovery_window: Duration::ZERO,
                ..fx.proto.config().clone()
            },
        )
    };
    let proxy = Arc::new(FaultProxy::start(&fx.url));
    let lossy = racing(&fx.proto_via(&proxy.url()));
    let direct = racing(&fx.proto);
    let done = Arc::new(AtomicBool::new(false));
    let recent: Arc<Mutex<Vec<String>>> = Arc::default();
    let worker_failures = Arc::new(AtomicUsize::new(0));

    let loops = [
        tokio::spawn(recovery_loop(
            Arc::clone(&fx),
            lossy,
            Some(Arc::clone(&proxy)),
            base_seed ^ 1,
            Arc::clone(&done),
        )),
        tokio::spawn(recovery_loop(
            Arc::clone(&fx),
            direct,
            None,
            base_seed ^ 2,
            Arc::clone(&done),
        )),
    ];
    let operator = {
        let (fx, done, recent) = (Arc::clone(&fx), Arc::clone(&done), Arc::clone(&recent));
        let mut rng = StdRng::seed_from_u64(base_seed ^ 3);
        tokio::spawn(async move {
            let (mut rounds, mut failed) = (0usize, 0usize);
            while !done.load(Ordering::SeqCst) && rounds < MAX_LOOP_ROUNDS {
                rounds += 1;
                let pick = {
                    let recent = recent.lock().unwrap();
                    let window = recent.len().saturating_sub(8)..recent.len();
                    (!window.is_empty()).then(|| recent[rng.random_range(window)].clone())
                };
                if let Some(id) = pick {
                    let report = fx.proto.rollback(&id, true).await;
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
                fx.proto.clone(),
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
    let drain = racing(&fx.proto);
    let mut clean = false;
    for _ in 0..10 {
        fx.refresh().await;
        let reports = drain
            .recover_all_stuck_batched(
                BatchOptions {
                    force: true,
                    ..BatchOptions::default()
                },
                false,
            )
            .await
            .unwrap();
        if reports.is_empty() {
            clean = true;
            break;
        }
    }
    assert!(clean, "transactions still in flight after draining");

    fx.refresh().await;
    let all = fx.proto.list_transactions(&[], None).await.unwrap();
    assert_eq!(all.len(), WORKERS * TRANSFERS_PER_WORKER);
    let ids: Vec<String> = (0..ACCOUNTS).map(account_id).collect();
    let mut accounts = BTreeMap::new();
    for id in &ids {
        accounts.insert(id.clone(), fx.acct(id).await);
    }
    let mut expected: BTreeMap<String, i64> = ids.iter().map(|id| (id.clone(), INITIAL)).collect();
    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    for t in &all {
        let state = t.state.clone().unwrap();
        *by_state.entry(state.to_string()).or_default() += 1;
        let tr = t.transfer().unwrap();
        match state {
            TxnState::Finished => {
                *expected.get_mut(&tr.src).unwrap() -= tr.amount;
                *expected.get_mut(&tr.dest).unwrap() += tr.amount;
            }
            TxnState::RolledBack => {}
            other => panic!("{} is {other}", t.id),
        }
    }
    println!("{by_state:?}");
    for (id, st) in &accounts {
        assert!(st.pending.is_empty(), "{id} still carries {:?}", st.pending);
        assert!(st.deltas.is_empty(), "{id} still records {:?}", st.deltas);
        assert_eq!(
            st.balance, expected[id],
            "balance of {id} (all: {accounts:?})"
        );
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(fx.total(&refs).await, TOTAL);
    let audit = fx.proto.audit(Some(TOTAL), false).await.unwrap();
    assert!(
        audit.findings.is_empty(),
        "audit findings: {:?}",
        audit
            .findings
            .iter()
            .map(|f| format!("{} {}: {}", f.kind, f.id, f.detail))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        worker_failures.load(Ordering::Relaxed),
        0,
        "a transfer failed"
    );
    assert_eq!(recovery_failures, 0, "a batched recovery failed");
    assert_eq!(operator_failures, 0, "a rollback failed");
}
