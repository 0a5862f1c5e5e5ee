//! A bulk act rehearsed on a copy (issue 31, item 3; `--rehearse`): what a
//! rollback or recovery over a selection would do, found by doing it
//! somewhere it costs nothing.
//!
//! The selection is read from the real cluster, read only (the act's
//! preview: [`Act::preview`], without the pre-flight update a real preview
//! asks). The transactions it selected, the accounts they name, the locks
//! they hold and, for `recover --all-stuck`, the locks its sweep would
//! release with their owners are copied, `_source` as stored (timestamps
//! untouched), into indices made with the mappings discovery found, on a
//! cluster the caller started for the purpose (the CLI starts the demo's
//! local `osmem-server`; this module starts no process). The same act then
//! runs there through the same [`Intervention`], executor and trail (its
//! record in the copy's own audit index), and the copy's receipts are
//! verified as `audit --receipts` verifies them. The plan rehearsed is
//! sealed as `--plan-out` seals it ([`Rehearsal::plan`]): its hash names
//! what was rehearsed, and the file `apply` runs it.
//!
//! The copy's documents get new `_seq_no`s: the run re-plans every
//! transaction on the copy, as a real run re-reads before each step. Times
//! are judged by the real cluster's clock: the copy's handle borrows it
//! ([`Cluster::with_clock_of`]), so "stuck" and the recovery window mean on
//! the copy what they mean on the cluster.

use super::bulk::{BulkAct, SelectionPlan, Stop};
use super::plan_apply::plan_file;
use super::plan_file::PlanFile;
use super::run::{start, NotStarted};
use super::{Act, BulkDone, Done, Intervention};
use crate::cluster::Cluster;
use crate::error::Error;
use crate::protocol::account::AccountState;
use crate::protocol::read::IndexInfo;
use crate::protocol::report::{StepResult, RELEASE_LOCK};
use crate::protocol::setup::index_bodies;
use crate::protocol::trail::receipts::{verify_since, Verification};
use crate::protocol::{Protocol, ProtocolConfig};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// The reason the copy's record gives when the operator gave none (a
/// rehearsal writes nothing real, so it asks for none).
pub const REHEARSAL_REASON: &str = "rehearsal";

/// Why a rehearsal did not come to its report.
#[derive(Debug, thiserror::Error)]
pub enum RehearsalError {
    /// Reading the selection, its documents or the mappings from the real
    /// cluster failed.
    #[error("cannot read the selection from the cluster: {0}")]
    Read(Error),
    /// Making the indices or writing the documents of the copy failed.
    #[error("cannot copy the selection into the rehearsal server: {0}")]
    Copy(Error),
    /// The act did not start on the copy (nothing ran there).
    #[error("the act did not start on the copy: {0}")]
    NotStarted(NotStarted),
    /// Reading the copy's balances or audit record after the run failed.
    #[error("cannot read the copy after the run: {0}")]
    After(Error),
}

/// The documents a rehearsal copies, by id, each list without repeats
/// (transactions in selection order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopySet {
    /// The selected transactions, then the owners of the locks the closing
    /// sweep would release (terminal or missing: the sweep judges them).
    pub transactions: Vec<String>,
    /// The accounts the selected transactions name.
    pub accounts: Vec<String>,
    /// The locks the selected transactions hold, then those the sweep
    /// would release.
    pub locks: Vec<String>,
}

impl CopySet {
    /// What to copy for the previewed `plan` (its items re-read with their
    /// accounts and locks, and its sweep): pure.
    pub fn of(plan: &SelectionPlan) -> CopySet {
        let mut set = CopySet::default();
        let push = |list: &mut Vec<String>, id: &str| {
            if !list.iter().any(|x| x == id) {
                list.push(id.to_string());
            }
        };
        for t in &plan.selected.transactions {
            push(&mut set.transactions, &t.id);
        }
        for item in &plan.items {
            let d = &item.detail;
            push(&mut set.transactions, &d.txn.id);
            for a in &d.accounts {
                push(&mut set.accounts, &a.id);
            }
            for l in &d.locks {
                push(&mut set.locks, &l.info.resource);
            }
        }
        for l in &plan.sweep {
            push(&mut set.locks, &l.info.resource);
            if let Some(owner) = &l.info.owner {
                push(&mut set.transactions, owner);
            }
        }
        set
    }
}

/// How many documents of each kind the copy holds (what was found of the
/// [`CopySet`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Copied {
    /// Transactions.
    pub transactions: usize,
    /// Accounts.
    pub accounts: usize,
    /// Locks.
    pub locks: usize,
}

/// The balances of the copied accounts summed, before and after the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct BalanceSums {
    /// Accounts summed (those whose balance reads).
    pub accounts: usize,
    /// Before the run.
    pub before: i64,
    /// After the run.
    pub after: i64,
}

impl BalanceSums {
    /// After minus before: money the run would create (positive) or
    /// destroy (negative) over these accounts; zero when it conserves it.
    pub fn net_effect(&self) -> i64 {
        self.after - self.before
    }
}

