//! estx: the library behind `estx-tui`.
//!
//! Operators of Elasticsearch/OpenSearch clusters whose application emulates
//! multi-document transactions with the two-phase-commit protocol use this
//! crate to see stuck transactions and repair them safely. The crate is split
//! so that nothing that decides about money knows about terminals:
//!
//! - [`protocol`]: every step of the protocol as a pure decision over one
//!   document, one optimistic-concurrency executor, and the procedures built
//!   from them (transfer, rollback, recovery, locks, audit).
//! - [`cluster`]: the thin layer over the official `elasticsearch` client.
//! - [`cli`]: the headless commands, which call the protocol module.
//! - [`signals`]: SIGTERM/SIGHUP/SIGINT as something to wait for and stop on.

pub mod allocator;
pub mod cli;
pub mod cluster;
pub mod dashboard;
pub mod demo;
pub mod error;
pub mod local_files;
pub mod protocol;
pub mod signals;

pub use error::{Error, Result};

/// The version with the commit it was built from (`0.1.0 (abc1234)`), or
/// the bare version when built outside a git checkout (see `build.rs`):
/// what `--version` prints and every audit record carries, so a record
/// names the exact build that wrote it.
pub const VERSION: &str = env!("ESTX_VERSION");
