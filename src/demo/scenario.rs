//! The mess `seed` leaves, item by item, and how each is made.
//!
//! | what | how |
//! |---|---|
//! | 4 finished, 2 rolled back (history) | full transfers; rollbacks of a pending and a created one |
//! | created ×2 | transfer stopped after 0 steps |
//! | pending with 0, 1, 2 applies | transfer stopped after 1, 2, 3 steps |
//! | committed with 0, 1, 2 removes | transfer stopped after 4, 5, 6 steps |
//! | terminating ×2 (0 and 1 undo) | pending, then rollback stopped after 1, 2 steps |
//! | pending under locks, worker dead 3.5 h | transfer with locks stopped after 2 steps |
//! | pending under locks, worker dead just now | transfer with locks stopped after 3 steps |
//! | lock of a dead batch process | written directly; owner rolled back, lease expired |
//! | one dangling pending entry | rollback, then a late unfenced apply by hand |
//!
//! Ages range from 3 min to 6 h (modification and creation times rewritten
//! by hand); six of the stuck transactions are older than an hour.

use super::error::DemoError;
use super::mess;
use crate::protocol::time::human_age;
use crate::protocol::{
    NewTransfer, Procedure, ProcedureReport, Protocol, RunLimits, TxnState, Verdict,
};
use chrono::{DateTime, Duration as Age, Utc};
use std::collections::BTreeSet;

/// Process ids written into the locks of workers that are gone.
const DEAD_WORKER: &str = "payments-worker:31337@app-7";
const DEAD_BATCH: &str = "payments-worker:4242@app-3";
const JUST_DIED: &str = "payments-worker:5150@app-2";

/// One seeded transfer: transfer steps (`None`: to the end), then optionally
/// rollback steps (`Some(None)`: rollback to the end), amount, age in minutes
/// (`None`: now), and what it shows.
type Item = (
    Option<usize>,
    Option<Option<usize>>,
    i64,
    Option<i64>,
    &'static str,
);

/// History, then transactions stuck in every state, some for hours.
#[rustfmt::skip]
const ITEMS: [Item; 16] = [
    (None, None, 120, Some(360), "finished"),
    (None, None, 45, Some(250), "finished"),
    (None, None, 80, Some(50), "finished"),
    (None, None, 15, None, "finished"),
    (Some(2), Some(None), 60, Some(300), "rolled back from pending (source applied, then undone)"),
    (Some(0), Some(None), 30, Some(35), "rolled back before it began"),
    (Some(0), None, 25, Some(180), "created; its worker died before step 1"),
    (Some(0), None, 70, Some(4), "created; its worker died before step 1"),
    (Some(1), None, 35, Some(120), "pending, nothing applied"),
    (Some(2), None, 50, Some(25), "pending, applied to source only"),
    (Some(3), None, 110, Some(240), "pending, applied to both"),
    (Some(4), None, 40, Some(12), "committed, nothing removed"),
    (Some(5), None, 95, Some(300), "committed, removed from source only"),
    (Some(6), None, 20, Some(3), "committed, removed from both"),
    (Some(2), Some(Some(1)), 65, Some(150), "terminating, nothing undone"),
    (Some(3), Some(Some(2)), 85, Some(8), "terminating, source undone, destination not"),
];

/// Index in [`ITEMS`] of the rolled-back transaction the dead batch's lock names.
const LOCK_OWNER: usize = 4;

/// Builds the mess on accounts that already exist.
pub(crate) struct Seeder<'a> {
    proto: &'a Protocol,
    accounts: Vec<String>,
    next: usize,
    /// Accounts someone holds a lock on.
    locked: BTreeSet<String>,
    now: DateTime<Utc>,
    /// Every seeded transaction and its state.
    pub(crate) transactions: Vec<(String, TxnState)>,
    /// Resources the seed left locked.
    pub(crate) locks: Vec<String>,
    /// One line per item.
    pub(crate) notes: Vec<String>,
}