/// What a rehearsal found: the copy's run and its audit.
#[derive(Debug)]
pub struct Rehearsal {
    /// The transactions the selection resolved to on the real cluster.
    pub selected: usize,
    /// The plan rehearsed, sealed as `--plan-out` seals it (its hash is
    /// what the rehearsal prints; `apply` runs exactly it).
    pub plan: PlanFile,
    /// What was copied.
    pub copied: Copied,
    /// The act's run on the copy, with its record there.
    pub done: Done<BulkDone>,
    /// The copied accounts' balances before and after.
    pub balances: BalanceSums,
    /// The copy's audit records' receipts verified.
    pub receipts: Verification,
    /// How long the run took on the copy: an estimate of the real run's
    /// time, not a measure of it (latency and load differ).
    pub elapsed: Duration,
    /// What the copy could not reproduce, in words (e.g. heartbeats of lock
    /// holders not copied).
    pub notes: Vec<String>,
}

impl Rehearsal {
    /// The locks the copy's run released: each transaction's own after its
    /// steps, and the closing sweep's (what a dry run counts as
    /// `releases N locks`).
    pub fn locks_released(&self) -> usize {
        let v = &self.done.value;
        let own = v
            .reports
            .iter()
            .flat_map(|r| &r.steps)
            .filter(|s| s.label == RELEASE_LOCK && matches!(s.result, StepResult::Updated(_)))
            .count();
        own + v.swept.iter().filter(|s| s.outcome.released()).count()
    }

    /// The transactions the copy's run acted on or refused, plus those it
    /// left out or did not start: what the selection resolved to there.
    pub fn selected_on_copy(&self) -> usize {
        let v = &self.done.value;
        v.reports.len() + v.not_started.len()
    }
}

/// Rehearses `i` (its act read from `real`) on the empty cluster `copy`:
/// copies what it selects, runs it there and audits the copy. Writes
/// nothing to `real`.
pub async fn rehearse(
    real: &Protocol,
    copy: Cluster,
    i: Intervention<BulkAct>,
) -> Result<Rehearsal, RehearsalError> {
    let plan = i.act.preview(real).await.map_err(RehearsalError::Read)?;
    let sealed = plan_file(real, &plan).await.map_err(RehearsalError::Read)?;
    let set = CopySet::of(&plan);
    let copy = copy.with_clock_of(real.cluster());
    let config = copy_config(real.config());
    let mut notes = Vec::new();
    if real.config().liveness.is_some() {
        notes.push(
            "lock holders' heartbeats are not copied: locks held by processes are judged \
             unknown on the copy (and not released)"
                .to_string(),
        );
    }
    let copied = copy_selection(real, &copy, &config, &set).await?;
    let cp = Protocol::new(copy, config);
    let before = balances(&cp, &set.accounts).await?;
    let mut i = i;
    if i.choices.reason_text().is_none() {
        i.choices.reason = Some(REHEARSAL_REASON.to_string());
    }
    let started = start(&cp, i).await.map_err(RehearsalError::NotStarted)?;
    let t0 = Instant::now();
    let done = started.run_bulk(&cp, &Stop::default(), |_| {}).await;
    let elapsed = t0.elapsed();
    let after = balances(&cp, &set.accounts).await?;
    cp.cluster()
        .refresh(&cp.config().indices.audit)
        .await
        .map_err(RehearsalError::After)?;
    let receipts = verify_since(&cp, None)
        .await
        .map_err(RehearsalError::After)?;
    Ok(Rehearsal {
        selected: plan.selected.transactions.len(),
        plan: sealed,
        copied,
        done,
        balances: BalanceSums {
            accounts: before.0,
            before: before.1,
            after: after.1,
        },
        receipts,
        elapsed,
        notes,
    })
}

/// Copies `set` from `real` into `copy`, each `_source` as stored (the
/// schema map not applied), into indices made with the mappings discovery
/// found, and makes it visible to search.
async fn copy_selection(
    real: &Protocol,
    copy: &Cluster,
    config: &ProtocolConfig,
    set: &CopySet,
) -> Result<Copied, RehearsalError> {
    let discovery = real.discovery().await.map_err(RehearsalError::Read)?;
    let found = [
        &discovery.transactions,
        &discovery.accounts,
        &discovery.locks,
    ];
    make_indices(copy, config, found).await?;
    let ix = &config.indices;
    let from = real.cluster().clone().with_boundary(None);
    let to = copy.clone().with_boundary(None);
    let has_locks = discovery.locks.exists();
    let locks = if has_locks { &set.locks[..] } else { &[] };
    let copied = Copied {
        transactions: copy_docs(&from, &to, &ix.transactions, &set.transactions).await?,
        accounts: copy_docs(&from, &to, &ix.accounts, &set.accounts).await?,
        locks: copy_docs(&from, &to, &ix.locks, locks).await?,
    };
    for index in [&ix.transactions, &ix.accounts, &ix.locks] {
        if index != &ix.locks || has_locks {
            to.refresh(index).await.map_err(RehearsalError::Copy)?;
        }
    }
    Ok(copied)
}

