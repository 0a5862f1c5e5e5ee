//! Value types checked before step 1: a `locks` index whose `process_id`
//! the definitive guide's document locks mapped `long` rejects the tool's
//! holder name, so `transfer --locks` is refused before anything is written
//! (it used to fail at its first lock write, leaving a `created`
//! transaction), `doctor` names the conflict, and recoveries, which write no
//! lock document, are not refused for it.

use crate::common::world::Stop;
use crate::fixture::Fx;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::read::doctor::Severity;
use estx::protocol::time::format_timestamp;
use estx::protocol::{NewTransfer, RunLimits, TxnState, Verdict};
use serde_json::json;

#[tokio::test]
async fn a_number_mapped_process_id_refuses_transfer_with_locks_before_any_write() {
    let fx = Fx::with_mappings(
        |_| {},
        |bodies| {
            let props = bodies[2].1.pointer_mut("/mappings/properties").unwrap();
            props["process_id"] = json!({"type": "long"});
        },
    )
    .await;
    fx.account("A", 100).await;
    fx.account("B", 100).await;
    let req = NewTransfer {
        id: Some("t".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 10,
    };
    let r = fx.proto.transfer(&req, true, RunLimits::default()).await;
    let Verdict::Failed(e) = &r.verdict else {
        panic!("{:?}", r.verdict)
    };
    assert!(
        e.to_string().contains("`process_id` is mapped `long`"),
        "{e}"
    );
    let written = fx.cluster().get(&fx.ix.transactions, "t").await.unwrap();
    assert!(written.is_none(), "a transaction was created: {written:?}");
    for acct in ["A", "B"] {
        let lock = fx.cluster().get(&fx.ix.locks, acct).await.unwrap();
        assert!(lock.is_none(), "{acct} locked");
    }

    let report = fx.proto.doctor().await.unwrap();
    let named = report
        .checks
        .iter()
        .find(|c| c.text.contains("`process_id` is mapped `long`"));
    assert_eq!(
        named.map(|c| c.severity),
        Some(Severity::Error),
        "{report:?}"
    );

    // A recovery writes no lock document: not refused for it.
    let at = format_timestamp(Utc::now() - ChronoDuration::minutes(10));
    fx.put_txn(
        "c",
        json!({"src_acct": "A", "dest_acct": "B", "amount": 10, "transaction_state": "created",
            "creation_time": at, "modification_time": at}),
    )
    .await;
    let r = fx.proto.recover("c", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        r.verdict
    );
    // Without locks, a transfer works too.
    let plain = NewTransfer {
        id: Some("u".into()),
        ..req
    };
    let r = fx.proto.transfer(&plain, false, RunLimits::default()).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        r.verdict
    );
}

/// The application's remove script (the article's) drops the id from
/// `pending_transactions` and knows nothing of `pending_deltas`: the delta
/// the tool recorded must not outlive the entry it describes.
#[tokio::test]
async fn a_delta_does_not_outlive_the_entry_the_application_removed() {
    let fx = Fx::new().await;
    fx.account("A", 100).await;
    fx.account("B", 100).await;
    fx.kit().stop(&Stop::new("t", "A", "B", 10, 2)).await;
    let mut a = fx.source(&fx.ix.accounts, "A").await;
    assert_eq!(a["pending_deltas"], json!([{"txn": "t", "delta": -10}]));
    // The application's remove, as its painless script does it.
    a["pending_transactions"] = json!([]);
    fx.put(&fx.ix.accounts, "A", serde_json::Value::Object(a))
        .await;
    let u = NewTransfer {
        id: Some("u".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 10,
    };
    let r = fx.proto.transfer(&u, false, RunLimits::default()).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        r.verdict
    );
    let a = fx.source(&fx.ix.accounts, "A").await;
    assert_eq!(a["pending_deltas"], json!([]), "{a:?}");
}
