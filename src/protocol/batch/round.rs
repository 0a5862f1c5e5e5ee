//! One round of the batched executor: read the accounts of every live
//! transaction, then the transactions, then run the phases (`batch::phase`)
//! in order, each live transaction taking as many steps of its plan as the
//! phases allow (see the [module docs](super) for why that keeps the fence).

use super::item::{fail, resolve, resolve_receipted, unknown, Batch, Item};
use super::phase::{acct_phase, txn_phase};
use crate::cluster::{CondWrite, ItemOutcome, VersionedDoc};
use crate::error::{Error, Result};
use crate::protocol::executor::StepOutcome;
use crate::protocol::Protocol;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The answer to one write of a phase: its outcome and the new version
/// (`None`: not sent, the job was stopped while it waited on its pace).
pub(super) type Sent = Option<(ItemOutcome, Option<(i64, i64)>)>;

/// Documents read in one `_mget`, by id (`None`: missing).
pub(super) type Docs = HashMap<String, Option<VersionedDoc>>;

/// What one phase of a round writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Transaction documents: transitions and claims.
    Txn,
    /// Accounts, for steps on a transaction's source account.
    Source,
    /// Accounts, for steps on a transaction's destination account.
    Destination,
}

/// The phases of a round. A transaction read `created` can run its whole
/// plan in one round (begin; apply source; apply destination; commit; remove
/// source; remove destination; finish); each phase is one `_bulk`, sent
/// after the previous one's answer, so every transaction's source is
/// written before its destination, as one at a time (the audit relies on
/// that order).
const PHASES: [Phase; 7] = [
    Phase::Txn,
    Phase::Source,
    Phase::Destination,
    Phase::Txn,
    Phase::Source,
    Phase::Destination,
    Phase::Txn,
];

/// What a round knows so far: each document as read at the round's start or
/// as the round itself has since written it (source and new version, from
/// the `_bulk` answer), and which transactions may go on.
pub(super) struct RoundState {
    /// Each item's transaction, by item index (`None`: missing, or not read).
    pub txns: Vec<Option<VersionedDoc>>,
    /// The accounts whose current version the round knows.
    pub accts: HashMap<String, VersionedDoc>,
    /// Accounts the round's read did not find.
    pub missing: HashSet<String>,
    /// Items stopped for the rest of the round (a conflict, an unknown
    /// outcome, or a write whose new version the answer did not give).
    pub halted: Vec<bool>,
    /// Items whose transaction this round was seen, by a conditional write
    /// decided on the round's read (a claim, or the begin `created ->
    /// pending`), to be `pending` after the round read the accounts.
    pub claimed: Vec<bool>,
    /// The worst retry counts of the round.
    pub trouble: Trouble,
}

impl RoundState {
    /// The account's version is no longer known this round (its write
    /// conflicted or its outcome is unknown): steps on it wait for the next.
    pub fn forget(&mut self, acct: &str) {
        self.accts.remove(acct);
    }
}

/// The worst retry counts seen in a round (they set the wait before the next).
#[derive(Default, Clone, Copy)]
pub(super) struct Trouble {
    pub conflicts: u32,
    pub unknown: u32,
    /// Throttles (429), apart from the other unknown outcomes.
    pub throttles: u32,
    /// The longest `Retry-After` an answer asked for.
    pub retry_after: Option<Duration>,
}

impl Trouble {
    /// Notes an unknown outcome, the `attempt`-th of its step, caused by `e`.
    pub fn unknown(&mut self, attempt: u32, e: &Error) {
        if e.is_throttle() {
            self.throttles = self.throttles.max(attempt);
        } else {
            self.unknown = self.unknown.max(attempt);
        }
        self.retry_after = self.retry_after.max(e.retry_after());
    }
}

/// Reads `ids` of `index` in one realtime `_mget`.
pub(super) async fn read_many(p: &Protocol, index: &str, ids: &[String]) -> Result<Docs> {
    let docs = p.cluster().mget(index, ids).await?;
    Ok(ids.iter().cloned().zip(docs).collect())
}

