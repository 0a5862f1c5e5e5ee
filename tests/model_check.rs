//! Exhaustive model check of the two-phase-commit transfer protocol, with
//! document versions, late writes, lost answers and crashes.
//!
//! A stateright model runs the library's own pure decisions
//! (`decide::transition`, `decide::claim`, `steps::account_step`,
//! `steps::plan`, `steps::next_after`) for three concurrent processes over one
//! transfer of 30 units from account A (100) to account B (100):
//!
//! - `worker`: the process that created the transaction and runs
//!   `Procedure::Recover` from `created` (what `Protocol::transfer` does; it
//!   never reads the transaction first, it just wrote it);
//! - `recovery`: a recovery pass that reads the transaction and runs
//!   `Procedure::Recover` from whatever state it read (with the worker, two
//!   forward processes race; a second recovery pass multiplies the state
//!   space past what CI can explore in minutes, and adds no new kind of
//!   interleaving: it is one more forward process);
//! - `operator`: an operator that reads the transaction and runs
//!   `Procedure::Rollback`.
//!
//! The three documents carry an explicit `_seq_no`. Each process mirrors
//! `procedures.rs::follow_plan` and `executor.rs::run_claimed` at the level of
//! single requests:
//!
//! - a read is one action (the realtime GET);
//! - a write is decided from what was read and put *in flight*, conditional
//!   on the `_seq_no` read; a separate `deliver` action lands it later (or
//!   conflicts, if the document moved in between), at any moment, in any
//!   order with other writes; only then does the writer hear the answer;
//! - an answer can be lost (`lose`, a bounded number of times per run): the
//!   writer stops waiting and re-reads, while its write stays in flight and
//!   may still land or be dropped; a re-read showing exactly its write at a
//!   newer version counts as "it was mine" (as the executor does);
//! - an apply with fencing reads the account, then the transaction, claims it
//!   (writes it back unchanged, conditional) and sends the account write only
//!   after a claim whose success it heard; a claim conflict or lost claim
//!   answer re-reads the transaction and claims again; an account conflict or
//!   lost answer starts again from the account read;
//! - any process may crash at any moment; its writes in flight stay in
//!   flight (a dead process's late write).
//!
//! The recovery window (`Refusal::Recent`) is not modelled: a recovery pass
//! may start at any moment, as with `--force` or a worker slower than the
//! window. Locks are not modelled (they are an optimisation, not the fence).
//!
//! With `Fencing::On` every safety property holds over the whole state space;
//! with `Fencing::Off` (the reference protocol as published, no claim, no
//! fencing write) the checker finds the known holes: a double debit by a
//! stale forward process, and units from nowhere left by a slow worker after
//! a rollback.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use estx::protocol::account::AccountState;
use estx::protocol::decide::{self, Decision, Effect, Fencing, NoopReason};
use estx::protocol::executor::Outcome;
use estx::protocol::steps::{account_step, next_after, plan, Next, Procedure, Step};
use estx::protocol::{Transfer, TxnState};
use stateright::{Checker, CheckerVisitor, Expectation, Model, Path, Property};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Same bound as `procedures.rs`.
const MAX_REPLANS: usize = 3;
const AMOUNT: i64 = 30;
const START: i64 = 100;
/// Answers that may be lost in one run.
const LOSSES: u8 = 1;

/// The processes, by index into `State::procs`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Who {
    Worker,
    Recovery,
    Operator,
}

const PROCS: [Who; 3] = [Who::Worker, Who::Recovery, Who::Operator];

impl Who {
    fn index(self) -> usize {
        self as usize
    }