/// The real settings for the copy: its record into the copy's own audit
/// index (never a file), no production guard (nothing real is written),
/// no heartbeat index (not copied).
fn copy_config(real: &ProtocolConfig) -> ProtocolConfig {
    ProtocolConfig {
        audit_file: None,
        production: false,
        liveness: None,
        ..real.clone()
    }
}

/// Makes the copy's indices: the three with their mappings as discovered
/// (a locks index only where the cluster has one), the audit index with
/// the tool's own.
async fn make_indices(
    copy: &Cluster,
    config: &ProtocolConfig,
    found: [&IndexInfo; 3],
) -> Result<(), RehearsalError> {
    let ix = &config.indices;
    let names = [&ix.transactions, &ix.accounts, &ix.locks];
    for (name, info) in names.into_iter().zip(found) {
        if info.exists() {
            copy.create_index(name, mapping_body(info))
                .await
                .map_err(RehearsalError::Copy)?;
        }
    }
    let bodies = index_bodies(ix, &config.schema).map_err(RehearsalError::Copy)?;
    if let Some((name, body)) = bodies.into_iter().find(|(n, _)| n == &ix.audit) {
        copy.create_index(&name, body)
            .await
            .map_err(RehearsalError::Copy)?;
    }
    Ok(())
}

/// An index-creation body with the mapping discovery found: its root's
/// `dynamic` and `properties`.
pub fn mapping_body(info: &IndexInfo) -> Value {
    let dynamic = match info.dynamic.as_str() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        other => Value::String(other.to_string()),
    };
    json!({"mappings": {"dynamic": dynamic, "properties": Value::Object(info.properties.clone())}})
}

/// Copies the documents `ids` of `index` as stored (`_source` untouched,
/// read realtime) from `from` into `to`; returns how many were found.
async fn copy_docs(
    from: &Cluster,
    to: &Cluster,
    index: &str,
    ids: &[String],
) -> Result<usize, RehearsalError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let found = from.mget(index, ids).await.map_err(RehearsalError::Read)?;
    let docs: Vec<(String, Value)> = found
        .into_iter()
        .flatten()
        .map(|d| (d.id, Value::Object(d.source)))
        .collect();
    if !docs.is_empty() {
        to.bulk_index(index, &docs)
            .await
            .map_err(RehearsalError::Copy)?;
    }
    Ok(docs.len())
}

/// How many of the copy's `accounts` have a balance, and their sum.
async fn balances(cp: &Protocol, accounts: &[String]) -> Result<(usize, i64), RehearsalError> {
    if accounts.is_empty() {
        return Ok((0, 0));
    }
    let index = &cp.config().indices.accounts;
    let docs = cp
        .cluster()
        .mget(index, accounts)
        .await
        .map_err(RehearsalError::After)?;
    Ok(sum_balances(docs.iter().flatten().map(|d| &d.source)))
}

/// How many of `sources` have a readable balance, and their sum: pure.
fn sum_balances<'a>(sources: impl Iterator<Item = &'a Map<String, Value>>) -> (usize, i64) {
    sources
        .filter_map(|s| AccountState::from_source(s).ok())
        .fold((0, 0), |(n, sum), a| (n + 1, sum + a.balance))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_balance_that_does_not_read_is_not_summed() {
        let good = json!({"balance": 70, "pending_transactions": []});
        let bad = json!({"balance": "seventy"});
        let docs: Vec<Map<String, Value>> = [good.clone(), bad, good]
            .into_iter()
            .filter_map(|v| v.as_object().cloned())
            .collect();
        assert_eq!(sum_balances(docs.iter()), (2, 140));
    }

    #[test]
    fn the_net_effect_is_after_minus_before() {
        let b = BalanceSums {
            accounts: 2,
            before: 2000,
            after: 1990,
        };
        assert_eq!(b.net_effect(), -10);
    }

    #[test]
    fn the_copy_takes_the_mapping_as_discovered() {
        let mut info = IndexInfo::assumed("txns");
        info.dynamic = "strict".into();
        info.properties
            .insert("amount".into(), json!({"type": "long"}));
        let body = mapping_body(&info);
        assert_eq!(body["mappings"]["dynamic"], "strict");
        assert_eq!(body["mappings"]["properties"]["amount"]["type"], "long");
        info.dynamic = "true".into();
        assert_eq!(mapping_body(&info)["mappings"]["dynamic"], json!(true));
    }

    #[test]
    fn the_copy_never_records_into_a_file_nor_asks_production_confirmation() {
        let real = ProtocolConfig {
            audit_file: Some("/tmp/trail.jsonl".into()),
            production: true,
            ..ProtocolConfig::default()
        };
        let c = copy_config(&real);
        assert_eq!(c.audit_file, None);
        assert!(!c.production);
        assert_eq!(c.indices, real.indices);
        assert_eq!(c.recovery_window, real.recovery_window);
    }
}