/// Runs every live item as far as one round of phases takes it: read
/// the accounts, then the transactions, recognise writes whose answers
/// were lost, then the phases.
pub(super) async fn round(p: &Protocol, b: &mut Batch<'_>) {
    let acct_ix = p.config.indices.accounts.clone();
    let txn_ix = p.config.indices.transactions.clone();
    let live: Vec<usize> = (0..b.items.len())
        .filter(|&i| b.items[i].step().is_some())
        .collect();

    // The accounts first (instant T1), then the transactions (after T1).
    let mut acct_ids = Vec::new();
    let mut seen = HashSet::new();
    for &i in &live {
        let it = &b.items[i];
        if it.todo.iter().any(|s| s.on_source().is_some()) {
            for a in [&it.t.src, &it.t.dest] {
                if seen.insert(a.clone()) {
                    acct_ids.push(a.clone());
                }
            }
        }
    }
    let accounts = match read_many(p, &acct_ix, &acct_ids).await {
        Ok(docs) => docs,
        Err(e) => return read_failed(p, &mut b.items, &live, e, b.stop).await,
    };
    let txn_ids: Vec<String> = live.iter().map(|&i| b.items[i].t.id.clone()).collect();
    let txns = match read_many(p, &txn_ix, &txn_ids).await {
        Ok(docs) => docs,
        Err(e) => return read_failed(p, &mut b.items, &live, e, b.stop).await,
    };

    let n = b.items.len();
    let mut r = RoundState {
        txns: vec![None; n],
        accts: HashMap::new(),
        missing: HashSet::new(),
        halted: vec![false; n],
        claimed: vec![false; n],
        trouble: Trouble::default(),
    };
    for (id, doc) in accounts {
        match doc {
            Some(doc) => {
                r.accts.insert(id, doc);
            }
            None => {
                r.missing.insert(id);
            }
        }
    }
    for &i in &live {
        r.txns[i] = txns.get(&b.items[i].t.id).cloned().flatten();
    }
    recognise(p, b, &live, &r);
    for phase in PHASES {
        // Stopped: the next phase waits for no one (every step so far
        // left its transaction in a protocol state).
        if b.stop.load(Ordering::SeqCst) {
            return;
        }
        match phase {
            Phase::Txn => txn_phase(p, &mut b.items, &mut r, b.stop).await,
            side => acct_phase(p, b, &mut r, side == Phase::Source).await,
        }
    }
    back_off(p, r.trouble, b.stop).await;
}

/// Writes of earlier rounds whose answers were lost, recognised on this
/// round's read exactly as the executor does: the document holds every
/// field the write set, at a newer version than the one it was
/// conditional on (`Changes::landed`).
fn recognise(p: &Protocol, b: &mut Batch<'_>, live: &[usize], r: &RoundState) {
    let Batch {
        items,
        unsure_accounts,
        ..
    } = b;
    for &i in live {
        let it = &mut items[i];
        if let (Some((changes, effect, at)), Some(doc)) = (it.unsure_txn.take(), &r.txns[i]) {
            if changes.landed(doc, at) {
                resolve(p, it, StepOutcome::Updated(effect));
            }
        }
    }
    for (acct, (changes, at)) in unsure_accounts.drain() {
        let Some(doc) = r.accts.get(&acct) else {
            continue;
        };
        if !changes.landed(doc, at) {
            continue;
        }
        // Our combined write landed: every step it carried is done.
        for &i in live {
            let it = &mut items[i];
            if it.account() == Some(acct.as_str()) {
                if let Some((effect, receipt)) = it.unsure_acct.take() {
                    resolve_receipted(p, it, StepOutcome::Updated(effect), receipt);
                }
            }
        }
    }
    for &i in live {
        items[i].unsure_acct = None;
    }
}

