//! Amounts: out-of-range amounts and balance overflows are refused before any
//! write (every document keeps its `_seq_no`), stored amounts that are not
//! positive and bounded make a transaction malformed, and an amount edited
//! after it was applied is refused instead of undoing the wrong amount.

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::{NewTransfer, ProcedureRefusal, RunLimits, Verdict};
use serde_json::json;

/// `_seq_no` of each document (`None`: missing).
async fn versions(fx: &Fx, docs: &[(&str, &str)]) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    for (index, id) in docs {
        let doc = fx.cluster().get(index, id).await.unwrap();
        out.push(doc.map(|d| d.seq_no));
    }
    out
}

#[tokio::test]
async fn amounts_out_of_range_and_overflows_are_refused_before_any_write() {
    let fx = Fx::new().await;
    let cases: [(&str, i64, i64, i64); 7] = [
        ("zero", 500, 500, 0),
        ("negative", 500, 500, -5),
        ("min", 500, 500, i64::MIN),
        ("max", 500, 500, i64::MAX),
        ("over the bound", 500, 500, 1_000_000_000_000_001),
        ("overflow on the destination", 500, i64::MAX - 5, 10),
        ("overflow on the source", i64::MIN + 5, 500, 10),
    ];
    for (i, (name, src_balance, dest_balance, amount)) in cases.into_iter().enumerate() {
        let (src, dest, id) = (format!("A{i}"), format!("B{i}"), format!("t{i}"));
        fx.account(&src, src_balance).await;
        fx.account(&dest, dest_balance).await;
        let docs = [
            (fx.ix.accounts.as_str(), src.as_str()),
            (fx.ix.accounts.as_str(), dest.as_str()),
            (fx.ix.transactions.as_str(), id.as_str()),
        ];
        let before = versions(&fx, &docs).await;
        let req = NewTransfer {
            id: Some(id.clone()),
            src: src.clone(),
            dest: dest.clone(),
            amount,
        };
        let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
        let text = report.verdict.to_string();
        match &report.verdict {
            Verdict::Failed(estx::Error::Invalid(why)) => {
                assert!(
                    why.contains("amount must be between 1 and"),
                    "{name}: {why}"
                )
            }
            Verdict::Refused(ProcedureRefusal::Unsafe(why)) => {
                assert!(why.contains("overflows"), "{name}: {why}")
            }
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
        assert_eq!(estx::cli::exit::of_report(&report), 1, "{name}: {text}");
        assert!(report.steps.is_empty(), "{name}: {:?}", report.steps);
        assert_eq!(
            versions(&fx, &docs).await,
            before,
            "{name}: something was written"
        );
    }
    // The bound itself is accepted.
    fx.account("rich", 2_000_000_000_000_000).await;
    fx.account("poor", 0).await;
    let req = NewTransfer {
        id: None,
        src: "rich".into(),
        dest: "poor".into(),
        amount: estx::protocol::transaction::MAX_AMOUNT,
    };
    let report = fx.proto.transfer(&req, false, RunLimits::default()).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(_)),
        "{:?}",
        report.verdict
    );
    assert_eq!(fx.acct("poor").await.balance, 1_000_000_000_000_000);
}

#[tokio::test]
async fn stored_amounts_that_are_not_positive_and_bounded_are_malformed() {
    let fx = Fx::new().await;
    fx.account("A", 500).await;
    fx.account("B", 500).await;
    for (i, amount) in [json!(0), json!(-100), json!(i64::MIN), json!(i64::MAX)]
        .into_iter()
        .enumerate()
    {
        let id = format!("bad{i}");
        fx.put_txn(
            &id,
            json!({"src_acct": "A", "dest_acct": "B", "amount": amount,
                   "transaction_state": "pending",
                   "modification_time": "2020-01-01T00:00:00Z"}),
        )
        .await;
        let docs = [
            (fx.ix.accounts.as_str(), "A"),
            (fx.ix.accounts.as_str(), "B"),
            (fx.ix.transactions.as_str(), id.as_str()),
        ];
        let before = versions(&fx, &docs).await;
        for report in [
            fx.proto.recover(&id, true).await,
            fx.proto.rollback(&id, true).await,
        ] {
            match &report.verdict {
                Verdict::Refused(ProcedureRefusal::Malformed(why)) => {
                    assert!(
                        why.to_string().contains("amount must be between 1 and"),
                        "{amount}: {why}"
                    )
                }
                other => panic!("{amount}: expected malformed, got {other:?}"),
            }
        }
        assert_eq!(
            versions(&fx, &docs).await,
            before,
            "{amount}: something was written"
        );
    }
}

#[tokio::test]
async fn an_amount_edited_after_it_was_applied_is_refused_with_a_finding() {
    let fx = Fx::new().await;
    // Begin and the source's apply done (-100 recorded on the source).
    let (id, src, dest) = stage(&fx, "edit", 2).await;
    assert_eq!(fx.acct(&src).await.delta_of(&id), Some(-100));
    let mut txn = fx.source(&fx.ix.transactions, &id).await;
    txn.insert("amount".into(), json!(90));
    fx.put_txn(&id, serde_json::Value::Object(txn)).await;
    let docs = [
        (fx.ix.accounts.as_str(), src.as_str()),
        (fx.ix.accounts.as_str(), dest.as_str()),
        (fx.ix.transactions.as_str(), id.as_str()),
    ];
    let before = versions(&fx, &docs).await;
    for report in [
        fx.proto.rollback(&id, true).await,
        fx.proto.recover(&id, true).await,
    ] {
        match &report.verdict {
            Verdict::Refused(r @ ProcedureRefusal::Unsafe(_)) => assert_eq!(
                r.to_string(),
                format!(
                    "`{id}` on account `{src}`: amount changed after it was applied: \
                     applied -100, document says 90; nothing was written"
                )
            ),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(report.steps.is_empty(), "{:?}", report.steps);
    }
    assert_eq!(versions(&fx, &docs).await, before, "something was written");
    assert_eq!(fx.acct(&src).await.balance, 400);
}

#[tokio::test]
async fn the_audit_sums_balances_exactly() {
    let fx = Fx::new().await;
    // Past 2^53 a double cannot hold every integer: a floating-point sum is off.
    let big = (1i64 << 53) + 1;
    fx.account("A", big).await;
    fx.account("B", 2).await;
    fx.account("C", big).await;
    fx.refresh().await;
    let audit = fx.proto.audit(Some(2 * big + 2), false).await.unwrap();
    assert_eq!(audit.total_balance, 2 * big + 2);
    assert!(audit.findings.is_empty(), "{:?}", audit.findings);
}
