//! The cause verdict, a pure function over evidence: why is this stuck
//! transaction (or this group of them) stuck, and which act is safe for
//! it? The dashboard's detail pane and by-cause view, `check`, `list
//! --json` and the exporter all read this one verdict. Its evidence is what
//! a reading already holds: the locks (each with its holder's own liveness,
//! by lease or heartbeat: [`LockView::holder`]), the healing verdict
//! ([`super::healing`]) and the stuck transactions counted per account.
//!
//! The rules for one stuck transaction, in order:
//! 1. the tool refuses the document (malformed beyond a missing
//!    modification time), or the mappings would reject the protocol's
//!    writes: [`Cause::Refused`] with the refusal, investigate;
//! 2. a lock it holds, or one on its accounts, has a live holder:
//!    [`Cause::HolderLive`] (its worker, or contention), wait;
//! 3. a lock it holds has a dead holder: [`Cause::HolderDead`], recover;
//!    a lock another holds on its accounts has a dead holder (or an owner
//!    transaction that ended): release it;
//! 4. the application's heartbeats say no instance runs: holder dead,
//!    recover;
//! 5. the healing verdict says the application is recovering: wait;
//! 6. one of its accounts has at least [`HOT_ACCOUNT`] stuck transactions:
//!    [`Cause::HotAccount`], investigate;
//! 7. otherwise [`Cause::Unknown`], saying what is missing: investigate.

use super::healing::Healing;
pub use super::runbooks::{CauseKind, Runbooks};
use crate::error::WriteRefusal;
use crate::protocol::locks::{LockView, StaleReason, Staleness};
use crate::protocol::read::rules::{is_only_undated, urgency_with};
use crate::protocol::steps::ProcedureRefusal;
use crate::protocol::time::human_age;
use crate::protocol::transaction::Transaction;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Stuck transactions on one account from which it is called hot.
pub const HOT_ACCOUNT: u64 = 5;

/// What a reading knows that causes are judged on.
#[derive(Debug, Clone, Copy)]
pub struct CauseEvidence<'a> {
    /// The locks read (each with its holder's liveness).
    pub locks: &'a [LockView],
    /// The healing verdict of the same reading.
    pub healing: &'a Healing,
    /// Stuck transactions per account (as source or destination).
    pub stuck_by_account: &'a BTreeMap<String, u64>,
    /// The write check's refusal, when the mappings would reject the
    /// protocol's writes (judged on discovery: [`super::super::writes`]).
    pub writes: Option<&'a WriteRefusal>,
}

/// Why the tool refuses to act on a stuck transaction: the procedure's
/// refusal of the document, or the write check's of the indices.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The procedure refuses the document (malformed, ...).
    Procedure(ProcedureRefusal),
    /// The mappings would reject a field the protocol writes.
    Writes(WriteRefusal),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Procedure(r) => r.fmt(f),
            Refusal::Writes(r) => r.fmt(f),
        }
    }
}

/// How a holder is known to be dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeadBy {
    /// A lock's lease ran out or its holder's heartbeat is too old
    /// ([`StaleReason::LeaseExpired`] or [`StaleReason::HolderDead`]).
    Lock {
        /// The locked resource.
        lock: String,
        /// Who holds it, in words.
        holder: String,
        /// The evidence.
        reason: StaleReason,
        /// Whether the stuck transaction owns the lock (its own worker),
        /// or another holder blocks one of its accounts.
        own: bool,
    },
    /// The application's heartbeats say no instance of it runs.
    AppNotRunning {
        /// Its newest heartbeat.
        last_beat: DateTime<Utc>,
    },
}

/// Why the cause is unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownCause {
    /// No usable modification time: its age is unknown.
    Undated,
    /// A lock's holder cannot be told alive or dead (no lease, no
    /// heartbeat).
    HolderUnverified {
        /// The locked resource.
        lock: String,
        /// Who holds it, in words.
        holder: String,
    },
    /// No lock, no hot account, and the application is not seen
    /// recovering.
    NoEvidence,
}

