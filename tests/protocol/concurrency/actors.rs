//! The set-up the racing concurrency tests share (`stress.rs`,
//! `with_locks.rs`, `batch/fleet.rs`): a few accounts holding the same
//! balance, a seed that can be replayed, a recovery process with no
//! recovery window (it races live workers), the workers' random transfers,
//! what is still in flight at the end (for the drain, `recorded.rs`), and
//! the invariants every one of them checks.

use crate::fixture::Fx;
use estx::protocol::{NewTransfer, Protocol, ProtocolConfig, RunLimits, Transaction, TxnState};
use rand::rngs::StdRng;
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The balance every account starts with.
pub const INITIAL: i64 = 1000;
/// Upper bound on the iterations of the background loops (they normally
/// stop long before, when the workers are done).
pub const MAX_LOOP_ROUNDS: usize = 100_000;

/// A world of accounts for actors to race on.
pub struct Race {
    /// The indices and the protocol handle with the default settings.
    pub fx: Arc<Fx>,
    /// The run's seed (`ESTX_CONCURRENCY_SEED`, else random; printed).
    pub seed: u64,
    /// How many accounts (`acc0` ..).
    pub accounts: usize,
}

impl Race {
    /// `accounts` accounts of [`INITIAL`] each, on a fixture adjusted by
    /// `adjust`; prints the seed to replay the run with.
    pub async fn new(accounts: usize, adjust: impl FnOnce(&mut ProtocolConfig)) -> Race {
        let fx = Fx::with(adjust).await;
        for i in 0..accounts {
            fx.account(&account_id(i), INITIAL).await;
        }
        let seed: u64 = std::env::var("ESTX_CONCURRENCY_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(rand::random);
        println!(
            "seed: {seed} (rerun with ESTX_CONCURRENCY_SEED={seed}; thread timing still varies)"
        );
        Race {
            fx: Arc::new(fx),
            seed,
            accounts,
        }
    }

    /// The ids of the accounts.
    pub fn account_ids(&self) -> Vec<String> {
        (0..self.accounts).map(account_id).collect()
    }

    /// What the balances add up to, before and after.
    pub fn total(&self) -> i64 {
        self.accounts as i64 * INITIAL
    }

    /// A handle like `p` (same cluster connection) with no recovery window:
    /// a recovery process that races live workers.
    pub fn racing(&self, p: &Protocol) -> Protocol {
        Protocol::new(
            p.cluster().clone(),
            ProtocolConfig {
                recovery_window: Duration::ZERO,
                ..self.fx.proto.config().clone()
            },
        )
    }

    /// Worker `w`'s `i`th transfer (id `w{w}-{i}`): between two random
    /// distinct accounts, an amount of 1 to 50, and with probability
    /// `crash_rate` limits that stop it after a random number of steps (a
    /// worker that dies).
    pub fn random_transfer(
        &self,
        rng: &mut StdRng,
        w: usize,
        i: usize,
        crash_rate: f64,
    ) -> (NewTransfer, RunLimits) {
        let src = rng.random_range(0..self.accounts);
        let dest = (src + rng.random_range(1..self.accounts)) % self.accounts;
        let crash = rng.random_bool(crash_rate);
        let limits = RunLimits {
            max_steps: crash.then(|| rng.random_range(0..7)),
        };
        let req = NewTransfer {
            id: Some(format!("w{w}-{i}")),
            src: account_id(src),
            dest: account_id(dest),
            amount: rng.random_range(1..=50),
        };
        (req, limits)
    }

    /// The ids of the transactions not yet terminal (after a refresh).
    pub async fn in_flight(&self) -> Vec<String> {
        let non_terminal: Vec<String> = TxnState::NON_TERMINAL_NAMES
            .iter()
            .map(|s| s.to_string())
            .collect();
        self.fx.refresh().await;
        let left = self.fx.proto.list_transactions(&non_terminal, None).await;
        left.unwrap().into_iter().map(|t| t.id).collect()
    }

    /// The invariants after a run: every transaction terminal; each account
    /// moved by exactly the finished transfers naming it, carrying nothing
    /// and recording no delta; the total kept. Returns every transaction
    /// and how many ended in each state.
    pub async fn check_books(&self) -> (Vec<Transaction>, BTreeMap<String, usize>) {
        let fx = &self.fx;
        fx.refresh().await;
        let all = fx.proto.list_transactions(&[], None).await.unwrap();
        let ids = self.account_ids();
        let mut accounts = BTreeMap::new();
        for id in &ids {
            accounts.insert(id.clone(), fx.acct(id).await);
        }
        let mut expected: BTreeMap<String, i64> =
            ids.iter().map(|id| (id.clone(), INITIAL)).collect();
        let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
        for t in &all {
            let state = t
                .state
                .clone()
                .unwrap_or(TxnState::Unknown("<none>".into()));
            *by_state.entry(state.to_string()).or_default() += 1;
            let tr = t.transfer().unwrap();
            match state {
                TxnState::Finished => {
                    *expected.get_mut(&tr.src).unwrap() -= tr.amount;
                    *expected.get_mut(&tr.dest).unwrap() += tr.amount;
                }
                TxnState::RolledBack => {}
                other => panic!("{} is {other}", t.id),
            }
        }
        for (id, st) in &accounts {
            assert!(st.pending.is_empty(), "{id} still carries {:?}", st.pending);
            assert!(st.deltas.is_empty(), "{id} still records {:?}", st.deltas);
            assert_eq!(
                st.balance, expected[id],
                "balance of {id} (all: {accounts:?})"
            );
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        assert_eq!(fx.total(&refs).await, self.total());
        (all, by_state)
    }

    /// The audit finds nothing and sums to the total.
    pub async fn assert_audit_clean(&self) {
        let fx = &self.fx;
        fx.refresh().await;
        let audit = fx.proto.audit(Some(self.total()), false).await.unwrap();
        assert!(
            audit.findings.is_empty(),
            "audit findings:\n{}",
            audit
                .findings
                .iter()
                .map(|f| format!("  {} {}: {}", f.kind, f.id, f.detail))
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert_eq!(audit.total_balance, self.total());
    }
}

/// The id of account `i`.
pub fn account_id(i: usize) -> String {
    format!("acc{i}")
}

/// One of the eight most recently started transfers, for an operator to
/// force a rollback of (none before the first).
pub fn pick_recent(recent: &Mutex<Vec<String>>, rng: &mut StdRng) -> Option<String> {
    let recent = recent.lock().unwrap();
    let window = recent.len().saturating_sub(8)..recent.len();
    (!window.is_empty()).then(|| recent[rng.random_range(window)].clone())
}
