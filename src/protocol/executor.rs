//! The one optimistic-concurrency executor every step runs through.
//!
//! Read the document by id (realtime GET, with `_seq_no`/`_primary_term`),
//! decide with a pure function, write only the fields the decision sets (a
//! partial `_update`, [`Changes`]) with `if_seq_no`/`if_primary_term`; on a
//! 409, read and decide again. A timeout or transport error leaves the
//! outcome unknown: read and decide again too, which is safe because every
//! decision is idempotent — and if the re-read shows every field the write
//! set (its evidence: [`Changes::landed`]) at a newer version than the one
//! we wrote against, the write was ours and is reported as `Updated`,
//! whatever else others (an ingest pipeline's `modification_time`, the
//! application's own fields) changed meanwhile. After a
//! bounded number of unknown outcomes the step gives up, leaving the document
//! where it is for recovery, as the protocol prescribes.
//!
//! A create ([`Executor::create`]) resolves its unknown outcomes the same
//! way: sent again (`op_type=create` never overwrites), and a document found
//! under its id is read back so the caller can recognise its own write.
//!
//! An apply ([`Executor::run_claimed`]) adds the claim between deciding and
//! writing the account: the transaction gets a write that sets nothing and
//! still advances its version ([`Changes::fence`], `"detect_noop": false`),
//! conditional on the version just read, and the account is written only after a claim
//! whose success we saw (see [`decide`](super::decide) for why this fences
//! late and duplicate applies).

use super::config::RetryPolicy;
use super::decide::{Effect, NoopReason};
use super::jobs::Pace;
use crate::cluster::{Changes, Cluster, CreateOutcome, VersionedDoc, WriteOutcome};
use crate::error::{Error, Result};
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// A decision over a JSON document as read.
pub enum DocDecision {
    /// Write these fields (only these: a partial update).
    Write(Changes, Effect),
    /// Change nothing.
    Noop(NoopReason),
}

/// What one executed step did to its document: wrote it (with the effect),
/// or left it alone (with the reason). How a whole act ended is the audit
/// trail's `ActOutcome`, above this layer.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// The document was written (by this call).
    Updated(Effect),
    /// Nothing to do, and why.
    Noop(NoopReason),
}

/// The result of one executed step, with the document after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    /// What happened.
    pub outcome: StepOutcome,
    /// The source after the step: the source read with the step's changes
    /// merged (the re-read document, for a write recognised after a lost
    /// answer; the source read, for a no-op).
    pub after: Map<String, Value>,
    /// Requests made (reads and writes), for reports and benchmarks.
    pub requests: u32,
    /// Where the write landed (`None` for a no-op): what a balance step's
    /// receipt ([`Receipt`](super::receipt::Receipt)) says of versions.
    pub landing: Option<Landing>,
}

/// The versions of a write this call made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landing {
    /// The `(_seq_no, _primary_term)` it was conditional on.
    pub on: (i64, i64),
    /// The version it landed at, from its answer; `None` when the answer
    /// was lost and the write was recognised on a re-read.
    pub at: Option<(i64, i64)>,
}

/// Called with the account id after a successful claim, right before the
/// account write of an apply. Tests use it to hold a worker there while other
/// processes run; it does nothing in production.
pub type ApplyGate = Arc<dyn Fn(&str) -> BoxFuture<'static, ()> + Send + Sync>;

/// The claim an apply makes before its account write: on which document,
/// and the decision that fences it (a write that changes nothing and still
/// advances its version) while it is pending.
#[derive(Clone, Copy)]
pub struct ClaimOn<'a> {
    /// The transaction's index.
    pub index: &'a str,
    /// The transaction's id.
    pub id: &'a str,
    /// `steps::claim_doc` (a parameter so the executor stays generic).
    pub decide: fn(&str, &Map<String, Value>) -> Result<DocDecision>,
}

/// What an `op_type=create` found, once its outcome is known.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    /// This call created the document (an answer was heard).
    Created,
    /// A document with this id exists, as read back. When
    /// `after_lost_answer`, one of our creates may have landed unheard: the
    /// caller recognises its own write by what the document holds.
    Exists {
        /// The document found under the id.
        doc: VersionedDoc,
        /// Whether an earlier create of this call had an unknown outcome.
        after_lost_answer: bool,
    },
}

/// A write whose outcome we never learned: the fields sent, what it does,
/// and the `(_seq_no, _primary_term)` it was conditional on.
type Unsure = (Changes, Effect, (i64, i64));

