//! Kestra's `LockService` as its article describes it: a lock is the
//! document `{category, id, owner: <instance>, createdAt}` under the id
//! `category_id`, taken with `op_type=create` (waiting while it exists, up
//! to a timeout), never expiring, and released by its owner only (read it,
//! check the owner, delete it). The holder also checks, when it releases,
//! that the lock is still the one it took: anything else is a live lock
//! released by someone else.

use super::ledger::Holding;
use super::scripts::ingest_timestamp;
use super::World;
use chrono::Utc;
use estx::cluster::{CreateOutcome, DeleteOutcome};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A resource an instance locks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Resource {
    pub category: &'static str,
    pub id: String,
}

impl Resource {
    /// The lock document's id: `category_id`.
    pub fn lock_id(&self) -> String {
        format!("{}_{}", self.category, self.id)
    }
}

impl World {
    /// `LockService.lock`: creates the lock, waiting while someone holds it,
    /// up to `timeout`. `Ok(None)` when the wait ran out.
    pub async fn lock(
        &self,
        instance: &str,
        r: &Resource,
        timeout: Duration,
    ) -> estx::Result<Option<Holding>> {
        let n = self.names;
        let deadline = Instant::now() + timeout;
        loop {
            let created_at = ingest_timestamp(Utc::now());
            let doc = json!({n.lock_category: r.category, n.lock_id: r.id,
                n.lock_owner: instance, n.lock_created: created_at});
            let Value::Object(doc) = doc else {
                unreachable!()
            };
            let id = r.lock_id();
            if self.cluster.create(&self.ix.locks, &id, &doc).await? == CreateOutcome::Created {
                let h = Holding {
                    instance: instance.into(),
                    created_at,
                };
                self.ledger.took(&id, h.clone());
                return Ok(Some(h));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            // Kestra sleeps 1 ms between attempts; this is the application
            // waiting for a lock, not a test synchronising.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// `LockService.unlock`: reads the lock, deletes it only if it is still
    /// this instance's (conditionally on the version read). A lock gone or
    /// re-taken while its holder lived is recorded as a violation.
    pub async fn unlock(&self, r: &Resource, h: &Holding) -> estx::Result<()> {
        let n = self.names;
        let id = r.lock_id();
        let doc = self.cluster.get(&self.ix.locks, &id).await?;
        let mine = doc.as_ref().is_some_and(|d| {
            d.source.get(n.lock_owner).and_then(Value::as_str) == Some(&h.instance)
                && d.source.get(n.lock_created).and_then(Value::as_str) == Some(&h.created_at)
        });
        if !mine {
            if !self.ledger.is_alive(&h.instance) {
                // Its heartbeats lapsed: dead to everyone, rightly cleared.
                return Ok(());
            }
            self.ledger.violation(format!(
                "{id}: released by someone else while {} held it (now {:?})",
                h.instance,
                doc.map(|d| d.source)
            ));
            self.ledger.releasing(&id, &h.instance);
            return Ok(());
        }
        let Some(d) = doc else { return Ok(()) };
        self.ledger.releasing(&id, &h.instance);
        match self
            .cluster
            .delete_if(&self.ix.locks, &id, d.seq_no, d.primary_term)
            .await?
        {
            DeleteOutcome::Deleted => Ok(()),
            _ if !self.ledger.is_alive(&h.instance) => Ok(()),
            other => {
                self.ledger.violation(format!(
                    "{id}: changed under its live holder {} ({other:?})",
                    h.instance
                ));
                Ok(())
            }
        }
    }
}
