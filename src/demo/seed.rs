//! `seed`: accounts plus a realistic mess, made by the protocol module itself.
//!
//! Transfers are run through [`Protocol::transfer`] and stopped after `k`
//! steps (`RunLimits`), exactly as a crashed worker leaves them; rollbacks are
//! stopped the same way. Only what the protocol cannot produce is written by
//! hand: timestamps moved into the past, the lock of a dead process, and one
//! late unfenced apply for the audit to find. The mess itself is listed in
//! the scenario module (`src/demo/scenario.rs`).

use super::error::DemoError;
use super::scenario::Seeder;
use crate::protocol::{Protocol, TxnState};
use serde_json::json;
use std::collections::BTreeSet;

/// Fewest accounts the mess fits in (two locked by a crash, one by a leftover lock).
pub const MIN_ACCOUNTS: usize = 4;

/// What to seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedOptions {
    /// Number of accounts, `acct-01` upwards (at least [`MIN_ACCOUNTS`]).
    pub accounts: usize,
    /// Opening balance of every account.
    pub balance: i64,
    /// Seed even if the transactions or accounts index holds documents: the
    /// demo accounts are overwritten (balance reset, nothing pending) and a
    /// new batch of transactions is added next to the old ones.
    pub force: bool,
}

impl Default for SeedOptions {
    fn default() -> Self {
        SeedOptions {
            accounts: 8,
            balance: 1000,
            force: false,
        }
    }
}

/// What was seeded.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedReport {
    /// Account ids, in order.
    pub accounts: Vec<String>,
    /// Every seeded transaction with the state it was left in.
    pub transactions: Vec<(String, TxnState)>,
    /// Resources left locked (by crashed workers and a dead process).
    pub locks: Vec<String>,
    /// The conservation total, accounts × balance: what `audit --expect-total`
    /// should be given. The seeded late apply makes the actual sum differ by
    /// its amount until `audit --repair` undoes it.
    pub total_balance: i64,
    /// One line per seeded item, for operators.
    pub notes: Vec<String>,
}

/// The account ids `seed` creates: `acct-01`, `acct-02`, ...
pub fn account_ids(n: usize) -> Vec<String> {
    let width = n.to_string().len().max(2);
    (1..=n).map(|i| format!("acct-{i:0width$}")).collect()
}

/// Creates the three indices with the bundled mappings; existing ones are kept.
pub async fn ensure_indices(proto: &Protocol) -> Result<(), DemoError> {
    proto.ensure_indices().await?;
    Ok(())
}

/// Creates the indices, the accounts, and the mess (see the module docs);
/// refuses with [`DemoError::NotEmpty`] when the transactions or accounts
/// index already holds documents, unless `opts.force`.
pub async fn seed(proto: &Protocol, opts: &SeedOptions) -> Result<SeedReport, DemoError> {
    if opts.accounts < MIN_ACCOUNTS {
        return Err(DemoError::Seed(format!(
            "at least {MIN_ACCOUNTS} accounts are needed, got {}",
            opts.accounts
        )));
    }
    let total_balance = i64::try_from(opts.accounts)
        .ok()
        .and_then(|n| n.checked_mul(opts.balance))
        .filter(|_| opts.balance >= 0)
        .ok_or_else(|| DemoError::Seed(format!("invalid opening balance {}", opts.balance)))?;
    ensure_indices(proto).await?;
    let ix = &proto.config().indices;
    if !opts.force {
        for index in [&ix.transactions, &ix.accounts] {
            proto.cluster().refresh(index).await?;
            let count = proto
                .cluster()
                .count(index, json!({"match_all": {}}))
                .await?;
            if count > 0 {
                return Err(DemoError::NotEmpty {
                    index: index.clone(),
                    count,
                });
            }
        }
    }
    let accounts = account_ids(opts.accounts);
    for a in &accounts {
        let doc = json!({"balance": opts.balance, "pending_transactions": []});
        proto.cluster().put(&ix.accounts, a, &doc).await?;
    }
    let mut locked = BTreeSet::new();
    for a in &accounts {
        if proto.cluster().get(&ix.locks, a).await?.is_some() {
            locked.insert(a.clone());
        }
    }
    let mut s = Seeder::new(proto, accounts.clone(), locked);
    s.build().await?;
    for index in [&ix.transactions, &ix.accounts, &ix.locks] {
        proto.cluster().refresh(index).await?;
    }
    Ok(SeedReport {
        accounts,
        transactions: s.transactions,
        locks: s.locks,
        total_balance,
        notes: s.notes,
    })
}