/// Runs decisions against one document with optimistic concurrency.
#[derive(Clone)]
pub struct Executor {
    cluster: Cluster,
    policy: RetryPolicy,
    gate: Option<ApplyGate>,
    pace: Option<Arc<Pace>>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("cluster", &self.cluster)
            .field("policy", &self.policy)
            .finish()
    }
}

/// Retry counters of one step.
#[derive(Default)]
struct Tries {
    unknown: u32,
    conflicts: u32,
    throttled: u32,
    requests: u32,
}

impl Executor {
    /// An executor over `cluster` with `policy`.
    pub fn new(cluster: Cluster, policy: RetryPolicy) -> Executor {
        Executor {
            cluster,
            policy,
            gate: None,
            pace: None,
        }
    }

    /// Waits on `pace` before every conditional write (a job's
    /// `--max-rate`), and tells it how each was answered.
    pub fn with_pace(mut self, pace: Arc<Pace>) -> Executor {
        self.pace = Some(pace);
        self
    }

    /// The same executor over another handle on the same cluster (a
    /// metered one, say).
    pub(crate) fn on(mut self, cluster: Cluster) -> Executor {
        self.cluster = cluster;
        self
    }

    /// The pace writes wait on, if any (the batched executor waits on it too).
    pub(crate) fn pace(&self) -> Option<&Arc<Pace>> {
        self.pace.as_ref()
    }

    /// One conditional partial update, paced: admitted by the job's
    /// [`Pace`] first, its answer told to it.
    async fn put(
        &self,
        index: &str,
        id: &str,
        changes: &Changes,
        doc: &VersionedDoc,
    ) -> Result<WriteOutcome> {
        if let Some(pace) = &self.pace {
            pace.admit(1, None).await;
        }
        let answer = self
            .cluster
            .update_if_routed(index, id, changes, at(doc), doc.routing.as_deref())
            .await;
        if let Some(pace) = &self.pace {
            match &answer {
                Ok(_) => pace.answered(1, 0),
                Err(e) if e.is_throttle() => pace.answered(0, 1),
                Err(_) => {}
            }
        }
        answer
    }

    /// Holds every apply at `gate` between its claim and its account write.
    pub fn with_gate(mut self, gate: ApplyGate) -> Executor {
        self.gate = Some(gate);
        self
    }

    /// The cluster it talks to.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The gate applies wait at, if any (the batched executor holds there too).
    pub(crate) fn gate(&self) -> Option<&ApplyGate> {
        self.gate.as_ref()
    }

    /// Executes `decide` on `index/id`. `kind` names the document in errors.
    ///
    /// `decide` must be pure and idempotent: it is called again after every
    /// conflict and unknown outcome, on the freshly read document.
    pub async fn run<F>(
        &self,
        kind: &'static str,
        index: &str,
        id: &str,
        decide: F,
    ) -> Result<Executed>
    where
        F: FnMut(&Map<String, Value>) -> Result<DocDecision>,
    {
        self.run_claimed(kind, index, id, None, decide).await
    }

    /// Like [`Executor::run`], and when `claim` names a transaction, every
    /// write `decide` asks for is preceded by a claim on it: the transaction
    /// is read and, if `claim_decide` says so (it is still pending), fenced
    /// (a write that sets nothing and advances its version) conditional on
    /// that read. A 409 or an unknown outcome of
    /// the claim re-reads the transaction and claims again (the account read
    /// stays valid: it is still before the new claim); a transaction that has
    /// moved on ends the step as a no-op. A 409 or unknown outcome of the
    /// account write starts again from the account read.
    pub async fn run_claimed<F>(
        &self,
        kind: &'static str,
        index: &str,
        id: &str,
        claim: Option<ClaimOn<'_>>,
        decide: F,
    ) -> Result<Executed>
    where
        F: FnMut(&Map<String, Value>) -> Result<DocDecision>,
    {
        self.run_from(kind, index, id, claim, None, decide).await
    }

    /// [`Executor::run`] on `doc`, the document as the caller has just
    /// read it realtime (its `_seq_no`/`_primary_term` with it): decided
    /// on without reading it again; a conflict or an unknown outcome reads
    /// it afresh as any step does. For a caller that needed the document
    /// before deciding what else to write (the trail's completion).
    pub async fn run_read<F>(
        &self,
        kind: &'static str,
        index: &str,
        doc: VersionedDoc,
        decide: F,
    ) -> Result<Executed>
    where
        F: FnMut(&Map<String, Value>) -> Result<DocDecision>,
    {
        let id = doc.id.clone();
        self.run_from(kind, index, &id, None, Some(doc), decide)
            .await
    }

