//! Releasing the lock on one resource: its target (the resource), its plan
//! and preview on the lock as judged now, its run, and its result
//! ([`Released`], which the release of a transaction's locks shares).

use super::super::build::lock_plan;
use super::super::{Done, Plan, Report, Started};
use super::{Act, Subject};
use crate::error::Result;
use crate::protocol::locks::{ReleaseOutcome, TxnLocksRelease};
use crate::protocol::trail::{release_outcome, ActOutcome, ActionKind, Ending, TrailStep};
use crate::protocol::Protocol;

/// Release the lock on a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseLock {
    /// The locked resource.
    pub resource: String,
}

impl ReleaseLock {
    /// Release the lock on `resource`.
    pub fn new(resource: impl Into<String>) -> ReleaseLock {
        ReleaseLock {
            resource: resource.into(),
        }
    }
}

impl Act for ReleaseLock {
    type Result = Released;

    fn action(&self) -> ActionKind {
        ActionKind::ReleaseLock
    }

    fn title(&self) -> &'static str {
        "Release the lock on"
    }

    fn subject(&self) -> Subject {
        Subject::Lock(self.resource.clone())
    }

    fn updates_documents(&self) -> bool {
        false
    }

    async fn plan(&self, p: &Protocol) -> Result<Plan> {
        let view = p.lock_view(&self.resource).await.ok().flatten();
        Ok(lock_plan(&self.resource, view.as_ref()))
    }

    async fn preview(&self, p: &Protocol) -> Result<Plan> {
        let view = p.lock_view(&self.resource).await?;
        Ok(Plan::on_lock(&self.resource, view))
    }

    async fn run(started: Started<ReleaseLock>, p: &Protocol) -> Done<Released> {
        let i = started.intervention();
        let resource = i.act.resource.clone();
        let released = p.release_lock(&resource, i.choices.force).await;
        let released = released.map(|o| TxnLocksRelease {
            released: vec![(resource, o)],
            coverage: Default::default(),
        });
        started.finish(p, released).await
    }
}

/// What a lock release did: each resource and what its release did, or
/// why the release failed before any.
pub type Released = Result<TxnLocksRelease>;

impl Report for Released {
    fn ending(&self, p: &Protocol, plan: &Plan) -> Ending {
        let locks = &p.config().indices.locks;
        let owner = plan.transactions.first().cloned().unwrap_or_default();
        let outcomes = self.as_ref().map_or(&[][..], |r| r.released.as_slice());
        let steps = outcomes
            .iter()
            .map(|(r, o)| TrailStep::release(locks, &owner, r, o))
            .collect();
        let (outcome, summary) = release_outcome(outcomes, self.is_err());
        let summary = match self {
            Err(e) => format!("failed: {e}"),
            Ok(_) => summary,
        };
        Ending::of(outcome, summary, steps)
    }

    fn ok(&self, _: ActOutcome) -> bool {
        match self {
            Ok(r) => r
                .released
                .iter()
                .all(|(_, o)| !matches!(o, ReleaseOutcome::Refused(_))),
            Err(_) => false,
        }
    }

    fn what(&self) -> String {
        match self {
            Ok(r) if r.released.is_empty() => "no locks held".into(),
            Ok(r) => r
                .released
                .iter()
                .map(|(resource, o)| format!("{resource} {o}"))
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => format!("failed: {e}"),
        }
    }
}