impl<'a> Seeder<'a> {
    /// A seeder over `accounts` (at least two), `locked` ones being held already.
    pub(crate) fn new(
        proto: &'a Protocol,
        accounts: Vec<String>,
        locked: BTreeSet<String>,
    ) -> Seeder<'a> {
        Seeder {
            proto,
            accounts,
            next: 0,
            locked,
            now: Utc::now(),
            transactions: Vec::new(),
            locks: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Seeds every item of the table above.
    pub(crate) async fn build(&mut self) -> Result<(), DemoError> {
        let p = self.proto;
        let mut ids = Vec::new();
        for (steps, rollback, amount, age, note) in ITEMS {
            ids.push(
                self.run(
                    p,
                    false,
                    (steps, rollback),
                    amount,
                    age.map(Age::minutes),
                    note,
                )
                .await?,
            );
        }
        let w = "pending, applied to source; its worker crashed holding both locks";
        self.crashed_with_locks(DEAD_WORKER, 2, 90, Some(Age::minutes(210)), w)
            .await?;
        let w = "pending, applied to both; its worker crashed holding both locks";
        self.crashed_with_locks(JUST_DIED, 3, 10, None, w).await?;
        if let Some(owner) = ids.get(LOCK_OWNER) {
            self.leftover_lock(owner, Age::minutes(300)).await?;
        }
        self.dangling(55, Some(Age::minutes(70))).await
    }

    /// Runs one transfer as far as `run` says (transfer steps, then rollback
    /// steps), backdates it by `age`, and records the state it is left in.
    async fn run(
        &mut self,
        proto: &Protocol,
        with_locks: bool,
        run: (Option<usize>, Option<Option<usize>>),
        amount: i64,
        age: Option<Age>,
        note: &str,
    ) -> Result<String, DemoError> {
        let (src, dest) = if with_locks {
            self.free_pair()
        } else {
            Some(self.pair())
        }
        .ok_or_else(|| DemoError::Seed(format!("no free accounts left for: {note}")))?;
        let modified = self.now - age.unwrap_or_default();
        let created = modified - Age::seconds(if age.is_some() { 90 } else { 0 });
        let id = format!(
            "txn-{}-{:08x}",
            created.format("%Y%m%d%H%M%S"),
            rand::random::<u32>()
        );
        let req = NewTransfer {
            id: Some(id.clone()),
            src: src.clone(),
            dest: dest.clone(),
            amount,
        };
        check(
            proto
                .transfer(&req, with_locks, RunLimits { max_steps: run.0 })
                .await,
            note,
        )?;
        if let Some(max_steps) = run.1 {
            let limits = RunLimits { max_steps };
            check(
                self.proto
                    .run_procedure(&id, Procedure::Rollback, true, limits)
                    .await,
                note,
            )?;
        }
        if age.is_some() {
            mess::backdate_transaction(self.proto, &id, created, modified).await?;
        }
        if with_locks {
            for resource in [&src, &dest] {
                if age.is_some() {
                    mess::backdate_lock(self.proto, resource, created).await?;
                }
                self.locked.insert(resource.clone());
                self.locks.push(resource.clone());
            }
        }
        let state = self
            .proto
            .read_transaction(&id)
            .await?
            .and_then(|(t, _)| t.state)
            .ok_or_else(|| DemoError::Seed(format!("{id} has no state after seeding")))?;
        let when = age.map_or("just now".to_string(), |a| {
            format!("{} ago", human_age(a.num_seconds()))
        });
        self.notes.push(format!(
            "{id} {src}->{dest} {amount}: {state} ({when}): {note}"
        ));
        self.transactions.push((id.clone(), state));
        Ok(id)
    }

    /// A transfer under locks whose worker (`holder`) crashed after `steps`.
    /// Skipped when two unlocked accounts are not left (a forced re-seed).
    async fn crashed_with_locks(
        &mut self,
        holder: &str,
        steps: usize,
        amount: i64,
        age: Option<Age>,
        note: &str,
    ) -> Result<(), DemoError> {
        if self.free_pair().is_none() {
            self.notes.push(format!(
                "no two unlocked accounts left for: {note}; skipped"
            ));
            return Ok(());
        }
        let worker = self.proto.clone().with_holder(holder);
        self.run(&worker, true, (Some(steps), None), amount, age, note)
            .await
            .map(drop)
    }

    /// The lock a dead batch process left on a free account after its
    /// transaction `owner` had ended (written directly, see [`mess`]).
    async fn leftover_lock(&mut self, owner: &str, age: Age) -> Result<(), DemoError> {
        let Some(resource) = self
            .accounts
            .iter()
            .find(|a| !self.locked.contains(*a))
            .cloned()
        else {
            self.notes
                .push("no unlocked account left for a leftover lock; skipped".into());
            return Ok(());
        };
        if mess::leftover_lock(self.proto, &resource, owner, DEAD_BATCH, self.now - age).await? {
            let when = human_age(age.num_seconds());
            self.notes.push(format!(
                "lock {resource}: left {when} ago by {DEAD_BATCH}; owner {owner} rolled back"
            ));
            self.locked.insert(resource.clone());
            self.locks.push(resource);
        }
        Ok(())
    }

    /// A transfer rolled back after its source was applied, whose slow (not
    /// dead) worker then applied it to the destination anyway. The reference
    /// protocol has no fence against that late write and this tool's does,
    /// so the late write is made by hand ([`mess::late_unfenced_apply`]); the
    /// audit reports it as `dangling_pending` and `--repair` undoes it.
    async fn dangling(&mut self, amount: i64, age: Option<Age>) -> Result<(), DemoError> {
        let note = "rolled back; a late unfenced worker then applied it to the destination";
        let id = self
            .run(self.proto, false, (Some(2), Some(None)), amount, age, note)
            .await?;
        let Some((t, _)) = self.proto.read_transaction(&id).await? else {
            return Err(DemoError::Seed(format!("{id} vanished")));
        };
        let dest = t.dest.unwrap_or_default();
        mess::late_unfenced_apply(self.proto, &dest, &id, amount).await?;
        self.notes.push(format!(
            "{dest}: carries rolled-back {id} (+{amount}): `audit --repair` undoes it"
        ));
        Ok(())
    }

    /// The next pair of distinct accounts, cycling through all pairs.
    fn pair(&mut self) -> (String, String) {
        let n = self.accounts.len();
        let k = self.next;
        self.next += 1;
        let src = k % n;
        let dest = (src + 1 + (k / n) % (n - 1)) % n;
        (self.accounts[src].clone(), self.accounts[dest].clone())
    }

    /// Two accounts nobody holds a lock on.
    fn free_pair(&self) -> Option<(String, String)> {
        let mut free = self.accounts.iter().filter(|a| !self.locked.contains(*a));
        Some((free.next()?.clone(), free.next()?.clone()))
    }
}

/// Turns a failed or refused seeding run into an error.
fn check(report: ProcedureReport, note: &str) -> Result<(), DemoError> {
    match report.verdict {
        Verdict::Failed(e) => Err(DemoError::Cluster(e)),
        Verdict::Refused(r) => Err(DemoError::Seed(format!("{note}: refused: {r}"))),
        _ => Ok(()),
    }
}
