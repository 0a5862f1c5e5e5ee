//! Locks: taken with `op_type=create`, released only by their owner with a
//! delete conditional on the `_seq_no` read when ownership was checked,
//! staleness from the owner transaction and the lease, operator releases,
//! and transfers that run under locks on both accounts.
//!
//! This file holds the seeding and inspection helpers its submodules share.

use crate::fixture::Fx;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::time::format_timestamp;
use serde_json::{json, Value};

mod acquire;
mod foreign;
mod leaks;
mod read_side;
mod release;
mod routing;
mod shapes;
mod staleness;
mod takeover;
mod transfers;

/// Writes a well-formed transaction in `state`, modified `minutes_ago`.
async fn txn(fx: &Fx, id: &str, state: &str, src: &str, dest: &str, minutes_ago: i64) {
    let t = format_timestamp(Utc::now() - ChronoDuration::minutes(minutes_ago));
    fx.put_txn(
        id,
        json!({"src_acct": src, "dest_acct": dest, "amount": 10, "transaction_state": state,
               "creation_time": t, "modification_time": t}),
    )
    .await;
}

/// The owner recorded in the lock on `resource`, `None` when there is no lock.
async fn lock_owner(fx: &Fx, resource: &str) -> Option<Option<String>> {
    fx.cluster()
        .get(&fx.ix.locks, resource)
        .await
        .unwrap()
        .map(|d| {
            d.source
                .get("owner")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
}

fn ts(offset: ChronoDuration) -> String {
    format_timestamp(Utc::now() + offset)
}
