//! Ids that need care in URLs — `.`, `..` (dot segments a URL would
//! swallow), `a/b`, `%2e` and unicode — as transaction and account ids, end
//! to end: create, transfer (under locks: lock ids are account ids), recover
//! and rollback.

use crate::fixture::Fx;
use estx::protocol::{NewTransfer, RunLimits, TxnState, Verdict};

const IDS: [&str; 6] = [".", "..", "a/b", "%2e", "%2E%2E", "üñï©ødé 転送"];

async fn accounts(fx: &Fx, id: &str) -> (String, String) {
    let (src, dest) = (id.to_string(), format!("{id}/dest"));
    fx.account(&src, 500).await;
    fx.account(&dest, 500).await;
    (src, dest)
}

fn request(id: &str, src: &str, dest: &str) -> NewTransfer {
    NewTransfer {
        id: Some(id.to_string()),
        src: src.to_string(),
        dest: dest.to_string(),
        amount: 100,
    }
}

async fn assert_end(fx: &Fx, id: &str, src: &str, dest: &str, end: TxnState) {
    assert_eq!(fx.state(id).await, end, "`{id}`");
    let expected = if end == TxnState::Finished {
        (400, 600)
    } else {
        (500, 500)
    };
    let (a, b) = (fx.acct(src).await, fx.acct(dest).await);
    assert_eq!((a.balance, b.balance), expected, "`{id}`");
    assert!(a.pending.is_empty() && b.pending.is_empty(), "`{id}`");
    for acct in [src, dest] {
        let lock = fx.cluster().get(&fx.ix.locks, acct).await.unwrap();
        assert!(lock.is_none(), "`{id}`: lock on `{acct}` left: {lock:?}");
    }
}

#[tokio::test]
async fn ids_that_need_encoding_work_end_to_end() {
    for id in IDS {
        // Transfer, under locks.
        let fx = Fx::new().await;
        let (src, dest) = accounts(&fx, id).await;
        let report = fx
            .proto
            .transfer(&request(id, &src, &dest), true, RunLimits::default())
            .await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "`{id}`: {:?}\n{:#?}",
            report.verdict,
            report.steps
        );
        assert_eq!(report.txn, id);
        assert_end(&fx, id, &src, &dest, TxnState::Finished).await;

        // Stopped after the source's apply, then recovered or rolled back.
        for (recover, end) in [(true, TxnState::Finished), (false, TxnState::RolledBack)] {
            let fx = Fx::new().await;
            let (src, dest) = accounts(&fx, id).await;
            let report = fx
                .proto
                .transfer(
                    &request(id, &src, &dest),
                    false,
                    RunLimits { max_steps: Some(2) },
                )
                .await;
            assert!(
                matches!(report.verdict, Verdict::Stopped(_)),
                "`{id}`: {:?}",
                report.verdict
            );
            assert_eq!(fx.acct(&src).await.balance, 400, "`{id}`");
            let report = if recover {
                fx.proto.recover(id, true).await
            } else {
                fx.proto.rollback(id, true).await
            };
            assert!(
                matches!(&report.verdict, Verdict::Completed(s) if *s == end),
                "`{id}`: {:?}\n{:#?}",
                report.verdict,
                report.steps
            );
            assert_end(&fx, id, &src, &dest, end).await;
        }
    }
}
