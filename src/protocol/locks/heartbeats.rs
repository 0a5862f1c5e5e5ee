//! The heartbeats of lock holders as the [`Protocol`] reads them: the
//! heartbeats of given holders, every heartbeat, and the liveness report
//! `doctor` shows (the source and its pure rules are in
//! [`liveness`](super::liveness)).

use super::liveness::{read_heartbeats, LivenessReport, MAX_HEARTBEATS};
use super::{Heartbeats, StaleReason, Staleness, UnknownReason};
use crate::error::Result;
use crate::protocol::Protocol;
use serde_json::json;

impl Protocol {
    /// The latest heartbeat of each of `holders` in the configured liveness
    /// source (empty when none is configured).
    pub async fn heartbeats(&self, holders: &[String]) -> Result<Heartbeats> {
        match &self.config.liveness {
            Some(source) => read_heartbeats(self.cluster(), source, holders).await,
            None => Ok(Heartbeats::new()),
        }
    }

    /// Every heartbeat in the configured source, latest per instance (for
    /// `doctor`); `None` when no source is configured.
    pub async fn all_heartbeats(&self) -> Option<Result<Heartbeats>> {
        let source = self.config.liveness.as_ref()?;
        let body = json!({"size": MAX_HEARTBEATS, "query": {"match_all": {}}});
        Some(match self.cluster().search(&source.index, body).await {
            Ok(answer) => crate::cluster::hits(&answer)
                .map(|hits| source.latest(hits.into_iter().map(|h| h.source))),
            Err(e) => Err(e),
        })
    }
}

impl Protocol {
    /// What the configured liveness source concludes now: its instances
    /// alive and dead, and how the locks held by processes are judged by
    /// it; `None` when none is configured.
    pub async fn liveness_report(&self) -> Option<LivenessReport> {
        let source = self.config.liveness.as_ref()?;
        let mut r = LivenessReport {
            source: source.to_string(),
            error: None,
            instances_alive: 0,
            instances_dead: 0,
            locks_live: 0,
            locks_dead: 0,
            locks_without_heartbeat: 0,
        };
        let beats = match self.all_heartbeats().await? {
            Ok(b) => b,
            Err(e) => {
                r.error = Some(e.to_string());
                return Some(r);
            }
        };
        let now = self.now().await;
        let timeout = chrono::Duration::from_std(source.timeout).unwrap_or(chrono::Duration::MAX);
        r.instances_dead = beats.values().filter(|at| now - **at > timeout).count();
        r.instances_alive = beats.len() - r.instances_dead;
        let locks = match self.list_locks().await {
            Ok(l) => l,
            Err(e) => {
                r.error = Some(format!("the locks could not be listed: {e}"));
                return Some(r);
            }
        };
        for l in locks.iter().filter(|l| l.owner_state.is_none()) {
            match &l.staleness {
                Staleness::Live if l.info.holder_id().is_some() => r.locks_live += 1,
                Staleness::Stale(StaleReason::HolderDead { .. }) => r.locks_dead += 1,
                Staleness::Unknown(UnknownReason::NoHeartbeat { .. }) => {
                    r.locks_without_heartbeat += 1
                }
                _ => {}
            }
        }
        Some(r)
    }
}
