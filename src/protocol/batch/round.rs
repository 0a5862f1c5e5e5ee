//! One round of the batched executor: every live transaction of the batch
//! runs its current step once (see the [module docs](super) for the order of
//! reads and writes and why it keeps the fence).

use super::item::Item;
use super::Batch;
use crate::cluster::{CondWrite, ItemOutcome, VersionedDoc};
use crate::error::{Error, Result};
use crate::protocol::account::AccountState;
use crate::protocol::decide::{Contradiction, Decision, Effect, Fencing};
use crate::protocol::executor::{DocDecision, Outcome};
use crate::protocol::steps::{self, Step};
use crate::protocol::Protocol;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// A write to a transaction document: a transition (with its effect) or a
/// claim (no effect: it only unlocks the account write).
struct TxnWrite {
    item: usize,
    id: String,
    source: Map<String, Value>,
    effect: Option<Effect>,
    at: (i64, i64),
}

/// One write to an account carrying the steps of several transactions.
struct AcctWrite {
    acct: String,
    source: Map<String, Value>,
    at: (i64, i64),
    members: Vec<(usize, Effect)>,
}

/// Documents read in one `_mget`, by id (`None`: missing).
type Docs = HashMap<String, Option<VersionedDoc>>;

fn is_claimed_apply(step: Step, fencing: Fencing) -> bool {
    fencing == Fencing::On && matches!(step, Step::ApplySource | Step::ApplyDestination)
}

impl Protocol {
    /// Reads `ids` of `index` in one realtime `_mget`.
    pub(super) async fn read_many(&self, index: &str, ids: &[String]) -> Result<Docs> {
        let docs = self.cluster().mget(index, ids).await?;
        Ok(ids.iter().cloned().zip(docs).collect())
    }

