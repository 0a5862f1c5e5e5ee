//! The model's state, actions and the transitions each process makes, at
//! the level of single requests (see the crate docs in `main.rs`).

use estx::protocol::account::AccountState;
use estx::protocol::decide::{self, Decision, Effect, Fencing, NoopReason};
use estx::protocol::executor::StepOutcome;
use estx::protocol::steps::{account_step, next_after, plan, Next, Procedure, Step};
use estx::protocol::{Transfer, TxnState};
use std::fmt;

pub(crate) use crate::action::Action;
pub(crate) use crate::batch::{BatchBug, Unsure, View};

/// Same bound as `procedures.rs`.
pub(crate) const MAX_REPLANS: usize = 3;
pub(crate) const AMOUNT: i64 = 30;
pub(crate) const START: i64 = 100;
/// Answers that may be lost in one run.
pub(crate) const LOSSES: u8 = 1;
/// Reads of the transaction (before a claim) that a lagging shard copy may
/// answer, in one run.
pub(crate) const STALE_READS: u8 = 1;

/// The processes, by index into `State::procs`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Who {
    Worker,
    Recovery,
    Operator,
}

pub(crate) const PROCS: [Who; 3] = [Who::Worker, Who::Recovery, Who::Operator];

impl Who {
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn procedure(self) -> Procedure {
        match self {
            Who::Worker | Who::Recovery => Procedure::Recover,
            Who::Operator => Procedure::Rollback,
        }
    }
}

impl fmt::Debug for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Who::Worker => "worker",
            Who::Recovery => "recovery",
            Who::Operator => "operator",
        })
    }
}

/// The three documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Doc {
    Txn,
    A,
    B,
}

/// A document's content.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Val {
    Txn(TxnState),
    Acct(AccountState),
}

/// A write on its way to the primary: it lands only if the document is still
/// at `if_seq` when it arrives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Flight {
    pub(crate) doc: Doc,
    pub(crate) if_seq: u8,
    pub(crate) val: Val,
    /// Who waits for the answer (`None`: answer lost, or the writer crashed).
    pub(crate) waiter: Option<Who>,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum End {
    /// Ran its whole plan.
    Completed,
    /// Read (or re-planned to) a terminal state.
    NothingToDo,
    /// `plan` refused (rollback of a committed transaction).
    Refused,
    /// `next_after` said stop after this step's no-op.
    Stopped(Step, NoopReason),
    /// Too many re-plans.
    GaveUp,
    /// `account_step` returned a `Contradiction`.
    Contradiction(Step),
    /// Crashed.
    Crashed,
}

/// Where a process is within its current step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum At {
    /// About to read the step's document and decide. `unsure` is its last
    /// write whose answer was lost, with the `_seq_no` it was conditional on.
    Start { unsure: Option<(Val, u8, Effect)> },
    /// Apply: the account was read at `acct_seq` and `next` decided; about to
    /// read the transaction and claim it.
    ToClaim { acct_seq: u8, next: AccountState },
    /// Apply: waiting for the answer to the claim.
    Claiming { acct_seq: u8, next: AccountState },
    /// Waiting for the answer to the step's write (for an apply, the account
    /// write after the claim).
    Writing {
        effect: Effect,
        val: Val,
        if_seq: u8,
    },
    /// Batched recovery, a new round: about to read both accounts. `unsure`
    /// is its last write whose answer was lost (the document, what was sent,
    /// the `_seq_no` it was conditional on, what it did).
    /// `kept_claim` is always false but with the planted bug
    /// [`BatchBug::ClaimKeptAcrossRounds`].
    BatchRead {
        unsure: Option<Unsure>,
        kept_claim: bool,
    },
    /// Batched: both accounts read; about to read the transaction.
    BatchReadTxn {
        a: (u8, AccountState),
        b: (u8, AccountState),
        unsure: Option<Unsure>,
        kept_claim: bool,
    },
    /// Batched: waiting for the answer to a write on `doc` (a claim when
    /// `effect` is `None`).
    BatchWriting {
        view: View,
        doc: Doc,
        val: Val,
        if_seq: u8,
        effect: Option<Effect>,
    },
}

/// A process's program counter. (States are cloned whole by the checker;
/// boxing the large variant would only add allocations.)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Pc {
    /// About to read the transaction.
    Reading,
    /// Following `plan`; `next` is the index of the step being run.
    Running {
        plan: Vec<Step>,
        next: usize,
        replans: usize,
        at: At,
    },
    /// Not running any more.
    Ended(End),
}

impl Pc {
    pub(crate) fn running(&self) -> bool {
        !matches!(self, Pc::Ended(_))
    }

