//! A live workload for the demo: workers making random transfers, some of
//! which "crash" part-way (stopped after a random number of steps, exactly as
//! a dead worker leaves them), and a recovery loop that later moves those
//! crashes forward, as the application's own recovery job would.
//!
//! Everything runs on tokio. Nothing is printed (the dashboard owns the
//! terminal): errors are logged with `tracing` and never stop a loop.

use crate::protocol::{NewTransfer, ProcedureReport, Protocol, RunLimits, Verdict};
use futures::stream::{self, StreamExt};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long [`WorkloadHandle::stop`] waits for a task before aborting it
/// (a transfer may be waiting for a lock for up to `lock_wait`).
const STOP_GRACE: Duration = Duration::from_secs(20);

/// Which stuck transactions the recovery loop recovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryScope {
    /// None: crashes stay stuck until an operator acts.
    Off,
    /// Only the workload's own crashes, so a seeded mess stays for the
    /// operator to repair from the dashboard.
    OwnCrashes,
}

/// How the workload behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadOptions {
    /// Concurrent transfer loops.
    pub workers: usize,
    /// Probability that a transfer stops after a random number of steps (0..=6).
    pub crash_rate: f64,
    /// Pause of each worker between two transfers.
    pub pause: Duration,
    /// Pause of the recovery loop between two passes.
    pub recovery_interval: Duration,
    /// What the recovery loop recovers. Either way it respects the recovery
    /// window, so a fresh crash stays visible as in flight for a while.
    pub recovery: RecoveryScope,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            workers: 3,
            crash_rate: 0.2,
            pause: Duration::from_millis(300),
            recovery_interval: Duration::from_secs(5),
            recovery: RecoveryScope::OwnCrashes,
        }
    }
}

/// Counters since the workload started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkloadStats {
    /// Transfers that ran to the end.
    pub transfers: u64,
    /// Transfers stopped part-way on purpose (simulated crashes).
    pub crashed: u64,
    /// Stuck transactions the recovery loop brought to a terminal state.
    pub recovered: u64,
    /// Transfers refused (e.g. a lock held too long) or failed.
    pub failed: u64,
}

#[derive(Default)]
struct Shared {
    transfers: AtomicU64,
    crashed: AtomicU64,
    recovered: AtomicU64,
    failed: AtomicU64,
    /// Ids of our own crashes not yet recovered.
    crashes: Mutex<HashSet<String>>,
}

/// The running workload; dropping it signals the tasks to stop.
#[derive(Debug)]
pub struct WorkloadHandle {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

/// The accounts the workers transfer between: every one but those the
/// seed left under a stale lock (`seed_locked`), so those locks stay stale
/// for the operator to find — a worker picking such an account would take
/// the stale lock over within seconds. As many of them are kept out as
/// leave at least two accounts to transfer between, in the seed's order.
pub fn worker_accounts(accounts: &[String], seed_locked: &[String]) -> Vec<String> {
    let mut out = accounts.to_vec();
    for resource in seed_locked {
        if out.len() <= 2 {
            break;
        }
        out.retain(|a| a != resource);
    }
    out
}

/// Starts `opts.workers` transfer loops over `accounts` and a recovery loop.
/// Must be called within a tokio runtime.
pub fn spawn(proto: Protocol, accounts: Vec<String>, opts: WorkloadOptions) -> WorkloadHandle {
    let (stop, rx) = watch::channel(false);
    let shared = Arc::new(Shared::default());
    let accounts = Arc::new(accounts);
    let mut tasks = Vec::new();
    for n in 0..opts.workers {
        let w = worker(
            n,
            proto.clone(),
            Arc::clone(&accounts),
            opts.clone(),
            Arc::clone(&shared),
            rx.clone(),
        );
        tasks.push(tokio::spawn(w));
    }
    if opts.recovery != RecoveryScope::Off {
        tasks.push(tokio::spawn(recovery(proto, opts, Arc::clone(&shared), rx)));
    }
    WorkloadHandle {
        stop,
        tasks,
        shared,
    }
}

impl WorkloadHandle {
    /// The counters so far.
    pub fn stats(&self) -> WorkloadStats {
        let s = &self.shared;
        WorkloadStats {
            transfers: s.transfers.load(Ordering::Relaxed),
            crashed: s.crashed.load(Ordering::Relaxed),
            recovered: s.recovered.load(Ordering::Relaxed),
            failed: s.failed.load(Ordering::Relaxed),
        }
    }

    /// Signals every task and waits for them: each finishes the transfer or
    /// recovery pass it is in. A task still running after 20 s is aborted
    /// (which leaves its transfer stuck, as a killed worker would).
    pub async fn stop(mut self) {
        self.stop.send_replace(true);
        let deadline = tokio::time::Instant::now() + STOP_GRACE;
        for mut task in std::mem::take(&mut self.tasks) {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                tracing::warn!("workload task did not stop in time; aborting it");
                task.abort();
            }
        }
    }
}