/// Why stuck transactions are stuck.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// Its holder is dead.
    HolderDead(DeadBy),
    /// A live holder is on it (its own worker) or on one of its accounts
    /// (contention).
    HolderLive {
        /// The locked resource.
        lock: String,
        /// Who holds it, in words.
        holder: String,
        /// Whether the stuck transaction owns the lock.
        own: bool,
    },
    /// Many stuck transactions on one account.
    HotAccount {
        /// The account.
        account: String,
        /// Stuck transactions on it.
        stuck: u64,
    },
    /// The tool refuses to act on it, and why.
    Refused(Refusal),
    /// The application's own recovery is working (the healing verdict).
    AppRecovering,
    /// Not enough evidence.
    Unknown(UnknownCause),
}

/// The act that is safe for a cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SafeAct {
    /// Recover it (its holder is gone; the recovery is fenced).
    Recover,
    /// Release the dead holder's lock that blocks it.
    ReleaseLock,
    /// Wait: a live holder or the application is on it.
    Wait,
    /// Look before acting: the tool cannot tell, or refuses.
    Investigate,
}

impl SafeAct {
    /// Its word (`recover`, `release lock`, `wait`, `investigate`).
    pub fn word(self) -> &'static str {
        match self {
            SafeAct::Recover => "recover",
            SafeAct::ReleaseLock => "release lock",
            SafeAct::Wait => "wait",
            SafeAct::Investigate => "investigate",
        }
    }

    /// Whether an operator can act on it now (recover, release): such
    /// groups sort first.
    pub fn is_actionable(self) -> bool {
        matches!(self, SafeAct::Recover | SafeAct::ReleaseLock)
    }
}

impl Cause {
    /// Its kind.
    pub fn kind(&self) -> CauseKind {
        match self {
            Cause::HolderDead(_) => CauseKind::HolderDead,
            Cause::HolderLive { .. } => CauseKind::HolderLive,
            Cause::HotAccount { .. } => CauseKind::HotAccount,
            Cause::Refused(_) => CauseKind::Refused,
            Cause::AppRecovering => CauseKind::AppRecovering,
            Cause::Unknown(_) => CauseKind::Unknown,
        }
    }

    /// The act that is safe for it.
    pub fn safe_act(&self) -> SafeAct {
        match self {
            Cause::HolderDead(DeadBy::Lock { own: false, .. }) => SafeAct::ReleaseLock,
            Cause::HolderDead(_) => SafeAct::Recover,
            Cause::HolderLive { .. } | Cause::AppRecovering => SafeAct::Wait,
            Cause::HotAccount { .. } | Cause::Refused(_) | Cause::Unknown(_) => {
                SafeAct::Investigate
            }
        }
    }

    /// Its name in words (`holder dead`, `contention` for a live holder,
    /// ...).
    pub fn word(&self) -> &'static str {
        match self {
            Cause::HolderDead(_) => "holder dead",
            Cause::HolderLive { .. } => "contention",
            Cause::HotAccount { .. } => "hot account",
            Cause::Refused(_) => "refused by the tool",
            Cause::AppRecovering => "application recovering",
            Cause::Unknown(_) => "unknown",
        }
    }

    /// Its evidence in words, at `now`.
    pub fn evidence(&self, now: DateTime<Utc>) -> String {
        match self {
            Cause::HolderDead(DeadBy::Lock {
                lock,
                reason,
                own: true,
                ..
            }) => format!("its lock on {lock}: {reason}"),
            Cause::HolderDead(DeadBy::Lock {
                lock,
                holder,
                reason,
                own: false,
            }) => format!("{holder} blocks {lock}: {reason}"),
            Cause::HolderDead(DeadBy::AppNotRunning { last_beat }) => format!(
                "the application's newest heartbeat is {} old",
                human_age((now - *last_beat).num_seconds())
            ),
            Cause::HolderLive {
                lock,
                holder,
                own: true,
            } => format!("its lock on {lock} is held by {holder}, alive"),
            Cause::HolderLive {
                lock,
                holder,
                own: false,
            } => format!("{lock} is held by {holder}, alive"),
            Cause::HotAccount { account, stuck } => {
                format!("{stuck} stuck transactions on account {account}")
            }
            Cause::Refused(r) => r.to_string(),
            Cause::AppRecovering => {
                "the application's own recovery is working (recovery healing)".into()
            }
            Cause::Unknown(UnknownCause::Undated) => "it has no usable modification time".into(),
            Cause::Unknown(UnknownCause::HolderUnverified { lock, holder }) => {
                format!("{lock} is held by {holder}: cannot tell whether it is alive")
            }
            Cause::Unknown(UnknownCause::NoEvidence) => {
                "no lock, no hot account, and the application is not seen recovering".into()
            }
        }
    }

    /// The cause, its safe act and its evidence in one line.
    pub fn line(&self, now: DateTime<Utc>) -> String {
        format!(
            "{} ({}): safe act: {}",
            self.word(),
            self.evidence(now),
            self.safe_act().word()
        )
    }

    /// The JSON `list --json` and `check --format json` carry: `cause`
    /// (the kind's name), `safe_act`, `evidence` in words, and the
    /// profile's `runbook` for it if any.
    pub fn json(&self, now: DateTime<Utc>, runbooks: &Runbooks) -> serde_json::Value {
        let mut v = serde_json::json!({
            "cause": self.kind(),
            "safe_act": self.safe_act(),
            "evidence": self.evidence(now),
        });
        if let Some(url) = runbooks.get(self.kind()) {
            v["runbook"] = url.into();
        }
        v
    }
}

