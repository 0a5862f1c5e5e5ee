//! Lock procedures: acquire with `op_type=create` (a 409 means held),
//! release only by the owner with a delete conditional on the `_seq_no` read
//! when ownership was checked, forced release by an operator, and staleness
//! (owner transaction terminal or missing, or lease expired).

use super::lock::{LockInfo, Owner, Staleness};
use super::report::{ProcedureReport, StepResult, Verdict};
use super::steps::{Refusal, Step};
use super::time::format_timestamp;
use super::transaction::{Transaction, Transfer, TxnState};
use super::Protocol;
use crate::cluster::{CreateOutcome, DeleteOutcome, VersionedDoc};
use crate::error::Result;
use chrono::Utc;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// Outcome of trying to take a lock.
#[derive(Debug, Clone, PartialEq)]
pub enum AcquireOutcome {
    /// The lock document was created for us (or already was ours).
    Acquired,
    /// Someone else holds it.
    Held(LockInfo),
}

/// Outcome of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseOutcome {
    /// Deleted.
    Released,
    /// There was no lock.
    NotHeld,
    /// Not released, and why (not the owner, not stale, changed meanwhile).
    Refused(String),
}

/// A lock with what is known of its holder.
#[derive(Debug, Clone, PartialEq)]
pub struct LockView {
    /// The lock document.
    pub info: LockInfo,
    /// State of the owner transaction (`None`: no owner, or owner missing).
    pub owner_state: Option<TxnState>,
    /// Whether it can be presumed abandoned.
    pub staleness: Staleness,
}

impl LockView {
    /// Judges a lock given what was found of owner transactions: a missing
    /// key means no such document, a `None` value a document with no
    /// readable state.
    pub fn judge(
        info: LockInfo,
        owners: &HashMap<String, Option<TxnState>>,
        now: chrono::DateTime<Utc>,
    ) -> LockView {
        let found = info.owner.as_ref().and_then(|o| owners.get(o));
        let staleness = info.staleness(Owner::from_lookup(found.map(Option::as_ref)), now);
        let owner_state = found.cloned().flatten();
        LockView {
            info,
            owner_state,
            staleness,
        }
    }
}

/// How many times a release re-reads after the lock changed under it.
const RELEASE_ATTEMPTS: usize = 5;

impl Protocol {
    /// Tries once to take the lock on `resource` for transaction `owner`.
    pub async fn acquire_lock(&self, resource: &str, owner: &str) -> Result<AcquireOutcome> {
        // The lease is judged by other processes: stamp it on the cluster's clock.
        self.cluster().sync_clock().await;
        let now = self.cluster().now();
        let lease =
            chrono::Duration::from_std(self.config.lock_lease).unwrap_or(chrono::Duration::MAX);
        let doc = json!({
            "owner": owner,
            "process_id": self.holder,
            "created_at": format_timestamp(now),
            "expires_at": format_timestamp(now + lease),
        });
        let doc = doc.as_object().cloned().unwrap_or_default();
        let index = &self.config.indices.locks;
        let outcome = match self.cluster().create(index, resource, &doc).await {
            Ok(o) => o,
            // Unknown outcome: the read below tells whether it is ours.
            Err(e) if e.is_transient() => CreateOutcome::AlreadyExists,
            Err(e) => return Err(e),
        };
        match outcome {
            CreateOutcome::Created => Ok(AcquireOutcome::Acquired),
            CreateOutcome::AlreadyExists => match self.cluster().get(index, resource).await? {
                Some(d) => {
                    let info = LockInfo::from_source(resource, &d.source);
                    if info.owner.as_deref() == Some(owner) {
                        Ok(AcquireOutcome::Acquired)
                    } else {
                        Ok(AcquireOutcome::Held(info))
                    }
                }
                // Released between our create and our read: try again later.
                None => Ok(AcquireOutcome::Held(LockInfo::from_source(
                    resource,
                    &Default::default(),
                ))),
            },
        }
    }

