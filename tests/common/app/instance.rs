//! Application instances: each has a UUID, a heartbeat task and one worker
//! that runs transfers under Kestra-style locks. A crash is injected before
//! any write with the configured probability: the instance stops on the
//! spot (its heartbeats stop, its transaction and locks stay behind) and a
//! new instance takes its slot.

use super::flow::{End, Guard, Point, Stop, Txn};
use super::kestra::Resource;
use super::ledger::{Holding, Lease};
use super::scripts::ingest_timestamp;
use super::World;
use chrono::Utc;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A random version-4 UUID.
pub fn uuid(rng: &mut StdRng) -> String {
    let h = format!("{:032x}", rng.random::<u128>());
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..]
    )
}

/// Crashes at random, and stops a thread that would write past its budget
/// or after its instance's heartbeats got older than half the timeout.
pub struct Injector {
    rng: StdRng,
    rate: f64,
    started: Instant,
    budget: Duration,
    lease: Option<(Lease, Duration)>,
}

impl Injector {
    pub fn new(seed: u64, rate: f64, budget: Duration) -> Injector {
        Injector {
            rng: StdRng::seed_from_u64(seed),
            rate,
            started: Instant::now(),
            budget,
            lease: None,
        }
    }

    /// The budget runs from now (the transfer's first write).
    pub fn restart_budget(&mut self) {
        self.started = Instant::now();
    }

    /// Also stops once `lease` is older than `max`.
    pub fn with_lease(mut self, lease: Lease, max: Duration) -> Injector {
        self.lease = Some((lease, max));
        self
    }
}

impl Guard for Injector {
    fn before(&mut self, point: Point) -> Result<(), Stop> {
        if self.rng.random::<f64>() < self.rate {
            return Err(Stop::Crash(point));
        }
        if self.started.elapsed() > self.budget {
            return Err(Stop::OverBudget(point));
        }
        if let Some((lease, max)) = &self.lease {
            if lease.age() > *max {
                return Err(Stop::Lapsed(point));
            }
        }
        Ok(())
    }
}

/// Keeps slot after slot of instances running until the world stops.
pub async fn run_slot(w: Arc<World>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    while !w.stopping() {
        run_instance(&w, rng.random()).await;
    }
}

/// One instance, from its first heartbeat to its crash or the world's stop.
async fn run_instance(w: &Arc<World>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let me = uuid(&mut rng);
    w.stats.instances.fetch_add(1, Ordering::SeqCst);
    let lease = w.ledger.lease(&me, Instant::now());
    w.heartbeat(&me, &lease).await;
    let alive = Arc::new(AtomicBool::new(true));
    let beats = tokio::spawn(heartbeats(
        w.clone(),
        me.clone(),
        lease.clone(),
        alive.clone(),
    ));
    while !w.stopping() {
        if let Err(stop) = transfer(w, &me, &lease, &mut rng).await {
            w.stats.stopped(match &stop {
                Stop::Crash(p) => format!("crash {p}"),
                Stop::OverBudget(p) => format!("over budget before {p}"),
                Stop::Lapsed(p) => format!("heartbeats lapsed before {p}"),
                Stop::Failed(e) => format!("failed: {e}"),
            });
            break;
        }
    }
    // Dead (or stopped) first, then silent.
    w.ledger.mark_dead(&me);
    alive.store(false, Ordering::SeqCst);
    beats.await.unwrap();
}

/// The heartbeat task: one document per instance, rewritten every period.
async fn heartbeats(w: Arc<World>, me: String, lease: Lease, alive: Arc<AtomicBool>) {
    let mut every = tokio::time::interval(w.cfg.heartbeat_every);
    while alive.load(Ordering::SeqCst) {
        every.tick().await;
        if alive.load(Ordering::SeqCst) {
            w.heartbeat(&me, &lease).await;
        }
    }
}

impl World {
    /// Writes this instance's heartbeat now; once written, its lease runs
    /// from the time stamped in it.
    pub async fn heartbeat(&self, me: &str, lease: &Lease) {
        let n = self.names;
        let at = Instant::now();
        let doc = json!({n.instance: me, n.heartbeat: ingest_timestamp(Utc::now())});
        match self.cluster.put(&self.ix.heartbeats, me, &doc).await {
            Ok(()) => lease.renew(at),
            Err(e) => eprintln!("heartbeat of {me} failed: {e}"),
        }
    }
}

/// One transfer under locks: take them (or skip when busy), create, run
/// (now and then cancelled, as the article's rollback does), release.
async fn transfer(w: &World, me: &str, lease: &Lease, rng: &mut StdRng) -> Result<(), Stop> {
    let mut guard = Injector::new(rng.random(), w.cfg.crash_rate, w.cfg.budget)
        .with_lease(lease.clone(), w.cfg.heartbeat_timeout / 2);
    let accounts = w.account_ids();
    let src = rng.random_range(0..accounts.len());
    let dest = (src + rng.random_range(1..accounts.len())) % accounts.len();
    let mut resources = vec![
        Resource {
            category: "account",
            id: accounts[src].clone(),
        },
        Resource {
            category: "account",
            id: accounts[dest].clone(),
        },
    ];
    if w.cfg.invoices > 0 && rng.random_bool(0.25) {
        let inv = rng.random_range(0..w.cfg.invoices);
        resources.push(Resource {
            category: "invoice",
            id: format!("inv-{inv:02}"),
        });
    }
    resources.sort();
    guard.before(Point::Lock)?;
    let Some(held) = lock_all(w, me, &resources).await else {
        w.stats.lock_busy.fetch_add(1, Ordering::SeqCst);
        return Ok(());
    };
    let t = Txn {
        id: format!("txn-{}", uuid(rng)),
        src: accounts[src].clone(),
        dest: accounts[dest].clone(),
        amount: rng.random_range(1..=50),
    };
    guard.restart_budget();
    if !w.create(&t, &mut guard).await? {
        panic!("{}: a fresh id already exists", t.id);
    }
    w.stats.created.fetch_add(1, Ordering::SeqCst);
    let cancel_at = match rng.random_range(0..100) {
        0..4 => Some(Point::Core(1)),
        4..12 => Some(Point::Core(3)),
        _ => None,
    };
    match w
        .run_from(&t, Point::Core(1), cancel_at, &mut guard)
        .await?
    {
        End::Finished => w.stats.finished.fetch_add(1, Ordering::SeqCst),
        End::RolledBack => w.stats.rolled_back.fetch_add(1, Ordering::SeqCst),
        End::Noop(p) => {
            w.ledger.violation(format!(
                "{}: moved by someone else while its worker ran ({p})",
                t.id
            ));
            0
        }
    };
    guard.before(Point::Unlock)?;
    for (r, h) in &held {
        w.unlock(r, h)
            .await
            .map_err(|e| Stop::Failed(super::scripts::ScriptError::Cluster(e)))?;
    }
    Ok(())
}

/// Takes every lock in order; on a busy one, releases those taken.
async fn lock_all(w: &World, me: &str, resources: &[Resource]) -> Option<Vec<(Resource, Holding)>> {
    let mut held = Vec::new();
    for r in resources {
        match w.lock(me, r, w.cfg.lock_wait).await {
            Ok(Some(h)) => held.push((r.clone(), h)),
            Ok(None) | Err(_) => {
                for (r, h) in &held {
                    let _ = w.unlock(r, h).await;
                }
                return None;
            }
        }
    }
    Some(held)
}
