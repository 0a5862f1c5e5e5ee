//! Malformed documents are refused with a message naming the problem and
//! nothing is written; the article's own shapes (its field names, nanosecond
//! and epoch-millis timestamps, extra fields) are accepted and kept.

use crate::fixture::{mappings, Fx};
use estx::cluster::VersionedDoc;
use estx::protocol::account::{DELTAS_FIELD, SETTLED_FIELD};
use estx::protocol::{ProcedureRefusal, TxnState, Verdict};
use estx::Error;
use serde_json::{json, Map, Value};

/// A world whose transaction and account indices are created with
/// `index.mapping.ignore_malformed`, as some deployments do, so documents of
/// any shape an application wrote can be stored.
struct Lenient {
    fx: Fx,
    txns: String,
    accts: String,
}

impl Lenient {
    async fn new() -> Lenient {
        let fx = Fx::with(|c| {
            c.indices.transactions = format!("{}-lenient", c.indices.transactions);
            c.indices.accounts = format!("{}-lenient", c.indices.accounts);
        })
        .await;
        let (txns, accts) = (
            fx.proto.config().indices.transactions.clone(),
            fx.proto.config().indices.accounts.clone(),
        );
        let [(_, txn_body), (_, acct_body), _] = mappings(&fx.ix);
        for (index, mut body) in [(&txns, txn_body), (&accts, acct_body)] {
            body["settings"] = json!({"index.mapping.ignore_malformed": true});
            assert!(fx.cluster().create_index(index, body).await.unwrap());
        }
        Lenient { fx, txns, accts }
    }

    async fn put(&self, index: &str, id: &str, doc: Value) {
        self.fx.put(index, id, doc).await;
    }

    async fn snapshot(&self, index: &str, id: &str) -> Option<VersionedDoc> {
        self.fx.cluster().get(index, id).await.unwrap()
    }
}

fn base() -> Map<String, Value> {
    json!({"src_acct": "A", "dest_acct": "B", "amount": 100, "transaction_state": "pending",
           "creation_time": "2019-12-05T09:59:00.000Z", "modification_time": "2019-12-05T10:00:00.000Z"})
    .as_object()
    .cloned()
    .unwrap()
}

/// `base()` with `key` set to `value` (`Value::Null` removes it).
fn with(changes: &[(&str, Value)]) -> Value {
    let mut doc = base();
    for (key, value) in changes {
        if value.is_null() {
            doc.remove(*key);
        } else {
            doc.insert(key.to_string(), value.clone());
        }
    }
    Value::Object(doc)
}