    /// Takes the locks on both accounts of `t`, in a fixed (sorted) order so
    /// two transfers never wait on each other in a cycle. On failure, releases
    /// what it took and rolls the still-`created` transaction back.
    pub(crate) async fn lock_for_transfer(
        &self,
        t: &Transfer,
        report: &mut ProcedureReport,
    ) -> std::result::Result<(), Verdict> {
        let resources: BTreeSet<&str> = [t.src.as_str(), t.dest.as_str()].into_iter().collect();
        let deadline = Instant::now() + self.config.lock_wait;
        let mut taken: Vec<&str> = Vec::new();
        for resource in resources {
            let target = format!("{}/{resource}", self.config.indices.locks);
            loop {
                match self.acquire_lock(resource, &t.id).await {
                    Ok(AcquireOutcome::Acquired) => {
                        self.record(
                            report,
                            t,
                            None,
                            "acquire lock",
                            target.clone(),
                            StepResult::Updated(super::decide::Effect::LockAcquired),
                        );
                        taken.push(resource);
                        break;
                    }
                    Ok(AcquireOutcome::Held(info)) if Instant::now() < deadline => {
                        tracing::debug!(resource, holder = %info.holder_label(), "lock held; waiting");
                        tokio::time::sleep(Duration::from_millis(rand::random_range(10..60))).await;
                    }
                    Ok(AcquireOutcome::Held(info)) => {
                        self.abandon_transfer(t, &taken, report).await;
                        return Err(Verdict::Refused(Refusal::LockHeld {
                            resource: resource.to_string(),
                            holder: info.holder_label(),
                        }));
                    }
                    Err(e) => {
                        self.abandon_transfer(t, &taken, report).await;
                        return Err(Verdict::Failed(e));
                    }
                }
            }
        }
        Ok(())
    }

    async fn abandon_transfer(&self, t: &Transfer, taken: &[&str], report: &mut ProcedureReport) {
        for resource in taken {
            let result = match self.release_owned(resource, &t.id).await {
                Ok(o) => release_result(&o),
                Err(e) => StepResult::Error(e.to_string()),
            };
            self.record(
                report,
                t,
                None,
                "release lock",
                format!("{}/{resource}", self.config.indices.locks),
                result,
            );
        }
        let result = match self.run_step(t, Step::CancelCreated).await {
            Ok(ex) => StepResult::from(&ex.outcome),
            Err(e) => StepResult::Error(e.to_string()),
        };
        self.record(
            report,
            t,
            Some(Step::CancelCreated),
            Step::CancelCreated.label(),
            format!("{}/{}", self.config.indices.transactions, t.id),
            result,
        );
    }

    /// Releases the locks a finished or rolled-back transfer holds on its two
    /// accounts (transfers lock exactly those). Best effort, reported per lock.
    pub(crate) async fn release_transfer_locks(&self, t: &Transfer, report: &mut ProcedureReport) {
        let resources: BTreeSet<&str> = [t.src.as_str(), t.dest.as_str()].into_iter().collect();
        for resource in resources {
            match self.release_owned(resource, &t.id).await {
                Ok(ReleaseOutcome::NotHeld) | Ok(ReleaseOutcome::Refused(_)) => {}
                Ok(o) => {
                    let target = format!("{}/{resource}", self.config.indices.locks);
                    self.record(report, t, None, "release lock", target, release_result(&o));
                }
                Err(crate::Error::IndexMissing(_)) => return,
                Err(e) => {
                    let target = format!("{}/{resource}", self.config.indices.locks);
                    self.record(
                        report,
                        t,
                        None,
                        "release lock",
                        target,
                        StepResult::Error(e.to_string()),
                    );
                }
            }
        }
    }

