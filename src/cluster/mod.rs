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
mod backoff;
mod boundary;
mod bulk;
mod caps;
mod changes;
mod clock;
mod clock_probe;
mod cloud_id;
mod connect;
mod credential;
mod denial;
mod doc;
mod documents;
mod dotted;
mod handle;
mod introspect;
mod meter;
mod multi_get;
mod options;
mod reason;
mod response;
mod routed;
mod scope;
mod search;
mod security;
mod send;
mod shards;
mod signer;
mod sigv4;
mod translate;

pub use admin::{ClusterHealth, HealthProbe, HEALTH_TIMEOUT};
pub use backoff::{
    jittered, Backoff, WaitCause, DEFAULT_READ_BUDGET, MAX_RETRY_WAIT, SCAN_PAGE_FACTOR,
};
pub use bulk::{BulkCreated, CondWrite, ItemOutcome};
pub use caps::Paging;
pub use changes::Changes;
pub use clock::{ClockSkew, ClockSource, ClockStatus, SKEW_WARNING_MS};
pub use clock_probe::PROBE_EVERY;
pub use cloud_id::cloud_id_url;
pub use credential::CredentialKind;
pub use meter::RequestMeter;
pub use multi_get::{GroupDocs, MgetGroup};
pub use options::ConnectOptions;
pub use reason::{root_causes, RootCause};
pub use response::error_from as error_of_answer;
pub use search::{hit_refs, hits, HitRef};
pub use sigv4::{AwsService, AwsSigning};
pub use translate::Translate;

pub use doc::{CreateOutcome, DeleteOutcome, Hit, VersionedDoc, WriteOutcome};
pub use handle::Cluster;
