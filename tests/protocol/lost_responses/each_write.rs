//! One case per kind of write (transaction create and transitions, account
//! writes, lock acquires and releases) across transfers, recoveries and
//! rollbacks: its response is lost once, and the procedure recognises its own
//! write and ends where it should.

use super::{assert_outcome, prepare, rules, run, Run, Write};
use crate::common::FaultProxy;
use crate::fixture::Fx;
use estx::protocol::{Procedure, Step, StepResult, TxnState, Verdict};

/// One "this write loses its response" scenario.
struct Case {
    name: &'static str,
    /// Core steps run directly (no proxy) before the proxied run; `None` for
    /// a fresh transfer.
    staged: Option<usize>,
    /// Rollback steps run directly after staging (to reach `terminating`).
    pre_rollback: usize,
    run: Run,
    /// Writes whose (first) response is lost; one drop per rule.
    lost: Write,
    /// The step whose write lost its response: it must still be reported
    /// `Updated` (the executor recognised its own write on the re-read).
    lost_step: Option<Step>,
    /// Where the transaction ends.
    end: TxnState,
}

fn cases() -> Vec<Case> {
    use Procedure::{Recover, Rollback};
    use TxnState::{Finished, RolledBack};
    let transfer = Run::Transfer { locks: false };
    let case = |name, staged, pre_rollback, run, lost, lost_step, end| Case {
        name,
        staged,
        pre_rollback,
        run,
        lost,
        lost_step,
        end,
    };
    vec![
        case(
            "create",
            None,
            0,
            transfer,
            Write::CreateTxn,
            None,
            Finished,
        ),
        case(
            "created->pending",
            None,
            0,
            transfer,
            Write::TxnDoc,
            Some(Step::Begin),
            Finished,
        ),
        // The claim before the apply loses its answer: it is claimed again
        // (only a claim whose success was heard counts), then applied once.
        case(
            "claim before apply",
            Some(1),
            0,
            Run::Proc(Recover),
            Write::TxnDoc,
            Some(Step::ApplySource),
            Finished,
        ),
        case(
            "apply to source",
            None,
            0,
            transfer,
            Write::Src,
            Some(Step::ApplySource),
            Finished,
        ),
        case(
            "apply to destination",
            None,
            0,
            transfer,
            Write::Dest,
            Some(Step::ApplyDestination),
            Finished,
        ),
        case(
            "pending->committed",
            Some(3),
            0,
            Run::Proc(Recover),
            Write::TxnDoc,
            Some(Step::Commit),
            Finished,
        ),
        case(
            "remove from source",
            Some(4),
            0,
            Run::Proc(Recover),
            Write::Src,
            Some(Step::RemoveSource),
            Finished,
        ),
        case(
            "remove from destination",
            Some(5),
            0,
            Run::Proc(Recover),
            Write::Dest,
            Some(Step::RemoveDestination),
            Finished,
        ),
        case(
            "committed->finished",
            Some(6),
            0,
            Run::Proc(Recover),
            Write::TxnDoc,
            Some(Step::Finish),
            Finished,
        ),
        case(
            "created->rolled-back",
            Some(0),
            0,
            Run::Proc(Rollback),
            Write::TxnDoc,
            Some(Step::CancelCreated),
            RolledBack,
        ),
        case(
            "pending->terminating",
            Some(3),
            0,
            Run::Proc(Rollback),
            Write::TxnDoc,
            Some(Step::Terminate),
            RolledBack,
        ),
        case(
            "undo on source",
            Some(3),
            0,
            Run::Proc(Rollback),
            Write::Src,
            Some(Step::UndoSource),
            RolledBack,
        ),
        case(
            "undo on destination",
            Some(3),
            0,
            Run::Proc(Rollback),
            Write::Dest,
            Some(Step::UndoDestination),
            RolledBack,
        ),
        // Nothing was applied yet: the undo only rewrites the account
        // unchanged (the fence); its lost answer is recognised by the newer
        // version.
        case(
            "fence on source",
            Some(1),
            0,
            Run::Proc(Rollback),
            Write::Src,
            Some(Step::UndoSource),
            RolledBack,
        ),
        case(
            "terminating->rolled-back",
            Some(3),
            3,
            Run::Proc(Rollback),
            Write::TxnDoc,
            Some(Step::RolledBack),
            RolledBack,
        ),
        case(
            "lock acquire",
            None,
            0,
            Run::Transfer { locks: true },
            Write::AcquireLocks,
            None,
            Finished,
        ),
        case(
            "lock release",
            None,
            0,
            Run::Transfer { locks: true },
            Write::ReleaseLocks,
            None,
            Finished,
        ),
    ]
}

#[tokio::test]
async fn every_kind_of_write_survives_a_lost_response() {
    let fx = Fx::new().await;
    for (i, c) in cases().into_iter().enumerate() {
        let n = prepare(&fx, &format!("c{i}"), c.staged, c.pre_rollback).await;
        let proxy = FaultProxy::start(&fx.url);
        let rules = rules(&fx, &n, c.lost);
        for (method, path) in &rules {
            proxy.drop_responses(method, path, 1);
        }
        let report = run(&fx.proto_via(&proxy.url()), &n, c.run).await;
        let ctx = format!(
            "case `{}`: {:?}\nsteps: {:#?}\nproxy log: {:#?}",
            c.name,
            report.verdict,
            report.steps,
            proxy.log()
        );
        assert_eq!(proxy.dropped(), rules.len(), "{ctx}: no response was lost");
        assert!(
            matches!(&report.verdict, Verdict::Completed(s) if *s == c.end),
            "{ctx}"
        );
        if let Some(step) = c.lost_step {
            let reported: Vec<_> = report
                .steps
                .iter()
                .filter(|s| s.step == Some(step))
                .collect();
            assert_eq!(reported.len(), 1, "{ctx}");
            assert!(
                matches!(reported[0].result, StepResult::Updated(_)),
                "{ctx}: the lost write was not recognised as ours"
            );
        }
        if c.lost == Write::AcquireLocks {
            let acquired = report
                .steps
                .iter()
                .filter(|s| s.label == "acquire lock")
                .count();
            assert_eq!(acquired, 2, "{ctx}");
        }
        assert_outcome(&fx, &n, &c.end, &ctx).await;
    }
}
