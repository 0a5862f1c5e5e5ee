//! The handle on a cluster ([`Cluster`]): the client, the URL, the clock
//! estimate, what scans and reads by id learnt about the cluster, the schema
//! map and the credential; built without touching the network. Every
//! request is a method on it, written in the file of its feature.

use super::caps::{self, Paging};
use super::clock::{Clock, ClockSkew, ClockStatus};
use super::connect;
use super::credential::CredentialKind;
use super::options::ConnectOptions;
use super::translate::Translate;
use super::{scope, shards, signer};
use crate::error::Result;
use chrono::{DateTime, Utc};
use elasticsearch::Elasticsearch;
use std::sync::Arc;

/// A handle on the cluster; cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    pub(super) client: Elasticsearch,
    pub(super) url: String,
    pub(super) clock: Clock,
    pub(super) caps: caps::Caps,
    /// Whether multi requests go one per index (see `scope`).
    pub(super) scope: scope::Scope,
    /// The schema map applied to the three indices' documents (none for
    /// the article's names).
    pub(super) boundary: Option<Arc<dyn Translate>>,
    pub(super) credential: CredentialKind,
    /// Primary shard counts discovery learnt (see `shards`).
    pub(super) shards: shards::PrimaryShards,
    /// The loopback SigV4 signer the client talks through, if signing;
    /// stops when the last handle is dropped.
    pub(super) _signer: Option<std::sync::Arc<signer::Signer>>,
    /// Counts this handle's requests, when metered (see `meter`).
    pub(super) meter: Option<super::meter::RequestMeter>,
    /// How long one read may be retried in all (see `backoff`).
    pub(super) read_budget: std::time::Duration,
    /// Whether a request of this handle is waiting on a busy cluster.
    pub(super) waits: super::backoff::WaitState,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("url", &self.url).finish()
    }
}

impl Cluster {
    /// Builds a handle; does not touch the network.
    pub fn connect(opts: &ConnectOptions) -> Result<Cluster> {
        let built = connect::build_client(opts)?;
        Ok(Cluster {
            client: built.client,
            url: opts.url.clone(),
            clock: Clock::default(),
            caps: caps::Caps::default(),
            scope: scope::Scope::default(),
            boundary: None,
            credential: built.kind,
            shards: shards::PrimaryShards::default(),
            _signer: built.signer,
            meter: None,
            read_budget: opts.retry_budget,
            waits: super::backoff::WaitState::default(),
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
            scope: self.scope.clone(),
            boundary: self.boundary.clone(),
            credential: self.credential,
            shards: self.shards.clone(),
            _signer: self._signer.clone(),
            meter: self.meter.clone(),
            read_budget: self.read_budget,
            waits: self.waits.clone(),
        }
    }

    /// The same handle judging time by `other`'s clock: its estimate read
    /// through, never moved by this handle's answers. A rehearsal's local
    /// copy (`--rehearse`) judges "stuck" and the recovery window by the
    /// real cluster's time, whatever the local server's clock says.
    pub fn with_clock_of(&self, other: &Cluster) -> Cluster {
        Cluster {
            clock: other.clock.borrowed(),
            ..self.clone()
        }
    }

    /// How long one read may be retried in all (`--retry-budget`).
    pub fn read_budget(&self) -> std::time::Duration {
        self.read_budget
    }

    /// The same handle whose reads are retried for at most `budget` in all
    /// (a poller asks again at its next poll: retrying past it is no use).
    pub fn with_read_budget(&self, budget: std::time::Duration) -> Cluster {
        Cluster {
            read_budget: budget,
            ..self.clone()
        }
    }

    /// A handle sharing everything with this one (client, clock, what was
    /// learnt) whose requests are counted on a meter of its own
    /// (`meter.rs`).
    pub fn metered(&self) -> (Cluster, super::meter::RequestMeter) {
        let meter = super::meter::RequestMeter::default();
        let mut handle = self.clone();
        handle.meter = Some(meter.clone());
        (handle, meter)
    }

    /// Marks this handle as waiting on the cluster (a write's throttle
    /// being waited out by a batch), until [`Self::done_waiting`].
    pub fn waiting_on(&self, cause: super::backoff::WaitCause) {
        self.waits.waiting(cause);
    }

    /// The wait marked by [`Self::waiting_on`] is over.
    pub fn done_waiting(&self) {
        self.waits.answered();
    }

    /// Whether a request is waiting on a busy cluster right now, why (the
    /// status, or no answer) and for how long: a progress line shows
    /// "waiting on the cluster (429, 4.2 s)".
    pub fn waiting_on_cluster(&self) -> Option<(super::backoff::WaitCause, std::time::Duration)> {
        self.waits.current()
    }

    /// How scans page on this cluster, once a scan has found out.
    pub fn paging(&self) -> Option<Paging> {
        self.caps.paging()
    }

    /// Records how scans page on this cluster (see [`Paging`]).
    pub fn remember_paging(&self, p: Paging) {
        self.caps.remember(p);
    }

    /// Records that `index` (a concrete index, never an alias) has `shards`
    /// primary shards; `None` forgets it (not known: every miss by id is
    /// checked, see `shards`).
    pub fn remember_primary_shards(&self, index: &str, shards: Option<u32>) {
        self.shards.remember(index, shards);
    }

    /// Whether this handle sends one multi request per index, having seen
    /// the cluster refuse an index named in a body (see `scope`; `doctor`
    /// says so).
    pub fn index_scoped(&self) -> bool {
        self.scope.per_index()
    }

    /// Whether a read by id that missed in `index` has looked on every
    /// shard: only when the index is known to have exactly one.
    pub(super) fn miss_is_final(&self, index: &str) -> bool {
        self.shards.is_one(index)
    }
}