    /// The `Pc` after (re-)planning from `state`, as `follow_plan` does.
    pub(crate) fn planned(procedure: Procedure, state: &TxnState, replans: usize) -> Pc {
        match plan(procedure, state) {
            Err(_) => Pc::Ended(End::Refused),
            Ok(steps) if steps.is_empty() => Pc::Ended(End::NothingToDo),
            Ok(steps) => Pc::Running {
                plan: steps,
                next: 0,
                replans,
                at: At::Start { unsure: None },
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct State {
    pub(crate) txn: (u8, TxnState),
    /// The transaction one write ago: what a lagging shard copy may still
    /// answer a read with.
    pub(crate) txn_before: Option<(u8, TxnState)>,
    pub(crate) a: (u8, AccountState),
    pub(crate) b: (u8, AccountState),
    /// Writes in flight, kept sorted (a multiset).
    pub(crate) flights: Vec<Flight>,
    pub(crate) procs: [Pc; 3],
    pub(crate) losses_left: u8,
    pub(crate) stale_left: u8,
}

impl State {
    pub(crate) fn quiescent(&self) -> bool {
        self.flights.is_empty() && self.procs.iter().all(|p| !p.running())
    }

    pub(crate) fn no_pending(&self) -> bool {
        self.a.1.pending.is_empty() && self.b.1.pending.is_empty()
    }

    pub(crate) fn stopped_on(&self, pred: impl Fn(Step, &NoopReason) -> bool) -> bool {
        self.procs
            .iter()
            .any(|p| matches!(p, Pc::Ended(End::Stopped(s, r)) if pred(*s, r)))
    }

    pub(crate) fn seq_and_val(&self, doc: Doc) -> (u8, Val) {
        match doc {
            Doc::Txn => (self.txn.0, Val::Txn(self.txn.1.clone())),
            Doc::A => (self.a.0, Val::Acct(self.a.1.clone())),
            Doc::B => (self.b.0, Val::Acct(self.b.1.clone())),
        }
    }

    /// The primary receives a conditional write: lands it if the document is
    /// still at `if_seq`. Returns whether it landed.
    pub(crate) fn land(&mut self, f: &Flight) -> bool {
        let (seq, _) = self.seq_and_val(f.doc);
        if seq != f.if_seq {
            return false;
        }
        let next = seq
            .checked_add(1)
            .filter(|s| *s < 200)
            .expect("seq_no bound");
        match (f.doc, &f.val) {
            (Doc::Txn, Val::Txn(t)) => {
                let before = std::mem::replace(&mut self.txn, (next, t.clone()));
                self.txn_before = Some(before);
            }
            (Doc::A, Val::Acct(a)) => self.a = (next, a.clone()),
            (Doc::B, Val::Acct(b)) => self.b = (next, b.clone()),
            other => panic!("write of the wrong kind: {other:?}"),
        }
        true
    }

    pub(crate) fn send(&mut self, f: Flight) {
        let at = self.flights.partition_point(|x| x < &f);
        self.flights.insert(at, f);
    }
}

pub(crate) struct TransferModel {
    pub(crate) fencing: Fencing,
    pub(crate) transfer: Transfer,
    /// The recovery process runs the batched executor's round shape.
    pub(crate) batched: bool,
    /// A bug planted in the batched round (tests of the check itself).
    pub(crate) bug: Option<BatchBug>,
}

impl TransferModel {
    pub(crate) fn new(fencing: Fencing) -> TransferModel {
        TransferModel {
            fencing,
            transfer: Transfer {
                id: "t1".into(),
                src: "A".into(),
                dest: "B".into(),
                amount: AMOUNT,
            },
            batched: false,
            bug: None,
        }
    }

    /// The model with the recovery process batched (and maybe a planted bug).
    pub(crate) fn batched(fencing: Fencing, bug: Option<BatchBug>) -> TransferModel {
        TransferModel {
            batched: true,
            bug,
            ..TransferModel::new(fencing)
        }
    }

    /// The process moves on after `step` ended with `outcome`, as
    /// `follow_plan` does.
    pub(crate) fn after_step(&self, s: &mut State, who: Who, step: Step, outcome: StepOutcome) {
        let Pc::Running {
            plan: steps,
            next,
            replans,
            ..
        } = s.procs[who.index()].clone()
        else {
            panic!("{who:?} is not running");
        };
        s.procs[who.index()] = match next_after(who.procedure(), step, &outcome) {
            Next::Continue if next + 1 == steps.len() => Pc::Ended(End::Completed),
            Next::Continue => Pc::Running {
                plan: steps,
                next: next + 1,
                replans,
                at: At::Start { unsure: None },
            },
            Next::Stop(_) => {
                let reason = match outcome {
                    StepOutcome::Noop(r) => r,
                    StepOutcome::Updated(e) => panic!("next_after stopped after a write: {e}"),
                };
                Pc::Ended(End::Stopped(step, reason))
            }
            Next::Replan(_) if replans + 1 > MAX_REPLANS => Pc::Ended(End::GaveUp),
            Next::Replan(found) => Pc::planned(who.procedure(), &found, replans + 1),
        };
    }

    pub(crate) fn set_at(s: &mut State, who: Who, to: At) {
        if let Pc::Running { at, .. } = &mut s.procs[who.index()] {
            *at = to;
        }
    }

    /// Reads the step's document and decides (the executor's loop head).
    pub(crate) fn start_step(
        &self,
        s: &mut State,
        who: Who,
        step: Step,
        unsure: Option<(Val, u8, Effect)>,
    ) {
        let doc = match step.on_source() {
            None => Doc::Txn,
            Some(true) => Doc::A,
            Some(false) => Doc::B,
        };
        let (seq, val) = s.seq_and_val(doc);
        if let Some((mine, at, effect)) = unsure {
            if mine == val && at != seq {
                // The re-read shows our own write at a newer version: it landed.
                // A value here is only the protocol's fields (state; balance
                // and pending list), exactly the evidence `Changes::landed`
                // compares: stamps and the application's fields are not
                // modelled, as they are not looked at.
                return self.after_step(s, who, step, StepOutcome::Updated(effect));
            }
        }
        let decision = match (&val, step.transition()) {
            (Val::Txn(t), Some((from, to))) => decide::transition(t, &from, &to).map_val(Val::Txn),
            (Val::Acct(a), None) => match account_step(step, &self.transfer, a, self.fencing) {
                Ok(d) => d.map_val(Val::Acct),
                Err(_) => {
                    s.procs[who.index()] = Pc::Ended(End::Contradiction(step));
                    return;
                }
            },
            other => panic!("step {step} on the wrong document: {other:?}"),
        };
        match decision {
            Decision::Noop(r) => self.after_step(s, who, step, StepOutcome::Noop(r)),
            Decision::Write(Val::Acct(next), Effect::Applied { .. })
                if self.fencing == Fencing::On =>
            {
                Self::set_at(
                    s,
                    who,
                    At::ToClaim {
                        acct_seq: seq,
                        next,
                    },
                );
            }
            Decision::Write(val, effect) => {
                s.send(Flight {
                    doc,
                    if_seq: seq,
                    val: val.clone(),
                    waiter: Some(who),
                });
                Self::set_at(
                    s,
                    who,
                    At::Writing {
                        effect,
                        val,
                        if_seq: seq,
                    },
                );
            }
        }
    }

    /// Reads the transaction (as `read`) and claims it (or stops: it moved on).
    pub(crate) fn claim(
        &self,
        s: &mut State,
        who: Who,
        step: Step,
        (acct_seq, next): (u8, AccountState),
        read: (u8, TxnState),
    ) {
        match decide::claim(&read.1) {
            Decision::Noop(r) => self.after_step(s, who, step, StepOutcome::Noop(r)),
            Decision::Write(same, _) => {
                let if_seq = read.0;
                s.send(Flight {
                    doc: Doc::Txn,
                    if_seq,
                    val: Val::Txn(same),
                    waiter: Some(who),
                });
                Self::set_at(s, who, At::Claiming { acct_seq, next });
            }
        }
    }

    /// The writer hears the answer to its write.
    pub(crate) fn answer(&self, s: &mut State, who: Who, landed: bool) {
        let Pc::Running {
            plan: steps,
            next,
            at,
            ..
        } = s.procs[who.index()].clone()
        else {
            panic!("{who:?} waits but is not running");
        };
        let step = steps[next];
        if matches!(at, At::BatchWriting { .. }) {
            return self.batch_answer(s, who, landed);
        }
        match (at, landed) {
            (At::Writing { effect, .. }, true) => {
                self.after_step(s, who, step, StepOutcome::Updated(effect))
            }
            (At::Writing { .. }, false) => Self::set_at(s, who, At::Start { unsure: None }),
            (At::Claiming { acct_seq, next }, true) => {
                let doc = if step.on_source() == Some(true) {
                    Doc::A
                } else {
                    Doc::B
                };
                let val = Val::Acct(next);
                s.send(Flight {
                    doc,
                    if_seq: acct_seq,
                    val: val.clone(),
                    waiter: Some(who),
                });
                let delta = if doc == Doc::A { -AMOUNT } else { AMOUNT };
                Self::set_at(
                    s,
                    who,
                    At::Writing {
                        effect: Effect::Applied { delta },
                        val,
                        if_seq: acct_seq,
                    },
                );
            }
            (At::Claiming { acct_seq, next }, false) => {
                Self::set_at(s, who, At::ToClaim { acct_seq, next })
            }
            (other, _) => panic!("{who:?} got an answer while {other:?}"),
        }
    }

    /// Nobody waits for `who`'s writes any more.
    pub(crate) fn orphan(s: &mut State, who: Who) {
        let mut flights: Vec<Flight> = s
            .flights
            .drain(..)
            .map(|mut f| {
                if f.waiter == Some(who) {
                    f.waiter = None;
                }
                f
            })
            .collect();
        flights.sort();
        s.flights = flights;
    }
}

pub(crate) trait MapVal<T> {
    fn map_val<U>(self, f: impl FnOnce(T) -> U) -> Decision<U>;
}

impl<T> MapVal<T> for Decision<T> {
    fn map_val<U>(self, f: impl FnOnce(T) -> U) -> Decision<U> {
        match self {
            Decision::Write(v, e) => Decision::Write(f(v), e),
            Decision::Noop(r) => Decision::Noop(r),
        }
    }
}
