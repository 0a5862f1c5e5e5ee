//! One kit for building a test's world on the cluster, for every target:
//! accounts, a transfer stopped at any core step (as if its worker died
//! there), a rollback stopped part-way, backdating, locks of each shape, and
//! many stuck transactions seeded at once.
//!
//! [`Kit`] borrows the test's `Protocol` (its cluster and its indices) and
//! is async; the synchronous targets (`cli`, `compat`, `dashboard_e2e`) drive
//! it with their own runtime's `block_on`. What the kit writes is what the
//! protocol or an application would have left: the stopped transfers are
//! the protocol's own steps, the rest raw documents.

use chrono::{Duration as ChronoDuration, Utc};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::time::format_timestamp;
use estx::protocol::{
    Indices, NewTransfer, Procedure, ProcedureReport, Protocol, ProtocolConfig, RunLimits, Verdict,
};
use serde_json::{json, Value};

/// How many documents one `_bulk` request of the seeding carries.
const CHUNK: usize = 1000;

/// For the synchronous targets: a current-thread runtime, and in it a
/// protocol handle (default settings) over `indices` at `connect`. Touches
/// no network.
pub fn blocking_protocol(
    connect: &ConnectOptions,
    indices: Indices,
) -> (tokio::runtime::Runtime, Protocol) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = ProtocolConfig {
        indices,
        ..ProtocolConfig::default()
    };
    let proto = rt.block_on(async { Protocol::new(Cluster::connect(connect).unwrap(), config) });
    (rt, proto)
}

/// RFC 3339 timestamp `minutes` ago (negative: in the future), in the
/// format the tool writes.
pub fn ago(minutes: i64) -> String {
    format_timestamp(Utc::now() - ChronoDuration::minutes(minutes))
}

/// A transfer to run part-way: `amount` from `src` to `dest`, stopped after
/// `steps` core steps (0: created, 1–3: pending, 4–6: committed; 7 runs it
/// to the end: finished), optionally under locks on both accounts.
#[derive(Debug, Clone)]
pub struct Stop<'a> {
    pub id: &'a str,
    pub src: &'a str,
    pub dest: &'a str,
    pub amount: i64,
    pub steps: usize,
    pub locks: bool,
}

impl<'a> Stop<'a> {
    /// Without locks.
    pub fn new(id: &'a str, src: &'a str, dest: &'a str, amount: i64, steps: usize) -> Self {
        Stop {
            id,
            src,
            dest,
            amount,
            steps,
            locks: false,
        }
    }

    /// Holding locks on both accounts (the two acquisitions come first, and
    /// a stopped run leaves them behind).
    pub fn locked(self, locks: bool) -> Self {
        Stop { locks, ..self }
    }
}

/// A lock document, by the shape the applications write.
#[derive(Debug, Clone)]
pub enum Lock<'a> {
    /// The article's: owned by transaction `owner`, taken by `process`
    /// `created` minutes ago, its lease ending `expires_in` minutes from now
    /// (negative: already ended).
    Leased {
        owner: &'a str,
        process: &'a str,
        created: i64,
        expires_in: i64,
    },
    /// Owned by `owner` with no lease (`expires_at` absent).
    Unleased {
        owner: &'a str,
        process: &'a str,
        created: i64,
    },
    /// No owner: a lock held by a process only (`process_id` a number, as
    /// some applications map it).
    Ownerless { process: i64 },
    /// The guide's shared tree lock: a count of holders, no owner.
    Shared { count: i64 },
}

impl Lock<'_> {
    /// The document as stored.
    pub fn doc(&self) -> Value {
        match *self {
            Lock::Leased {
                owner,
                process,
                created,
                expires_in,
            } => json!({"owner": owner, "process_id": process, "created_at": ago(created),
                        "expires_at": ago(-expires_in)}),
            Lock::Unleased {
                owner,
                process,
                created,
            } => json!({"owner": owner, "process_id": process, "created_at": ago(created)}),
            Lock::Ownerless { process } => json!({"process_id": process}),
            Lock::Shared { count } => json!({"lock_type": "shared", "lock_count": count}),
        }
    }
}

/// Whose money many stuck transactions move.
#[derive(Debug, Clone, Copy)]
pub enum Payers<'a> {
    /// Every transaction `i` between its own two accounts `src-{i}` and
    /// `dst-{i}`, both created with `balance`.
    Own { balance: i64 },
    /// Every transaction from the one account named, to `{prefix}-dst-{i}`
    /// (no account is created).
    One(&'a str),
}

/// The world-building kit over one protocol handle (its cluster, its
/// indices).
pub struct Kit<'p> {
    proto: &'p Protocol,
}

impl<'p> Kit<'p> {
    /// The kit over `proto`: it writes to `proto`'s cluster and indices.
    pub fn new(proto: &'p Protocol) -> Self {
        Kit { proto }
    }

    fn ix(&self) -> &Indices {
        &self.proto.config().indices
    }

    /// Writes a raw document (panics if the cluster refuses it).
    pub async fn put(&self, index: &str, id: &str, doc: &Value) {
        self.proto
            .cluster()
            .put(index, id, doc)
            .await
            .unwrap_or_else(|e| panic!("put {index}/{id}: {e}"));
    }