/// Sends `writes` as conditional `_bulk` requests: one outcome per
/// write, with the new version of each written document when the answer
/// gives it (a failed request is the same failure for each). A job's
/// [`Pace`](crate::protocol::jobs::Pace) admits them first, in requests
/// of the size it allows, and hears how each was answered; `None` for
/// the writes not sent because `stop` was set while waiting.
pub(super) async fn send(p: &Protocol, writes: &[CondWrite<'_>], stop: &AtomicBool) -> Vec<Sent> {
    let mut out: Vec<Sent> = Vec::with_capacity(writes.len());
    let pace = p.exec.pace();
    let size = pace.and_then(|p| p.request_size()).unwrap_or(writes.len());
    for part in writes.chunks(size.max(1)) {
        if let Some(pace) = pace {
            if !pace.admit(part.len(), Some(stop)).await {
                out.resize_with(writes.len(), || None);
                return out;
            }
        }
        let answers = match p.cluster().bulk_put_if_versioned(part).await {
            Ok(v) => v,
            Err(e) => part
                .iter()
                .map(|_| (ItemOutcome::Failed(e.clone()), None))
                .collect(),
        };
        if let Some(pace) = pace {
            let throttled = answers
                .iter()
                .filter(|(o, _)| matches!(o, ItemOutcome::Failed(e) if e.is_throttle()))
                .count();
            pace.answered(answers.len() - throttled, throttled);
        }
        out.extend(answers.into_iter().map(Some));
    }
    out
}

pub(super) fn not_found(kind: &'static str, index: &str, id: &str) -> Error {
    Error::NotFound {
        kind,
        index: index.to_string(),
        id: id.to_string(),
    }
}

/// A read of the round failed: a transient failure counts as an unknown
/// outcome for every live step (they are all read again next round),
/// any other fails them.
async fn read_failed(
    p: &Protocol,
    items: &mut [Item],
    live: &[usize],
    e: Error,
    stop: &AtomicBool,
) {
    let mut trouble = Trouble::default();
    for &i in live {
        let it = &mut items[i];
        let (index, id) = doc_of(p, it);
        if e.is_transient() {
            let attempt = unknown(p, it, &p.config.retry, (&index, &id), &e);
            trouble.unknown(attempt, &e);
        } else {
            fail(p, it, e.clone());
        }
    }
    back_off(p, trouble, stop).await;
}

/// The `(index, id)` the current step of `it` writes.
fn doc_of(p: &Protocol, it: &Item) -> (String, String) {
    match it.account() {
        Some(acct) => (p.config.indices.accounts.clone(), acct.to_string()),
        None => (p.config.indices.transactions.clone(), it.t.id.clone()),
    }
}

/// Waits before the next round as the executor would after the worst
/// conflict, unknown outcome or throttle of this one. A job's pace
/// already slows its writes after a throttle: then only the wait the
/// cluster asked for (`Retry-After`) is added, no second back-off.
async fn back_off(p: &Protocol, trouble: Trouble, stop: &AtomicBool) {
    let exponential = if p.exec.pace().is_some() {
        trouble.unknown
    } else {
        trouble.unknown.max(trouble.throttles)
    };
    let wait = if exponential > 0 {
        let factor = 1u32 << (exponential - 1).min(6);
        let wait = (p.config.retry.base_backoff * factor).min(Duration::from_secs(2));
        // As the executor: at least what a busy cluster asked for (capped).
        trouble.retry_after.map_or(wait, |asked| {
            asked.min(crate::cluster::MAX_RETRY_WAIT).max(wait)
        })
    } else if trouble.throttles > 0 {
        // Paced or not, a throttle waits: what the cluster asked for,
        // else the read's rule (exponential with jitter), never nothing.
        trouble.retry_after.map_or_else(
            || crate::cluster::jittered(trouble.throttles),
            |asked| asked.min(crate::cluster::MAX_RETRY_WAIT),
        )
    } else if trouble.conflicts > 0 {
        let scale = u64::from(trouble.conflicts.min(8));
        Duration::from_millis(rand::random_range(0..=2 * scale))
    } else {
        return;
    };
    let cluster = p.exec.cluster();
    if trouble.throttles > 0 {
        cluster.waiting_on(crate::cluster::WaitCause::Status(429));
    }
    crate::protocol::jobs::wait_unless(wait, Some(stop)).await;
    cluster.done_waiting();
}
