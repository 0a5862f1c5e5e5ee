//! The [`Protocol`] handle itself: the cluster, the settings, the observer
//! and the caches every procedure shares. Each concept adds its own
//! `impl Protocol` block in its own file (transfers in `create`, locks in
//! `locks`, reads in `read`, ...); this file holds only what all of them use.

use super::config::ProtocolConfig;
use super::executor::Executor;
use super::read::cache::ReadCache;
use super::report::{StepObserver, StepReport};
use super::setup::index_bodies;
use super::transaction::Transaction;
use super::{account, schema};
use crate::cluster::{Cluster, VersionedDoc};
use crate::error::Result;
use std::sync::Arc;

/// The entry point: a cluster, the settings, and an optional observer that
/// hears every step as it ends. Cheap to clone; clones share the observer.
#[derive(Clone)]
pub struct Protocol {
    pub(super) exec: Executor,
    pub(super) config: Arc<ProtocolConfig>,
    pub(super) observer: Option<StepObserver>,
    pub(super) holder: String,
    pub(super) read_cache: Arc<ReadCache>,
    /// A job's own writes, which its way back does not refuse as recent
    /// ([`Protocol::with_own_writes`]).
    pub(super) own: Option<Arc<super::jobs::OwnWrites>>,
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
            own: None,
        }
    }

    /// Reports every step to `observer` as soon as it ends.
    pub fn with_observer(mut self, observer: StepObserver) -> Protocol {
        self.observer = Some(observer);
        self
    }

    /// Paces every conditional write of this handle (one-at-a-time and
    /// batched) by `pace`: a job's `--max-rate` and its back-off.
    pub fn with_pace(mut self, pace: Arc<super::jobs::Pace>) -> Protocol {
        self.exec = self.exec.with_pace(pace);
        self
    }

    /// Acts for a job on its way back (its resume, or `--ids-from` the file
    /// of a run it stopped): a transaction `own` recognises as last written
    /// by the job is not refused under the recovery window (its worker is
    /// this job); every other is judged as before.
    pub fn with_own_writes(mut self, own: Arc<super::jobs::OwnWrites>) -> Protocol {
        self.own = Some(own);
        self
    }

    /// The same handle, counting its requests on a meter of its own (the
    /// background audit says what it cost: see `audit::pace`).
    pub fn metered(&self) -> (Protocol, crate::cluster::RequestMeter) {
        let (cluster, meter) = self.cluster().metered();
        let mut p = self.clone();
        p.exec = p.exec.on(cluster);
        (p, meter)
    }

    /// The same handle (its caches shared) whose reads are retried for at
    /// most `budget` in all: a poll is asked again at the next one, so its
    /// reads wait no longer than the interval (the dashboard, the exporter).
    pub fn with_read_budget(&self, budget: std::time::Duration) -> Protocol {
        let cluster = self.cluster();
        let cluster = cluster.with_read_budget(cluster.read_budget().min(budget));
        let mut p = self.clone();
        p.exec = p.exec.on(cluster);
        p
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
        self.config.schema.localize_problems(&mut t.problems);
        t
    }

    /// An account document as read; a malformed one is
    /// [`crate::error::Error::Malformed`] in the application's names.
    pub(crate) fn parse_account(
        &self,
        id: &str,
        src: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<account::AccountState> {
        account::AccountState::from_source(src).map_err(|mut problems| {
            self.config.schema.localize_problems(&mut problems);
            crate::error::Error::Malformed {
                kind: "account",
                id: id.to_string(),
                problems,
            }
        })
    }

    pub(super) fn notify(&self, report: &StepReport) {
        tracing::info!(txn = %report.txn, step = %report.label, target = %report.target, result = ?report.result, "step");
        if let Some(obs) = &self.observer {
            obs(report);
        }
    }

    /// Creates whichever of the indices is missing; returns each index
    /// with `true` if it was created now, `false` if it already existed.
    /// An existing alias or data stream of that name counts as existing.
    pub async fn ensure_indices(&self) -> Result<Vec<(String, bool)>> {
        let d = self.rediscover().await?;
        let discovered = d.indices();
        let mut out = Vec::new();
        for (i, (name, body)) in index_bodies(&self.config.indices, &self.config.schema)?
            .into_iter()
            .enumerate()
        {
            // The three protocol indices as discovered (an alias counts);
            // others (the audit trail) by creation, which is idempotent.
            let exists = discovered.get(i).is_some_and(|info| info.exists());
            let created = !exists && self.cluster().create_index(&name, body).await?;
            out.push((name, created));
        }
        self.rediscover().await?;
        Ok(out)
    }
}

fn default_holder() -> String {
    let host = host_name();
    format!("estx-tui:{}@{host}", std::process::id())
}

/// This machine's name, as written into the locks this process takes and
/// into every audit record.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "localhost".into())
}