/// A lock's holder, judged on its own liveness.
enum Life {
    Live,
    Dead(StaleReason),
    Unverified,
}

/// The life of `l`'s holder: by its lease and heartbeat; and for a lock
/// another holds (not `own`), gone when its owner transaction ended.
fn life(l: &LockView, own: bool) -> Life {
    if let (false, Staleness::Stale(r @ StaleReason::OwnerEnded { .. })) = (own, &l.staleness) {
        return Life::Dead(r.clone());
    }
    match &l.holder {
        Staleness::Live => Life::Live,
        Staleness::Stale(r) => Life::Dead(r.clone()),
        Staleness::Unknown(_) => Life::Unverified,
    }
}

/// The cause of `t` at `now` under recovery window `window` (`None` when
/// it is not stuck).
pub fn judge(
    t: &Transaction,
    e: &CauseEvidence,
    now: DateTime<Utc>,
    window: std::time::Duration,
) -> Option<Cause> {
    if !urgency_with(t, now, window, window).is_stuck() {
        return None;
    }
    if !t.problems.is_empty() && !is_only_undated(t) {
        let r = ProcedureRefusal::Malformed(t.problems.clone());
        return Some(Cause::Refused(Refusal::Procedure(r)));
    }
    if let Some(r) = e.writes {
        return Some(Cause::Refused(Refusal::Writes(r.clone())));
    }
    let accounts = [t.src.as_deref(), t.dest.as_deref()];
    let related = e.locks.iter().filter_map(|l| {
        let own = l.info.owner.as_deref() == Some(t.id.as_str());
        let on_account = accounts.contains(&Some(l.info.resource.as_str()));
        (own || on_account).then_some((l, own))
    });
    let unverified = match by_locks(related) {
        Ok(c) => return Some(c),
        Err(u) => u,
    };
    let hot = || {
        let (account, stuck) = accounts
            .into_iter()
            .flatten()
            .filter_map(|a| Some((a, *e.stuck_by_account.get(a)?)))
            .filter(|(_, n)| *n >= HOT_ACCOUNT)
            .max_by_key(|(_, n)| *n)?;
        let account = account.to_string();
        Some(Cause::HotAccount { account, stuck })
    };
    let unknown = match unverified {
        _ if t.modification_time.is_none() => UnknownCause::Undated,
        Some(u) => u,
        None => UnknownCause::NoEvidence,
    };
    Some(
        by_application(e.healing)
            .or_else(hot)
            .unwrap_or(Cause::Unknown(unknown)),
    )
}

