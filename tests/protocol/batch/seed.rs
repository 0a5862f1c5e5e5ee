//! A stuck set seeded directly (one `_bulk` per index): transactions in every
//! non-terminal state and every partial progress within it, over accounts
//! whose documents are exactly what the protocol's own steps would have left
//! (built with the pure decision functions). Shared by the batched-recovery
//! tests and `benches/recovery.rs`.

use estx::cluster::Cluster;
use estx::protocol::account::AccountState;
use estx::protocol::decide::{self, Decision, Fencing};
use estx::protocol::time::format_timestamp;
use estx::protocol::Indices;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The stuck shapes, cycled over the transactions: the state, and how far
/// the account steps of that state got (source done, destination done).
pub const SHAPES: [(&str, bool, bool); 10] = [
    ("created", false, false),
    ("pending", false, false),
    ("pending", true, false),
    ("pending", true, true),
    ("committed", false, false),
    ("committed", true, false),
    ("committed", true, true),
    ("terminating", false, false),
    ("terminating", true, false),
    ("terminating", true, true),
];

/// What was seeded, and what full recovery must end with.
pub struct Seeded {
    /// Transaction ids.
    pub txns: Vec<String>,
    /// Account ids.
    pub accounts: Vec<String>,
    /// Balance of each account once every transaction is recovered.
    pub expected: BTreeMap<String, i64>,
    /// Sum of all balances (constant).
    pub total: i64,
    /// Writes one-at-a-time recovery makes (claims included) to recover all
    /// (read by the benchmark).
    #[allow(dead_code)]
    pub writes: usize,
}

fn written(d: Decision<AccountState>) -> AccountState {
    match d {
        Decision::Write(a, _) => a,
        Decision::Noop(r) => panic!("seed: unexpected noop {r}"),
    }
}

/// Seeds `n` stuck transactions (ids `{tag}t{i}`) over `m` accounts
/// (`{tag}a{j}`, balance `initial` each), modified an hour ago.
pub async fn seed(
    cluster: &Cluster,
    ix: &Indices,
    tag: &str,
    n: usize,
    m: usize,
    initial: i64,
) -> Seeded {
    assert!(m >= 2);
    let accounts: Vec<String> = (0..m).map(|j| format!("{tag}a{j}")).collect();
    let mut states: Vec<AccountState> = (0..m).map(|_| AccountState::new(initial)).collect();
    let mut expected: BTreeMap<String, i64> =
        accounts.iter().map(|a| (a.clone(), initial)).collect();
    let old = format_timestamp(chrono::Utc::now() - chrono::Duration::hours(1));
    let mut txns = Vec::with_capacity(n);
    let mut docs = Vec::with_capacity(n);
    let mut writes = 0;
    for i in 0..n {
        let id = format!("{tag}t{i}");
        let s = i % m;
        let d = (s + 1 + (i / m) % (m - 1)) % m;
        let amount = 1 + (i % 50) as i64;
        let (state, src_done, dest_done) = SHAPES[i % SHAPES.len()];
        let done = [(s, src_done, -amount), (d, dest_done, amount)];
        match state {
            "created" | "pending" => {
                for &(k, applied, delta) in &done {
                    if applied {
                        states[k] = written(decide::apply(&states[k], &id, delta).unwrap());
                    }
                }
                *expected.get_mut(&accounts[s]).unwrap() -= amount;
                *expected.get_mut(&accounts[d]).unwrap() += amount;
                // transitions + (claim + apply) per missing apply + 2 removes
                let missing = done.iter().filter(|x| !x.1).count();
                writes += usize::from(state == "created") + 2 * missing + 2 + 2;
            }
            "committed" => {
                for &(k, removed, delta) in &done {
                    states[k] = written(decide::apply(&states[k], &id, delta).unwrap());
                    if removed {
                        states[k] = written(decide::remove(&states[k], &id));
                    }
                }
                *expected.get_mut(&accounts[s]).unwrap() -= amount;
                *expected.get_mut(&accounts[d]).unwrap() += amount;
                writes += done.iter().filter(|x| !x.1).count() + 1;
            }
            _ => {
                for &(k, undone, delta) in &done {
                    states[k] = written(decide::apply(&states[k], &id, delta).unwrap());
                    if undone {
                        states[k] =
                            written(decide::undo(&states[k], &id, delta, Fencing::On).unwrap());
                    }
                }
                // Undo always writes, even where already undone.
                writes += 2 + 1;
            }
        }
        docs.push((
            id.clone(),
            json!({
                "src_acct": accounts[s],
                "dest_acct": accounts[d],
                "amount": amount,
                "transaction_state": state,
                "creation_time": old,
                "modification_time": old,
            }),
        ));
        txns.push(id);
    }
    let account_docs: Vec<(String, Value)> = accounts
        .iter()
        .zip(&states)
        .map(|(id, st)| {
            let mut doc = Map::new();
            st.write_into(&mut doc);
            (id.clone(), Value::Object(doc))
        })
        .collect();
    for chunk in account_docs.chunks(1000) {
        cluster
            .bulk_index(&ix.accounts, chunk)
            .await
            .expect("seed accounts");
    }
    for chunk in docs.chunks(1000) {
        cluster
            .bulk_index(&ix.transactions, chunk)
            .await
            .expect("seed transactions");
    }
    for index in [&ix.transactions, &ix.accounts] {
        cluster.refresh(index).await.expect("refresh");
    }
    Seeded {
        txns,
        accounts,
        expected,
        total: initial * m as i64,
        writes,
    }
}
