//! The thin layer over the official `elasticsearch` client.
//!
//! It exposes exactly the document operations the protocol needs — realtime
//! GET with `_seq_no`/`_primary_term`, conditional writes, `op_type=create`,
//! conditional deletes, search and full scans — and turns HTTP answers into
//! typed outcomes: a 409 is a [`WriteOutcome::Conflict`], not an error; a
//! missing index is [`crate::Error::IndexMissing`]; a transport failure is
//! [`crate::Error::Unreachable`] (for a write: unknown outcome). Answers are
//! classified by HTTP status first (see `response`), reads are retried when
//! the cluster is busy (see `send`), and the cluster's own `now` (see
//! `clock_probe`) and every answer's `Date` feed the one clock the protocol
//! uses ([`Cluster::now`]).

mod admin;
mod boundary;
pub use boundary::Translate;
mod bulk;
mod caps;
mod clock;
mod clock_probe;
mod cloud_id;
mod connect;
mod credential;
mod denial;
mod dotted;
mod introspect;
mod response;
mod routed;
mod search;
mod security;
mod send;
mod shards;
mod signer;
mod sigv4;

pub use admin::{ClusterHealth, HealthProbe, HEALTH_TIMEOUT};
pub use bulk::{CondWrite, ItemOutcome};
pub use caps::Paging;
pub use clock::{ClockSkew, ClockSource, ClockStatus, SKEW_WARNING_MS};
pub use clock_probe::PROBE_EVERY;
pub use cloud_id::cloud_id_url;
pub use connect::ConnectOptions;
pub use credential::CredentialKind;
pub use response::{error_from as error_of_answer, root_causes, RootCause};
pub use search::hits;
pub use send::{MAX_RETRY_WAIT, READ_ATTEMPTS};
pub use sigv4::{AwsService, AwsSigning};

use clock::Clock;
use response::{check, versioned, Answer};
use std::sync::Arc;

use crate::error::Result;
use chrono::{DateTime, Utc};
use elasticsearch::params::OpType;
use elasticsearch::{CreateParts, DeleteParts, Elasticsearch, GetParts, IndexParts};
use serde_json::{json, Map, Value};

/// A document with the concurrency tokens it was read at.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionedDoc {
    /// Document id.
    pub id: String,
    /// `_seq_no` at read time.
    pub seq_no: i64,
    /// `_primary_term` at read time.
    pub primary_term: i64,
    /// `_source`.
    pub source: Map<String, Value>,
    /// The custom routing value it was indexed with (`_routing`), which
    /// every write to it must pass (see `routed`); `None` when routed by id.
    pub routing: Option<String>,
}

/// Outcome of a conditional write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written; the document is now at these tokens.
    Written {
        /// New `_seq_no`.
        seq_no: i64,
        /// New `_primary_term`.
        primary_term: i64,
    },
    /// Someone wrote first (HTTP 409); re-read and decide again.
    Conflict,
}

/// Outcome of an `op_type=create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateOutcome {
    /// The document did not exist and now does.
    Created,
    /// A document with this id already exists; nothing was written.
    AlreadyExists,
}

/// Outcome of a conditional delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// Deleted.
    Deleted,
    /// The document changed since it was read; nothing was deleted.
    Conflict,
    /// Already gone.
    NotFound,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Document id.
    pub id: String,
    /// `_source` (empty when not requested).
    pub source: Map<String, Value>,
}

/// A handle on the cluster; cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    client: Elasticsearch,
    url: String,
    clock: Clock,
    caps: caps::Caps,
    /// The schema map applied to the three indices' documents (none for
    /// the article's names).
    boundary: Option<Arc<dyn Translate>>,
    credential: CredentialKind,
    /// Primary shard counts discovery learnt (see `shards`).
    shards: shards::PrimaryShards,
    /// The loopback SigV4 signer the client talks through, if signing;
    /// stops when the last handle is dropped.
    _signer: Option<std::sync::Arc<signer::Signer>>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("url", &self.url).finish()
    }
}

/// Page size for scans.
const SCAN_PAGE: usize = 1000;

impl Cluster {
    /// Builds a handle; does not touch the network.
    pub fn connect(opts: &ConnectOptions) -> Result<Cluster> {
        let built = connect::build_client(opts)?;
        Ok(Cluster {
            client: built.client,
            url: opts.url.clone(),
            clock: Clock::default(),
            caps: caps::Caps::default(),
            boundary: None,
            credential: built.kind,
            shards: shards::PrimaryShards::default(),
            _signer: built.signer,
        })
    }