    fn procedure(self) -> Procedure {
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
enum Doc {
    Txn,
    A,
    B,
}

/// A document's content.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Val {
    Txn(TxnState),
    Acct(AccountState),
}

/// A write on its way to the primary: it lands only if the document is still
/// at `if_seq` when it arrives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Flight {
    doc: Doc,
    if_seq: u8,
    val: Val,
    /// Who waits for the answer (`None`: answer lost, or the writer crashed).
    waiter: Option<Who>,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum End {
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
enum At {
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
}

/// A process's program counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Pc {
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
    fn running(&self) -> bool {
        !matches!(self, Pc::Ended(_))
    }

    /// The `Pc` after (re-)planning from `state`, as `follow_plan` does.
    fn planned(procedure: Procedure, state: &TxnState, replans: usize) -> Pc {
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
struct State {
    txn: (u8, TxnState),
    a: (u8, AccountState),
    b: (u8, AccountState),
    /// Writes in flight, kept sorted (a multiset).
    flights: Vec<Flight>,
    procs: [Pc; 3],
    losses_left: u8,
}

impl State {
    fn quiescent(&self) -> bool {
        self.flights.is_empty() && self.procs.iter().all(|p| !p.running())
    }

    fn no_pending(&self) -> bool {
        self.a.1.pending.is_empty() && self.b.1.pending.is_empty()
    }

    fn stopped_on(&self, pred: impl Fn(Step, &NoopReason) -> bool) -> bool {
        self.procs
            .iter()
            .any(|p| matches!(p, Pc::Ended(End::Stopped(s, r)) if pred(*s, r)))
    }

    fn seq_and_val(&self, doc: Doc) -> (u8, Val) {
        match doc {
            Doc::Txn => (self.txn.0, Val::Txn(self.txn.1.clone())),
            Doc::A => (self.a.0, Val::Acct(self.a.1.clone())),
            Doc::B => (self.b.0, Val::Acct(self.b.1.clone())),
        }
    }

    /// The primary receives a conditional write: lands it if the document is
    /// still at `if_seq`. Returns whether it landed.
    fn land(&mut self, f: &Flight) -> bool {
        let (seq, _) = self.seq_and_val(f.doc);
        if seq != f.if_seq {
            return false;
        }
        let next = seq
            .checked_add(1)
            .filter(|s| *s < 200)
            .expect("seq_no bound");
        match (f.doc, &f.val) {
            (Doc::Txn, Val::Txn(t)) => self.txn = (next, t.clone()),
            (Doc::A, Val::Acct(a)) => self.a = (next, a.clone()),
            (Doc::B, Val::Acct(b)) => self.b = (next, b.clone()),
            other => panic!("write of the wrong kind: {other:?}"),
        }
        true
    }

    fn send(&mut self, f: Flight) {
        let at = self.flights.partition_point(|x| x < &f);
        self.flights.insert(at, f);
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Action {
    /// Read the transaction to plan.
    Read(Who),
    /// Read the step's document, decide, maybe send a write.
    Step(Who, Step),
    /// Apply: read the transaction and send the claim.
    Claim(Who, Step),
    /// The primary receives this write.
    Deliver(Flight),
    /// An orphan write never reaches the primary.
    Drop(Flight),
    /// The writer stops waiting for its answer (timeout, dropped connection).
    Lose(Who),
    Crash(Who),
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Read(w) => write!(f, "{w:?} reads txn"),
            Action::Step(w, s) => write!(f, "{w:?} [{s}] reads+decides"),
            Action::Claim(w, s) => write!(f, "{w:?} [{s}] reads txn+claims"),
            Action::Deliver(fl) => {
                write!(f, "deliver {:?}@{} from {:?}", fl.doc, fl.if_seq, fl.waiter)
            }
            Action::Drop(fl) => write!(f, "drop {:?}@{}", fl.doc, fl.if_seq),
            Action::Lose(w) => write!(f, "{w:?} loses its answer"),
            Action::Crash(w) => write!(f, "{w:?} crashes"),
        }
    }
}

struct TransferModel {
    fencing: Fencing,
    transfer: Transfer,
}

impl TransferModel {
    fn new(fencing: Fencing) -> TransferModel {
        TransferModel {
            fencing,
            transfer: Transfer {
                id: "t1".into(),
                src: "A".into(),
                dest: "B".into(),
                amount: AMOUNT,
            },
        }
    }

    /// The process moves on after `step` ended with `outcome`, as
    /// `follow_plan` does.
    fn after_step(&self, s: &mut State, who: Who, step: Step, outcome: Outcome) {
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
                    Outcome::Noop(r) => r,
                    Outcome::Updated(e) => panic!("next_after stopped after a write: {e}"),
                };
                Pc::Ended(End::Stopped(step, reason))
            }
            Next::Replan(_) if replans + 1 > MAX_REPLANS => Pc::Ended(End::GaveUp),
            Next::Replan(found) => Pc::planned(who.procedure(), &found, replans + 1),
        };
    }

