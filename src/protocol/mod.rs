//! The shared protocol module: everything that moves money or touches
//! transaction, account and lock documents. It knows nothing of terminals.
//!
//! This file only declares the modules and re-exports what the front ends
//! use (the curated facade below). Layers, from the bottom:
//! - [`transaction`], [`account`]: documents read tolerantly.
//! - [`locks`]: the lock concern in one module (shapes, judging, liveness,
//!   taking, releasing, the sweep, heartbeats, the lock reads).
//! - [`decide`]: each step as a pure decision (the model checker runs these).
//! - [`executor`]: the one optimistic-concurrency loop that executes them.
//! - [`steps`]: named steps, plans, and JSON adapters.
//! - `handle`: the [`Protocol`] handle itself (cluster, settings, observer,
//!   caches). It depends only on the documents, the executor, the settings,
//!   the schema and the read cache: each concept adds its own
//!   `impl Protocol` block in its own file.
//! - [`procedures`], [`stuck`], [`audit`],
//!   [`views`]: what the headless commands and the dashboard call, all
//!   through [`Protocol`].
//! - [`reverse`]: the compensating transfer of a finished one.
//! - [`read`]: the one read side: discovery of the real mappings, every
//!   query, the poll's read model, partial results, the write check.
//! - [`receipt`]: what one balance write did (before, after, versions).
//! - [`trail`]: the operator audit trail (records, their pages, history).
//! - [`intervene`]: each operator act defined once: plan, run, record (it
//!   writes the trail; the trail knows nothing of acts).
//! - [`schema`]: the application's names of fields and states, applied
//!   where documents cross into and out of the cluster.

pub mod account;
pub mod audit;
pub mod batch;
pub mod check;
pub mod config;
pub mod create;
pub mod decide;
pub mod executor;
mod handle;
mod indices;
pub mod integer;
pub mod intervene;
pub mod jobs;
pub mod locks;
mod preflight;
pub mod problem;
pub mod procedures;
pub mod read;
pub mod receipt;
pub mod report;
pub mod reverse;
pub mod rows;
pub mod schema;
pub mod setup;
pub mod steps;
pub mod stuck;
pub mod time;
pub mod time_format;
pub mod time_mapping;
pub mod trail;
pub mod transaction;
pub mod views;

pub use config::{Indices, ProtocolConfig, RetryPolicy};
pub use create::NewTransfer;
pub use handle::Protocol;
pub use report::{ProcedureReport, ReachedBy, StepObserver, StepReport, StepResult, Verdict};
pub use steps::{Procedure, ProcedureRefusal, RunLimits, Step};
pub use transaction::{Transaction, Transfer, TxnState};
