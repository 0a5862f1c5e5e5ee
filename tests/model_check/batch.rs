//! The batched recovery's round shape as a model process (`Who::Recovery`
//! when the model is built with `TransferModel::batched`), mirroring
//! `src/protocol/batch/{round,phase}.rs` for one transaction:
//!
//! - a round reads both accounts (one `_mget`, one action), then the
//!   transaction (which a lagging copy may answer, as before a claim);
//!   a write of an earlier round whose answer was lost is recognised there;
//! - it then decides its steps one after the other on what the round knows
//!   (each document as read, or as the round itself wrote it: a `_bulk`
//!   answer gives the new `_seq_no`), each write conditional on that version
//!   and sent only after the previous one's answer: the begin or a claim
//!   (one claim for both applies; the begin `created -> pending` counts as
//!   the claim), the applies, commit, removes, finish;
//! - a conflict starts a new round; a lost answer starts a new round with the
//!   write remembered as unsure (its write stays in flight).
//!
//! Folding several transactions' steps into one account write is not
//! modelled (one transfer); the module docs of `protocol::batch` argue it.

use crate::model::*;
use estx::protocol::account::AccountState;
use estx::protocol::decide::{self, Decision, Effect, Fencing};
use estx::protocol::executor::StepOutcome;
use estx::protocol::steps::{account_step, Step};
use estx::protocol::TxnState;

/// A batched write whose answer was lost.
pub(crate) type Unsure = (Doc, Val, u8, Effect);

/// What a batched round knows: each document as it read it or as it has
/// since written it itself (the `_bulk` answer gives the new `_seq_no`),
/// and whether the transaction was claimed this round (a claim or a begin,
/// decided on the round's read, seen to succeed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct View {
    pub(crate) txn: (u8, TxnState),
    pub(crate) a: (u8, AccountState),
    pub(crate) b: (u8, AccountState),
    pub(crate) claimed: bool,
}

/// Bugs planted in the batched round: the check must catch each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchBug {
    /// Applies without a claim.
    NoClaim,
    /// Counts a claim of an earlier round as this round's.
    ClaimKeptAcrossRounds,
}

fn is_apply(step: Step) -> bool {
    matches!(step, Step::ApplySource | Step::ApplyDestination)
}

impl TransferModel {
    /// The round's view is complete: recognise an unsure write, then decide.
    pub(crate) fn batch_view(
        &self,
        s: &mut State,
        who: Who,
        (a, b): ((u8, AccountState), (u8, AccountState)),
        txn: (u8, TxnState),
        (unsure, kept_claim): (Option<Unsure>, bool),
    ) {
        let view = View {
            txn,
            a,
            b,
            claimed: kept_claim,
        };
        if let Some((doc, mine, at, effect)) = unsure {
            let (seq, now) = match doc {
                Doc::Txn => (view.txn.0, Val::Txn(view.txn.1.clone())),
                Doc::A => (view.a.0, Val::Acct(view.a.1.clone())),
                Doc::B => (view.b.0, Val::Acct(view.b.1.clone())),
            };
            if mine == now && at != seq {
                return self.batch_after(s, who, StepOutcome::Updated(effect), view);
            }
        }
        self.batch_step(s, who, view);
    }

    /// The current step of the batched process, decided on `view`. Deciding
    /// is local (the view is the process's own), so it happens in the same
    /// action as the read or answer that completed the view: no interleaving
    /// is lost, and the state space stays within the suite's time.
    pub(crate) fn batch_step(&self, s: &mut State, who: Who, view: View) {
        let Pc::Running { plan, next, .. } = &s.procs[who.index()] else {
            panic!("{who:?} is not running");
        };
        let step = plan[*next];
        let ahead: Vec<Step> = plan[*next..]
            .iter()
            .copied()
            .take_while(|s| is_apply(*s))
            .collect();
        if let Some((from, to)) = step.transition() {
            return match decide::transition(&view.txn.1, &from, &to) {
                Decision::Noop(r) => self.batch_after(s, who, StepOutcome::Noop(r), view),
                Decision::Write(t, effect) => {
                    self.batch_send(s, who, view, Doc::Txn, Val::Txn(t), Some(effect))
                }
            };
        }
        let claim = self.fencing == Fencing::On
            && self.bug != Some(BatchBug::NoClaim)
            && !view.claimed
            && ahead.iter().any(|&step| {
                let acct = if step.on_source() == Some(true) {
                    &view.a.1
                } else {
                    &view.b.1
                };
                matches!(
                    account_step(step, &self.transfer, acct, self.fencing),
                    Ok(Decision::Write(..))
                )
            });
        if claim {
            return match decide::claim(&view.txn.1) {
                Decision::Noop(r) => self.batch_after(s, who, StepOutcome::Noop(r), view),
                Decision::Write(same, _) => {
                    self.batch_send(s, who, view, Doc::Txn, Val::Txn(same), None)
                }
            };
        }
        let (doc, acct) = if step.on_source() == Some(true) {
            (Doc::A, &view.a.1)
        } else {
            (Doc::B, &view.b.1)
        };
        match account_step(step, &self.transfer, acct, self.fencing) {
            Err(_) => s.procs[who.index()] = Pc::Ended(End::Contradiction(step)),
            Ok(Decision::Noop(r)) => self.batch_after(s, who, StepOutcome::Noop(r), view),
            Ok(Decision::Write(next, effect)) => {
                self.batch_send(s, who, view, doc, Val::Acct(next), Some(effect))
            }
        }
    }