    /// Releases `resource` if (and only if) transaction `owner` holds it. The
    /// delete is conditional on the `_seq_no` read when ownership was checked,
    /// so a lock re-taken meanwhile by someone else is never deleted.
    pub async fn release_owned(&self, resource: &str, owner: &str) -> Result<ReleaseOutcome> {
        self.release_checked(resource, |info, _| {
            if info.owner.as_deref() == Some(owner) {
                Ok(())
            } else {
                Err(format!("held by {}, not by `{owner}`", info.holder_label()))
            }
        })
        .await
    }

    /// Operator release of `resource`: without `force`, only a stale lock.
    pub async fn release_lock(&self, resource: &str, force: bool) -> Result<ReleaseOutcome> {
        let Some(view) = self.lock_view(resource).await? else {
            return Ok(ReleaseOutcome::NotHeld);
        };
        if !force && !view.staleness.is_stale() {
            return Ok(ReleaseOutcome::Refused(refusal_text(&view)));
        }
        let expected = view.info.clone();
        self.release_checked(resource, |info, _| {
            if *info == expected {
                Ok(())
            } else {
                Err("the lock changed while it was being checked; look again".into())
            }
        })
        .await
    }

    /// Operator release of every lock owned by transaction `txn`: those found
    /// by a search on `owner` plus the transaction's two accounts (read by id,
    /// so a lock not yet searchable is not missed). Without `force`, only when
    /// they are stale (the transaction terminal or missing, or lease expired).
    pub async fn release_transaction_locks(
        &self,
        txn: &str,
        force: bool,
    ) -> Result<Vec<(String, ReleaseOutcome)>> {
        let mut resources: BTreeSet<String> = BTreeSet::new();
        if let Some((t, _)) = self.read_transaction(txn).await? {
            resources.extend(t.src.clone());
            resources.extend(t.dest.clone());
        }
        let query = json!({"query": {"bool": {"should": [
            {"term": {"owner": txn}}, {"term": {"owner.keyword": txn}}
        ], "minimum_should_match": 1}}, "_source": false});
        match self.cluster().scan(&self.config.indices.locks, query).await {
            Ok(hits) => resources.extend(hits.into_iter().map(|h| h.id)),
            Err(crate::Error::IndexMissing(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        }
        let mut out = Vec::new();
        for resource in resources {
            let Some(view) = self.lock_view(&resource).await? else {
                continue;
            };
            if view.info.owner.as_deref() != Some(txn) {
                continue;
            }
            let outcome = if !force && !view.staleness.is_stale() {
                ReleaseOutcome::Refused(refusal_text(&view))
            } else {
                self.release_owned(&resource, txn).await?
            };
            out.push((resource, outcome));
        }
        Ok(out)
    }

    /// One lock with its owner's state and staleness.
    pub async fn lock_view(&self, resource: &str) -> Result<Option<LockView>> {
        let Some(doc) = self
            .cluster()
            .get(&self.config.indices.locks, resource)
            .await?
        else {
            return Ok(None);
        };
        let info = LockInfo::from_source(resource, &doc.source);
        let found: Option<Option<TxnState>> = match &info.owner {
            Some(o) => self.read_transaction(o).await?.map(|(t, _)| t.state),
            None => None,
        };
        let staleness = info.staleness(
            Owner::from_lookup(found.as_ref().map(Option::as_ref)),
            self.cluster().now(),
        );
        let owner_state = found.flatten();
        Ok(Some(LockView {
            info,
            owner_state,
            staleness,
        }))
    }

    /// Every lock, oldest first, with staleness (one scan plus one multi-get).
    pub async fn list_locks(&self) -> Result<Vec<LockView>> {
        let hits = self
            .cluster()
            .scan(
                &self.config.indices.locks,
                json!({"query": {"match_all": {}}}),
            )
            .await?;
        let infos: Vec<LockInfo> = hits
            .iter()
            .map(|h| LockInfo::from_source(&h.id, &h.source))
            .collect();
        let owners: Vec<String> = infos
            .iter()
            .filter_map(|i| i.owner.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let docs = self
            .cluster()
            .mget(&self.config.indices.transactions, &owners)
            .await;
        let states: HashMap<String, Option<TxnState>> = match docs {
            Ok(docs) => owners
                .iter()
                .zip(docs)
                .filter_map(|(id, d)| {
                    let d = d?;
                    Some((id.clone(), Transaction::from_source(id, &d.source).state))
                })
                .collect(),
            Err(crate::Error::IndexMissing(_)) => HashMap::new(),
            Err(e) => return Err(e),
        };
        let now = self.cluster().now();
        let mut views: Vec<LockView> = infos
            .into_iter()
            .map(|info| LockView::judge(info, &states, now))
            .collect();
        views.sort_by_key(|v| v.info.created_at);
        Ok(views)
    }

    async fn release_checked<F>(&self, resource: &str, mut allowed: F) -> Result<ReleaseOutcome>
    where
        F: FnMut(&LockInfo, &VersionedDoc) -> std::result::Result<(), String>,
    {
        let index = &self.config.indices.locks;
        for _ in 0..RELEASE_ATTEMPTS {
            let Some(doc) = self.cluster().get(index, resource).await? else {
                return Ok(ReleaseOutcome::NotHeld);
            };
            let info = LockInfo::from_source(resource, &doc.source);
            if let Err(why) = allowed(&info, &doc) {
                return Ok(ReleaseOutcome::Refused(why));
            }
            match self
                .cluster()
                .delete_if(index, resource, doc.seq_no, doc.primary_term)
                .await
            {
                Ok(DeleteOutcome::Deleted) => return Ok(ReleaseOutcome::Released),
                Ok(DeleteOutcome::NotFound) => return Ok(ReleaseOutcome::NotHeld),
                Ok(DeleteOutcome::Conflict) => continue,
                // Unknown outcome: the next read tells.
                Err(e) if e.is_transient() => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(ReleaseOutcome::Refused(
            "the lock kept changing; not released".into(),
        ))
    }
}

fn refusal_text(view: &LockView) -> String {
    let why = match &view.staleness {
        Staleness::Live => match (&view.info.owner, &view.owner_state) {
            (Some(o), Some(s)) => {
                format!("its owner transaction `{o}` is {s} and may still be running")
            }
            _ => "its holder may still be running".into(),
        },
        Staleness::Unknown(why) => why.clone(),
        Staleness::Stale(_) => String::new(),
    };
    format!(
        "lock on `{}` held by {} is not stale: {why}; use --force to release it anyway",
        view.info.resource,
        view.info.holder_label()
    )
}

fn release_result(o: &ReleaseOutcome) -> StepResult {
    match o {
        ReleaseOutcome::Released => StepResult::Updated(super::decide::Effect::LockReleased),
        ReleaseOutcome::NotHeld => StepResult::Noop(super::decide::NoopReason::LockNotHeld),
        ReleaseOutcome::Refused(why) => StepResult::Error(why.clone()),
    }
}

/// The lock's JSON for `locks --json`.
pub fn lock_json(v: &LockView, now: chrono::DateTime<Utc>) -> Value {
    json!({
        "resource": v.info.resource,
        "owner": v.info.owner,
        "process_id": v.info.process_id,
        "holder": v.info.holder_label(),
        "lock_type": v.info.lock_type,
        "lock_count": v.info.lock_count,
        "created_at": v.info.created_at.map(format_timestamp),
        "expires_at": v.info.expires_at.map(format_timestamp),
        "age_seconds": v.info.age_seconds(now),
        "owner_state": v.owner_state.as_ref().map(|s| s.as_str().to_string()),
        "stale": v.staleness.is_stale(),
        "staleness": match &v.staleness {
            Staleness::Live => "live".to_string(),
            Staleness::Stale(why) => format!("stale: {why}"),
            Staleness::Unknown(why) => format!("unknown: {why}"),
        },
        "problems": v.info.problems,
    })
}
