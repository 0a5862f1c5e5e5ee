//! One transaction's progress through a batch: its remaining plan, its
//! report, and the retry counters of its current step; and the batch
//! holding them ([`Batch`]). Resolving a step here
//! is where the batch applies the same rules as one-at-a-time recovery
//! ([`next_after`]) and records the same [`StepReport`](super::super::StepReport)s.

use super::super::config::RetryPolicy;
use super::super::decide::Effect;
use super::super::executor::StepOutcome;
use super::super::receipt::Receipt;
use super::super::report::{ProcedureReport, StepReport, StepResult, Verdict};
use super::super::steps::{next_after, Next, Procedure, Step};
use super::super::transaction::{Transfer, TxnState};
use super::super::Protocol;
use crate::cluster::Changes;
use crate::error::Error;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicBool;

/// A transition write whose outcome was never learned: the fields sent, what
/// it does, and the `(_seq_no, _primary_term)` it was conditional on.
pub(super) type UnsureTxn = (Changes, Effect, (i64, i64));

/// An account write whose answer was lost: the fields sent and the
/// `(_seq_no, _primary_term)` it was conditional on.
type UnsureAccount = (Changes, (i64, i64));

/// The transactions of one batch, the account writes whose answers were
/// lost, by account id, and the flag that stops the batch between two
/// writes (a job's Ctrl-C).
pub(super) struct Batch<'a> {
    pub(super) items: Vec<Item>,
    pub(super) unsure_accounts: HashMap<String, UnsureAccount>,
    pub(super) stop: &'a AtomicBool,
}

/// What to do about the transaction's locks once the batch is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Release {
    /// Nothing (not terminal, or never started).
    No,
    /// It reached a terminal state here: release its locks.
    Yes,
    /// Stopped because someone else moved it: release if it is terminal now.
    IfTerminal,
}

/// One transaction of a batch.
pub(super) struct Item {
    pub t: Transfer,
    pub report: ProcedureReport,
    /// Steps still to run, the first being the current one.
    pub todo: VecDeque<Step>,
    pub final_state: TxnState,
    /// Steps resolved so far (for simulated crashes).
    pub executed: usize,
    /// 409s, unknown outcomes and throttles of the current step.
    pub conflicts: u32,
    pub unknown: u32,
    pub throttled: u32,
    /// The current step's transition write whose answer was lost.
    pub unsure_txn: Option<UnsureTxn>,
    /// The current step's effect (and receipt, if it moved the balance)
    /// inside an account write whose answer was lost (the write itself is
    /// kept per account by the batch).
    pub unsure_acct: Option<(Effect, Option<Receipt>)>,
    /// A verdict has been reached; nothing more is done to it.
    pub done: bool,
    pub release: Release,
    /// Simulated crashes (tests): stop after this many steps.
    pub max_steps: Option<usize>,
}

impl Item {
    /// A transaction about to follow `todo` from `state`.
    pub fn new(t: Transfer, report: ProcedureReport, state: TxnState, todo: Vec<Step>) -> Item {
        Item {
            t,
            report,
            todo: todo.into(),
            final_state: state,
            executed: 0,
            conflicts: 0,
            unknown: 0,
            throttled: 0,
            unsure_txn: None,
            unsure_acct: None,
            done: false,
            release: Release::No,
            max_steps: None,
        }
    }

    /// The current step, while the item is live.
    pub fn step(&self) -> Option<Step> {
        if self.done {
            None
        } else {
            self.todo.front().copied()
        }
    }

    /// The account the current step writes, if it is an account step.
    pub fn account(&self) -> Option<&str> {
        match self.step()?.on_source()? {
            true => Some(&self.t.src),
            false => Some(&self.t.dest),
        }
    }

    /// Stops a live item before its next step (the job was stopped): it
    /// stays in the protocol state its last step left it in.
    pub fn stop_here(&mut self) {
        if let Some(step) = self.step() {
            self.report.verdict = Verdict::Stopped(format!(
                "the run was stopped before `{step}`; left {} for recovery",
                self.final_state
            ));
            self.done = true;
            self.release = Release::No;
        }
    }