/// [`judge`] of each of `ts`, in order, on the same evidence: the locks
/// are looked through only for a transaction one of them names (as its
/// owner, or by one of its accounts as the resource), so a page of rows
/// costs one pass over the locks, not one per row (500 rows against 300
/// locks took most of a dashboard frame).
pub fn judge_each<'t>(
    ts: impl IntoIterator<Item = &'t Transaction>,
    e: &CauseEvidence,
    now: DateTime<Utc>,
    window: std::time::Duration,
) -> Vec<Option<Cause>> {
    let named: std::collections::HashSet<&str> = e
        .locks
        .iter()
        .flat_map(|l| [l.info.owner.as_deref(), Some(l.info.resource.as_str())])
        .flatten()
        .collect();
    let lockless = CauseEvidence { locks: &[], ..*e };
    ts.into_iter()
        .map(|t| {
            let named_here = [Some(t.id.as_str()), t.src.as_deref(), t.dest.as_deref()]
                .into_iter()
                .flatten()
                .any(|k| named.contains(k));
            judge(t, if named_here { e } else { &lockless }, now, window)
        })
        .collect()
}

/// The cause the locks give (a live holder first, then a dead one of its
/// own, then another's), or the first unverified holder seen.
pub(crate) fn by_locks<'a>(
    related: impl Iterator<Item = (&'a LockView, bool)>,
) -> Result<Cause, Option<UnknownCause>> {
    let (mut dead_own, mut dead_other, mut unverified) = (None, None, None);
    for (l, own) in related {
        let lock = l.info.resource.clone();
        let holder = l.info.holder_label();
        match life(l, own) {
            Life::Live => return Ok(Cause::HolderLive { lock, holder, own }),
            Life::Dead(reason) => {
                let slot = if own { &mut dead_own } else { &mut dead_other };
                slot.get_or_insert(DeadBy::Lock {
                    lock,
                    holder,
                    reason,
                    own,
                });
            }
            Life::Unverified => {
                unverified.get_or_insert(UnknownCause::HolderUnverified { lock, holder });
            }
        }
    }
    match dead_own.or(dead_other) {
        Some(d) => Ok(Cause::HolderDead(d)),
        None => Err(unverified),
    }
}

/// The cause the application's own state gives: not running (its holder is
/// dead) or recovering.
pub(crate) fn by_application(h: &Healing) -> Option<Cause> {
    match h {
        Healing::NotRunning { last_beat, .. } => Some(Cause::HolderDead(DeadBy::AppNotRunning {
            last_beat: *last_beat,
        })),
        Healing::Healing { .. } => Some(Cause::AppRecovering),
        _ => None,
    }
}