    /// Runs the current step of every live item once: read accounts, read
    /// transactions, decide, bulk of transitions and claims, bulk of account
    /// writes conditional on the versions read before the claims.
    pub(super) async fn round(&self, b: &mut Batch) {
        let policy = self.config.retry;
        let fencing = self.config.fencing;
        let acct_ix = self.config.indices.accounts.clone();
        let txn_ix = self.config.indices.transactions.clone();
        let items = &mut b.items;
        let live: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].step().is_some())
            .collect();
        let mut resolved = vec![false; items.len()];

        // 1. The accounts, then (after them) the transactions.
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        let mut group_of: HashMap<&str, usize> = HashMap::new();
        for &i in &live {
            if let Some(acct) = items[i].account() {
                match group_of.get(acct) {
                    Some(&g) => groups[g].1.push(i),
                    None => {
                        group_of.insert(acct, groups.len());
                        groups.push((acct.to_string(), vec![i]));
                    }
                }
            }
        }
        let acct_ids: Vec<String> = groups.iter().map(|(a, _)| a.clone()).collect();
        let accounts = match self.read_many(&acct_ix, &acct_ids).await {
            Ok(docs) => docs,
            Err(e) => return self.read_failed(items, &live, e).await,
        };
        let txn_ids: Vec<String> = live
            .iter()
            .filter(|&&i| {
                items[i]
                    .step()
                    .is_some_and(|s| s.transition().is_some() || is_claimed_apply(s, fencing))
            })
            .map(|&i| items[i].t.id.clone())
            .collect();
        let txns = match self.read_many(&txn_ix, &txn_ids).await {
            Ok(docs) => docs,
            Err(e) => return self.read_failed(items, &live, e).await,
        };

        // 2. Transitions, decided on the transaction as just read, stamped
        // with the cluster's clock as one-at-a-time steps are.
        let now = self.cluster().now();
        let mut txn_writes = Vec::new();
        for &i in &live {
            let it = &mut items[i];
            let Some((from, to)) = it.step().and_then(Step::transition) else {
                continue;
            };
            let Some(doc) = self.found(&txns, "transaction", it) else {
                continue;
            };
            if let Some((source, effect, at)) = it.unsure_txn.take() {
                if source == doc.source && at != (doc.seq_no, doc.primary_term) {
                    self.resolve(it, Outcome::Updated(effect));
                    continue;
                }
            }
            match steps::transition_doc(&it.t.id, &doc.source, &from, &to, now) {
                Err(e) => self.fail(it, e),
                Ok(DocDecision::Noop(r)) => self.resolve(it, Outcome::Noop(r)),
                Ok(DocDecision::Write(source, effect)) => txn_writes.push(TxnWrite {
                    item: i,
                    id: it.t.id.clone(),
                    source,
                    effect: Some(effect),
                    at: (doc.seq_no, doc.primary_term),
                }),
            }
        }

        // 3. Account steps, folded per account in batch order; first pass:
        // which applies will write, hence need a claim.
        let mut read_states: HashMap<String, (VersionedDoc, AccountState)> = HashMap::new();
        let mut needs_claim = Vec::new();
        for (acct, members) in &groups {
            let doc = match accounts.get(acct) {
                Some(Some(doc)) => doc.clone(),
                _ => {
                    for &m in members {
                        let e = self.not_found("account", &acct_ix, acct);
                        self.fail(&mut items[m], e);
                    }
                    continue;
                }
            };
            if let Some((source, at)) = b.unsure_accounts.remove(acct) {
                if source == doc.source && at != (doc.seq_no, doc.primary_term) {
                    // Our combined write landed: every step it carried is done.
                    for &m in members {
                        if let Some(effect) = items[m].unsure_acct.take() {
                            self.resolve(&mut items[m], Outcome::Updated(effect));
                            resolved[m] = true;
                        }
                    }
                }
            }
            let state = match AccountState::from_source(&doc.source) {
                Ok(state) => state,
                Err(problems) => {
                    for &m in members {
                        let e = Error::Malformed {
                            kind: "account",
                            id: acct.clone(),
                            problems: problems.join("; "),
                        };
                        self.fail(&mut items[m], e);
                    }
                    continue;
                }
            };
            let mut folded = state.clone();
            for &m in members {
                let it = &mut items[m];
                it.unsure_acct = None;
                let Some(step) = it.step().filter(|_| !resolved[m]) else {
                    continue;
                };
                if let Ok(Decision::Write(next, _)) =
                    steps::account_step(step, &it.t, &folded, fencing)
                {
                    if is_claimed_apply(step, fencing) {
                        needs_claim.push(m);
                    }
                    folded = next;
                }
            }
            read_states.insert(acct.clone(), (doc, state));
        }

        // 4. Claims, decided on the transaction read after the accounts.
        for &m in &needs_claim {
            let it = &mut items[m];
            let Some(doc) = self.found(&txns, "transaction", it) else {
                continue;
            };
            match steps::claim_doc(&it.t.id, &doc.source) {
                Err(e) => self.fail(it, e),
                Ok(DocDecision::Noop(r)) => {
                    self.resolve(it, Outcome::Noop(r));
                    resolved[m] = true;
                }
                Ok(DocDecision::Write(source, _)) => txn_writes.push(TxnWrite {
                    item: m,
                    id: it.t.id.clone(),
                    source,
                    effect: None,
                    at: (doc.seq_no, doc.primary_term),
                }),
            }
        }

        // 5. One bulk of transitions and claims.
        let mut claimed = HashSet::new();
        let mut trouble = Trouble::default();
        if !txn_writes.is_empty() {
            let writes: Vec<CondWrite<'_>> = txn_writes
                .iter()
                .map(|w| CondWrite {
                    index: &txn_ix,
                    id: &w.id,
                    source: &w.source,
                    seq_no: w.at.0,
                    primary_term: w.at.1,
                })
                .collect();
            let outcomes = self.cluster().bulk_put_if(&writes).await;
            for (w, outcome) in txn_writes.iter().zip(each(outcomes, txn_writes.len())) {
                let it = &mut items[w.item];
                let doc = (txn_ix.as_str(), w.id.as_str());
                match outcome {
                    ItemOutcome::Written => match &w.effect {
                        Some(effect) => {
                            self.resolve(it, Outcome::Updated(effect.clone()));
                            resolved[w.item] = true;
                        }
                        None => {
                            claimed.insert(w.item);
                        }
                    },
                    ItemOutcome::Conflict => {
                        trouble.conflicts = trouble.conflicts.max(it.conflicts + 1);
                        self.conflicted(it, &policy, doc);
                    }
                    ItemOutcome::Failed(e) if e.is_transient() => {
                        if let Some(effect) = &w.effect {
                            it.unsure_txn = Some((w.source.clone(), effect.clone(), w.at));
                        }
                        trouble.unknown(it.unknown + 1, &e);
                        self.unknown(it, &policy, doc, &e);
                    }
                    ItemOutcome::Failed(e) => self.fail(it, e),
                }
            }
        }

        // 6. Second pass on the same account reads: only applies whose claim
        // succeeded write; one write per account carries every step.
        let mut acct_writes = Vec::new();
        for (acct, members) in &groups {
            let Some((doc, state)) = read_states.get(acct) else {
                continue;
            };
            let mut folded = state.clone();
            let mut carried = Vec::new();
            for &m in members {
                let it = &mut items[m];
                let Some(step) = it.step().filter(|_| !resolved[m]) else {
                    continue;
                };
                match steps::account_step(step, &it.t, &folded, fencing) {
                    Err(Contradiction(why)) => {
                        let e = Error::Malformed {
                            kind: "account",
                            id: acct.clone(),
                            problems: why,
                        };
                        self.fail(it, e);
                    }
                    Ok(Decision::Noop(r)) => {
                        self.resolve(it, Outcome::Noop(r));
                        resolved[m] = true;
                    }
                    Ok(Decision::Write(next, effect)) => {
                        if is_claimed_apply(step, fencing) && !claimed.contains(&m) {
                            continue;
                        }
                        folded = next;
                        carried.push((m, effect));
                    }
                }
            }
            if !carried.is_empty() {
                let mut source = doc.source.clone();
                folded.write_into(&mut source);
                acct_writes.push(AcctWrite {
                    acct: acct.clone(),
                    source,
                    at: (doc.seq_no, doc.primary_term),
                    members: carried,
                });
            }
        }

        // 7. One bulk of account writes (tests may hold the batch here, after
        // its claims, as they hold a one-at-a-time apply).
        if let Some(gate) = self.exec.gate() {
            for w in &acct_writes {
                let applies = w
                    .members
                    .iter()
                    .any(|(_, e)| matches!(e, Effect::Applied { .. }));
                if applies {
                    gate(&w.acct).await;
                }
            }
        }
        if !acct_writes.is_empty() {
            let writes: Vec<CondWrite<'_>> = acct_writes
                .iter()
                .map(|w| CondWrite {
                    index: &acct_ix,
                    id: &w.acct,
                    source: &w.source,
                    seq_no: w.at.0,
                    primary_term: w.at.1,
                })
                .collect();
            let outcomes = self.cluster().bulk_put_if(&writes).await;
            for (w, outcome) in acct_writes.iter().zip(each(outcomes, acct_writes.len())) {
                let doc = (acct_ix.as_str(), w.acct.as_str());
                match outcome {
                    ItemOutcome::Written => {
                        for (m, effect) in &w.members {
                            self.resolve(&mut items[*m], Outcome::Updated(effect.clone()));
                        }
                    }
                    ItemOutcome::Conflict => {
                        for (m, _) in &w.members {
                            let it = &mut items[*m];
                            trouble.conflicts = trouble.conflicts.max(it.conflicts + 1);
                            self.conflicted(it, &policy, doc);
                        }
                    }
                    ItemOutcome::Failed(e) if e.is_transient() => {
                        b.unsure_accounts
                            .insert(w.acct.clone(), (w.source.clone(), w.at));
                        for (m, effect) in &w.members {
                            let it = &mut items[*m];
                            it.unsure_acct = Some(effect.clone());
                            trouble.unknown(it.unknown + 1, &e);
                            self.unknown(it, &policy, doc, &e);
                        }
                    }
                    ItemOutcome::Failed(e) => {
                        for (m, _) in &w.members {
                            self.fail(&mut items[*m], e.clone());
                        }
                    }
                }
            }
        }
        self.back_off(trouble).await;
    }

    /// The document the current step of `it` needs from `docs`, failing the
    /// step (as the executor's read would) when it is missing.
    fn found<'d>(
        &self,
        docs: &'d Docs,
        kind: &'static str,
        it: &mut Item,
    ) -> Option<&'d VersionedDoc> {
        match docs.get(&it.t.id) {
            Some(Some(doc)) => Some(doc),
            _ => {
                let e = self.not_found(kind, &self.config.indices.transactions, &it.t.id);
                self.fail(it, e);
                None
            }
        }
    }

    fn not_found(&self, kind: &'static str, index: &str, id: &str) -> Error {
        Error::NotFound {
            kind,
            index: index.to_string(),
            id: id.to_string(),
        }
    }

    /// A read of the round failed: a transient failure counts as an unknown
    /// outcome for every live step (they are all read again next round),
    /// any other fails them.
    async fn read_failed(&self, items: &mut [Item], live: &[usize], e: Error) {
        let mut trouble = Trouble::default();
        for &i in live {
            let it = &mut items[i];
            let (index, id) = self.doc_of(it);
            if e.is_transient() {
                trouble.unknown(it.unknown + 1, &e);
                self.unknown(it, &self.config.retry, (&index, &id), &e);
            } else {
                self.fail(it, e.clone());
            }
        }
        self.back_off(trouble).await;
    }

    /// The `(index, id)` the current step of `it` writes.
    fn doc_of(&self, it: &Item) -> (String, String) {
        match it.account() {
            Some(acct) => (self.config.indices.accounts.clone(), acct.to_string()),
            None => (self.config.indices.transactions.clone(), it.t.id.clone()),
        }
    }

    /// Waits before the next round as the executor would after the worst
    /// conflict or unknown outcome of this one.
    async fn back_off(&self, trouble: Trouble) {
        let wait = if trouble.unknown > 0 {
            let factor = 1u32 << (trouble.unknown - 1).min(6);
            let wait = (self.config.retry.base_backoff * factor).min(Duration::from_secs(2));
            // As the executor: at least what a busy cluster asked for (capped).
            trouble.retry_after.map_or(wait, |asked| {
                asked.min(crate::cluster::MAX_RETRY_WAIT).max(wait)
            })
        } else if trouble.conflicts > 0 {
            let scale = u64::from(trouble.conflicts.min(8));
            Duration::from_millis(rand::random_range(0..=2 * scale))
        } else {
            return;
        };
        tokio::time::sleep(wait).await;
    }
}

/// The worst retry counts seen in a round (they set the wait before the next).
#[derive(Default, Clone, Copy)]
struct Trouble {
    conflicts: u32,
    unknown: u32,
    /// The longest `Retry-After` an answer asked for.
    retry_after: Option<Duration>,
}

impl Trouble {
    /// Notes an unknown outcome, the `attempt`-th of its step, caused by `e`.
    fn unknown(&mut self, attempt: u32, e: &Error) {
        self.unknown = self.unknown.max(attempt);
        self.retry_after = self.retry_after.max(e.retry_after());
    }
}

/// One outcome per item: a failed request is the same failure for each.
fn each(outcomes: Result<Vec<ItemOutcome>>, n: usize) -> Vec<ItemOutcome> {
    match outcomes {
        Ok(v) => v,
        Err(e) => (0..n).map(|_| ItemOutcome::Failed(e.clone())).collect(),
    }
}
