//! Receipts (issue 31): a rollback's, a recovery's and a batched bulk
//! recovery's records keep every balance write they made, with the balance
//! before and after and the versions, and `trail::receipts::verify_since`
//! proves them; a record whose stored balance was edited by hand is caught,
//! named by record, transaction and account. The audit's repair keeps the
//! receipts of its undos as every other act does.

use crate::fixture::Fx;
use crate::procedures::stage;
use chrono::Utc;
use estx::protocol::intervene::{
    self, AuditRepair, BulkAct, Choices, Intervention, Recover, Rollback, Runner, Selection,
};
use estx::protocol::time::format_timestamp;
use estx::protocol::trail::receipts::verify_since;
use estx::protocol::trail::{history, records_since, Interface, Trail};
use estx::protocol::{Procedure, Step, TxnState};
use serde_json::{json, Value};

fn cli(reason: &str) -> Choices {
    Choices::new(Interface::Cli, Some(reason.to_string()))
}

async fn with_trail() -> Fx {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    Trail::open(&fx.proto).await.unwrap();
    fx
}

#[tokio::test]
async fn a_rollback_a_recovery_and_a_batched_recovery_keep_receipts_that_verify() {
    let fx = with_trail().await;
    // Pending with the source applied (500 -> 400): the rollback undoes it.
    let (rolled, src, _) = stage(&fx, "rr1", 2).await;
    let i = Intervention::new(Rollback::new(rolled.clone()), cli("INC-1"));
    intervene::run(&fx.proto, i).await.unwrap();
    assert_eq!(fx.state(&rolled).await, TxnState::RolledBack);
    // Pending, nothing applied: the recovery applies both sides.
    let (recovered, _, _) = stage(&fx, "rr2", 1).await;
    let i = Intervention::new(Recover::new(recovered.clone()), cli("INC-2"));
    intervene::run(&fx.proto, i).await.unwrap();
    assert_eq!(fx.state(&recovered).await, TxnState::Finished);
    // A batched bulk recovery: one created, one with its source applied.
    let (c, _, _) = stage(&fx, "rr3", 0).await;
    let (h, _, _) = stage(&fx, "rr4", 2).await;
    let act = BulkAct {
        procedure: Procedure::Recover,
        selection: Selection {
            ids: Some(vec![c.clone(), h.clone()]),
            ..Selection::default()
        },
        ids_source: Some("marks".into()),
        allow_partial: false,
        runner: Runner::Batched(Default::default()),
    };
    intervene::run(&fx.proto, Intervention::new(act, cli("INC-3")))
        .await
        .unwrap();
    for id in [&c, &h] {
        assert_eq!(fx.state(id).await, TxnState::Finished);
    }
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();

    let v = verify_since(&fx.proto, None).await.unwrap();
    assert_eq!(v.mismatches, vec![], "{v:#?}");
    // 1 undo + 2 applies + 2 applies + 1 apply, every record verified.
    assert_eq!((v.records, v.verified, v.no_receipts), (3, 3, 0), "{v:#?}");
    assert_eq!(v.writes, 6, "{v:#?}");

    // The rollback's receipt says the undo took the source 400 -> 500 at a
    // version after the one it was written on.
    let r = &history(&fx.proto, &rolled).await.unwrap()[0];
    let undo = r
        .steps
        .iter()
        .find(|s| s.label == Step::UndoSource.label())
        .unwrap();
    assert_eq!(undo.target, format!("{}/{src}", fx.ix.accounts));
    let rc = undo.receipt.expect("the undo's receipt");
    assert_eq!((rc.before, rc.after), (400, 500));
    assert!(rc.at.unwrap() > rc.on, "{rc:?}");
    // The fence on the destination (never applied) wrote no balance.
    let fence = r
        .steps
        .iter()
        .find(|s| s.label == Step::UndoDestination.label())
        .unwrap();
    assert_eq!(fence.receipt, None, "{fence:?}");
}

/// A batched recovery folds the writes of two transactions on one account
/// into one write, in the order of its selection; its record lists them by
/// id, the other way round. Its receipts verify (they were named a chain
/// mismatch before: found by the batched chaos test, `batch::fleet`).
#[tokio::test]
async fn a_batched_recovery_folding_two_credits_to_one_account_verifies() {
    let fx = with_trail().await;
    let at = format_timestamp(Utc::now() - chrono::Duration::minutes(30));
    for (id, src, amount) in [("rf-b", "FS1", 10), ("rf-a", "FS2", 20)] {
        fx.put_txn(
            id,
            json!({"src_acct": src, "dest_acct": "FD", "amount": amount,
                   "transaction_state": "pending", "creation_time": at, "modification_time": at}),
        )
        .await;
        fx.account(src, 500).await;
    }
    fx.account("FD", 500).await;
    fx.refresh().await;
    let act = BulkAct {
        procedure: Procedure::Recover,
        selection: Selection {
            // Not in id order: the batch folds rf-b's credit first.
            ids: Some(vec!["rf-b".into(), "rf-a".into()]),
            ..Selection::default()
        },
        ids_source: Some("marks".into()),
        allow_partial: false,
        runner: Runner::Batched(Default::default()),
    };
    let done = intervene::run(&fx.proto, Intervention::new(act, cli("INC-7")))
        .await
        .unwrap();
    assert_eq!(fx.acct("FD").await.balance, 530);
    assert_eq!(done.receipts.mismatches, vec![], "{:#?}", done.receipts);
    assert_eq!(done.receipts.writes, 4, "{:#?}", done.receipts);
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let v = verify_since(&fx.proto, None).await.unwrap();
    assert_eq!(v.mismatches, vec![], "{v:#?}");
    assert_eq!((v.records, v.verified, v.writes), (1, 1, 4), "{v:#?}");
}

