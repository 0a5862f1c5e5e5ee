//! The lock concern in one place: lock documents in every shape
//! deployments use (see [`shape`]): this tool's (`owner` = transaction id,
//! `process_id`, `created_at`, `expires_at`), Kestra's (`{category, id,
//! owner: <instance>, createdAt}`), the definitive guide's global (`{}`),
//! document (`process_id`) and tree locks (`lock_type: exclusive`, or
//! `shared` with `lock_count`), and unknown ones.
//!
//! - Read tolerantly ([`LockInfo`]), judged on evidence in [`judge`], with
//!   the holders' heartbeats of [`liveness`] when configured; a lock with
//!   its judgement is a [`LockView`].
//! - [`acquire`]: taking a lock (and taking over a stale one), a
//!   transfer's locks, a lock's JSON row.
//! - [`release`]: releasing (by the owner, by an operator, a transaction's
//!   locks when it ends) and the sweep of abandoned locks.
//! - [`heartbeats`]: the holders' heartbeats as the [`Protocol`] reads them.
//! - [`read`]: every lock through the one read side (scans, coverage).
//!
//! The acts on locks are methods of [`Protocol`] (one `impl` block per
//! file above), so every caller reaches them the same way as the other
//! concerns'.
//!
//! [`Protocol`]: crate::protocol::Protocol

pub mod acquire;
mod heartbeats;
mod info;
pub mod judge;
pub mod liveness;
pub mod read;
pub mod release;
pub mod shape;
mod view;

pub use acquire::{lock_json, AcquireOutcome};
pub use info::LockInfo;
pub use judge::{Owner, StaleReason, Staleness, UnknownReason};
pub use liveness::{Heartbeat, Heartbeats, LivenessSource};
pub use read::LockListing;
pub use release::{ReleaseOutcome, ReleaseRefusal, Sweep, SweptLock, TxnLocksRelease};
pub use shape::{LockShape, ReleaseAction, TreeLock};
pub use view::LockView;

#[cfg(test)]
mod tests;
