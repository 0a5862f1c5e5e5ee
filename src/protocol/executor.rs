//! The one optimistic-concurrency executor every step runs through.
//!
//! Read the document by id (realtime GET, with `_seq_no`/`_primary_term`),
//! decide with a pure function, write with `if_seq_no`/`if_primary_term`; on
//! a 409, read and decide again. A timeout or transport error leaves the
//! outcome unknown: read and decide again too, which is safe because every
//! decision is idempotent — and if the re-read shows exactly the document we
//! tried to write, the write was ours and is reported as `Updated`. After a
//! bounded number of unknown outcomes the step gives up, leaving the document
//! where it is for recovery, as the protocol prescribes.

use super::config::RetryPolicy;
use super::decide::{Effect, NoopReason};
use crate::cluster::{Cluster, WriteOutcome};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::time::Duration;

/// A decision over a whole JSON document.
pub enum DocDecision {
    /// Write this full source.
    Write(Map<String, Value>, Effect),
    /// Change nothing.
    Noop(NoopReason),
}

/// What a step did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The document was written (by this call).
    Updated(Effect),
    /// Nothing to do, and why.
    Noop(NoopReason),
}

/// The result of one executed step, with the document as seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    /// What happened.
    pub outcome: Outcome,
    /// The source the final decision was taken on.
    pub seen: Map<String, Value>,
    /// The source after the step (equal to `seen` for a no-op).
    pub after: Map<String, Value>,
    /// Requests made (reads and writes), for reports and benchmarks.
    pub requests: u32,
}

/// Runs decisions against one document with optimistic concurrency.
#[derive(Debug, Clone)]
pub struct Executor {
    cluster: Cluster,
    policy: RetryPolicy,
}

impl Executor {
    /// An executor over `cluster` with `policy`.
    pub fn new(cluster: Cluster, policy: RetryPolicy) -> Executor {
        Executor { cluster, policy }
    }

    /// The cluster it talks to.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
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
        mut decide: F,
    ) -> Result<Executed>
    where
        F: FnMut(&Map<String, Value>) -> Result<DocDecision>,
    {
        let mut unknown = 0u32;
        let mut conflicts = 0u32;
        let mut requests = 0u32;
        // The source of our last write whose outcome we never learned.
        let mut maybe_written: Option<(Map<String, Value>, Effect)> = None;
        loop {
            requests += 1;
            let doc = match self.cluster.get(index, id).await {
                Ok(Some(doc)) => doc,
                Ok(None) => {
                    return Err(Error::NotFound {
                        kind,
                        index: index.to_string(),
                        id: id.to_string(),
                    })
                }
                Err(e) if e.is_transient() => {
                    unknown += 1;
                    self.give_up_or_wait(index, id, unknown, &e).await?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if let Some((source, effect)) = maybe_written.take() {
                if source == doc.source {
                    return Ok(Executed {
                        outcome: Outcome::Updated(effect),
                        seen: doc.source.clone(),
                        after: doc.source,
                        requests,
                    });
                }
            }
            match decide(&doc.source)? {
                DocDecision::Noop(reason) => {
                    return Ok(Executed {
                        outcome: Outcome::Noop(reason),
                        after: doc.source.clone(),
                        seen: doc.source,
                        requests,
                    })
                }
                DocDecision::Write(source, effect) => {
                    requests += 1;
                    match self
                        .cluster
                        .put_if(index, id, &source, doc.seq_no, doc.primary_term)
                        .await
                    {
                        Ok(WriteOutcome::Written { .. }) => {
                            return Ok(Executed {
                                outcome: Outcome::Updated(effect),
                                seen: doc.source,
                                after: source,
                                requests,
                            })
                        }
                        Ok(WriteOutcome::Conflict) => {
                            conflicts += 1;
                            if conflicts > self.policy.max_conflicts {
                                return Err(Error::GaveUp {
                                    index: index.to_string(),
                                    id: id.to_string(),
                                    attempts: conflicts,
                                    last: "version conflicts".into(),
                                });
                            }
                            tokio::time::sleep(jitter(conflicts.min(8))).await;
                        }
                        Err(e) if e.is_transient() => {
                            unknown += 1;
                            maybe_written = Some((source, effect));
                            self.give_up_or_wait(index, id, unknown, &e).await?;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    async fn give_up_or_wait(&self, index: &str, id: &str, unknown: u32, e: &Error) -> Result<()> {
        if unknown > self.policy.max_unknown {
            return Err(Error::GaveUp {
                index: index.to_string(),
                id: id.to_string(),
                attempts: unknown,
                last: e.to_string(),
            });
        }
        tracing::warn!(%index, %id, attempt = unknown, error = %e, "unknown outcome; re-reading");
        let factor = 1u32 << (unknown - 1).min(6);
        let wait = (self.policy.base_backoff * factor).min(Duration::from_secs(2));
        // A throttled answer's `Retry-After` is honoured, within bounds.
        let wait = e.retry_after().map_or(wait, |asked| {
            asked.min(crate::cluster::MAX_RETRY_WAIT).max(wait)
        });
        tokio::time::sleep(wait).await;
        Ok(())
    }
}

/// A few milliseconds of random wait so two processes in conflict stop
/// colliding in lockstep.
fn jitter(scale: u32) -> Duration {
    let ms = rand::random_range(0..=(2 * scale as u64));
    Duration::from_millis(ms)
}