    fn set_at(s: &mut State, who: Who, to: At) {
        if let Pc::Running { at, .. } = &mut s.procs[who.index()] {
            *at = to;
        }
    }

    /// Reads the step's document and decides (the executor's loop head).
    fn start_step(&self, s: &mut State, who: Who, step: Step, unsure: Option<(Val, u8, Effect)>) {
        let doc = match step.on_source() {
            None => Doc::Txn,
            Some(true) => Doc::A,
            Some(false) => Doc::B,
        };
        let (seq, val) = s.seq_and_val(doc);
        if let Some((mine, at, effect)) = unsure {
            if mine == val && at != seq {
                // The re-read shows our own write at a newer version: it landed.
                return self.after_step(s, who, step, Outcome::Updated(effect));
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
            Decision::Noop(r) => self.after_step(s, who, step, Outcome::Noop(r)),
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

    /// Reads the transaction and claims it (or stops: it moved on).
    fn claim(&self, s: &mut State, who: Who, step: Step, acct_seq: u8, next: AccountState) {
        match decide::claim(&s.txn.1) {
            Decision::Noop(r) => self.after_step(s, who, step, Outcome::Noop(r)),
            Decision::Write(same, _) => {
                let if_seq = s.txn.0;
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
    fn answer(&self, s: &mut State, who: Who, landed: bool) {
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
        match (at, landed) {
            (At::Writing { effect, .. }, true) => {
                self.after_step(s, who, step, Outcome::Updated(effect))
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
    fn orphan(s: &mut State, who: Who) {
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

trait MapVal<T> {
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

impl Model for TransferModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            txn: (0, TxnState::Created),
            a: (0, AccountState::new(START)),
            b: (0, AccountState::new(START)),
            flights: Vec::new(),
            procs: [
                // `transfer()` plans from `created` without reading: it just wrote it.
                Pc::planned(Procedure::Recover, &TxnState::Created, 0),
                Pc::Reading,
                Pc::Reading,
            ],
            losses_left: LOSSES,
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        for who in PROCS {
            match &state.procs[who.index()] {
                Pc::Reading => actions.push(Action::Read(who)),
                Pc::Running { plan, next, at, .. } => match at {
                    At::Start { .. } => actions.push(Action::Step(who, plan[*next])),
                    At::ToClaim { .. } => actions.push(Action::Claim(who, plan[*next])),
                    At::Claiming { .. } | At::Writing { .. } => {
                        if state.losses_left > 0 {
                            actions.push(Action::Lose(who));
                        }
                    }
                },
                Pc::Ended(_) => continue,
            }
            actions.push(Action::Crash(who));
        }
        let mut last: Option<&Flight> = None;
        for f in &state.flights {
            if last == Some(f) {
                continue;
            }
            last = Some(f);
            actions.push(Action::Deliver(f.clone()));
            if f.waiter.is_none() {
                actions.push(Action::Drop(f.clone()));
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        match action {
            Action::Crash(who) => {
                s.procs[who.index()] = Pc::Ended(End::Crashed);
                Self::orphan(&mut s, who);
            }
            Action::Read(who) => {
                s.procs[who.index()] = Pc::planned(who.procedure(), &s.txn.1, 0);
            }
            Action::Step(who, step) => {
                let Pc::Running {
                    at: At::Start { unsure },
                    ..
                } = s.procs[who.index()].clone()
                else {
                    return None;
                };
                self.start_step(&mut s, who, step, unsure);
            }
            Action::Claim(who, step) => {
                let Pc::Running {
                    at: At::ToClaim { acct_seq, next },
                    ..
                } = s.procs[who.index()].clone()
                else {
                    return None;
                };
                self.claim(&mut s, who, step, acct_seq, next);
            }
            Action::Lose(who) => {
                let Pc::Running { at, .. } = s.procs[who.index()].clone() else {
                    return None;
                };
                s.losses_left -= 1;
                Self::orphan(&mut s, who);
                match at {
                    At::Writing {
                        val,
                        if_seq,
                        effect,
                    } => Self::set_at(
                        &mut s,
                        who,
                        At::Start {
                            unsure: Some((val, if_seq, effect)),
                        },
                    ),
                    // Only a claim whose success we heard counts: claim again.
                    At::Claiming { acct_seq, next } => {
                        Self::set_at(&mut s, who, At::ToClaim { acct_seq, next })
                    }
                    _ => return None,
                }
            }
            Action::Drop(f) => {
                let i = s.flights.iter().position(|x| *x == f)?;
                s.flights.remove(i);
            }
            Action::Deliver(f) => {
                let i = s.flights.iter().position(|x| *x == f)?;
                s.flights.remove(i);
                let landed = s.land(&f);
                if let Some(who) = f.waiter {
                    self.answer(&mut s, who, landed);
                }
            }
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no account applied twice", |_, s: &State| {
                [START - AMOUNT, START].contains(&s.a.1.balance)
                    && [START, START + AMOUNT].contains(&s.b.1.balance)
                    && s.a.1.pending.len() <= 1
                    && s.b.1.pending.len() <= 1
            }),
            Property::always("rolled-back leaves no effect", |_, s: &State| {
                !(s.txn.1 == TxnState::RolledBack && s.quiescent())
                    || (s.a.1.balance == START && s.b.1.balance == START && s.no_pending())
            }),
            Property::always("total conserved", |_, s: &State| {
                if !(s.quiescent() && s.txn.1.is_terminal()) {
                    return true;
                }
                let expected = match s.txn.1 {
                    TxnState::Finished => (START - AMOUNT, START + AMOUNT),
                    _ => (START, START),
                };
                (s.a.1.balance, s.b.1.balance) == expected
                    && s.a.1.balance + s.b.1.balance == 2 * START
            }),
            Property::always("terminal => nothing pending", |_, s: &State| {
                !(s.quiescent() && s.txn.1.is_terminal()) || s.no_pending()
            }),
            Property::always("no step contradicts the protocol", |_, s: &State| {
                !s.procs
                    .iter()
                    .any(|p| matches!(p, Pc::Ended(End::Contradiction(_))))
            }),
            Property::sometimes("finished is reachable", |_, s: &State| {
                s.txn.1 == TxnState::Finished && s.quiescent()
            }),
            Property::sometimes("rolled-back is reachable", |_, s: &State| {
                s.txn.1 == TxnState::RolledBack && s.quiescent()
            }),
            // The hole scenarios are really explored: a stale apply meets a
            // transaction that has moved on, after a commit or a rollback.
            Property::sometimes("late apply after commit is stopped", |_, s: &State| {
                s.stopped_on(|step, r| {
                    is_apply(step)
                        && matches!(
                            r,
                            NoopReason::StateIs(TxnState::Committed | TxnState::Finished)
                        )
                })
            }),
            Property::sometimes("late apply after rollback is stopped", |_, s: &State| {
                s.stopped_on(|step, r| {
                    is_apply(step)
                        && matches!(
                            r,
                            NoopReason::StateIs(TxnState::Terminating | TxnState::RolledBack)
                        )
                })
            }),
            Property::sometimes("a run with a lost answer ends", |_, s: &State| {
                s.losses_left == 0 && s.txn.1.is_terminal() && s.quiescent()
            }),
        ]
    }
}

fn is_apply(step: Step) -> bool {
    matches!(step, Step::ApplySource | Step::ApplyDestination)
}

const SAFETY: [&str; 5] = [
    "no account applied twice",
    "rolled-back leaves no effect",
    "total conserved",
    "terminal => nothing pending",
    "no step contradicts the protocol",
];

#[test]
fn fenced_protocol_has_no_counterexample() {
    let started = Instant::now();
    let checker = TransferModel::new(Fencing::On)
        .checker()
        .threads(2)
        .spawn_bfs()
        .join();
    println!(
        "Fencing::On: {} unique states ({} visited, depth {}) in {:.2?}",
        checker.unique_state_count(),
        checker.state_count(),
        checker.max_depth(),
        started.elapsed()
    );
    checker.assert_properties();
}

/// Records, per safety property, the first violating path the checker visits.
/// The checker runs single-threaded BFS, so that is a shortest counterexample
/// (`Checker::discovery` keeps the last one found, which is usually longer).
#[derive(Clone, Default)]
struct ShortestCounterexamples(Arc<Mutex<BTreeMap<&'static str, Path<State, Action>>>>);

impl CheckerVisitor<TransferModel> for ShortestCounterexamples {
    fn visit(&self, model: &TransferModel, path: Path<State, Action>) {
        let mut found = self.0.lock().unwrap();
        for p in model.properties() {
            if p.expectation == Expectation::Always
                && !found.contains_key(p.name)
                && !(p.condition)(model, path.last_state())
            {
                found.insert(p.name, path.clone());
            }
        }
    }
}

#[test]
fn unfenced_reference_protocol_is_caught() {
    let started = Instant::now();
    let shortest = ShortestCounterexamples::default();
    let checker = TransferModel::new(Fencing::Off)
        .checker()
        .visitor(shortest.clone())
        .spawn_bfs()
        .join();
    println!(
        "Fencing::Off: {} unique states ({} visited) in {:.2?}",
        checker.unique_state_count(),
        checker.state_count(),
        started.elapsed()
    );
    let shortest = shortest.0.lock().unwrap().clone();
    for (name, path) in &shortest {
        let last = path.last_state();
        println!(
            "shortest counterexample to \"{name}\":\n  {:?}\n  ends in txn={} A={} {:?} B={} {:?}",
            path.clone().into_actions(),
            last.txn.1,
            last.a.1.balance,
            last.a.1.pending,
            last.b.1.balance,
            last.b.1.pending
        );
    }
    assert!(
        SAFETY.iter().any(|name| checker.discovery(name).is_some()),
        "the unfenced protocol should violate a safety property"
    );
    // Hole 1: a stale forward process applies again after the commit removed
    // the id, so an account moves twice.
    let hole1 = shortest
        .get("no account applied twice")
        .expect("hole 1 (double apply by a stale forward process) not found")
        .last_state();
    assert!(hole1.a.1.balance == START - 2 * AMOUNT || hole1.b.1.balance == START + 2 * AMOUNT);
    // Hole 2: a slow worker applies after the rollback's undo was a no-op, so
    // the rolled-back transaction leaves units (and a pending id) behind.
    let hole2 = shortest
        .get("rolled-back leaves no effect")
        .expect("hole 2 (slow worker applies after the rollback's undo) not found")
        .last_state();
    assert_eq!(hole2.txn.1, TxnState::RolledBack);
    assert!(!hole2.no_pending());
    // Without a recorded history no step can even notice the contradiction.
    assert!(checker
        .discovery("no step contradicts the protocol")
        .is_none());
}