/// Stuck transactions per account among `stuck` (source and destination).
pub fn stuck_by_account<'a>(stuck: impl Iterator<Item = &'a Transaction>) -> BTreeMap<String, u64> {
    let mut by = BTreeMap::new();
    for t in stuck {
        for a in [&t.src, &t.dest].into_iter().flatten() {
            *by.entry(a.clone()).or_insert(0) += 1;
        }
    }
    by
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::locks::{Heartbeat, LockInfo, Owner};
    use crate::protocol::read::verdict::healing::{HealingSign, Unknown};
    use crate::protocol::ProtocolConfig;
    use serde_json::json;

    fn stuck_txn(id: &str, src: &str, dest: &str, extra: serde_json::Value) -> Transaction {
        let now = Utc::now();
        let mut v = json!({"transaction_state": "pending", "src_acct": src, "dest_acct": dest,
            "amount": 1, "modification_time": (now - chrono::Duration::minutes(10)).to_rfc3339()});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        Transaction::from_source(id, v.as_object().unwrap())
    }

    /// A lock on `resource` owned by `owner`, its holder `beat` (seconds
    /// since its heartbeat; `None`: no heartbeat) under a 60 s timeout, or
    /// its lease expired when `lease_over`.
    pub(crate) fn lock(
        resource: &str,
        owner: &str,
        beat: Option<i64>,
        lease_over: bool,
    ) -> LockView {
        let now = Utc::now();
        let mut doc = json!({"owner": owner, "process_id": "worker-1"});
        if lease_over {
            doc["expires_at"] = json!((now - chrono::Duration::seconds(30)).to_rfc3339());
        }
        let info = LockInfo::from_source(resource, doc.as_object().unwrap());
        let config = ProtocolConfig {
            liveness: beat.map(|_| crate::protocol::locks::LivenessSource {
                index: "hb".into(),
                instance_field: "i".into(),
                time_field: "t".into(),
                timeout: std::time::Duration::from_secs(60),
            }),
            ..ProtocolConfig::default()
        };
        let hb = match beat {
            Some(s) => Heartbeat::Seen(now - chrono::Duration::seconds(s)),
            None => Heartbeat::NotConfigured,
        };
        let holder = info.staleness(Owner::Missing, hb, now, &config);
        LockView {
            staleness: holder.clone(),
            holder,
            owner_state: None,
            info,
        }
    }

    fn judged(t: &Transaction, locks: &[LockView], healing: Healing, hot: &[(&str, u64)]) -> Cause {
        let by: BTreeMap<String, u64> = hot.iter().map(|(a, n)| (a.to_string(), *n)).collect();
        let e = CauseEvidence {
            locks,
            healing: &healing,
            stuck_by_account: &by,
            writes: None,
        };
        judge(t, &e, Utc::now(), ProtocolConfig::default().recovery_window).expect("stuck")
    }

    pub(crate) const STALLED: Healing = Healing::Unknown(Unknown::NotRead);

    /// Its own lock's holder dead (heartbeat or lease) reads recover; a
    /// live holder, its own or another's on its account, reads wait, and
    /// wins over a dead one; another's dead lock reads release.
    #[test]
    fn holders_dead_and_live() {
        let t = stuck_txn("t1", "A", "B", json!({}));
        let dead = lock("A", "t1", Some(600), false);
        let c = judged(&t, std::slice::from_ref(&dead), STALLED, &[]);
        assert_eq!(
            (c.kind(), c.safe_act()),
            (CauseKind::HolderDead, SafeAct::Recover)
        );
        assert!(c.evidence(Utc::now()).contains("its lock on A"), "{c:?}");
        let lease = lock("A", "t1", None, true);
        let c = judged(&t, &[lease], STALLED, &[]);
        assert_eq!(c.safe_act(), SafeAct::Recover, "{c:?}");
        let live_other = lock("B", "t9", Some(5), false);
        let c = judged(&t, &[dead.clone(), live_other], STALLED, &[]);
        assert_eq!((c.word(), c.safe_act()), ("contention", SafeAct::Wait));
        let c = judged(&t, &[lock("B", "t9", Some(600), false)], STALLED, &[]);
        assert_eq!(c.safe_act(), SafeAct::ReleaseLock, "{c:?}");
        let c = judged(&t, &[lock("A", "t1", None, false)], STALLED, &[]);
        assert!(
            matches!(c, Cause::Unknown(UnknownCause::HolderUnverified { .. })),
            "{c:?}"
        );
        assert_eq!(c.safe_act(), SafeAct::Investigate);
        // Another's lock whose owner transaction ended: release it.
        let mut ended = lock("B", "t9", None, false);
        ended.staleness = Staleness::Stale(StaleReason::OwnerEnded {
            txn: "t9".into(),
            state: crate::protocol::transaction::TxnState::Finished,
        });
        let c = judged(&t, &[ended], STALLED, &[]);
        assert_eq!(c.safe_act(), SafeAct::ReleaseLock, "{c:?}");
        let unrelated = lock("Z", "t7", Some(600), false);
        let c = judged(&t, &[unrelated], STALLED, &[]);
        assert_eq!(c, Cause::Unknown(UnknownCause::NoEvidence));
    }

    /// Judged together, each row reads as judged alone: the locks are
    /// looked through only for the rows they name.
    #[test]
    fn judged_together_each_reads_as_judged_alone() {
        let ts = [
            stuck_txn("t1", "A", "B", json!({})),
            stuck_txn("t2", "C", "D", json!({})),
            stuck_txn("t3", "E", "F", json!({})),
            stuck_txn("t4", "G", "H", json!({})),
        ];
        let locks = [
            lock("A", "t1", Some(600), false),
            lock("D", "t9", Some(5), false),
            lock("Z", "t4", Some(600), false),
        ];
        let (healing, by) = (STALLED, BTreeMap::new());
        let e = CauseEvidence {
            locks: &locks,
            healing: &healing,
            stuck_by_account: &by,
            writes: None,
        };
        let (now, w) = (Utc::now(), ProtocolConfig::default().recovery_window);
        let alone: Vec<_> = ts.iter().map(|t| judge(t, &e, now, w)).collect();
        assert_eq!(judge_each(&ts, &e, now, w), alone);
        let kinds: Vec<_> = alone.iter().flatten().map(Cause::kind).collect();
        assert_eq!(
            kinds,
            [
                CauseKind::HolderDead,
                CauseKind::HolderLive,
                CauseKind::Unknown,
                CauseKind::HolderDead
            ]
        );
    }

    /// A malformed document is refused (with its problems), before any
    /// lock; a missing modification time alone is not a refusal.
    #[test]
    fn refused_documents_and_undated_ones() {
        let t = stuck_txn("t1", "A", "B", json!({"amount": "ten"}));
        let c = judged(&t, &[lock("A", "t1", Some(5), false)], STALLED, &[]);
        assert!(
            matches!(&c, Cause::Refused(Refusal::Procedure(ProcedureRefusal::Malformed(p))) if !p.is_empty()),
            "{c:?}"
        );
        assert_eq!(
            (c.kind().name(), c.safe_act()),
            ("refused", SafeAct::Investigate)
        );
        let t = stuck_txn("t2", "A", "B", json!({"modification_time": null}));
        let c = judged(&t, &[], STALLED, &[]);
        assert_eq!(c, Cause::Unknown(UnknownCause::Undated));
        // Mappings that would reject the protocol's writes refuse every one.
        let refusal = WriteRefusal::BeforeFirstWrite(vec!["strict".into()]);
        let by = BTreeMap::new();
        let e = CauseEvidence {
            locks: &[],
            healing: &STALLED,
            stuck_by_account: &by,
            writes: Some(&refusal),
        };
        let c = judge(
            &t,
            &e,
            Utc::now(),
            ProtocolConfig::default().recovery_window,
        );
        assert_eq!(c, Some(Cause::Refused(Refusal::Writes(refusal))));
    }

    /// The application's state, then a hot account; a recent transaction
    /// has no cause (it is not stuck).
    #[test]
    fn application_and_hot_accounts() {
        let t = stuck_txn("t1", "A", "B", json!({}));
        let healing = Healing::Healing {
            sign: HealingSign::OldestLeft,
            stuck: 3,
        };
        assert_eq!(judged(&t, &[], healing, &[("A", 50)]), Cause::AppRecovering);
        let not_running = Healing::NotRunning {
            last_beat: Utc::now(),
            stuck: 3,
        };
        assert_eq!(
            judged(&t, &[], not_running, &[]).safe_act(),
            SafeAct::Recover
        );
        let c = judged(&t, &[], STALLED, &[("A", 4), ("B", HOT_ACCOUNT)]);
        assert_eq!(
            c,
            Cause::HotAccount {
                account: "B".into(),
                stuck: HOT_ACCOUNT
            }
        );
        assert_eq!(c.safe_act(), SafeAct::Investigate);
        let recent = stuck_txn(
            "t3",
            "A",
            "B",
            json!({"modification_time": Utc::now().to_rfc3339()}),
        );
        let by = BTreeMap::new();
        let e = CauseEvidence {
            locks: &[],
            healing: &STALLED,
            stuck_by_account: &by,
            writes: None,
        };
        assert_eq!(
            judge(
                &recent,
                &e,
                Utc::now(),
                ProtocolConfig::default().recovery_window
            ),
            None
        );
    }

    /// Runbook keys are the kinds' names, an unknown one refused naming
    /// the valid ones.
    #[test]
    fn runbooks() {
        let locks = [lock("C", "t2", Some(600), false)];
        let t = stuck_txn("t2", "C", "B", json!({}));
        let table: BTreeMap<String, String> =
            [("holder_dead".to_string(), "https://rb/dead".to_string())].into();
        let rb = Runbooks::from_table(&table).unwrap();
        assert_eq!(rb.get(CauseKind::HolderDead), Some("https://rb/dead"));
        let cause = judged(&t, &locks, STALLED, &[]);
        let j = cause.json(Utc::now(), &rb);
        assert_eq!(j["cause"], "holder_dead");
        assert_eq!(j["safe_act"], "recover");
        assert_eq!(j["runbook"], "https://rb/dead");
        let bad: BTreeMap<String, String> = [("dead".to_string(), "x".to_string())].into();
        let err = Runbooks::from_table(&bad).unwrap_err();
        assert!(
            err.contains("`dead`") && err.contains("holder_dead, holder_live"),
            "{err}"
        );
    }
}