    /// The kind of credential this handle presents (`doctor` shows it).
    pub fn credential(&self) -> CredentialKind {
        self.credential
    }

    /// The URL this handle talks to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The cluster's time now, estimated from its own `now` (see
    /// [`Cluster::sync_clock`]), else its answers' `Date` headers, else the
    /// local clock ([`Cluster::clock_status`] says which). Every time the protocol
    /// writes or judges (`modification_time`, the recovery window, lock
    /// leases, the age of data) comes from here, so processes whose clocks
    /// disagree still agree on what is old.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Estimated cluster time minus local time (zero before the first answer).
    pub fn clock_offset(&self) -> chrono::Duration {
        self.clock.offset()
    }

    /// `Some` when the local clock is provably more than a second off the
    /// cluster's (also logged once): worth showing to the operator.
    pub fn clock_skew(&self) -> Option<ClockSkew> {
        self.clock.skew()
    }

    /// Where [`Cluster::now`] comes from and how far the local clock is off,
    /// for the dashboard header and `doctor`.
    pub fn clock_status(&self) -> ClockStatus {
        self.clock.status()
    }

    /// A handle (with a clock estimate of its own) that plays a machine whose
    /// clock is `skew` off the real one: for tests of clock-skewed writers.
    pub fn with_local_clock_skew(&self, skew: chrono::Duration) -> Cluster {
        Cluster {
            client: self.client.clone(),
            url: self.url.clone(),
            clock: self.clock.with_local_skew(skew),
            caps: self.caps.clone(),
            boundary: self.boundary.clone(),
            credential: self.credential,
            shards: self.shards.clone(),
            _signer: self._signer.clone(),
        }
    }

    /// How scans page on this cluster, once a scan has found out.
    pub fn paging(&self) -> Option<Paging> {
        self.caps.paging()
    }

    /// Records how scans page on this cluster (see [`Paging`]).
    pub fn remember_paging(&self, p: Paging) {
        self.caps.remember(p);
    }

    /// Realtime GET by id: the latest write, refreshed or not. A miss is
    /// confirmed by an `ids` search before it is called absent: a document
    /// indexed with custom routing is found there and read with its routing
    /// value (see `routed`); not on an index known to have one primary
    /// shard, where a miss is final (see `shards`).
    pub async fn get(&self, index: &str, id: &str) -> Result<Option<VersionedDoc>> {
        let doc = match self.get_untranslated(index, id).await? {
            Some(d) => Some(d),
            None => self
                .found_elsewhere(index, &[id.to_string()])
                .await?
                .remove(id),
        };
        Ok(doc.map(|d| self.read_doc(index, d)))
    }

    async fn get_untranslated(&self, index: &str, id: &str) -> Result<Option<VersionedDoc>> {
        if dotted::needs_body(id) {
            return self.get_by_body(index, id).await;
        }
        let resp = self
            .send_read(|| {
                self.client
                    .get(GetParts::IndexId(index, id))
                    .realtime(true)
                    .send()
            })
            .await?;
        let answer = Answer::read(resp).await?;
        if answer.status == 404 && answer.json.get("found") == Some(&Value::Bool(false)) {
            return Ok(None);
        }
        let body = answer.into_json(index)?;
        Ok(Some(versioned(id, &body)?))
    }

    /// Realtime multi-GET; one entry per id, `None` where missing (the
    /// misses confirmed by one `ids` search, as [`Cluster::get`] does).
    pub async fn mget(&self, index: &str, ids: &[String]) -> Result<Vec<Option<VersionedDoc>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut docs = self.mget_body(index, json!({ "ids": ids })).await?;
        let missed: Vec<String> = ids
            .iter()
            .zip(&docs)
            .filter(|(_, d)| d.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        let mut elsewhere = self.found_elsewhere(index, &missed).await?;
        for (id, d) in ids.iter().zip(docs.iter_mut()) {
            if d.is_none() {
                *d = elsewhere.remove(id);
            }
        }
        Ok(docs
            .into_iter()
            .map(|d| d.map(|d| self.read_doc(index, d)))
            .collect())
    }

