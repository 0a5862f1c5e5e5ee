//! A lock with what is known of its holder: the owner transaction's state
//! and the lock's staleness, judged by the one rule.

use super::{Heartbeat, Heartbeats, LockInfo, Owner, Staleness};
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// A lock with what is known of its holder.
#[derive(Debug, Clone, PartialEq)]
pub struct LockView {
    /// The lock document.
    pub info: LockInfo,
    /// State of the owner transaction (`None`: no owner, or owner missing).
    pub owner_state: Option<TxnState>,
    /// Whether it can be presumed abandoned.
    pub staleness: Staleness,
    /// Its holder's own liveness, by its lease and heartbeat alone (the
    /// owner transaction's state left out): whether the process holding it
    /// is dead or alive, which the cause verdict
    /// ([`crate::protocol::read::verdict::cause`]) judges a stuck owner by.
    pub holder: Staleness,
}

impl LockView {
    /// Judges a lock given the owner transactions found (a missing key
    /// means no such document) and the holders' heartbeats, by the one
    /// staleness rule ([`LockInfo::staleness`]) under `config`'s windows
    /// and liveness source.
    pub fn judge(
        info: LockInfo,
        owners: &HashMap<String, Transaction>,
        beats: &Heartbeats,
        now: DateTime<Utc>,
        config: &ProtocolConfig,
    ) -> LockView {
        let found = info.owner.as_ref().and_then(|o| owners.get(o));
        let beat = match info.holder_id() {
            Some(h) => Heartbeat::of(config.liveness.as_ref(), beats, h),
            None => Heartbeat::NotConfigured,
        };
        let staleness = info.staleness(Owner::from_lookup(found), beat, now, config);
        let holder = info.staleness(Owner::Missing, beat, now, config);
        let owner_state = found.and_then(|t| t.state.clone());
        LockView {
            info,
            owner_state,
            staleness,
            holder,
        }
    }
}

impl LockView {
    /// Whether the sweep of abandoned locks may release it: stale on
    /// evidence, and not owned by an in-flight transaction (whose recovery
    /// releases it when it ends the transaction).
    pub fn is_sweepable(&self) -> bool {
        self.staleness.is_stale() && self.owner_state.as_ref().is_none_or(|s| s.is_terminal())
    }
}
