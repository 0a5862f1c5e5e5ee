//! Batched recovery: many stuck transactions moved forward together with
//! `_mget` reads and conditional `_bulk` writes, deciding every step with the
//! very functions one-at-a-time recovery uses ([`steps::account_step`],
//! [`steps::transition_doc`], [`steps::claim_doc`], [`steps::preflight`],
//! [`next_after`](steps::next_after)).
//!
//! # A round
//!
//! A round reads, then runs seven phases, each one `_bulk` sent after the
//! previous one's answer:
//!
//! 1. `_mget` every account a live transaction still has steps on (both of
//!    its accounts; instant T1, versions `a`);
//! 2. then `_mget` the live transactions (after T1);
//! 3. phases `txn, source, destination, txn, source, destination, txn`. A
//!    transaction phase writes the transition of every transaction at one
//!    and the **claim** of every transaction at an apply that would write
//!    (unless it is already claimed this round); a source (destination)
//!    phase folds the steps on the source (destination) side of their
//!    transactions, per account in batch order, on the round's knowledge of
//!    that account, and writes each account once, conditional on that
//!    version.
//!
//! What the round knows of a document is what it read, or, once it has
//! written it, the source it sent at the version the `_bulk` answer gives:
//! so a transaction read `created` runs begin (phase 1), apply source (2),
//! apply destination (3), commit (4), remove source (5), remove destination
//! (6) and finish (7) in one round, each step decided by the same pure
//! function on the document as it is after the steps before. A step whose
//! write conflicted or whose outcome is unknown stops its transaction for
//! the round (and forgets the account's version: the other steps on it
//! wait); the next round reads and decides again (a lost `_bulk` answer is
//! an unknown outcome for every item in it). A write whose answer was lost
//! is recognised on the re-read exactly as the [executor](super::executor)
//! does: the document holds the source we sent at a newer version than the
//! one it was conditional on.
//!
//! Writes per transaction read `created`: three transaction writes (begin,
//! commit, finish; the begin is the claim) and its share of at most four
//! writes per account and round; one at a time makes seven plus two claims.
//!
//! # Why batching changes no decision
//!
//! - **Same decisions.** Every step is decided by the same pure function on
//!   the document a realtime GET (`_mget` is one) returned, or on the
//!   document this round itself wrote since (the answer of a conditional
//!   write that succeeded says exactly what the document is at that
//!   version), and written conditionally on that version; the
//!   per-transaction plan, the refusals before any write (recovery window,
//!   unknown state, [`steps::preflight`] on both accounts) and the rule
//!   after each outcome ([`next_after`](steps::next_after)) are those of
//!   [`Protocol::recover`]. A step starts only after the previous step of
//!   its transaction ended, so each transaction runs its plan in order, and
//!   its source account is written before its destination (the audit's
//!   in-flight correction relies on that order, see `audit/view.rs`).
//! - **The fence holds per account write** (the argument of
//!   [`decide`](super::decide), with its claim generalised as it states):
//!   an apply is carried only when its transaction was claimed this round,
//!   by a claim or a begin (`created -> pending`) decided on the round's
//!   transaction read and seen to succeed. Either write proves, at the
//!   primary, that the transaction was `pending` at an instant T2 after the
//!   round read both accounts at T1, so one claim covers the applies on
//!   both. The account write is conditional on the version the round read
//!   at T1, or on the version of the round's own earlier write to that
//!   account, itself conditional (by induction) on the T1 read: if it lands
//!   (T3 > T2), nobody else wrote the account between T1 and T3. A claim
//!   that conflicted or whose answer was lost claims nothing; a begin
//!   recognised next round as having landed is no claim for that round
//!   (it may predate its account read): it claims again. Remove needs no
//!   claim; undo always writes (a fence-only undo is part of its account's
//!   write).
//! - **Several steps in one account write.** Steps of different
//!   transactions on one account touch different ids in
//!   `pending_transactions`/`pending_deltas`; folding them in sequence on the
//!   one document gives exactly the document sequential steps would produce
//!   had they run back to back, and the single conditional write lands all
//!   of them or none. An apply's or remove's or undo's decision depends only
//!   on whether the account carries its own id (and on checked balance
//!   arithmetic, re-checked on the fold actually written), so leaving an
//!   unclaimed apply out of the fold changes no other step's decision. A
//!   version bump by one write fences every apply read before it as well
//!   as several bumps would.
//! - **No fight inside a batch.** Transactions sharing an account are decided
//!   together against its one document, so a batch never conflicts with
//!   itself; conflicts only come from other processes, and are resolved by
//!   OCC.
//!
//! The model check runs this round's shape (read both accounts, then the
//! transaction; one conditional transaction write; then the account writes,
//! chained on the versions written) against one-at-a-time processes, with
//! late delivery and lost answers (tests/model_check).
//! The concurrency tests run this path against crashes, lost answers and a
//! fleet of one-at-a-time workers (tests/protocol/batch).

