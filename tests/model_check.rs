//! Exhaustive model check of the two-phase-commit transfer protocol.
//!
//! A stateright model runs the library's own pure decisions
//! (`decide::transition`, `steps::account_step`, `steps::plan`,
//! `steps::next_after`) for four concurrent processes over one transfer of 30
//! units from account A (100) to account B (100):
//!
//! - `worker`: the process that created the transaction and runs
//!   `Procedure::Recover` from `created` (what `Protocol::transfer` does; it
//!   never reads the transaction first, it just wrote it);
//! - `recovery` and `recovery2`: two recovery passes (two nodes running the
//!   recovery loop, or a rerun after a crash) that each read the transaction
//!   and run `Procedure::Recover` from whatever state they read;
//! - `operator`: an operator that reads the transaction and runs
//!   `Procedure::Rollback`.
//!
//! Each process mirrors `procedures.rs::follow_plan`: reading the transaction is
//! one atomic action, and so is every step (the OCC executor makes each step an
//! atomic read-decide-write on ONE document). Between steps a process follows
//! the plan computed from its (possibly stale) read; it never re-reads the
//! transaction except through a `Next::Replan`, which re-plans from the state
//! the failed transition saw, at most `MAX_REPLANS` (3) times. Any process may
//! crash at any point before it has ended. The recovery window (`Refusal::Recent`)
//! is not modelled: a recovery pass may start at any moment, as with `--force`
//! or a worker slower than the window.
//!
//! With `Fencing::On` every safety property holds over the whole state space;
//! with `Fencing::Off` (the reference protocol as published) the checker finds
//! the known holes: a double debit by a stale forward process, and units left
//! behind by a slow worker after a rollback.
//!
//! Pruning of settled records and lock release are not modelled: with a fixed
//! `now` no record is ever older than the retention, so pruning never fires.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chrono::{DateTime, TimeZone, Utc};
use estx::protocol::account::{AccountState, SettledOutcome};
use estx::protocol::decide::{self, Decision, Fencing, NoopReason};
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

/// The processes, by index into `State::procs`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Who {
    Worker,
    Recovery,
    Recovery2,
    Operator,
}

const PROCS: [Who; 4] = [Who::Worker, Who::Recovery, Who::Recovery2, Who::Operator];

impl Who {
    fn index(self) -> usize {
        self as usize
    }

    fn procedure(self) -> Procedure {
        match self {
            Who::Worker | Who::Recovery | Who::Recovery2 => Procedure::Recover,
            Who::Operator => Procedure::Rollback,
        }
    }
}

impl fmt::Debug for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Who::Worker => "worker",
            Who::Recovery => "recovery",
            Who::Recovery2 => "recovery2",
            Who::Operator => "operator",
        })
    }
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

/// A process's program counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Pc {
    /// About to read the transaction.
    Reading,
    /// Following `plan`; `next` is the index of the step to run.
    Running {
        plan: Vec<Step>,
        next: usize,
        replans: usize,
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
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    txn: TxnState,
    a: AccountState,
    b: AccountState,
    procs: [Pc; 4],
}

impl State {
    fn all_stopped(&self) -> bool {
        self.procs.iter().all(|p| !p.running())
    }

    fn no_pending(&self) -> bool {
        self.a.pending.is_empty() && self.b.pending.is_empty()
    }

    fn stopped_on(&self, pred: impl Fn(Step, &NoopReason) -> bool) -> bool {
        self.procs
            .iter()
            .any(|p| matches!(p, Pc::Ended(End::Stopped(s, r)) if pred(*s, r)))
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Action {
    Read(Who),
    Step(Who, Step),
    Crash(Who),
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Read(w) => write!(f, "{w:?} reads txn"),
            Action::Step(w, s) => write!(f, "{w:?} runs [{s}]"),
            Action::Crash(w) => write!(f, "{w:?} crashes"),
        }
    }
}

struct TransferModel {
    fencing: Fencing,
    transfer: Transfer,
    now: DateTime<Utc>,
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
            // Any fixed instant will do; the fallback is never used.
            now: Utc
                .timestamp_opt(1_800_000_000, 0)
                .single()
                .unwrap_or_default(),
        }
    }

    /// Runs `step` atomically on its one document; `Err` on a contradiction.
    fn run_step(&self, s: &mut State, step: Step) -> Result<Outcome, ()> {
        if let Some((from, to)) = step.transition() {
            return Ok(match decide::transition(&s.txn, &from, &to) {
                Decision::Write(next, effect) => {
                    s.txn = next;
                    Outcome::Updated(effect)
                }
                Decision::Noop(r) => Outcome::Noop(r),
            });
        }
        let acct = match step.on_source() {
            Some(true) => &mut s.a,
            Some(false) => &mut s.b,
            None => return Err(()),
        };
        match account_step(step, &self.transfer, acct, self.fencing, self.now) {
            Err(_) => Err(()),
            Ok(Decision::Write(next, effect)) => {
                *acct = next;
                Ok(Outcome::Updated(effect))
            }
            Ok(Decision::Noop(r)) => Ok(Outcome::Noop(r)),
        }
    }
}