impl Drop for WorkloadHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// One transfer loop.
async fn worker(
    n: usize,
    proto: Protocol,
    accounts: Arc<Vec<String>>,
    opts: WorkloadOptions,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    if accounts.len() < 2 {
        tracing::warn!(worker = n, "fewer than two accounts: nothing to transfer");
        return;
    }
    while !*stop.borrow() {
        let (req, with_locks, limits) = pick(&accounts, opts.crash_rate);
        let report = proto.transfer(&req, with_locks, limits).await;
        shared.count_transfer(n, report, limits.max_steps.is_some());
        tokio::select! {
            _ = stop.changed() => break,
            _ = tokio::time::sleep(opts.pause) => {}
        }
    }
}

/// A random transfer: distinct accounts, amount 1..=50, locks or not, and
/// (with probability `crash_rate`) a crash after 0..=6 steps.
fn pick(accounts: &[String], crash_rate: f64) -> (NewTransfer, bool, RunLimits) {
    let n = accounts.len();
    let src = rand::random_range(0..n);
    let mut dest = rand::random_range(0..n - 1);
    if dest >= src {
        dest += 1;
    }
    let req = NewTransfer {
        id: None,
        src: accounts[src].clone(),
        dest: accounts[dest].clone(),
        amount: rand::random_range(1..=50),
    };
    let crash = rand::random_bool(crash_rate.clamp(0.0, 1.0));
    let limits = RunLimits {
        max_steps: crash.then(|| rand::random_range(0..7)),
    };
    (req, rand::random_bool(0.5), limits)
}

impl Shared {
    fn count_transfer(&self, worker: usize, report: ProcedureReport, crash: bool) {
        match report.verdict {
            Verdict::Completed(_) | Verdict::NothingToDo(_) | Verdict::EndedElsewhere(_) => {
                self.transfers.fetch_add(1, Ordering::Relaxed);
            }
            Verdict::Stopped(why) if crash => {
                tracing::debug!(worker, txn = %report.txn, %why, "simulated crash");
                self.crashed.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut ids) = self.crashes.lock() {
                    ids.insert(report.txn);
                }
            }
            other => {
                tracing::warn!(worker, txn = %report.txn, verdict = %other, "workload transfer did not complete");
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The recovery loop: every `recovery_interval`, refresh the transactions
/// index (osmem-server does not refresh on its own) and recover what is stuck.
async fn recovery(
    proto: Protocol,
    opts: WorkloadOptions,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = tokio::time::sleep(opts.recovery_interval) => {}
        }
        if let Err(e) = recovery_pass(&proto, opts.recovery, &shared).await {
            tracing::warn!(error = %e, "workload recovery pass failed");
        }
    }
}

async fn recovery_pass(
    proto: &Protocol,
    scope: RecoveryScope,
    shared: &Shared,
) -> crate::Result<()> {
    proto
        .cluster()
        .refresh(&proto.config().indices.transactions)
        .await?;
    let reports = match scope {
        RecoveryScope::Off => Vec::new(),
        RecoveryScope::OwnCrashes => {
            let own: HashSet<String> = shared
                .crashes
                .lock()
                .map(|ids| ids.clone())
                .unwrap_or_default();
            let stuck = proto.stuck_transactions().await?;
            let ids: Vec<String> = stuck
                .into_iter()
                .map(|t| t.id)
                .filter(|id| own.contains(id))
                .collect();
            stream::iter(ids)
                .map(|id| async move { proto.recover(&id, false).await })
                .buffer_unordered(2)
                .collect()
                .await
        }
    };
    for report in reports {
        match &report.verdict {
            Verdict::Completed(_) => {
                shared.recovered.fetch_add(1, Ordering::Relaxed);
            }
            Verdict::NothingToDo(_) | Verdict::EndedElsewhere(_) => {}
            // Moved since the search, or still within the window: next pass.
            Verdict::Refused(_) | Verdict::Stopped(_) => continue,
            Verdict::Failed(e) => {
                tracing::warn!(txn = %report.txn, error = %e, "recovery failed");
                continue;
            }
        }
        if let Ok(mut ids) = shared.crashes.lock() {
            ids.remove(&report.txn);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::worker_accounts;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn workers_leave_the_seeded_stale_locks_alone_while_two_accounts_remain() {
        let all = ids(&["a1", "a2", "a3", "a4", "a5"]);
        assert_eq!(
            worker_accounts(&all, &ids(&["a2", "a4"])),
            ids(&["a1", "a3", "a5"])
        );
        assert_eq!(
            worker_accounts(&all, &ids(&["a1", "a2", "a3", "a4"])),
            ids(&["a4", "a5"]),
            "never fewer than two"
        );
        assert_eq!(worker_accounts(&all, &[]), all);
    }
}