mod item;
mod phase;
mod round;

use super::locks::release::{release_owned_reported, release_transfer_locks};
use super::problem::{Problem, Problems};
use super::report::{ProcedureReport, Verdict};
use super::steps::{self, plan, Procedure};
use super::transaction::{Transaction, TxnState};
use super::{Protocol, RunLimits};
use crate::error::{Error, Result};
use futures::stream::{self, StreamExt};
use item::{Batch, Item, Release};
use round::{read_many, round};

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

/// Transactions per batch when nothing else is said.
pub const DEFAULT_BATCH_SIZE: usize = 5000;

/// How a batched recovery runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Transactions read and written together.
    pub batch_size: usize,
    /// Batches in flight at once.
    pub concurrency: usize,
    /// Act even on transactions modified within the recovery window.
    pub force: bool,
    /// Simulated crashes (tests): each transaction stops after this many steps.
    pub limits: RunLimits,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            batch_size: DEFAULT_BATCH_SIZE,
            concurrency: 1,
            force: false,
            limits: RunLimits::default(),
        }
    }
}

/// The stop flag of a batch nobody stops.
static NEVER: AtomicBool = AtomicBool::new(false);

impl Protocol {
    /// Recovers `ids` (duplicates counted once) in batches of
    /// `opts.batch_size`, `opts.concurrency` batches at a time. Each
    /// transaction gets the report [`Protocol::recover`] would give it.
    pub async fn recover_batched(
        &self,
        ids: &[String],
        opts: BatchOptions,
    ) -> Vec<ProcedureReport> {
        self.recover_batched_until(ids, opts, &NEVER).await
    }

    /// [`Protocol::recover_batched`], stopped between two writes once
    /// `stop` is set: the transactions not at their end then get a
    /// [`Verdict::Stopped`] and stay in the protocol state their last step
    /// left them in (recovery takes them from there, as after a crash).
    pub async fn recover_batched_until(
        &self,
        ids: &[String],
        opts: BatchOptions,
        stop: &AtomicBool,
    ) -> Vec<ProcedureReport> {
        let mut seen = HashSet::new();
        let ids: Vec<String> = ids
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect();
        let chunks: Vec<Vec<String>> = ids
            .chunks(opts.batch_size.max(1))
            .map(<[String]>::to_vec)
            .collect();
        stream::iter(chunks)
            .map(|chunk| async move { self.recover_chunk(&chunk, opts, stop).await })
            .buffer_unordered(opts.concurrency.max(1))
            .flat_map(stream::iter)
            .collect()
            .await
    }

    /// One batch: read, refuse what must be refused, run rounds until every
    /// transaction has a verdict, then release the locks of those that ended.
    async fn recover_chunk(
        &self,
        ids: &[String],
        opts: BatchOptions,
        stop: &AtomicBool,
    ) -> Vec<ProcedureReport> {
        let mut reports = Vec::new();
        let mut items = self.start(ids, opts.force, &mut reports).await;
        for it in &mut items {
            it.max_steps = opts.limits.max_steps;
        }
        self.check_batch_accounts(&mut items).await;
        // Before the batch's first write: the product must accept its
        // partial updates on every index it writes (`preflight`).
        if let Some(first) = items.iter().find(|it| !it.done) {
            if let Err(e) = self.check_partial_updates(&first.t).await {
                for mut it in items {
                    if !it.done {
                        it.report.verdict = Verdict::Failed(e.clone());
                    }
                    reports.push(it.report);
                }
                return reports;
            }
        }
        let mut batch = Batch {
            items,
            unsure_accounts: HashMap::new(),
            stop,
        };
        loop {
            for it in &mut batch.items {
                it.crash_if_due();
            }
            if batch.items.iter().all(|it| it.step().is_none()) {
                break;
            }
            if stop.load(Ordering::SeqCst) {
                for it in &mut batch.items {
                    it.stop_here();
                }
                break;
            }
            round(self, &mut batch).await;
        }
        self.release_ended(&mut batch.items).await;
        reports.extend(batch.items.into_iter().map(|it| it.report));
        reports
    }