impl Model for TransferModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            txn: TxnState::Created,
            a: AccountState::new(START),
            b: AccountState::new(START),
            procs: [
                // `transfer()` plans from `created` without reading: it just wrote it.
                Pc::planned(Procedure::Recover, &TxnState::Created, 0),
                Pc::Reading,
                Pc::Reading,
                Pc::Reading,
            ],
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        for who in PROCS {
            match &state.procs[who.index()] {
                Pc::Reading => actions.push(Action::Read(who)),
                Pc::Running { plan, next, .. } => actions.push(Action::Step(who, plan[*next])),
                Pc::Ended(_) => continue,
            }
            actions.push(Action::Crash(who));
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        match action {
            Action::Crash(who) => s.procs[who.index()] = Pc::Ended(End::Crashed),
            Action::Read(who) => {
                s.procs[who.index()] = Pc::planned(who.procedure(), &s.txn, 0);
            }
            Action::Step(who, step) => {
                let Pc::Running {
                    plan: steps,
                    next,
                    replans,
                } = s.procs[who.index()].clone()
                else {
                    return None;
                };
                let outcome = match self.run_step(&mut s, step) {
                    Ok(o) => o,
                    Err(()) => {
                        s.procs[who.index()] = Pc::Ended(End::Contradiction(step));
                        return Some(s);
                    }
                };
                s.procs[who.index()] = match next_after(who.procedure(), step, &outcome) {
                    Next::Continue if next + 1 == steps.len() => Pc::Ended(End::Completed),
                    Next::Continue => Pc::Running {
                        plan: steps,
                        next: next + 1,
                        replans,
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
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no account applied twice", |_, s: &State| {
                [START - AMOUNT, START].contains(&s.a.balance)
                    && [START, START + AMOUNT].contains(&s.b.balance)
                    && s.a.pending.len() <= 1
                    && s.b.pending.len() <= 1
            }),
            Property::always("rolled-back leaves no effect", |_, s: &State| {
                !(s.txn == TxnState::RolledBack && s.all_stopped())
                    || (s.a.balance == START && s.b.balance == START && s.no_pending())
            }),
            Property::always("total conserved once all stopped", |_, s: &State| {
                if !(s.all_stopped() && s.txn.is_terminal()) {
                    return true;
                }
                let expected = match s.txn {
                    TxnState::Finished => (START - AMOUNT, START + AMOUNT),
                    _ => (START, START),
                };
                (s.a.balance, s.b.balance) == expected
                    && s.a.balance + s.b.balance == 2 * START
                    && s.no_pending()
            }),
            Property::always("no step contradicts the protocol", |_, s: &State| {
                !s.procs
                    .iter()
                    .any(|p| matches!(p, Pc::Ended(End::Contradiction(_))))
            }),
            Property::sometimes("finished is reachable", |_, s: &State| {
                s.txn == TxnState::Finished && s.all_stopped()
            }),
            Property::sometimes("rolled-back is reachable", |_, s: &State| {
                s.txn == TxnState::RolledBack && s.all_stopped()
            }),
            // The two hole scenarios are really explored: a stale apply meets
            // the settled record left by a commit, or by a rollback's undo.
            Property::sometimes("late apply after commit is fenced", |_, s: &State| {
                s.stopped_on(|step, r| {
                    is_apply(step) && *r == NoopReason::Settled(SettledOutcome::Applied)
                })
            }),
            Property::sometimes("late apply after rollback is fenced", |_, s: &State| {
                s.stopped_on(|step, r| {
                    is_apply(step) && *r == NoopReason::Settled(SettledOutcome::Undone)
                })
            }),
        ]
    }
}

fn is_apply(step: Step) -> bool {
    matches!(step, Step::ApplySource | Step::ApplyDestination)
}

const SAFETY: [&str; 4] = [
    "no account applied twice",
    "rolled-back leaves no effect",
    "total conserved once all stopped",
    "no step contradicts the protocol",
];

#[test]
fn fenced_protocol_has_no_counterexample() {
    let started = Instant::now();
    let checker = TransferModel::new(Fencing::On).checker().spawn_bfs().join();
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
            last.txn,
            last.a.balance,
            last.a.pending,
            last.b.balance,
            last.b.pending
        );
    }
    assert!(
        SAFETY.iter().any(|name| checker.discovery(name).is_some()),
        "the unfenced protocol should violate a safety property"
    );
    // Both published holes are found, each by the property it breaks.
    // Hole 1: a stale forward process applies again after the commit removed
    // the id, so an account moves twice.
    assert!(
        checker.discovery("no account applied twice").is_some(),
        "hole 1 (double apply by a stale forward process) not found"
    );
    let hole1 = shortest["no account applied twice"].last_state();
    assert!(hole1.a.balance == START - 2 * AMOUNT || hole1.b.balance == START + 2 * AMOUNT);
    // Hole 2: a slow worker applies after the rollback's undo was a no-op, so
    // the rolled-back transaction leaves units (and a pending id) behind.
    assert!(
        checker.discovery("rolled-back leaves no effect").is_some(),
        "hole 2 (slow worker applies after the rollback's undo) not found"
    );
    let hole2 = shortest["rolled-back leaves no effect"].last_state();
    assert_eq!(hole2.txn, TxnState::RolledBack);
    assert!(!hole2.no_pending());
    // Without settled records no step can even notice the contradiction.
    assert!(checker
        .discovery("no step contradicts the protocol")
        .is_none());
}
