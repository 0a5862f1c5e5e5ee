//! Releasing the lock on one resource: its target (the resource), its plan
//! ([`LockPlan`]) and preview on the lock as judged now, its run, and its
//! result ([`Released`], which the release of a transaction's locks shares).

use super::super::{ActRefusal, Done, PlanStep, Planned, Report, Started};
use super::{Act, Runs, Subject};
use crate::error::Result;
use crate::protocol::locks::{release_outcome, LockView, ReleaseOutcome, TxnLocksRelease};
use crate::protocol::trail::{ActOutcome, ActionKind, Ending};
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
    type Plan = LockPlan;

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

    async fn plan(&self, p: &Protocol) -> Result<LockPlan> {
        let view = p.lock_view(&self.resource).await.ok().flatten();
        Ok(LockPlan::on_lock(&self.resource, view))
    }

    async fn preview(&self, p: &Protocol) -> Result<LockPlan> {
        let view = p.lock_view(&self.resource).await?;
        Ok(LockPlan::on_lock(&self.resource, view))
    }
}

impl Runs for ReleaseLock {
    type Result = Released;

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

/// The release of the lock on a resource, judged on the lock as read
/// (for the record, a lock that could not be read is taken as not held:
/// the run then says why it cannot act).
#[derive(Debug, Clone)]
pub struct LockPlan {
    /// The locked resource.
    pub resource: String,
    /// The lock as judged now (`None`: not held any more).
    pub view: Option<Box<LockView>>,
}

impl LockPlan {
    /// The release of the lock on `resource` judged on `view`.
    pub fn on_lock(resource: &str, view: Option<LockView>) -> LockPlan {
        LockPlan {
            resource: resource.to_string(),
            view: view.map(Box::new),
        }
    }
}

/// Filed under the lock's owner, its step naming the holder and the
/// judgement, so a forced release of a live or unknown lock says whose
/// lock it took.
impl Planned for LockPlan {
    fn transactions(&self) -> Vec<String> {
        let owner = self.view.as_ref().and_then(|v| v.info.owner.clone());
        owner.into_iter().collect()
    }

    fn targets(&self) -> Vec<String> {
        vec![self.resource.clone()]
    }

    fn steps(&self) -> Vec<PlanStep> {
        let held_by = self
            .view
            .as_ref()
            .map(|v| (v.info.holder_label(), v.staleness.to_string()));
        vec![PlanStep::ReleaseLock {
            resource: self.resource.clone(),
            held_by,
        }]
    }

    fn refusal(&self) -> Option<ActRefusal> {
        ActRefusal::of_lock(self.view.as_deref())
    }
}

/// What a lock release did: each resource and what its release did, or
/// why the release failed before any.
pub type Released = Result<TxnLocksRelease>;

impl Report for Released {
    fn ending(&self, p: &Protocol, plan: &dyn Planned) -> Ending {
        let locks = &p.config().indices.locks;
        let owner = plan.transactions().first().cloned().unwrap_or_default();
        let outcomes = self.as_ref().map_or(&[][..], |r| r.released.as_slice());
        let steps = outcomes
            .iter()
            .map(|(r, o)| o.trail_step(locks, &owner, r))
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