    /// Reads the batch's transactions and plans each one as
    /// [`Protocol::run_procedure`] does; those that will not run get their
    /// report in `reports` at once.
    async fn start(
        &self,
        ids: &[String],
        force: bool,
        reports: &mut Vec<ProcedureReport>,
    ) -> Vec<Item> {
        let txn_ix = &self.config.indices.transactions;
        let docs = match self.read_retrying(txn_ix, ids).await {
            Ok(docs) => docs,
            Err(e) => {
                for id in ids {
                    let mut report = ProcedureReport::new(id);
                    report.verdict = Verdict::Failed(e.clone());
                    reports.push(report);
                }
                return Vec::new();
            }
        };
        let mut items = Vec::new();
        self.sync_clock().await;
        for id in ids {
            let mut report = ProcedureReport::new(id);
            let Some(Some(doc)) = docs.get(id) else {
                report.verdict = Verdict::Failed(Error::NotFound {
                    kind: "transaction",
                    index: txn_ix.clone(),
                    id: id.clone(),
                });
                reports.push(report);
                continue;
            };
            let txn = self.parse_transaction(id, &doc.source);
            report.started_in = txn.state.clone();
            let planned = match self.check_actionable(&txn, force) {
                Ok(None) => Err(Verdict::NothingToDo(
                    txn.state.clone().unwrap_or(TxnState::Finished),
                )),
                Err(refusal) => Err(Verdict::Refused(refusal)),
                Ok(Some((state, t))) => match plan(Procedure::Recover, &state) {
                    Ok(steps) if steps.is_empty() => Err(Verdict::NothingToDo(state)),
                    Ok(steps) => Ok((state, t, steps)),
                    Err(refusal) => Err(Verdict::Refused(refusal)),
                },
            };
            match planned {
                Ok((state, t, steps)) => items.push(Item::new(t, report, state, steps)),
                Err(verdict) => {
                    report.verdict = verdict;
                    reports.push(report);
                }
            }
        }
        items
    }

    /// The checks [`Protocol::recover`] makes on both accounts before its
    /// first write (present, well-formed, [`steps::preflight`]), on one
    /// `_mget` of every account the batch names.
    async fn check_batch_accounts(&self, items: &mut [Item]) {
        let acct_ix = &self.config.indices.accounts;
        let mut ids = Vec::new();
        let mut seen = HashSet::new();
        for it in items.iter() {
            if it.todo.iter().any(|s| s.on_source().is_some()) {
                for a in [&it.t.src, &it.t.dest] {
                    if seen.insert(a.clone()) {
                        ids.push(a.clone());
                    }
                }
            }
        }
        let docs = match self.read_retrying(acct_ix, &ids).await {
            Ok(docs) => docs,
            Err(e) => {
                for it in items.iter_mut().filter(|it| seen.contains(&it.t.src)) {
                    it.report.verdict = Verdict::Failed(e.clone());
                    it.done = true;
                }
                return;
            }
        };
        for it in items.iter_mut() {
            if !it.todo.iter().any(|s| s.on_source().is_some()) {
                continue;
            }
            let state_of = |id: &String| match docs.get(id) {
                Some(Some(doc)) => self.parse_account(id, &doc.source),
                _ => Err(Error::NotFound {
                    kind: "account",
                    index: acct_ix.clone(),
                    id: id.clone(),
                }),
            };
            let todo: Vec<_> = it.todo.iter().copied().collect();
            let verdict = match (state_of(&it.t.src), state_of(&it.t.dest)) {
                (Err(e), _) | (_, Err(e)) => Some(match Problem::of_error(&e) {
                    Some(p) => {
                        Verdict::Refused(steps::ProcedureRefusal::Malformed(Problems::one(p)))
                    }
                    None => Verdict::Failed(e),
                }),
                (Ok(s), Ok(d)) => steps::preflight(&it.t, &todo, (&s, &d), self.config.fencing)
                    .err()
                    .map(Verdict::Refused),
            };
            if let Some(verdict) = verdict {
                it.report.verdict = verdict;
                it.done = true;
            }
        }
    }

