//! Lost responses: the server applies a write, the answer never reaches the
//! client (a `FaultProxy` swallows it and closes the connection). For every
//! kind of write the protocol makes, the procedure — going through the proxy —
//! must find out from a re-read (or, for `op_type=create`, from the 409 of a
//! second create) that the write was its own, and carry on without applying
//! anything twice. A write whose outcome stays unknown for longer than the
//! retry policy allows makes the procedure give up, leaving the transaction
//! where recovery can finish it.
//!
//! Index names are unique per test, so a rule such as
//! `POST /{accounts}/_update/A?` targets the writes of exactly one account.
//! (The client sends conditional writes as partial updates, `POST
//! /{index}/_update/{id}?if_...`,
//! creates as `POST /{index}/_create/{id}` and lock releases as
//! `DELETE /{index}/_doc/{id}?if_...`.)
//!
//! This file holds what the scenarios share: which write loses its response,
//! the names of a case, the proxy rules, seeding, running through the proxy
//! and checking the outcome.

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::{NewTransfer, Procedure, ProcedureReport, Protocol, RunLimits, TxnState};

mod all_writes;
mod each_write;
mod giving_up;

/// A write of the protocol whose response the proxy can swallow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    /// `op_type=create` of the transaction document.
    CreateTxn,
    /// A conditional write of the transaction document (a state transition).
    TxnDoc,
    /// A conditional write of the source account.
    Src,
    /// A conditional write of the destination account.
    Dest,
    /// `op_type=create` of the lock documents of both accounts.
    AcquireLocks,
    /// Conditional delete of the lock documents of both accounts.
    ReleaseLocks,
}

/// The names one case works with: accounts `A{tag}`/`B{tag}`, transaction `t{tag}`.
struct Names {
    id: String,
    src: String,
    dest: String,
}

impl Names {
    fn new(tag: &str) -> Names {
        Names {
            id: format!("t{tag}"),
            src: format!("A{tag}"),
            dest: format!("B{tag}"),
        }
    }

    fn request(&self) -> NewTransfer {
        NewTransfer {
            id: Some(self.id.clone()),
            src: self.src.clone(),
            dest: self.dest.clone(),
            amount: 100,
        }
    }
}

/// The `(method, path fragment)` drop rules matching `write`.
fn rules(fx: &Fx, n: &Names, write: Write) -> Vec<(&'static str, String)> {
    let ix = &fx.ix;
    match write {
        Write::CreateTxn => vec![("POST", format!("/{}/_create/{}", ix.transactions, n.id))],
        Write::TxnDoc => vec![("POST", format!("/{}/_update/{}?", ix.transactions, n.id))],
        Write::Src => vec![("POST", format!("/{}/_update/{}?", ix.accounts, n.src))],
        Write::Dest => vec![("POST", format!("/{}/_update/{}?", ix.accounts, n.dest))],
        Write::AcquireLocks => vec![
            ("POST", format!("/{}/_create/{}", ix.locks, n.src)),
            ("POST", format!("/{}/_create/{}", ix.locks, n.dest)),
        ],
        Write::ReleaseLocks => vec![
            ("DELETE", format!("/{}/_doc/{}?", ix.locks, n.src)),
            ("DELETE", format!("/{}/_doc/{}?", ix.locks, n.dest)),
        ],
    }
}

/// What runs through the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// A fresh transfer (optionally under locks).
    Transfer { locks: bool },
    /// `run_procedure` (forced) on a staged transaction.
    Proc(Procedure),
}

/// Seeds the case's accounts (and stages its transaction when asked).
async fn prepare(fx: &Fx, tag: &str, staged: Option<usize>, pre_rollback: usize) -> Names {
    let n = Names::new(tag);
    match staged {
        None => {
            fx.account(&n.src, 500).await;
            fx.account(&n.dest, 500).await;
        }
        Some(k) => {
            let (id, src, dest) = stage(fx, tag, k).await;
            assert_eq!(
                (id.as_str(), src.as_str(), dest.as_str()),
                (n.id.as_str(), n.src.as_str(), n.dest.as_str())
            );
        }
    }
    if pre_rollback > 0 {
        fx.kit().stop_rollback(&n.id, pre_rollback, true).await;
        assert_eq!(fx.state(&n.id).await, TxnState::Terminating);
    }
    n
}

async fn run(p: &Protocol, n: &Names, run: Run) -> ProcedureReport {
    match run {
        Run::Transfer { locks } => p.transfer(&n.request(), locks, RunLimits::default()).await,
        Run::Proc(procedure) => {
            p.run_procedure(&n.id, procedure, true, RunLimits::default())
                .await
        }
    }
}

/// The transaction is `end`, the balances are exactly what one transfer (or
/// none) makes, nothing is left pending (no id, no delta), no settled record
/// was written, and no lock is left behind.
async fn assert_outcome(fx: &Fx, n: &Names, end: &TxnState, ctx: &str) {
    assert_eq!(&fx.state(&n.id).await, end, "{ctx}");
    let (a, b) = (fx.acct(&n.src).await, fx.acct(&n.dest).await);
    let expected = if *end == TxnState::Finished {
        (400, 600)
    } else {
        (500, 500)
    };
    assert_eq!(
        (a.balance, b.balance),
        expected,
        "{ctx}: balances of {}/{}",
        n.src,
        n.dest
    );
    for acct in [&a, &b] {
        assert!(
            acct.pending.is_empty() && acct.deltas.is_empty() && acct.settled.is_empty(),
            "{ctx}: history left: {acct:?}"
        );
    }
    for acct in [&n.src, &n.dest] {
        let lock = fx.cluster().get(&fx.ix.locks, acct).await.unwrap();
        assert!(
            lock.is_none(),
            "{ctx}: lock on {acct} left behind: {lock:?}"
        );
    }
}