    /// Sends a write conditional on the version the view has of `doc`.
    fn batch_send(
        &self,
        s: &mut State,
        who: Who,
        view: View,
        doc: Doc,
        val: Val,
        effect: Option<Effect>,
    ) {
        let if_seq = match doc {
            Doc::Txn => view.txn.0,
            Doc::A => view.a.0,
            Doc::B => view.b.0,
        };
        s.send(Flight {
            doc,
            if_seq,
            val: val.clone(),
            waiter: Some(who),
        });
        Self::set_at(
            s,
            who,
            At::BatchWriting {
                view,
                doc,
                val,
                if_seq,
                effect,
            },
        );
    }

    /// The batched process hears the answer to its write.
    pub(crate) fn batch_answer(&self, s: &mut State, who: Who, landed: bool) {
        let Pc::Running {
            at:
                At::BatchWriting {
                    mut view,
                    doc,
                    val,
                    if_seq,
                    effect,
                },
            ..
        } = s.procs[who.index()].clone()
        else {
            panic!("{who:?} is not writing");
        };
        if !landed {
            let kept_claim = view.claimed && self.bug == Some(BatchBug::ClaimKeptAcrossRounds);
            let at = At::BatchRead {
                unsure: None,
                kept_claim,
            };
            return Self::set_at(s, who, at);
        }
        let seq = if_seq + 1;
        match (doc, val) {
            (Doc::Txn, Val::Txn(t)) => view.txn = (seq, t),
            (Doc::A, Val::Acct(a)) => view.a = (seq, a),
            (Doc::B, Val::Acct(b)) => view.b = (seq, b),
            other => panic!("write of the wrong kind: {other:?}"),
        }
        let proves_pending = match &effect {
            None => true,
            Some(Effect::Transitioned { to, .. }) => *to == TxnState::Pending,
            Some(_) => false,
        };
        view.claimed |= proves_pending;
        match effect {
            Some(effect) => self.batch_after(s, who, StepOutcome::Updated(effect), view),
            None => self.batch_step(s, who, view),
        }
    }

    /// After a step, as `follow_plan`/`resolve` do; the round goes on with
    /// its view.
    fn batch_after(&self, s: &mut State, who: Who, outcome: StepOutcome, view: View) {
        let Pc::Running { plan, next, .. } = &s.procs[who.index()] else {
            panic!("{who:?} is not running");
        };
        let step = plan[*next];
        self.after_step(s, who, step, outcome);
        if matches!(s.procs[who.index()], Pc::Running { .. }) {
            self.batch_step(s, who, view);
        }
    }

    /// The batched process's lost answer: a new round, the write unsure.
    pub(crate) fn batch_lose(s: &mut State, who: Who) -> Option<()> {
        let Pc::Running {
            at:
                At::BatchWriting {
                    doc,
                    val,
                    if_seq,
                    effect,
                    ..
                },
            ..
        } = s.procs[who.index()].clone()
        else {
            return None;
        };
        let unsure = effect.map(|e| (doc, val, if_seq, e));
        let at = At::BatchRead {
            unsure,
            kept_claim: false,
        };
        Self::set_at(s, who, at);
        Some(())
    }
}

#[test]
fn batched_recovery_has_no_counterexample() {
    use stateright::{Checker, Model};
    let started = std::time::Instant::now();
    let checker = TransferModel::batched(Fencing::On, None)
        .checker()
        .threads(2)
        .spawn_bfs()
        .join();
    println!(
        "batched, Fencing::On: {} unique states ({} visited, depth {}) in {:.2?}",
        checker.unique_state_count(),
        checker.state_count(),
        checker.max_depth(),
        started.elapsed()
    );
    checker.assert_properties();
}

/// The safety properties the check finds violated in `model`, stopping
/// when `enough` are.
fn violated(model: TransferModel, enough: stateright::HasDiscoveries) -> Vec<&'static str> {
    use stateright::{Checker, Model};
    let checker = model
        .checker()
        .threads(2)
        .finish_when(enough)
        .spawn_bfs()
        .join();
    crate::SAFETY
        .into_iter()
        .filter(|name| checker.discovery(name).is_some())
        .collect()
}

#[test]
fn batched_recovery_without_fencing_is_caught() {
    // Both holes: a double apply by a stale forward process, units left by
    // an apply after the rollback.
    let holes = ["no account applied twice", "rolled-back leaves no effect"];
    let enough = stateright::HasDiscoveries::AllOf(holes.into_iter().collect());
    let found = violated(TransferModel::batched(Fencing::Off, None), enough);
    println!("batched, Fencing::Off: violates {found:?}");
    for hole in holes {
        assert!(found.contains(&hole), "{hole} not found: {found:?}");
    }
}

#[test]
fn bugs_planted_in_the_batched_round_are_caught() {
    for bug in [BatchBug::NoClaim, BatchBug::ClaimKeptAcrossRounds] {
        let model = TransferModel::batched(Fencing::On, Some(bug));
        let found = violated(model, stateright::HasDiscoveries::AnyFailures);
        println!("planted {bug:?}: violates {found:?}");
        assert!(
            found.contains(&"no account applied twice")
                || found.contains(&"rolled-back leaves no effect"),
            "{bug:?} not caught: {found:?}"
        );
    }
}
