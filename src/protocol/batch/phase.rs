//! The phases of a [round](super::round): one `_bulk` of transaction writes
//! (transitions and claims) or of account writes (one per account, carrying
//! the steps of every transaction on that side of it), each write decided
//! by the protocol's pure functions on what the round knows of its document,
//! sending only the fields it sets (`update` actions, see
//! [`Changes`]) and conditional on that document's version.

use super::item::{conflicted, fail, resolve, resolve_receipted, unknown, Batch, Item};
use super::round::{not_found, send, RoundState};
use crate::cluster::{Changes, CondWrite, ItemOutcome, VersionedDoc};
use crate::error::Error;
use crate::protocol::account::AccountState;
use crate::protocol::decide::{Contradiction, Decision, Effect, Fencing};
use crate::protocol::executor::{DocDecision, StepOutcome};
use crate::protocol::problem::{Problem, Problems};
use crate::protocol::receipt::Receipt;
use crate::protocol::steps::{self, Step};
use crate::protocol::transaction::TxnState;
use crate::protocol::Protocol;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

/// A write to a transaction document: a transition (with its effect) or a
/// claim (no effect: it only unlocks the account writes).
struct TxnWrite {
    item: usize,
    /// The fields it sets (a claim: none, forced).
    changes: Changes,
    /// The document as it will be once written (as read, changes merged).
    after: Map<String, Value>,
    effect: Option<Effect>,
    at: (i64, i64),
    /// The document's custom routing value, as read.
    routing: Option<String>,
}

/// One write to an account carrying the steps of several transactions.
struct AcctWrite {
    acct: String,
    /// The fields it sets (a fence when the steps change none).
    changes: Changes,
    /// The account as it will be once written (as read, changes merged).
    after: Map<String, Value>,
    at: (i64, i64),
    /// The document's custom routing value, as read.
    routing: Option<String>,
    /// Each carried step: its item, its effect, and the balance before and
    /// after it in the fold (what its receipt says).
    members: Vec<(usize, Effect, (i64, i64))>,
}

impl AcctWrite {
    /// The receipt of a member's step once this write landed at `landed`
    /// (`None`: its answer was lost), if the step moved the balance.
    fn receipt(
        &self,
        effect: &Effect,
        balances: (i64, i64),
        landed: Option<(i64, i64)>,
    ) -> Option<Receipt> {
        effect
            .moves_balance()
            .then(|| Receipt::new(balances.0, balances.1, self.at, landed))
    }
}

fn is_apply(step: Step) -> bool {
    matches!(step, Step::ApplySource | Step::ApplyDestination)
}

/// The new version a written document has, from the `_bulk` answer (its
/// routing unchanged).
fn rewritten(
    id: &str,
    source: &Map<String, Value>,
    at: (i64, i64),
    routing: &Option<String>,
) -> VersionedDoc {
    VersionedDoc {
        id: id.to_string(),
        seq_no: at.0,
        primary_term: at.1,
        source: source.clone(),
        routing: routing.clone(),
    }
}

/// The transactions whose next step is on their `source_side` account (and
/// not halted this round), grouped by that account in the order first met.
fn account_groups(items: &[Item], r: &RoundState, source_side: bool) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for (i, it) in items.iter().enumerate() {
        let Some(step) = it.step().filter(|_| !r.halted[i]) else {
            continue;
        };
        if step.on_source() != Some(source_side) {
            continue;
        }
        let acct = if source_side { &it.t.src } else { &it.t.dest };
        match group_of.get(acct) {
            Some(&g) => groups[g].1.push(i),
            None => {
                group_of.insert(acct.clone(), groups.len());
                groups.push((acct.clone(), vec![i]));
            }
        }
    }
    groups
}

/// Whether `it`, at an apply, has an apply ahead (this one or the next)
/// that would write on the accounts as the round knows them, hence
/// needs a claim first (with fencing).
fn needs_claim(p: &Protocol, it: &Item, r: &RoundState) -> bool {
    if p.config.fencing != Fencing::On {
        return false;
    }
    it.todo.iter().take_while(|s| is_apply(**s)).any(|&step| {
        let acct = if step.on_source() == Some(true) {
            &it.t.src
        } else {
            &it.t.dest
        };
        let Some(doc) = r.accts.get(acct) else {
            return false;
        };
        let Ok(state) = AccountState::from_source(&doc.source) else {
            return false;
        };
        matches!(
            steps::account_step(step, &it.t, &state, p.config.fencing),
            Ok(Decision::Write(..))
        )
    })
}