    /// An `_mget` whose transient failures are retried once: by the
    /// transport within its read budget (a read still failing after it
    /// fails the batch's reads at once, as the single executor gives up its
    /// step: re-reading would multiply that budget by the policy, minutes
    /// before anything is reported), or, without a read budget
    /// (`--retry-budget 0`), by the policy's `max_unknown` re-reads.
    async fn read_retrying(
        &self,
        index: &str,
        ids: &[String],
    ) -> Result<HashMap<String, Option<crate::cluster::VersionedDoc>>> {
        let mut attempt = 0;
        let budgeted = !self.cluster().read_budget().is_zero();
        loop {
            match read_many(self, index, ids).await {
                Err(e)
                    if e.is_transient() && !budgeted && attempt < self.config.retry.max_unknown =>
                {
                    attempt += 1;
                    let factor = 1u32 << (attempt - 1).min(6);
                    let wait = (self.config.retry.base_backoff * factor)
                        .min(std::time::Duration::from_secs(2));
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    /// Releases the locks of every transaction of the batch that ended
    /// (or was found ended by another process), as one-at-a-time recovery
    /// does: one `_mget` of the lock documents, then a checked release of
    /// those held by one of these transactions, and one search by owner
    /// for the locks they hold on other resources.
    async fn release_ended(&self, items: &mut [Item]) {
        let recheck: Vec<String> = items
            .iter()
            .filter(|it| it.release == Release::IfTerminal)
            .map(|it| it.t.id.clone())
            .collect();
        if !recheck.is_empty() {
            let txn_ix = &self.config.indices.transactions;
            let now = read_many(self, txn_ix, &recheck).await.unwrap_or_default();
            for it in items
                .iter_mut()
                .filter(|it| it.release == Release::IfTerminal)
            {
                let ended = match now.get(&it.t.id) {
                    Some(Some(doc)) => Transaction::from_source(&it.t.id, &doc.source)
                        .state
                        .is_some_and(|s| s.is_terminal()),
                    _ => false,
                };
                it.release = if ended { Release::Yes } else { Release::No };
            }
        }
        let mut resources = Vec::new();
        let mut seen = HashSet::new();
        for it in items.iter().filter(|it| it.release == Release::Yes) {
            for r in [&it.t.src, &it.t.dest] {
                if seen.insert(r.clone()) {
                    resources.push(r.clone());
                }
            }
        }
        if resources.is_empty() {
            return;
        }
        let held: Option<HashMap<String, String>> =
            match read_many(self, &self.config.indices.locks, &resources).await {
                Err(Error::IndexMissing(_)) => return,
                Err(_) => None,
                Ok(docs) => Some(
                    docs.into_iter()
                        .filter_map(|(r, doc)| {
                            let doc = doc?;
                            let owner =
                                super::locks::LockInfo::from_source(&r, &doc.source).owner?;
                            Some((r, owner))
                        })
                        .collect(),
                ),
            };
        let owners: Vec<String> = items
            .iter()
            .filter(|it| it.release == Release::Yes)
            .map(|it| it.t.id.clone())
            .collect();
        // Locks on other resources (an invoice, an order), by owner: one
        // search for the batch; if it fails, each release searches itself.
        let elsewhere = self.locks_owned_by_any(&owners).await.ok();
        for it in items.iter_mut().filter(|it| it.release == Release::Yes) {
            let Some(elsewhere) = &elsewhere else {
                release_transfer_locks(self, &it.t, &mut it.report).await;
                continue;
            };
            let holds = |r: &String| held.as_ref().is_none_or(|h| h.get(r) == Some(&it.t.id));
            let mut resources: BTreeSet<String> = [&it.t.src, &it.t.dest]
                .into_iter()
                .filter(|r| holds(r))
                .cloned()
                .collect();
            resources.extend(elsewhere.get(&it.t.id).into_iter().flatten().cloned());
            if !resources.is_empty() {
                release_owned_reported(self, &it.t.id, resources, &mut it.report).await;
            }
        }
    }
}