    /// An account with `balance` and no pending transactions.
    pub async fn account(&self, id: &str, balance: i64) {
        let doc = json!({"balance": balance, "pending_transactions": []});
        self.put(&self.ix().accounts, id, &doc).await;
    }

    /// Runs the transfer `t` for its steps through the protocol and checks
    /// it stopped there (the accounts must exist). Its report.
    pub async fn stop(&self, t: &Stop<'_>) -> ProcedureReport {
        let req = NewTransfer {
            id: Some(t.id.into()),
            src: t.src.into(),
            dest: t.dest.into(),
            amount: t.amount,
        };
        let limits = RunLimits {
            max_steps: Some(t.steps),
        };
        let report = self.proto.transfer(&req, t.locks, limits).await;
        if t.steps < 7 {
            assert!(
                matches!(report.verdict, Verdict::Stopped(_)),
                "{}: {:?}",
                t.id,
                report.verdict
            );
        }
        let acquisitions = if t.locks { 2 } else { 0 };
        assert_eq!(
            report.steps.len(),
            t.steps + acquisitions,
            "{}: {:#?}",
            t.id,
            report.steps
        );
        report
    }

    /// A rollback of `id` stopped after `steps` of its steps (`force`:
    /// whatever the transaction's age): left `terminating`.
    pub async fn stop_rollback(&self, id: &str, steps: usize, force: bool) -> ProcedureReport {
        let limits = RunLimits {
            max_steps: Some(steps),
        };
        let report = self
            .proto
            .run_procedure(id, Procedure::Rollback, force, limits)
            .await;
        assert!(
            matches!(report.verdict, Verdict::Stopped(_)),
            "{id}: {:?}",
            report.verdict
        );
        report
    }

    /// Sets the transaction's `modification_time` `minutes` into the past,
    /// as if its worker had died that long ago.
    pub async fn backdate(&self, id: &str, minutes: i64) {
        let index = &self.ix().transactions;
        let mut src = self
            .proto
            .cluster()
            .get(index, id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{index}/{id} missing"))
            .source;
        src.insert("modification_time".into(), Value::String(ago(minutes)));
        self.put(index, id, &Value::Object(src)).await;
    }

    /// A lock document on `resource`.
    pub async fn lock(&self, resource: &str, lock: &Lock<'_>) {
        self.put(&self.ix().locks, resource, &lock.doc()).await;
    }

    /// `n` transactions `{prefix}-{i}` stuck in `created` for an hour,
    /// amount 1, paid by `payers`; bulk-indexed (cheap at thousands), not
    /// refreshed. Their ids.
    pub async fn seed_stuck(&self, prefix: &str, n: usize, payers: Payers<'_>) -> Vec<String> {
        let then = ago(60);
        let (mut txns, mut accounts) = (Vec::new(), Vec::new());
        for i in 0..n {
            let (src, dest) = match payers {
                Payers::Own { balance } => {
                    let (src, dest) = (format!("src-{i}"), format!("dst-{i}"));
                    let doc = json!({"balance": balance, "pending_transactions": []});
                    accounts.push((src.clone(), doc.clone()));
                    accounts.push((dest.clone(), doc));
                    (src, dest)
                }
                Payers::One(from) => (from.to_string(), format!("{prefix}-dst-{i}")),
            };
            let doc = json!({"src_acct": src, "dest_acct": dest,
                "amount": 1, "transaction_state": "created",
                "creation_time": then, "modification_time": then});
            txns.push((format!("{prefix}-{i}"), doc));
        }
        self.bulk(&self.ix().accounts, &accounts).await;
        self.bulk(&self.ix().transactions, &txns).await;
        txns.into_iter().map(|(id, _)| id).collect()
    }

    /// `n` transfers `{prefix}-{i}` of 100 from `{prefix}-src-{i}` to
    /// `{prefix}-dst-{i}` (500 each before), stopped 90 minutes ago right
    /// after the source was debited (`pending`, listed on the source);
    /// bulk-indexed, not refreshed. Their ids.
    pub async fn seed_half_applied(&self, prefix: &str, n: usize) -> Vec<String> {
        let then = ago(90);
        let (mut txns, mut accounts) = (Vec::new(), Vec::new());
        for i in 0..n {
            let (id, src, dst) = (
                format!("{prefix}-{i}"),
                format!("{prefix}-src-{i}"),
                format!("{prefix}-dst-{i}"),
            );
            txns.push((
                id.clone(),
                json!({"src_acct": src, "dest_acct": dst, "amount": 100,
                    "transaction_state": "pending",
                    "creation_time": then, "modification_time": then}),
            ));
            accounts.push((src, json!({"balance": 400, "pending_transactions": [id]})));
            accounts.push((dst, json!({"balance": 500, "pending_transactions": []})));
        }
        self.bulk(&self.ix().accounts, &accounts).await;
        self.bulk(&self.ix().transactions, &txns).await;
        txns.into_iter().map(|(id, _)| id).collect()
    }

    /// Bulk-indexes `docs` into `index`, [`CHUNK`] at a time.
    async fn bulk(&self, index: &str, docs: &[(String, Value)]) {
        for chunk in docs.chunks(CHUNK) {
            self.proto
                .cluster()
                .bulk_index(index, chunk)
                .await
                .unwrap_or_else(|e| panic!("bulk into {index}: {e}"));
        }
    }
}