    async fn run_from<F>(
        &self,
        kind: &'static str,
        index: &str,
        id: &str,
        claim: Option<ClaimOn<'_>>,
        mut first: Option<VersionedDoc>,
        mut decide: F,
    ) -> Result<Executed>
    where
        F: FnMut(&Map<String, Value>) -> Result<DocDecision>,
    {
        let mut tries = Tries::default();
        // Our last write whose outcome we never learned, with the version it
        // was conditional on.
        let mut maybe_written: Option<Unsure> = None;
        loop {
            let doc = match first.take() {
                Some(doc) => doc,
                None => self.read(kind, index, id, &mut tries).await?,
            };
            if let Some((changes, effect, at)) = maybe_written.take() {
                // It landed only if the document moved past the version it
                // was conditional on and holds every field it set (see
                // `Changes::landed`); otherwise it is decided and sent again.
                if changes.landed(&doc, at) {
                    return Ok(Executed {
                        outcome: StepOutcome::Updated(effect),
                        after: doc.source,
                        requests: tries.requests,
                        landing: Some(Landing { on: at, at: None }),
                    });
                }
            }
            let (changes, effect) = match decide(&doc.source)? {
                DocDecision::Noop(reason) => return Ok(noop(doc.source, reason, &tries)),
                DocDecision::Write(changes, effect) => (changes, effect),
            };
            if let Some(on) = claim {
                let mut claim_tries = Tries::default();
                let moved_on = self.claim(on, &mut claim_tries).await;
                tries.requests += claim_tries.requests;
                if let Some(reason) = moved_on? {
                    return Ok(noop(doc.source, reason, &tries));
                }
                if let Some(gate) = &self.gate {
                    gate(id).await;
                }
            }
            tries.requests += 1;
            match self.put(index, id, &changes, &doc).await {
                Ok(WriteOutcome::Written {
                    seq_no,
                    primary_term,
                }) => {
                    return Ok(Executed {
                        outcome: StepOutcome::Updated(effect),
                        after: changes.apply_to(&doc.source),
                        requests: tries.requests,
                        landing: Some(Landing {
                            on: at(&doc),
                            at: Some((seq_no, primary_term)),
                        }),
                    })
                }
                Ok(WriteOutcome::Conflict) => self.conflicted(index, id, &mut tries).await?,
                Err(e) if e.is_transient() => {
                    maybe_written = Some((changes, effect, (doc.seq_no, doc.primary_term)));
                    self.unknown(index, id, &mut tries, &e).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Realtime read of `index/id`, retrying transient failures within the
    /// policy; [`Error::NotFound`] (naming `kind`) when it does not exist.
    pub async fn get(&self, kind: &'static str, index: &str, id: &str) -> Result<VersionedDoc> {
        self.read(kind, index, id, &mut Tries::default()).await
    }

    /// Creates `index/id` with `op_type=create`, resolving unknown outcomes
    /// as every step does: a timeout or lost answer sends the create again
    /// (it can never overwrite), and a 409 reads the document back
    /// ([`Created::Exists`]) so the caller can tell its own write, whose
    /// answer was lost, from someone else's. Gives up ([`Error::GaveUp`])
    /// after the policy's unknown outcomes, or on a final error after one
    /// (the document may then exist).
    pub async fn create(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
    ) -> Result<Created> {
        let mut tries = Tries::default();
        loop {
            tries.requests += 1;
            match self.cluster.create(index, id, source).await {
                Ok(CreateOutcome::Created) => return Ok(Created::Created),
                Ok(CreateOutcome::AlreadyExists) => {
                    match self.read_if_exists(index, id, &mut tries).await? {
                        Some(doc) => {
                            return Ok(Created::Exists {
                                doc,
                                after_lost_answer: tries.unknown > 0,
                            })
                        }
                        // Deleted since: create again.
                        None => self.conflicted(index, id, &mut tries).await?,
                    }
                }
                Err(e) if e.is_transient() => self.unknown(index, id, &mut tries, &e).await?,
                Err(e) if tries.unknown > 0 => {
                    return Err(Error::GaveUp {
                        index: index.to_string(),
                        id: id.to_string(),
                        attempts: tries.requests,
                        last: e.to_string(),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Claims the transaction `on`: `Ok(None)` once a claim write is known to
    /// have succeeded, `Ok(Some(reason))` when it is no longer pending.
    async fn claim(&self, on: ClaimOn<'_>, tries: &mut Tries) -> Result<Option<NoopReason>> {
        loop {
            let doc = self.read("transaction", on.index, on.id, tries).await?;
            let changes = match (on.decide)(on.id, &doc.source)? {
                DocDecision::Noop(reason) => return Ok(Some(reason)),
                DocDecision::Write(changes, _) => changes,
            };
            tries.requests += 1;
            match self.put(on.index, on.id, &changes, &doc).await {
                Ok(WriteOutcome::Written { .. }) => return Ok(None),
                Ok(WriteOutcome::Conflict) => self.conflicted(on.index, on.id, tries).await?,
                // Only a claim whose success we saw counts: claim again.
                Err(e) if e.is_transient() => self.unknown(on.index, on.id, tries, &e).await?,
                Err(e) => return Err(e),
            }
        }
    }

    /// Realtime read (see [`Self::read_if_exists`] for its retries).
    async fn read(
        &self,
        kind: &'static str,
        index: &str,
        id: &str,
        tries: &mut Tries,
    ) -> Result<VersionedDoc> {
        self.read_if_exists(index, id, tries)
            .await?
            .ok_or_else(|| Error::NotFound {
                kind,
                index: index.to_string(),
                id: id.to_string(),
            })
    }

    /// Realtime read, `None` when the document does not exist. The transport
    /// has retried a busy or silent cluster for its whole read budget: a
    /// read still failing gives up here at once (re-reading would multiply
    /// that budget by the policy, minutes before a step is reported).
    /// Without a read budget (`--retry-budget 0`) the policy's re-reads are
    /// the only retries.
    async fn read_if_exists(
        &self,
        index: &str,
        id: &str,
        tries: &mut Tries,
    ) -> Result<Option<VersionedDoc>> {
        loop {
            tries.requests += 1;
            match self.cluster.get(index, id).await {
                Err(e) if e.is_transient() && !self.cluster.read_budget().is_zero() => {
                    return Err(Error::GaveUp {
                        index: index.to_string(),
                        id: id.to_string(),
                        attempts: tries.requests,
                        last: e.to_string(),
                    })
                }
                Err(e) if e.is_transient() => self.unknown(index, id, tries, &e).await?,
                other => return other,
            }
        }
    }

    async fn conflicted(&self, index: &str, id: &str, tries: &mut Tries) -> Result<()> {
        tries.conflicts += 1;
        if tries.conflicts > self.policy.max_conflicts {
            return Err(Error::GaveUp {
                index: index.to_string(),
                id: id.to_string(),
                attempts: tries.conflicts,
                last: "version conflicts".into(),
            });
        }
        tokio::time::sleep(jitter(tries.conflicts.min(8))).await;
        Ok(())
    }

    /// An unknown outcome (or a throttle, counted apart: see
    /// [`RetryPolicy::max_throttled`]): waits, then the caller re-reads.
    async fn unknown(&self, index: &str, id: &str, tries: &mut Tries, e: &Error) -> Result<()> {
        let (count, limit) = if e.is_throttle() {
            tries.throttled += 1;
            (tries.throttled, self.policy.max_throttled)
        } else {
            tries.unknown += 1;
            (tries.unknown, self.policy.max_unknown)
        };
        if count > limit {
            return Err(Error::GaveUp {
                index: index.to_string(),
                id: id.to_string(),
                attempts: count,
                last: e.to_string(),
            });
        }
        tracing::warn!(%index, %id, attempt = count, error = %e, "unknown outcome; re-reading");
        let factor = 1u32 << (count - 1).min(6);
        let wait = (self.policy.base_backoff * factor).min(Duration::from_secs(2));
        // A throttled answer's `Retry-After` is honoured, within bounds;
        // without one, a throttle waits as a read does (exponential, jitter).
        let wait = match e.retry_after() {
            Some(asked) => asked.min(crate::cluster::MAX_RETRY_WAIT).max(wait),
            None if e.is_throttle() => crate::cluster::jittered(count).max(wait),
            None => wait,
        };
        tokio::time::sleep(wait).await;
        Ok(())
    }
}

/// The `(_seq_no, _primary_term)` a write on `doc` is conditional on.
fn at(doc: &VersionedDoc) -> (i64, i64) {
    (doc.seq_no, doc.primary_term)
}

fn noop(source: Map<String, Value>, reason: NoopReason, tries: &Tries) -> Executed {
    Executed {
        outcome: StepOutcome::Noop(reason),
        after: source,
        requests: tries.requests,
        landing: None,
    }
}

/// A few milliseconds of random wait so two processes in conflict stop
/// colliding in lockstep.
fn jitter(scale: u32) -> Duration {
    let ms = rand::random_range(0..=(2 * scale as u64));
    Duration::from_millis(ms)
}
