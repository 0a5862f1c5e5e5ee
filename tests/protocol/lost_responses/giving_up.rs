//! More lost responses than the retry policy allows: the procedure gives up,
//! the write it could not confirm is applied anyway, and recovery later
//! finishes the transaction.

use super::{assert_outcome, prepare, rules, run, Run, Write};
use crate::common::FaultProxy;
use crate::fixture::Fx;
use estx::protocol::{Procedure, Step, StepResult, TxnState, Verdict};
use estx::Error;
use std::sync::Arc;

/// A procedure that gives up on one step.
struct GiveUp {
    name: &'static str,
    staged: Option<usize>,
    run: Run,
    /// The write that loses its response.
    lost: Write,
    /// Whether the re-reads of that document lose theirs too (armed on the
    /// first unknown outcome); without, the write is re-sent (create only).
    lose_rereads: bool,
    /// Lost responses in all.
    dropped: usize,
    /// The step that gives up (`None`: the create).
    step: Option<Step>,
    /// Where the transaction is left.
    left_in: TxnState,
    /// Where recovery takes it.
    end: TxnState,
}

#[tokio::test]
async fn more_lost_responses_than_the_policy_allows_leave_work_for_recovery() {
    let fx = Fx::with(|c| c.retry.max_unknown = 2).await;
    let transfer = Run::Transfer { locks: false };
    let cases = [
        GiveUp {
            name: "create",
            staged: None,
            run: transfer,
            lost: Write::CreateTxn,
            lose_rereads: false,
            dropped: 3,
            step: None,
            left_in: TxnState::Created,
            end: TxnState::Finished,
        },
        GiveUp {
            name: "created->pending",
            staged: None,
            run: transfer,
            lost: Write::TxnDoc,
            lose_rereads: true,
            dropped: 3,
            step: Some(Step::Begin),
            left_in: TxnState::Pending,
            end: TxnState::Finished,
        },
        // A claim counts only once its success is heard: its answer and the
        // re-reads lost, the apply gives up before touching the account.
        GiveUp {
            name: "claim before apply",
            staged: Some(1),
            run: Run::Proc(Procedure::Recover),
            lost: Write::TxnDoc,
            lose_rereads: true,
            dropped: 3,
            step: Some(Step::ApplySource),
            left_in: TxnState::Pending,
            end: TxnState::Finished,
        },
        GiveUp {
            name: "apply to source",
            staged: Some(1),
            run: Run::Proc(Procedure::Recover),
            lost: Write::Src,
            lose_rereads: true,
            dropped: 3,
            step: Some(Step::ApplySource),
            left_in: TxnState::Pending,
            end: TxnState::Finished,
        },
        GiveUp {
            name: "pending->committed",
            staged: Some(3),
            run: Run::Proc(Procedure::Recover),
            lost: Write::TxnDoc,
            lose_rereads: true,
            dropped: 3,
            step: Some(Step::Commit),
            left_in: TxnState::Committed,
            end: TxnState::Finished,
        },
        GiveUp {
            name: "undo on source",
            staged: Some(3),
            run: Run::Proc(Procedure::Rollback),
            lost: Write::Src,
            lose_rereads: true,
            dropped: 3,
            step: Some(Step::UndoSource),
            left_in: TxnState::Terminating,
            end: TxnState::RolledBack,
        },
    ];
    for (i, c) in cases.iter().enumerate() {
        let n = prepare(&fx, &format!("g{i}"), c.staged, 0).await;
        let proxy = Arc::new(FaultProxy::start(&fx.url));
        let [(method, path)] = rules(&fx, &n, c.lost).try_into().unwrap();
        if c.lose_rereads {
            // The write's own response, then the two re-reads the policy
            // allows, armed by the proxy as the write goes through.
            // (A write goes to `_update/{id}`, its re-reads to `_doc/{id}`.)
            let reread = path.replace("/_update/", "/_doc/");
            proxy.drop_responses_then(method, &path, 1, ("GET", &reread, 2));
        } else {
            proxy.drop_responses(method, &path, 100);
        }
        // The executor's own policy is under test: reads are not retried
        // by the transport (no read budget), as each lost re-read counts.
        let via = fx.proto_via(&proxy.url());
        let via = estx::protocol::Protocol::new(
            via.cluster().with_read_budget(std::time::Duration::ZERO),
            via.config().clone(),
        );
        let report = run(&via, &n, c.run).await;
        let ctx = format!(
            "case `{}`: {:?}\nsteps: {:#?}\nproxy log: {:#?}",
            c.name,
            report.verdict,
            report.steps,
            proxy.log()
        );
        assert_eq!(proxy.dropped(), c.dropped, "{ctx}");
        match (&report.verdict, c.step) {
            (Verdict::Failed(Error::GaveUp { attempts, .. }), Some(step)) => {
                assert_eq!(*attempts, 3, "{ctx}");
                let last = report.steps.last().unwrap();
                assert_eq!(last.step, Some(step), "{ctx}");
                assert!(matches!(last.result, StepResult::Error(_)), "{ctx}");
            }
            (Verdict::Failed(e), None) => assert!(e.is_transient(), "{ctx}"),
            _ => panic!("expected the procedure to give up: {ctx}"),
        }
        // The write was applied even though the procedure gave up.
        assert_eq!(fx.state(&n.id).await, c.left_in, "{ctx}");

        // Later, recovery (directly, forced: the window has not passed) finishes it.
        let recovered = fx.proto.recover(&n.id, true).await;
        let ctx = format!(
            "{ctx}\nrecovery: {:?}\n{:#?}",
            recovered.verdict, recovered.steps
        );
        assert!(
            matches!(&recovered.verdict, Verdict::Completed(s) if *s == c.end),
            "{ctx}"
        );
        assert_outcome(&fx, &n, &c.end, &ctx).await;
    }
}
