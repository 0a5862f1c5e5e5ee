//! The shared protocol module: everything that moves money or touches
//! transaction, account and lock documents. It knows nothing of terminals.
//!
//! Layers, from the bottom:
//! - [`transaction`], [`account`], [`lock`]: documents read tolerantly.
//! - [`decide`]: each step as a pure decision (the model checker runs these).
//! - [`executor`]: the one optimistic-concurrency loop that executes them.
//! - [`steps`]: named steps, plans, and JSON adapters.
//! - [`procedures`], [`locks`], [`lock_release`], [`stuck`], [`audit`],
//!   [`views`]: what the headless commands and the dashboard call, all
//!   through [`Protocol`].
//! - [`reverse`]: the compensating transfer of a finished one.
//! - [`read`]: the one read side: discovery of the real mappings, every
//!   query, the poll's read model, partial results, the write check.
//! - [`intervene`]: each operator act defined once: plan, run, record.
//! - [`trail`]: the operator audit trail around interventions.
//! - [`schema`]: the application's names of fields and states, applied
//!   where documents cross into and out of the cluster.

pub mod account;
pub mod audit;
mod audit_accounts;
mod audit_documents;
mod audit_view;
pub mod batch;
pub mod check;
pub mod config;
pub mod create;
pub mod decide;
pub mod executor;
pub mod integer;
pub mod intervene;
pub mod lock;
pub mod lock_release;
pub mod locks;
pub mod procedures;
pub mod read;
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
pub use procedures::RunLimits;
pub use report::{ProcedureReport, ReachedBy, StepObserver, StepReport, StepResult, Verdict};
pub use steps::{Procedure, Refusal, Step};
pub use transaction::{Transaction, Transfer, TxnState};

use crate::cluster::{Cluster, VersionedDoc};
use crate::error::Result;
use executor::Executor;
use std::sync::Arc;

/// The entry point: a cluster, the settings, and an optional observer that
/// hears every step as it ends. Cheap to clone; clones share the observer.
#[derive(Clone)]
pub struct Protocol {
    exec: Executor,
    config: Arc<ProtocolConfig>,
    observer: Option<StepObserver>,
    holder: String,
    read_cache: Arc<read::ReadCache>,
}

impl std::fmt::Debug for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protocol")
            .field("cluster", self.exec.cluster())
            .field("config", &self.config)
            .finish()
    }
}

impl Protocol {
    /// A protocol handle over `cluster`.
    pub fn new(cluster: Cluster, config: ProtocolConfig) -> Protocol {
        let boundary = schema::Boundary::new(&config.schema, &config.indices);
        let cluster = cluster.with_boundary(boundary.map(|b| Arc::new(b) as _));
        let exec = Executor::new(cluster, config.retry);
        Protocol {
            exec,
            config: Arc::new(config),
            observer: None,
            holder: default_holder(),
            read_cache: Arc::default(),
        }
    }

    /// Reports every step to `observer` as soon as it ends.
    pub fn with_observer(mut self, observer: StepObserver) -> Protocol {
        self.observer = Some(observer);
        self
    }

    /// Names the process written into the locks this handle takes.
    pub fn with_holder(mut self, holder: impl Into<String>) -> Protocol {
        self.holder = holder.into();
        self
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        self.exec.cluster()
    }

    /// The cluster's time now, from the cluster's own clock (asked again
    /// once a minute; see [`Cluster::sync_clock`]): every time the protocol
    /// writes or judges comes from here, never from this machine's clock
    /// alone, which may be minutes off.
    pub async fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.sync_clock().await;
        self.cluster().now()
    }

    /// Asks the cluster's own time (on the tool's indices) unless it was
    /// asked in the last minute.
    pub async fn sync_clock(&self) {
        let ix = &self.config.indices;
        self.cluster()
            .sync_clock(&[&ix.transactions, &ix.accounts, &ix.locks])
            .await;
    }

    /// The settings.
    pub fn config(&self) -> &ProtocolConfig {
        &self.config
    }

    /// The process id written into locks.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Reads a transaction by id (realtime), tolerant of every malformation.
    pub async fn read_transaction(&self, id: &str) -> Result<Option<(Transaction, VersionedDoc)>> {
        let doc = match self
            .cluster()
            .get(&self.config.indices.transactions, id)
            .await
        {
            Ok(doc) => doc,
            Err(e) => return Err(self.explain_by_id(e).await),
        };
        Ok(doc.map(|d| (self.parse_transaction(id, &d.source), d)))
    }

    /// A transaction document as read, its problems in the application's
    /// names (see [`schema::Schema::localize`]).
    pub(crate) fn parse_transaction(
        &self,
        id: &str,
        src: &serde_json::Map<String, serde_json::Value>,
    ) -> Transaction {
        let mut t = Transaction::from_source(id, src);
        self.config.schema.localize_all(&mut t.problems);
        t
    }

    /// An account document as read; a malformed one is
    /// [`crate::error::Error::Malformed`] in the application's names.
    pub(crate) fn parse_account(
        &self,
        id: &str,
        src: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<account::AccountState> {
        account::AccountState::from_source(src).map_err(|p| crate::error::Error::Malformed {
            kind: "account",
            id: id.to_string(),
            problems: self.config.schema.localize(&p.join("; ")),
        })
    }

    fn notify(&self, report: &StepReport) {
        tracing::info!(txn = %report.txn, step = %report.label, target = %report.target, result = ?report.result, "step");
        if let Some(obs) = &self.observer {
            obs(report);
        }
    }
}

fn default_holder() -> String {
    let host = trail::host_name();
    format!("estx-tui:{}@{host}", std::process::id())
}
