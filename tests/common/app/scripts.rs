//! The article's four painless scripts, emulated atomically: a realtime GET,
//! the script's decision on the source, and a write conditional on the
//! `_seq_no`/`_primary_term` read (osmem has no scripting). A conflict means
//! someone wrote in between: read and run the script again, as the cluster
//! would have run it on the newer document. Timestamps are written as the
//! scripts and the ingest pipeline write them.

use super::names::State;
use super::World;
use chrono::{DateTime, Utc};
use estx::cluster::WriteOutcome;
use serde_json::{Map, Value};

/// What an update with a script answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Result {
    Updated,
    /// `ctx.op = "noop"`.
    Noop,
}

/// Why a script could not run.
#[derive(Debug)]
pub enum ScriptError {
    Missing(String),
    Cluster(estx::Error),
    Conflicts(String),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Missing(id) => write!(f, "{id} missing"),
            ScriptError::Cluster(e) => write!(f, "{e}"),
            ScriptError::Conflicts(id) => write!(f, "{id}: too many conflicts"),
        }
    }
}

/// `SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")` in UTC: `S` is
/// the millisecond, so six `S` pad the *milliseconds* to six digits
/// (`.000123` is 123 ms), as the article's `update_transaction_state` writes.
pub fn simple_date_format(t: DateTime<Utc>) -> String {
    format!(
        "{}.{:06}Z",
        t.format("%Y-%m-%dT%H:%M:%S"),
        t.timestamp_subsec_millis()
    )
}

/// `{{_ingest.timestamp}}` as the `initialize_time` pipeline writes it (a
/// `ZonedDateTime`'s ISO form; microseconds here).
pub fn ingest_timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Runs `script` on `index/id` atomically; it returns whether it changed
/// the source (false: noop).
async fn run(
    w: &World,
    index: &str,
    id: &str,
    script: impl Fn(&mut Map<String, Value>) -> bool,
) -> std::result::Result<Result, ScriptError> {
    for _ in 0..200 {
        let doc = w
            .cluster
            .get(index, id)
            .await
            .map_err(ScriptError::Cluster)?
            .ok_or_else(|| ScriptError::Missing(format!("{index}/{id}")))?;
        let mut src = doc.source.clone();
        if !script(&mut src) {
            return Ok(Result::Noop);
        }
        match w
            .cluster
            .put_if(index, id, &src, doc.seq_no, doc.primary_term)
            .await
            .map_err(ScriptError::Cluster)?
        {
            WriteOutcome::Written { .. } => return Ok(Result::Updated),
            WriteOutcome::Conflict => tokio::task::yield_now().await,
        }
    }
    Err(ScriptError::Conflicts(format!("{index}/{id}")))
}

/// The ids in the account's `pending_transactions`.
fn pending_of(src: &mut Map<String, Value>, field: &str) -> Vec<Value> {
    match src.get(field) {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

/// The scripts' "if the id is pending here, remove it": whether it was.
fn take_pending(pending: &mut Vec<Value>, txn: &str) -> bool {
    let Some(idx) = pending.iter().position(|v| v.as_str() == Some(txn)) else {
        return false;
    };
    pending.remove(idx);
    true
}

impl World {
    /// `update_transaction_state`: moves `current` to `desired` and stamps
    /// `modification_time`; noop in any other state.
    pub async fn update_transaction_state(
        &self,
        txn: &str,
        current: State,
        desired: State,
    ) -> std::result::Result<Result, ScriptError> {
        let n = self.names;
        run(self, &self.ix.transactions, txn, |src| {
            if src.get(n.state).and_then(Value::as_str) != Some(n.state_value(current)) {
                return false;
            }
            src.insert(n.state.into(), n.state_value(desired).into());
            let now = simple_date_format(Utc::now());
            src.insert(n.modification_time.into(), now.into());
            true
        })
        .await
    }

    /// `apply_transaction_to_account`: noop if the id is pending here,
    /// else push it and add `amount` to the balance.
    pub async fn apply_transaction_to_account(
        &self,
        account: &str,
        txn: &str,
        amount: i64,
    ) -> std::result::Result<Result, ScriptError> {
        self.account_script(account, |pending, balance| {
            if pending.iter().any(|v| v.as_str() == Some(txn)) {
                return false;
            }
            pending.push(txn.into());
            *balance += amount;
            true
        })
        .await
    }

    /// `remove_transaction_from_account`: removes the id if pending here.
    pub async fn remove_transaction_from_account(
        &self,
        account: &str,
        txn: &str,
    ) -> std::result::Result<Result, ScriptError> {
        self.account_script(account, |pending, _| take_pending(pending, txn))
            .await
    }

    /// `undo_transaction_on_account`: removes the id if pending here and
    /// subtracts `amount` (the article passes `-amount` for the source).
    pub async fn undo_transaction_on_account(
        &self,
        account: &str,
        txn: &str,
        amount: i64,
    ) -> std::result::Result<Result, ScriptError> {
        self.account_script(account, |pending, balance| {
            let taken = take_pending(pending, txn);
            if taken {
                *balance -= amount;
            }
            taken
        })
        .await
    }

    /// An account script over `pending_transactions` and `balance`.
    async fn account_script(
        &self,
        account: &str,
        script: impl Fn(&mut Vec<Value>, &mut i64) -> bool,
    ) -> std::result::Result<Result, ScriptError> {
        let n = self.names;
        run(self, &self.ix.accounts, account, |src| {
            let mut pending = pending_of(src, n.pending);
            let mut balance = src.get(n.balance).and_then(Value::as_i64).unwrap_or(0);
            if !script(&mut pending, &mut balance) {
                return false;
            }
            src.insert(n.pending.into(), Value::Array(pending));
            src.insert(n.balance.into(), balance.into());
            true
        })
        .await
    }
}