/// One `_bulk` of transaction writes: the transition of every item at a
/// transition, and the claim of every unclaimed item at an apply that
/// will write. A begin (`created -> pending`) or a claim that succeeds
/// marks its item claimed for the rest of the round.
pub(super) async fn txn_phase(
    p: &Protocol,
    items: &mut [Item],
    r: &mut RoundState,
    stop: &AtomicBool,
) {
    let txn_ix = p.config.indices.transactions.clone();
    let stamp = match p.time_fields().await {
        Ok(times) => times.modification.stamp(p.now().await),
        Err(e) => {
            for it in items.iter_mut() {
                fail(p, it, e.clone());
            }
            return;
        }
    };
    let mut writes = Vec::new();
    for (i, it) in items.iter_mut().enumerate() {
        let Some(step) = it.step().filter(|_| !r.halted[i]) else {
            continue;
        };
        let transition = step.transition();
        if transition.is_none() && (r.claimed[i] || !needs_claim(p, it, r)) {
            continue;
        }
        let Some(doc) = &r.txns[i] else {
            let e = not_found("transaction", &txn_ix, &it.t.id);
            fail(p, it, e);
            continue;
        };
        let decision = match &transition {
            Some((from, to)) => steps::transition_doc(&it.t.id, &doc.source, from, to, &stamp),
            None => steps::claim_doc(&it.t.id, &doc.source),
        };
        match decision {
            Err(e) => fail(p, it, e),
            Ok(DocDecision::Noop(reason)) => resolve(p, it, StepOutcome::Noop(reason)),
            Ok(DocDecision::Write(changes, effect)) => writes.push(TxnWrite {
                item: i,
                after: changes.apply_to(&doc.source),
                changes,
                effect: transition.map(|_| effect),
                at: (doc.seq_no, doc.primary_term),
                routing: doc.routing.clone(),
            }),
        }
    }
    let conds: Vec<CondWrite<'_>> = writes
        .iter()
        .map(|w| CondWrite {
            index: &txn_ix,
            id: &items[w.item].t.id,
            changes: &w.changes,
            seq_no: w.at.0,
            primary_term: w.at.1,
            routing: w.routing.as_deref(),
        })
        .collect();
    let outcomes = send(p, &conds, stop).await;
    for (w, answer) in writes.iter().zip(outcomes) {
        match answer {
            Some((outcome, version)) => txn_written(p, &mut items[w.item], r, w, outcome, version),
            // Not sent (the job was stopped): nothing happened to it.
            None => r.halted[w.item] = true,
        }
    }
}

/// Takes in the answer to one transaction write: the new version (a
/// write that proves the transaction pending claims it) and the step
/// done; or, on a conflict or an unknown outcome, the item halted for
/// this round; or the item failed.
fn txn_written(
    p: &Protocol,
    it: &mut Item,
    r: &mut RoundState,
    w: &TxnWrite,
    outcome: ItemOutcome,
    version: Option<(i64, i64)>,
) {
    let policy = p.config.retry;
    let id = it.t.id.clone();
    let doc = (p.config.indices.transactions.as_str(), id.as_str());
    match outcome {
        ItemOutcome::Written => {
            // The transaction was pending when this write landed,
            // after the round read the accounts: the claim of the
            // fence (a begin proves it as a claim does).
            let proves_pending = match &w.effect {
                None => true,
                Some(Effect::Transitioned { to, .. }) => *to == TxnState::Pending,
                Some(_) => false,
            };
            match version {
                Some(at) => r.txns[w.item] = Some(rewritten(&it.t.id, &w.after, at, &w.routing)),
                None => r.halted[w.item] = true,
            }
            r.claimed[w.item] |= proves_pending;
            if let Some(effect) = &w.effect {
                resolve(p, it, StepOutcome::Updated(effect.clone()));
            }
        }
        ItemOutcome::Conflict => {
            r.trouble.conflicts = r.trouble.conflicts.max(it.conflicts + 1);
            conflicted(p, it, &policy, doc);
            r.halted[w.item] = true;
        }
        ItemOutcome::Failed(e) if e.is_transient() => {
            if let Some(effect) = &w.effect {
                it.unsure_txn = Some((w.changes.clone(), effect.clone(), w.at));
            }
            let attempt = unknown(p, it, &policy, doc, &e);
            r.trouble.unknown(attempt, &e);
            r.halted[w.item] = true;
        }
        ItemOutcome::Failed(e) => fail(p, it, e),
    }
}

/// One `_bulk` of account writes for the steps on one side (source or
/// destination) of their transactions: the steps on each account folded
/// in batch order on the round's knowledge of it, one write per account
/// conditional on that version. An apply that would write is carried
/// only if its transaction was claimed this round.
pub(super) async fn acct_phase(
    p: &Protocol,
    b: &mut Batch<'_>,
    r: &mut RoundState,
    source_side: bool,
) {
    let groups = account_groups(&b.items, r, source_side);
    let writes: Vec<AcctWrite> = groups
        .into_iter()
        .filter_map(|(acct, members)| account_write(p, &mut b.items, r, acct, members))
        .collect();
    // Tests may hold the batch here, after its claims, as they hold a
    // one-at-a-time apply.
    if let Some(gate) = p.exec.gate() {
        for w in &writes {
            if w.members
                .iter()
                .any(|(_, e, _)| matches!(e, Effect::Applied { .. }))
            {
                gate(&w.acct).await;
            }
        }
    }
    let acct_ix = p.config.indices.accounts.clone();
    let conds: Vec<CondWrite<'_>> = writes
        .iter()
        .map(|w| CondWrite {
            index: &acct_ix,
            id: &w.acct,
            changes: &w.changes,
            seq_no: w.at.0,
            primary_term: w.at.1,
            routing: w.routing.as_deref(),
        })
        .collect();
    let outcomes = send(p, &conds, b.stop).await;
    for (w, answer) in writes.iter().zip(outcomes) {
        match answer {
            Some((outcome, version)) => account_written(p, b, r, w, outcome, version),
            None => {
                r.forget(&w.acct);
                for (m, ..) in &w.members {
                    r.halted[*m] = true;
                }
            }
        }
    }
}

