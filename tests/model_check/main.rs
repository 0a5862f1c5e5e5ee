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
//!   (a write that changes nothing but its version, conditional; the tool
//!   sends it as a partial update with `detect_noop` off) and sends the account write only
//!   after a claim whose success it heard; a claim conflict or lost claim
//!   answer re-reads the transaction and claims again; an account conflict or
//!   lost answer starts again from the account read;
//! - any process may crash at any moment; its writes in flight stay in
//!   flight (a dead process's late write);
//! - the transaction read before a claim may be answered by a lagging shard
//!   copy (one write behind), once per run: with reads that are always
//!   current the claim would prove nothing the read does not, but a realtime
//!   GET may be served by a replica or a deposed primary, while a
//!   conditional write is decided by the current primary. This is what
//!   makes the claim necessary (the check fails if an apply proceeds after
//!   a claim whose answer was lost).
//!
//! The recovery window (`ProcedureRefusal::Recent`) is not modelled: a recovery pass
//! may start at any moment, as with `--force` or a worker slower than the
//! window. Locks are not modelled (they are an optimisation, not the fence).
//!
//! With `Fencing::On` every safety property holds over the whole state space;
//! with `Fencing::Off` (the reference protocol as published, no claim, no
//! fencing write) the checker finds the known holes: a double debit by a
//! stale forward process, and units from nowhere left by a slow worker after
//! a rollback.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod action;
mod batch;
mod model;

use estx::protocol::account::AccountState;
use estx::protocol::decide::{Fencing, NoopReason};
use estx::protocol::steps::{Procedure, Step};
use estx::protocol::TxnState;
use model::*;
use stateright::{Checker, CheckerVisitor, Expectation, Model, Path, Property};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

impl Model for TransferModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            txn: (0, TxnState::Created),
            txn_before: None,
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
            stale_left: STALE_READS,
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        for who in PROCS {
            match &state.procs[who.index()] {
                Pc::Reading => actions.push(Action::Read(who)),
                Pc::Running { plan, next, at, .. } => match at {
                    At::Start { .. } => actions.push(Action::Step(who, plan[*next])),
                    At::ToClaim { .. } => {
                        actions.push(Action::Claim(who, plan[*next]));
                        if state.stale_left > 0 && state.txn_before.is_some() {
                            actions.push(Action::ClaimStale(who, plan[*next]));
                        }
                    }
                    At::Claiming { .. } | At::Writing { .. } | At::BatchWriting { .. } => {
                        if state.losses_left > 0 {
                            actions.push(Action::Lose(who));
                        }
                    }
                    At::BatchRead { .. } => actions.push(Action::BatchReadAccounts(who)),
                    At::BatchReadTxn { .. } => {
                        actions.push(Action::BatchReadTxn(who));
                        if state.stale_left > 0 && state.txn_before.is_some() {
                            actions.push(Action::BatchReadTxnStale(who));
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
            // Dropping an orphan differs from delivering it only if it would land.
            if f.waiter.is_none() && state.seq_and_val(f.doc).0 == f.if_seq {
                actions.push(Action::Drop(f.clone()));
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        match action.clone() {
            Action::Crash(who) => {
                s.procs[who.index()] = Pc::Ended(End::Crashed);
                Self::orphan(&mut s, who);
            }
            Action::Read(who) => {
                s.procs[who.index()] = Pc::planned(who.procedure(), &s.txn.1, 0);
                if self.batched && who == Who::Recovery {
                    let at = At::BatchRead {
                        unsure: None,
                        kept_claim: false,
                    };
                    Self::set_at(&mut s, who, at);
                }
            }
            Action::BatchReadAccounts(who) => {
                let Pc::Running {
                    at: At::BatchRead { unsure, kept_claim },
                    ..
                } = s.procs[who.index()].clone()
                else {
                    return None;
                };
                let (a, b) = (s.a.clone(), s.b.clone());
                let at = At::BatchReadTxn {
                    a,
                    b,
                    unsure,
                    kept_claim,
                };
                Self::set_at(&mut s, who, at);
            }
            Action::BatchReadTxn(who) | Action::BatchReadTxnStale(who) => {
                let Pc::Running {
                    at:
                        At::BatchReadTxn {
                            a,
                            b,
                            unsure,
                            kept_claim,
                        },
                    ..
                } = s.procs[who.index()].clone()
                else {
                    return None;
                };
                let read = if matches!(action, Action::BatchReadTxnStale(..)) {
                    s.stale_left -= 1;
                    s.txn_before.clone()?
                } else {
                    s.txn.clone()
                };
                self.batch_view(&mut s, who, (a, b), read, (unsure, kept_claim));
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
            Action::Claim(who, step) | Action::ClaimStale(who, step) => {
                let Pc::Running {
                    at: At::ToClaim { acct_seq, next },
                    ..
                } = s.procs[who.index()].clone()
                else {
                    return None;
                };
                let read = if matches!(action, Action::ClaimStale(..)) {
                    s.stale_left -= 1;
                    s.txn_before.clone()?
                } else {
                    s.txn.clone()
                };
                self.claim(&mut s, who, step, (acct_seq, next), read);
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
                    At::BatchWriting { .. } => Self::batch_lose(&mut s, who)?,
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
