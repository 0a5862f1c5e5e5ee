//! The demo: a self-contained live cluster with a realistic mess, so a
//! newcomer sees the dashboard at work within a minute (`estx-tui demo`), and
//! the same mess seeded into any cluster (`estx-tui seed`).
//!
//! - [`install`]: finds `osmem-server`, or installs it on first use.
//! - [`server`]: starts and owns a local `osmem-server` ([`OsmemServer`]).
//! - [`seed()`]: creates the indices and accounts, then leaves transactions
//!   stuck in every state (some for hours), stale locks and one dangling
//!   pending entry, all made by the protocol module itself where it can.
//! - [`workload`]: live workers making transfers, some crashing part-way,
//!   plus a recovery loop ([`workload::spawn`]).

pub mod error;
pub mod install;
mod mess;
mod package;
mod scenario;
pub mod seed;
pub mod server;
pub mod workload;

pub use error::DemoError;
pub use install::{find_or_install, install_command};
pub use seed::{account_ids, ensure_indices, seed, SeedOptions, SeedReport};
pub use server::OsmemServer;
pub use workload::{spawn, RecoveryScope, WorkloadHandle, WorkloadOptions, WorkloadStats};
