//! Locks of applications this tool did not write, held by live holders:
//! Kestra-style locks (`{category, id, owner: <instance>, createdAt}`, id
//! `category_id`, no expiry) taken by test tasks the way Kestra's
//! `LockService` takes them (`op_type=create`, work, check it still owns
//! the lock, delete its own lock), while the tool runs `release-lock`,
//! the sweep of `recover --all-stuck`, `audit` and `check`. The invariants:
//! no live lock released, no two holders at once.

use super::lock_owner;
use crate::fixture::Fx;
use chrono::Utc;
use estx::cluster::{Cluster, ConnectOptions, CreateOutcome, DeleteOutcome};
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::locks::{LockShape, Staleness};
use estx::protocol::time::format_timestamp;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One application instance taking Kestra-style locks.
struct Instance {
    cluster: Cluster,
    index: String,
    id: String,
}

impl Instance {
    fn new(fx: &Fx, id: &str) -> Instance {
        Instance {
            cluster: Cluster::connect(&ConnectOptions::new(&fx.url)).unwrap(),
            index: fx.ix.locks.clone(),
            id: id.into(),
        }
    }

    fn doc(&self, category: &str, id: &str) -> Map<String, Value> {
        json!({"category": category, "id": id, "owner": self.id,
               "createdAt": format_timestamp(Utc::now())})
        .as_object()
        .cloned()
        .unwrap()
    }

    /// `LockRepository.create`: `op_type=create`; false when held.
    async fn take(&self, category: &str, id: &str) -> bool {
        let resource = format!("{category}_{id}");
        let doc = self.doc(category, id);
        match self.cluster.create(&self.index, &resource, &doc).await {
            Ok(CreateOutcome::Created) => true,
            Ok(CreateOutcome::AlreadyExists) => false,
            Err(e) => panic!("{}: create {resource}: {e}", self.id),
        }
    }

    /// Whether the lock on `resource` is still this instance's.
    async fn owns(&self, resource: &str) -> bool {
        match self.cluster.get(&self.index, resource).await.unwrap() {
            Some(d) => d.source.get("owner") == Some(&json!(self.id)),
            None => false,
        }
    }

    /// `LockService.unlock`: deletes the lock only if it is still its own.
    async fn release(&self, resource: &str) {
        let Some(d) = self.cluster.get(&self.index, resource).await.unwrap() else {
            return;
        };
        if d.source.get("owner") != Some(&json!(self.id)) {
            return;
        }
        let out = self
            .cluster
            .delete_if(&self.index, resource, d.seq_no, d.primary_term)
            .await
            .unwrap();
        assert_ne!(out, DeleteOutcome::Conflict, "{}: {resource}", self.id);
    }
}

/// What the live holders observed.
#[derive(Default)]
struct Observed {
    /// Who holds each resource, as the holders know it.
    holders: Mutex<HashMap<String, String>>,
    /// Broken invariants, in words.
    violations: Mutex<Vec<String>>,
    /// Locked sections completed.
    rounds: AtomicUsize,
    stop: AtomicBool,
}

/// A holder's loop: take each lock (waiting while held), work under it,
/// check it still owns it, release it; until told to stop.
async fn hold_in_turn(me: Instance, seen: Arc<Observed>) {
    let ids = ["e1", "e2"];
    while !seen.stop.load(Ordering::SeqCst) {
        for id in ids {
            let resource = format!("execution_{id}");
            if !me.take("execution", id).await {
                tokio::task::yield_now().await;
                continue;
            }
            if let Some(other) = seen
                .holders
                .lock()
                .unwrap()
                .insert(resource.clone(), me.id.clone())
            {
                let v = format!("{resource}: {} and {other} held it at once", me.id);
                seen.violations.lock().unwrap().push(v);
            }
            // The work: a read under the lock, then the owner check
            // Kestra's unlock makes.
            if !me.owns(&resource).await {
                let v = format!("{resource}: released while {} held it", me.id);
                seen.violations.lock().unwrap().push(v);
            }
            seen.holders.lock().unwrap().remove(&resource);
            me.release(&resource).await;
            seen.rounds.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_kestra_locks_are_never_released_swept_or_counted_stale() {
    let fx = Fx::new().await;
    // A lock held for the whole test: every intervention below meets it.
    let parked = Instance::new(&fx, "9b2e6f0c-instance-p");
    assert!(parked.take("flow", "nightly").await);
    let seen = Arc::new(Observed::default());
    let workers: Vec<_> = ["instance-a", "instance-b"]
        .into_iter()
        .map(|id| tokio::spawn(hold_in_turn(Instance::new(&fx, id), seen.clone())))
        .collect();

    fx.refresh().await;
    let listed = fx.proto.list_locks().await.unwrap();
    let l = listed
        .iter()
        .find(|l| l.info.resource == "flow_nightly")
        .unwrap();
    assert!(matches!(l.info.shape, LockShape::Kestra { .. }));
    assert!(l.info.created_at.is_some(), "createdAt is its age");
    match &l.staleness {
        Staleness::Unknown(why) => assert!(
            why.to_string()
                .starts_with("held by instance 9b2e6f0c-instance-p, age "),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }

    for round in 0..8 {
        fx.refresh().await;
        for r in ["flow_nightly", "execution_e1", "execution_e2"] {
            match fx.proto.release_lock(r, false).await.unwrap() {
                ReleaseOutcome::Refused(why) => {
                    assert!(
                        why.to_string().contains("--force") && why.to_string().contains("instance"),
                        "{why}"
                    )
                }
                ReleaseOutcome::NotHeld => {}
                other => panic!("round {round}: {r}: {other:?}"),
            }
        }
        let swept = fx.proto.recover_all_stuck(2).await.unwrap();
        let swept = swept.locks.unwrap().swept;
        assert!(swept.is_empty(), "round {round}: {swept:#?}");
        let audit = fx.proto.audit(None, false).await.unwrap();
        let stale: Vec<_> = audit
            .findings
            .iter()
            .filter(|f| f.kind.as_str() == "stale_lock")
            .collect();
        assert!(stale.is_empty(), "round {round}: {stale:#?}");
        assert_eq!(
            fx.proto.check_reading().await.unwrap().counts.stale_locks,
            0
        );
    }

    seen.stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    assert!(seen.rounds.load(Ordering::SeqCst) > 0);
    assert_eq!(*seen.violations.lock().unwrap(), Vec::<String>::new());
    assert!(
        parked.owns("flow_nightly").await,
        "the parked lock was taken"
    );

    // Forced, it goes (the operator's call, with a reason in the CLI).
    assert_eq!(
        fx.proto.release_lock("flow_nightly", true).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert_eq!(lock_owner(&fx, "flow_nightly").await, None);
}