/// The write one account's group makes: each member's step decided in
/// turn on the account as the steps before it leave it (members that
/// fail or need nothing are resolved here); `None` when nothing is to be
/// written this round.
fn account_write(
    p: &Protocol,
    items: &mut [Item],
    r: &RoundState,
    acct: String,
    members: Vec<usize>,
) -> Option<AcctWrite> {
    let fencing = p.config.fencing;
    if r.missing.contains(&acct) {
        for m in members {
            let e = not_found("account", &p.config.indices.accounts, &acct);
            fail(p, &mut items[m], e);
        }
        return None;
    }
    // Not known any more this round: its steps wait for the next.
    let doc = r.accts.get(&acct)?;
    let mut folded = match p.parse_account(&acct, &doc.source) {
        Ok(state) => state,
        Err(e) => {
            for m in members {
                fail(p, &mut items[m], e.clone());
            }
            return None;
        }
    };
    let mut carried = Vec::new();
    for m in members {
        let it = &mut items[m];
        let Some(step) = it.step() else { continue };
        match steps::account_step(step, &it.t, &folded, fencing) {
            Err(Contradiction(why)) => {
                let e = Error::Malformed {
                    kind: "account",
                    id: acct.clone(),
                    problems: Problems::one(Problem::Contradiction(why)),
                };
                fail(p, it, e);
            }
            Ok(Decision::Noop(reason)) => resolve(p, it, StepOutcome::Noop(reason)),
            Ok(Decision::Write(next, effect)) => {
                if fencing == Fencing::On && is_apply(step) && !r.claimed[m] {
                    continue;
                }
                carried.push((m, effect, (folded.balance, next.balance)));
                folded = next;
            }
        }
    }
    if carried.is_empty() {
        return None;
    }
    let changes = steps::account_changes(&doc.source, &folded);
    Some(AcctWrite {
        at: (doc.seq_no, doc.primary_term),
        routing: doc.routing.clone(),
        acct,
        after: changes.apply_to(&doc.source),
        changes,
        members: carried,
    })
}

/// Takes in the answer to one account write: the new version and every
/// member's step done; or, on a conflict or an unknown outcome, the
/// account forgotten and its members halted for this round; or the
/// members failed.
fn account_written(
    p: &Protocol,
    b: &mut Batch,
    r: &mut RoundState,
    w: &AcctWrite,
    outcome: ItemOutcome,
    version: Option<(i64, i64)>,
) {
    let policy = p.config.retry;
    let items = &mut b.items;
    let doc = (p.config.indices.accounts.as_str(), w.acct.as_str());
    match outcome {
        ItemOutcome::Written => {
            match version {
                Some(at) => {
                    r.accts
                        .insert(w.acct.clone(), rewritten(&w.acct, &w.after, at, &w.routing));
                }
                None => r.forget(&w.acct),
            }
            for (m, effect, balances) in &w.members {
                let receipt = w.receipt(effect, *balances, version);
                let outcome = StepOutcome::Updated(effect.clone());
                resolve_receipted(p, &mut items[*m], outcome, receipt);
            }
        }
        ItemOutcome::Conflict => {
            r.forget(&w.acct);
            for (m, ..) in &w.members {
                let it = &mut items[*m];
                r.trouble.conflicts = r.trouble.conflicts.max(it.conflicts + 1);
                conflicted(p, it, &policy, doc);
                r.halted[*m] = true;
            }
        }
        ItemOutcome::Failed(e) if e.is_transient() => {
            r.forget(&w.acct);
            b.unsure_accounts
                .insert(w.acct.clone(), (w.changes.clone(), w.at));
            for (m, effect, balances) in &w.members {
                let it = &mut items[*m];
                it.unsure_acct = Some((effect.clone(), w.receipt(effect, *balances, None)));
                let attempt = unknown(p, it, &policy, doc, &e);
                r.trouble.unknown(attempt, &e);
                r.halted[*m] = true;
            }
        }
        ItemOutcome::Failed(e) => {
            r.forget(&w.acct);
            for (m, ..) in &w.members {
                fail(p, &mut items[*m], e.clone());
            }
        }
    }
}
