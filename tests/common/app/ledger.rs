//! What the test knows that the cluster does not: which instances are
//! alive, which locks each live instance holds, and every broken invariant
//! seen while the application runs beside the tool.
//!
//! Alive is the application's own rule: not crashed, and a heartbeat
//! written within the timeout (its [`Lease`]). An instance whose heartbeats
//! lapse (a loaded machine) is dead to every other instance and to the
//! tool's liveness source alike, and stops itself before it writes again.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When an instance last wrote a heartbeat (the time it stamped in it).
#[derive(Debug, Clone)]
pub struct Lease(Arc<Mutex<Instant>>);

impl Lease {
    /// A heartbeat stamped at `at` was written.
    pub fn renew(&self, at: Instant) {
        let mut last = self.0.lock().unwrap();
        if at > *last {
            *last = at;
        }
    }

    /// How old the last heartbeat written is.
    pub fn age(&self) -> Duration {
        self.0.lock().unwrap().elapsed()
    }
}

/// One lock as its holder took it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub instance: String,
    /// The `createdAt` it wrote: tells this taking from a later one.
    pub created_at: String,
}

/// Instances, holdings and violations.
#[derive(Debug)]
pub struct Ledger {
    timeout: Duration,
    leases: Mutex<HashMap<String, Lease>>,
    dead: Mutex<HashSet<String>>,
    held: Mutex<HashMap<String, Holding>>,
    violations: Mutex<Vec<String>>,
}

impl Ledger {
    /// Instances are dead once their heartbeats are older than `timeout`.
    pub fn new(timeout: Duration) -> Ledger {
        Ledger {
            timeout,
            leases: Mutex::default(),
            dead: Mutex::default(),
            held: Mutex::default(),
            violations: Mutex::default(),
        }
    }

    /// The lease of a new instance, its first heartbeat stamped at `at`.
    pub fn lease(&self, instance: &str, at: Instant) -> Lease {
        let lease = Lease(Arc::new(Mutex::new(at)));
        self.leases
            .lock()
            .unwrap()
            .insert(instance.into(), lease.clone());
        lease
    }

    /// Records a broken invariant.
    pub fn violation(&self, what: String) {
        eprintln!("VIOLATION: {what}");
        self.violations.lock().unwrap().push(what);
    }

    /// Every broken invariant so far.
    pub fn violations(&self) -> Vec<String> {
        self.violations.lock().unwrap().clone()
    }

    /// The instance crashed (or stopped): from now on it holds nothing
    /// alive. Called before its heartbeats stop.
    pub fn mark_dead(&self, instance: &str) {
        self.dead.lock().unwrap().insert(instance.to_string());
    }

    /// Whether the instance is alive: not crashed, heartbeats not lapsed.
    pub fn is_alive(&self, instance: &str) -> bool {
        let lapsed = match self.leases.lock().unwrap().get(instance) {
            Some(lease) => lease.age() > self.timeout,
            None => true,
        };
        !lapsed && !self.dead.lock().unwrap().contains(instance)
    }

    /// `instance` took `resource`: a live other holder is a violation.
    pub fn took(&self, resource: &str, h: Holding) {
        let before = self.held.lock().unwrap().insert(resource.into(), h.clone());
        if let Some(other) = before {
            if other.instance != h.instance && self.is_alive(&other.instance) {
                self.violation(format!(
                    "{resource}: taken by {} while {} held it",
                    h.instance, other.instance
                ));
            }
        }
    }

    /// The holder is about to delete its own lock.
    pub fn releasing(&self, resource: &str, instance: &str) {
        let mut held = self.held.lock().unwrap();
        if held.get(resource).is_some_and(|h| h.instance == instance) {
            held.remove(resource);
        }
    }

    /// Someone other than the holder deleted the lock `resource` that
    /// `owner` had taken: a violation if `owner` is alive and still holds it.
    pub fn released_by_other(&self, who: &str, resource: &str, owner: &str) -> bool {
        let holds = self
            .held
            .lock()
            .unwrap()
            .get(resource)
            .is_some_and(|h| h.instance == owner);
        if holds && self.is_alive(owner) {
            self.violation(format!(
                "{who} released {resource} of live instance {owner}"
            ));
            return true;
        }
        false
    }
}