#[tokio::test]
async fn malformed_documents_are_refused_and_left_untouched() {
    let w = Lenient::new().await;
    let accounts = ["A", "B", "Bal", "Pend"];
    w.put(
        &w.accts,
        "A",
        json!({"balance": 500, "pending_transactions": [], "owner": "ops"}),
    )
    .await;
    w.put(
        &w.accts,
        "B",
        json!({"balance": 500, "pending_transactions": []}),
    )
    .await;
    w.put(
        &w.accts,
        "Bal",
        json!({"balance": "lots", "pending_transactions": []}),
    )
    .await;
    w.put(
        &w.accts,
        "Pend",
        json!({"balance": 5, "pending_transactions": [1, 2]}),
    )
    .await;
    // The lenient mapping really stored what it was given.
    assert_eq!(w.fx.source(&w.accts, "Bal").await["balance"], "lots");

    let null = Value::Null;
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "no-src",
            with(&[("src_acct", null.clone())]),
            "`src_acct`/`src_account` is missing",
        ),
        (
            "no-dest",
            with(&[("dest_acct", null.clone())]),
            "`dest_acct`/`dest_account` is missing",
        ),
        (
            "empty-src",
            with(&[("src_acct", json!(""))]),
            "`src_acct` is empty",
        ),
        (
            "src-number",
            with(&[("src_acct", json!(7))]),
            "`src_acct` is not a string",
        ),
        (
            "no-amount",
            with(&[("amount", null.clone())]),
            "`amount` is missing",
        ),
        (
            "amount-abc",
            with(&[("amount", json!("abc"))]),
            "`amount` is not an integer: \"abc\"",
        ),
        (
            "amount-frac",
            with(&[("amount", json!(1.5))]),
            "`amount` is not an integer: 1.5",
        ),
        (
            "no-state",
            with(&[("transaction_state", null.clone())]),
            "`transaction_state` is missing",
        ),
        (
            "state-number",
            with(&[("transaction_state", json!(5))]),
            "`transaction_state` is not a string: 5",
        ),
        (
            "paused",
            with(&[("transaction_state", json!("paused"))]),
            "unknown state `paused`",
        ),
        (
            "bad-time",
            with(&[("modification_time", json!("yesterday"))]),
            "`modification_time` is not a timestamp",
        ),
        (
            "no-time",
            with(&[("modification_time", null.clone())]),
            "`modification_time` is missing",
        ),
        (
            "same",
            with(&[("dest_acct", json!("A"))]),
            "same account `A`",
        ),
        (
            "ghost-acct",
            with(&[("dest_acct", json!("nowhere"))]),
            "`nowhere` not found",
        ),
        (
            "bal-lots",
            with(&[("dest_acct", json!("Bal"))]),
            "`balance` is not an integer",
        ),
        (
            "pend-nums",
            with(&[("src_acct", json!("Pend"))]),
            "`pending_transactions` holds a non-string",
        ),
        // Other starting states refuse just the same.
        (
            "created-no-amount",
            with(&[
                ("amount", null.clone()),
                ("transaction_state", json!("created")),
            ]),
            "`amount` is missing",
        ),
        (
            "terminating-frac",
            with(&[
                ("amount", json!(2.5)),
                ("transaction_state", json!("terminating")),
            ]),
            "`amount` is not an integer: 2.5",
        ),
        (
            "terminating-lots",
            with(&[
                ("src_acct", json!("Bal")),
                ("transaction_state", json!("terminating")),
            ]),
            "`balance` is not an integer",
        ),
    ];
    for (id, doc, _) in &cases {
        w.put(&w.txns, id, doc.clone()).await;
    }

    for (id, _, problem) in &cases {
        let mut before = vec![w.snapshot(&w.txns, id).await];
        for a in accounts {
            before.push(w.snapshot(&w.accts, a).await);
        }
        let runs = [
            ("rollback --force", w.fx.proto.rollback(id, true).await),
            ("recover --force", w.fx.proto.recover(id, true).await),
            ("rollback", w.fx.proto.rollback(id, false).await),
            ("recover", w.fx.proto.recover(id, false).await),
        ];
        for (what, report) in &runs {
            let ok = matches!(
                &report.verdict,
                Verdict::Refused(
                    ProcedureRefusal::Malformed(_) | ProcedureRefusal::UnknownState(_)
                ) | Verdict::Failed(Error::NotFound { .. } | Error::Malformed { .. })
            );
            assert!(ok, "{id}: {what} should refuse, got {:?}", report.verdict);
            let message = report.verdict.to_string();
            assert!(
                message.contains(problem),
                "{id}: {what}: `{message}` does not name `{problem}`"
            );
            assert!(
                report.steps.is_empty(),
                "{id}: {what} ran steps: {:#?}",
                report.steps
            );
            assert_eq!(estx::cli::exit::of_report(report), 1, "{id}: {what}");
        }
        let mut after = vec![w.snapshot(&w.txns, id).await];
        for a in accounts {
            after.push(w.snapshot(&w.accts, a).await);
        }
        // Same tokens: nothing was written at all, not even the same bytes.
        assert_eq!(after, before, "{id}: a document changed");
        for (b, a) in before.iter().zip(&after) {
            let (b, a) = (b.as_ref().map(|d| &d.source), a.as_ref().map(|d| &d.source));
            assert_eq!(
                serde_json::to_string(&b).unwrap(),
                serde_json::to_string(&a).unwrap(),
                "{id}"
            );
        }
    }
    assert!(
        w.snapshot(&w.accts, "nowhere").await.is_none(),
        "a missing account was created"
    );
}

