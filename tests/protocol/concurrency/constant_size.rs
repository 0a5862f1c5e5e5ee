//! The fence keeps no history: after a thousand transfers over four accounts
//! every account document is exactly as large as after its first transfer
//! settled (balances are chosen so their digit count cannot change).

use crate::fixture::Fx;
use estx::protocol::{NewTransfer, RunLimits, TxnState, Verdict};

const ACCOUNTS: [&str; 4] = ["a0", "a1", "a2", "a3"];
const TRANSFERS: usize = 1000;
const INITIAL: i64 = 5_000_000;

async fn sizes(fx: &Fx) -> Vec<usize> {
    let mut out = Vec::new();
    for id in ACCOUNTS {
        let src = fx.source(&fx.ix.accounts, id).await;
        out.push(serde_json::to_string(&src).unwrap().len());
    }
    out
}

async fn transfer(fx: &Fx, i: usize) {
    let req = NewTransfer {
        id: None,
        src: ACCOUNTS[i % 4].into(),
        dest: ACCOUNTS[(i + 1 + i / 4 % 3) % 4].into(),
        amount: 1 + (i % 9) as i64,
    };
    let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "transfer {i}: {:?}",
        report.verdict
    );
}

#[tokio::test]
async fn account_documents_stay_the_same_size_after_a_thousand_transfers() {
    let fx = Fx::new().await;
    for id in ACCOUNTS {
        fx.account(id, INITIAL).await;
    }
    // Every account is the source of one of the first four transfers.
    for i in 0..4 {
        transfer(&fx, i).await;
    }
    let first = sizes(&fx).await;
    for i in 4..TRANSFERS {
        transfer(&fx, i).await;
    }
    let last = sizes(&fx).await;
    assert_eq!(last, first, "account documents grew");
    let mut total = 0;
    for id in ACCOUNTS {
        let a = fx.acct(id).await;
        assert!(
            a.pending.is_empty() && a.deltas.is_empty() && a.settled.is_empty(),
            "{a:?}"
        );
        assert!(
            (INITIAL - 9_000..INITIAL + 9_000).contains(&a.balance),
            "{a:?}"
        );
        total += a.balance;
    }
    assert_eq!(total, 4 * INITIAL);
}