#[tokio::test]
async fn a_balance_edited_in_the_stored_record_is_caught_and_named() {
    let fx = with_trail().await;
    let (id, src, _) = stage(&fx, "re1", 1).await;
    let i = Intervention::new(Recover::new(id.clone()), cli("INC-4"));
    let done = intervene::run(&fx.proto, i).await.unwrap();
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    assert!(verify_since(&fx.proto, None).await.unwrap().ok());

    let record = done.record.0.clone();
    let mut doc = Value::Object(fx.source(&fx.ix.audit, &record).await);
    assert!(
        crate::common::tamper::edit_first_receipt(&mut doc["st"], 7),
        "{doc:#}"
    );
    fx.put(&fx.ix.audit, &record, doc).await;
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();

    let v = verify_since(&fx.proto, None).await.unwrap();
    assert!(!v.ok());
    assert_eq!(v.verified, 0, "{v:#?}");
    let m = &v.mismatches[0];
    assert_eq!(
        (m.record.as_str(), m.txn.as_str(), m.account.as_str()),
        (record.as_str(), id.as_str(), src.as_str()),
        "{v:#?}"
    );
    assert_eq!(m.problem.kind(), "arithmetic", "{m}");
}

#[tokio::test]
async fn the_audit_repairs_record_keeps_the_receipts_of_its_undos() {
    let fx = with_trail().await;
    let at = format_timestamp(Utc::now() - chrono::Duration::minutes(30));
    let txn = |src: &str, dest: &str, amount: i64, state: &str| {
        json!({"src_acct": src, "dest_acct": dest, "amount": amount,
               "transaction_state": state, "creation_time": at, "modification_time": at})
    };
    // A rolled-back transfer a late worker applied to its source anyway
    // (A 500 -> 400), and a finished one applied again on its source after
    // the account had settled it (C 450 -> 400).
    fx.put_txn("rpa", txn("RA", "RB", 100, "rolled-back")).await;
    fx.put(
        &fx.ix.accounts,
        "RA",
        json!({"balance": 400, "pending_transactions": ["rpa"]}),
    )
    .await;
    fx.put(
        &fx.ix.accounts,
        "RB",
        json!({"balance": 500, "pending_transactions": []}),
    )
    .await;
    fx.put_txn("rpf", txn("RC", "RD", 50, "finished")).await;
    fx.put(
        &fx.ix.accounts,
        "RC",
        json!({"balance": 400, "pending_transactions": ["rpf"],
               "settled_transactions": [{"id": "rpf", "outcome": "applied", "at": at}]}),
    )
    .await;
    fx.put(
        &fx.ix.accounts,
        "RD",
        json!({"balance": 550, "pending_transactions": []}),
    )
    .await;
    fx.refresh().await;

    let act = AuditRepair {
        account: None,
        expect_total: None,
        allow_partial: false,
    };
    let done = intervene::run(&fx.proto, Intervention::new(act, cli("INC-6")))
        .await
        .unwrap();
    let report = done.value.as_ref().unwrap();
    assert_eq!(report.repairs.len(), 2, "{report:#?}");
    assert_eq!(
        (fx.acct("RA").await.balance, fx.acct("RC").await.balance),
        (500, 450)
    );
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();

    let v = verify_since(&fx.proto, None).await.unwrap();
    assert_eq!(v.mismatches, vec![], "{v:#?}");
    assert_eq!((v.records, v.verified, v.no_receipts), (1, 1, 0), "{v:#?}");
    assert_eq!(v.writes, 2, "{v:#?}");
    let records = records_since(&fx.proto, chrono::DateTime::UNIX_EPOCH)
        .await
        .unwrap();
    let record = records
        .iter()
        .find(|r| r.record_id == done.record.0)
        .unwrap();
    let undo = |acct: &str| {
        let target = format!("{}/{acct}", fx.ix.accounts);
        let s = record.steps.iter().find(|s| s.target == target);
        s.and_then(|s| s.receipt)
            .unwrap_or_else(|| panic!("no receipt for {acct}: {:#?}", record.steps))
    };
    assert_eq!((undo("RA").before, undo("RA").after), (400, 500));
    assert_eq!((undo("RC").before, undo("RC").after), (400, 450));
}