    /// Stops the item as a crashed worker would, when its step limit says
    /// so (checked before every round and after every step).
    pub fn crash_if_due(&mut self) {
        if !self.done && self.max_steps == Some(self.executed) {
            self.report.verdict =
                Verdict::Stopped(format!("simulated crash after {} step(s)", self.executed));
            self.done = true;
        }
    }
}

/// Ends the current step of `it` with `outcome`: records it and moves on
/// by the same rule as one-at-a-time recovery.
pub(super) fn resolve(p: &Protocol, it: &mut Item, outcome: StepOutcome) {
    resolve_receipted(p, it, outcome, None);
}

/// [`resolve`] of a step with the receipt of its balance write, if it made
/// one.
pub(super) fn resolve_receipted(
    p: &Protocol,
    it: &mut Item,
    outcome: StepOutcome,
    receipt: Option<Receipt>,
) {
    let Some(step) = it.step() else { return };
    let r = StepReport {
        txn: it.t.id.clone(),
        step: Some(step),
        label: step.label().to_string(),
        target: p.target_of(&it.t, step),
        result: StepResult::from(&outcome),
        receipt,
    };
    p.record_step(&mut it.report, r);
    it.executed += 1;
    it.conflicts = 0;
    it.unknown = 0;
    it.throttled = 0;
    it.unsure_txn = None;
    it.unsure_acct = None;
    match next_after(Procedure::Recover, step, &outcome) {
        Next::Continue => {
            it.todo.pop_front();
            if let Some((_, to)) = step.transition() {
                it.final_state = to;
            }
            if it.todo.is_empty() {
                it.report.verdict = Verdict::Completed(it.final_state.clone());
                it.done = true;
                if it.final_state.is_terminal() {
                    it.release = Release::Yes;
                }
            }
        }
        Next::Stop(why) => {
            it.report.verdict = Verdict::Stopped(why);
            it.done = true;
            it.release = Release::IfTerminal;
        }
        // Recovery never re-plans; kept total for safety.
        Next::Replan(found) => {
            it.report.verdict = Verdict::Stopped(format!(
                "{step}: transaction is {found}; another process has moved it"
            ));
            it.done = true;
            it.release = Release::IfTerminal;
        }
    }
    it.crash_if_due();
}

/// Ends the current step of `it` with an error (recorded, verdict failed).
pub(super) fn fail(p: &Protocol, it: &mut Item, e: Error) {
    let Some(step) = it.step() else { return };
    let target = p.target_of(&it.t, step);
    p.record(
        &mut it.report,
        &it.t,
        Some(step),
        step.label(),
        target,
        StepResult::Error(e.to_string()),
    );
    it.report.verdict = Verdict::Failed(e);
    it.done = true;
}

/// Counts a 409 on the current step; fails it past the policy's limit.
pub(super) fn conflicted(p: &Protocol, it: &mut Item, policy: &RetryPolicy, doc: (&str, &str)) {
    it.conflicts += 1;
    if it.conflicts > policy.max_conflicts {
        let e = Error::GaveUp {
            index: doc.0.to_string(),
            id: doc.1.to_string(),
            attempts: it.conflicts,
            last: "version conflicts".into(),
        };
        fail(p, it, e);
    }
}

/// Counts an unknown outcome (or failed read) on the current step, or
/// a throttle apart from them ([`RetryPolicy::max_throttled`]); fails
/// it past the policy's limit. Returns the count it is at (which sets
/// the wait before the next round).
pub(super) fn unknown(
    p: &Protocol,
    it: &mut Item,
    policy: &RetryPolicy,
    doc: (&str, &str),
    e: &Error,
) -> u32 {
    let (count, limit) = if e.is_throttle() {
        it.throttled += 1;
        (it.throttled, policy.max_throttled)
    } else {
        it.unknown += 1;
        (it.unknown, policy.max_unknown)
    };
    if count > limit {
        let e = Error::GaveUp {
            index: doc.0.to_string(),
            id: doc.1.to_string(),
            attempts: count,
            last: e.to_string(),
        };
        fail(p, it, e);
    }
    count
}
