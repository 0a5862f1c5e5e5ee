//! Lock documents, in every shape deployments use (see [`shape`]): this
//! tool's (`owner` = transaction id, `process_id`, `created_at`,
//! `expires_at`), Kestra's (`{category, id, owner: <instance>, createdAt}`),
//! the definitive guide's global (`{}`), document (`process_id`) and tree
//! locks (`lock_type: exclusive`, or `shared` with `lock_count`), and
//! unknown ones. Read tolerantly here, judged on evidence in [`judge`],
//! with the holders' heartbeats of [`liveness`] when configured.

mod info;
pub mod judge;
pub mod liveness;
pub mod shape;
mod view;

pub use info::LockInfo;
pub use judge::{Owner, StaleReason, Staleness, UnknownReason};
pub use liveness::{Heartbeat, Heartbeats, LivenessSource};
pub use shape::{LockShape, ReleaseAction, TreeLock};
pub use view::LockView;

#[cfg(test)]
mod tests;