    /// Writes `source` only if the document is still at `seq_no`/`primary_term`.
    pub async fn put_if(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
        seq_no: i64,
        primary_term: i64,
    ) -> Result<WriteOutcome> {
        self.put_if_routed(index, id, source, (seq_no, primary_term), None)
            .await
    }

    /// [`Cluster::put_if`] on a document read with a custom routing value
    /// ([`VersionedDoc::routing`]), which the write must pass to reach the
    /// shard holding it: `at` is its `(_seq_no, _primary_term)`.
    pub async fn put_if_routed(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
        at: (i64, i64),
        routing: Option<&str>,
    ) -> Result<WriteOutcome> {
        let (seq_no, primary_term) = at;
        let source = &*self.write_source(index, source);
        if dotted::needs_body(id) {
            let action = dotted::Action::IndexIf(source, seq_no, primary_term, routing);
            return self.index_by_body(index, id, action).await;
        }
        let mut request = self
            .client
            .index(IndexParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term);
        if let Some(r) = routing {
            request = request.routing(r);
        }
        let resp = request.body(source).send();
        let resp = self.send(resp).await?;
        if resp.status_code().as_u16() == 409 {
            return Ok(WriteOutcome::Conflict);
        }
        let body = check(resp, index).await?;
        Ok(WriteOutcome::Written {
            seq_no: body.get("_seq_no").and_then(Value::as_i64).unwrap_or(-1),
            primary_term: body
                .get("_primary_term")
                .and_then(Value::as_i64)
                .unwrap_or(-1),
        })
    }

    /// Creates the document only if no document has this id (`op_type=create`).
    pub async fn create(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
    ) -> Result<CreateOutcome> {
        let source = &*self.write_source(index, source);
        if dotted::needs_body(id) {
            return self.create_by_body(index, id, source).await;
        }
        let resp = self
            .client
            .create(CreateParts::IndexId(index, id))
            .body(source)
            .send();
        let resp = self.send(resp).await?;
        if resp.status_code().as_u16() == 409 {
            return Ok(CreateOutcome::AlreadyExists);
        }
        check(resp, index).await?;
        Ok(CreateOutcome::Created)
    }

    /// Plain index (create or overwrite) with `op_type=index`; for seeding and tests.
    pub async fn put(&self, index: &str, id: &str, source: &Value) -> Result<()> {
        let translated = source
            .as_object()
            .map(|o| Value::Object(self.write_source(index, o).into_owned()));
        let source = translated.as_ref().unwrap_or(source);
        if dotted::needs_body(id) {
            let action = dotted::Action::Index(source);
            return self.index_by_body(index, id, action).await.map(|_| ());
        }
        let resp = self
            .client
            .index(IndexParts::IndexId(index, id))
            .op_type(OpType::Index)
            .body(source)
            .send();
        let resp = self.send(resp).await?;
        check(resp, index).await.map(|_| ())
    }

    /// Deletes the document only if it is still at `seq_no`/`primary_term`.
    pub async fn delete_if(
        &self,
        index: &str,
        id: &str,
        seq_no: i64,
        primary_term: i64,
    ) -> Result<DeleteOutcome> {
        self.delete_if_routed(index, id, (seq_no, primary_term), None)
            .await
    }

    /// [`Cluster::delete_if`] on a document read with a custom routing value
    /// ([`VersionedDoc::routing`]); `at` is its `(_seq_no, _primary_term)`.
    pub async fn delete_if_routed(
        &self,
        index: &str,
        id: &str,
        at: (i64, i64),
        routing: Option<&str>,
    ) -> Result<DeleteOutcome> {
        let (seq_no, primary_term) = at;
        if dotted::needs_body(id) {
            return self
                .delete_by_body(index, id, seq_no, primary_term, routing)
                .await;
        }
        let mut request = self
            .client
            .delete(DeleteParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term);
        if let Some(r) = routing {
            request = request.routing(r);
        }
        let resp = request.send();
        let resp = self.send(resp).await?;
        match resp.status_code().as_u16() {
            409 => Ok(DeleteOutcome::Conflict),
            404 => {
                let answer = Answer::read(resp).await?;
                if answer.json.get("result").and_then(Value::as_str) == Some("not_found") {
                    Ok(DeleteOutcome::NotFound)
                } else {
                    Err(answer.into_error(index))
                }
            }
            _ => {
                check(resp, index).await?;
                Ok(DeleteOutcome::Deleted)
            }
        }
    }
}