#[tokio::test]
async fn a_missing_transaction_is_not_found() {
    let fx = Fx::new().await;
    for report in [
        fx.proto.recover("nope", true).await,
        fx.proto.rollback("nope", true).await,
    ] {
        match &report.verdict {
            Verdict::Failed(e @ Error::NotFound { .. }) => {
                assert!(e.to_string().contains("`nope`"), "{e}")
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
        assert_eq!(estx::cli::exit::of_report(&report), 1);
    }
    assert!(fx
        .cluster()
        .get(&fx.ix.transactions, "nope")
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn the_articles_shapes_are_accepted_and_unknown_fields_kept() {
    let fx = Fx::new().await;
    let extra = json!({"currency": "EUR", "holder": {"name": "Ada", "tags": ["vip"]}});
    for id in ["A", "B"] {
        let mut doc = json!({"balance": 500, "pending_transactions": []});
        doc.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        fx.put(&fx.ix.accounts, id, doc).await;
    }
    let extras_txn = json!({"reference": "invoice-42", "meta": {"by": "batch", "n": [1, 2]}});
    let article = |state: &str, amount: Value, modified: Value| {
        let mut doc = json!({"src_account": "A", "dest_account": "B", "amount": amount, "transaction_state": state,
                             "creation_time": "2019-12-05T10:00:00.123456789Z", "modification_time": modified});
        doc.as_object_mut()
            .unwrap()
            .extend(extras_txn.as_object().unwrap().clone());
        doc
    };
    // Epoch millis, recovered forward from pending.
    fx.put_txn(
        "art-1",
        article("pending", json!(100), json!(1575540000123i64)),
    )
    .await;
    // Nanoseconds and an amount as a numeric string, rolled back from pending.
    fx.put_txn(
        "art-2",
        article(
            "pending",
            json!("30"),
            json!("2019-12-05T10:00:00.123456789Z"),
        ),
    )
    .await;
    // Nanoseconds, cancelled from created.
    fx.put_txn(
        "art-3",
        article("created", json!(7), json!("2019-12-05T10:00:00.123456789Z")),
    )
    .await;
    for id in ["art-1", "art-2", "art-3"] {
        let t = fx.txn(id).await;
        assert!(t.is_well_formed(), "{id}: {:?}", t.problems);
        assert_eq!(
            (t.src.as_deref(), t.dest.as_deref()),
            (Some("A"), Some("B"))
        );
    }
    assert_eq!(
        fx.txn("art-1")
            .await
            .modification_time
            .unwrap()
            .timestamp_millis(),
        1575540000123
    );

    let r = fx.proto.recover("art-1", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        r.verdict
    );
    assert_eq!(r.steps.len(), 6, "{:#?}", r.steps);
    let r = fx.proto.rollback("art-2", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{:?}",
        r.verdict
    );
    let r = fx.proto.rollback("art-3", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{:?}",
        r.verdict
    );

    for (id, state) in [
        ("art-1", "finished"),
        ("art-2", "rolled-back"),
        ("art-3", "rolled-back"),
    ] {
        let doc = fx.source(&fx.ix.transactions, id).await;
        assert_eq!(doc["transaction_state"], state, "{id}");
        assert_eq!(doc["src_account"], "A", "{id}");
        assert_eq!(doc["dest_account"], "B", "{id}");
        assert!(
            !doc.contains_key("src_acct") && !doc.contains_key("dest_acct"),
            "{id}: field names changed: {doc:?}"
        );
        assert_eq!(
            doc["creation_time"], "2019-12-05T10:00:00.123456789Z",
            "{id}"
        );
        for (k, v) in extras_txn.as_object().unwrap() {
            assert_eq!(doc.get(k), Some(v), "{id}: `{k}` lost");
        }
        let t = fx.txn(id).await;
        assert!(t.is_well_formed(), "{id}: {:?}", t.problems);
        assert!(
            t.age_seconds(chrono::Utc::now()).unwrap() < 60,
            "{id}: modification_time not stamped"
        );
    }
    assert_eq!(
        fx.source(&fx.ix.transactions, "art-2").await["amount"],
        "30"
    );

    for (id, balance) in [("A", 400), ("B", 600)] {
        let doc = fx.source(&fx.ix.accounts, id).await;
        for (k, v) in extra.as_object().unwrap() {
            assert_eq!(doc.get(k), Some(v), "{id}: `{k}` lost");
        }
        let acct = fx.acct(id).await;
        assert_eq!(acct.balance, balance, "{id}");
        assert!(acct.pending.is_empty(), "{id}: {acct:?}");
        assert!(!doc.contains_key(SETTLED_FIELD), "{id}: history written");
        assert_eq!(doc.get(DELTAS_FIELD), Some(&serde_json::json!([])), "{id}");
    }
}
