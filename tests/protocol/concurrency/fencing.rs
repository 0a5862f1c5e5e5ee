//! Deterministic interleavings showing why the fence matters: a slow worker's
//! late apply after the transaction finished, or after it was rolled back,
//! is a no-op with fencing on (its claim finds the transaction moved on),
//! while with it off it is applied again (the reference protocol's hole,
//! which the audit sees but cannot repair).

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::audit::AuditReport;
use estx::protocol::decide::{Effect, Fencing, NoopReason};
use estx::protocol::executor::StepOutcome;
use estx::protocol::{Step, TxnState, Verdict};

/// The slow worker's view: it read the transaction (pending) and built the
/// transfer from it before stalling.
async fn slow_worker_view(fx: &Fx, id: &str) -> estx::protocol::Transfer {
    let txn = fx.txn(id).await;
    assert_eq!(txn.state, Some(TxnState::Pending));
    txn.transfer().unwrap()
}

fn findings_of(kind: &str, audit: &AuditReport) -> Vec<String> {
    audit
        .findings
        .iter()
        .filter(|f| f.kind.as_str() == kind)
        .map(|f| f.id.clone())
        .collect()
}

#[tokio::test]
async fn a_late_apply_after_the_transaction_finished_is_fenced() {
    for fencing in [Fencing::On, Fencing::Off] {
        let fx = Fx::with(|c| c.fencing = fencing).await;
        // Begin done, nothing applied: the worker read it as pending and stalls.
        let (id, src, dest) = stage(&fx, "late", 1).await;
        let slow = slow_worker_view(&fx, &id).await;
        // Meanwhile another process completes the transaction.
        let report = fx.proto.recover(&id, true).await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "{:?}",
            report.verdict
        );
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            (400, 600)
        );
        // The slow worker wakes up and applies to the source.
        let late = fx.proto.run_step(&slow, Step::ApplySource).await.unwrap();
        let (a, b) = (fx.acct(&src).await, fx.acct(&dest).await);
        match fencing {
            Fencing::On => {
                assert_eq!(
                    late.outcome,
                    StepOutcome::Noop(NoopReason::StateIs(TxnState::Finished))
                );
                assert_eq!((a.balance, b.balance), (400, 600));
                assert!(a.pending.is_empty());
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), false).await.unwrap();
                assert!(audit.findings.is_empty(), "{:?}", audit.findings);
            }
            Fencing::Off => {
                // The reference protocol debits the source a second time.
                assert_eq!(
                    late.outcome,
                    StepOutcome::Updated(Effect::Applied { delta: -100 })
                );
                assert_eq!(
                    (a.balance, b.balance),
                    (300, 600),
                    "the hole: a double debit"
                );
                assert_eq!(a.pending, vec![id.clone()]);
                // The audit sees it, but cannot repair it unambiguously: the
                // account keeps no record of having settled the transaction.
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), true).await.unwrap();
                assert!(audit.repairs.is_empty(), "{:?}", audit.repairs);
                assert_eq!(
                    findings_of("dangling_pending", &audit),
                    vec![src.clone()],
                    "{:?}",
                    audit.findings
                );
                assert_eq!(
                    findings_of("total_mismatch", &audit).len(),
                    1,
                    "{:?}",
                    audit.findings
                );
                assert_eq!(fx.acct(&src).await.balance, 300);
            }
        }
    }
}

#[tokio::test]
async fn a_late_apply_after_a_rollback_is_fenced() {
    for fencing in [Fencing::On, Fencing::Off] {
        let fx = Fx::with(|c| c.fencing = fencing).await;
        // The worker did begin and read the transaction as pending, then stalled.
        let (id, src, dest) = stage(&fx, "rb", 1).await;
        let slow = slow_worker_view(&fx, &id).await;
        // An operator rolls it back: nothing to undo on either account.
        let report = fx.proto.rollback(&id, true).await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
            "{:?}",
            report.verdict
        );
        assert_eq!(
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
            (500, 500)
        );
        // The slow worker wakes up and applies to the destination.
        let late = fx
            .proto
            .run_step(&slow, Step::ApplyDestination)
            .await
            .unwrap();
        let b = fx.acct(&dest).await;
        match fencing {
            Fencing::On => {
                assert_eq!(
                    late.outcome,
                    StepOutcome::Noop(NoopReason::StateIs(TxnState::RolledBack))
                );
                // And the source too: a late apply is fenced on both accounts.
                let late_src = fx.proto.run_step(&slow, Step::ApplySource).await.unwrap();
                assert_eq!(
                    late_src.outcome,
                    StepOutcome::Noop(NoopReason::StateIs(TxnState::RolledBack))
                );
                assert_eq!((fx.acct(&src).await.balance, b.balance), (500, 500));
                assert!(b.pending.is_empty());
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), false).await.unwrap();
                assert!(audit.findings.is_empty(), "{:?}", audit.findings);
            }
            Fencing::Off => {
                // The reference protocol creates 100 units from nothing.
                assert_eq!(
                    late.outcome,
                    StepOutcome::Updated(Effect::Applied { delta: 100 })
                );
                assert_eq!(
                    (fx.acct(&src).await.balance, b.balance),
                    (500, 600),
                    "the hole: units appear"
                );
                fx.refresh().await;
                let audit = fx.proto.audit(Some(1000), false).await.unwrap();
                assert_eq!(
                    findings_of("dangling_pending", &audit),
                    vec![dest.clone()],
                    "{:?}",
                    audit.findings
                );
                assert_eq!(
                    findings_of("total_mismatch", &audit).len(),
                    1,
                    "{:?}",
                    audit.findings
                );
                // The transaction is rolled back, so the repair is unambiguous.
                let repaired = fx.proto.audit(Some(1000), true).await.unwrap();
                assert_eq!(repaired.repairs.len(), 1, "{:?}", repaired);
                assert!(
                    repaired.repairs[0].starts_with(&dest),
                    "{:?}",
                    repaired.repairs
                );
                assert_eq!(
                    (fx.acct(&src).await.balance, fx.acct(&dest).await.balance),
                    (500, 500)
                );
                fx.refresh().await;
                let after = fx.proto.audit(Some(1000), false).await.unwrap();
                assert!(after.findings.is_empty(), "{:?}", after.findings);
            }
        }
    }
}
