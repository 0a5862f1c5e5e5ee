//! Every response of a kind lost at once: all account writes of a transfer,
//! and every write of a locked transfer (each claim's first answer); the
//! amount still moves exactly once.

use super::{assert_outcome, prepare};
use crate::common::FaultProxy;
use crate::fixture::Fx;
use estx::protocol::{RunLimits, StepResult, TxnState, Verdict};

#[tokio::test]
async fn every_account_write_losing_its_response_still_moves_the_amount_once() {
    let fx = Fx::new().await;
    let n = prepare(&fx, "all", None, 0).await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.drop_responses("POST", &format!("/{}/_update/", fx.ix.accounts), 1000);
    let report = fx
        .proto_via(&proxy.url())
        .transfer(&n.request(), false, RunLimits::default())
        .await;
    let ctx = format!(
        "{:?}\nsteps: {:#?}\nproxy log: {:#?}",
        report.verdict,
        report.steps,
        proxy.log()
    );
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{ctx}"
    );
    // Apply and remove on each account: four writes, each lost once, none
    // re-sent; and the pre-flight's probe of the accounts (`preflight`),
    // whose lost answer leaves the act to its own writes.
    assert_eq!(proxy.dropped(), 5, "{ctx}");
    assert!(
        report
            .steps
            .iter()
            .all(|s| matches!(s.result, StepResult::Updated(_))),
        "{ctx}"
    );
    assert_outcome(&fx, &n, &TxnState::Finished, &ctx).await;
}

#[tokio::test]
async fn every_write_of_a_locked_transfer_losing_its_response_still_ends_right() {
    let fx = Fx::new().await;
    let n = prepare(&fx, "every", None, 0).await;
    let proxy = FaultProxy::start(&fx.url);
    // The create is the one write confirmed by sending it again (409 + read),
    // so only its first response may be lost. A claim counts only once its
    // success is heard, so each claim loses its first response and is sent
    // again. Every other write is confirmed by a re-read and never re-sent,
    // so all of their responses may be lost. Transaction writes are told
    // apart by the version they are conditional on: begin @0, the source's
    // claim @1 (lost, landed) and again @2, the destination's claim @3 (lost,
    // landed) and again @4, commit @5, finish @6.
    proxy.drop_responses("POST", &format!("/{}/_create/", fx.ix.transactions), 1);
    let all = 1000;
    for seq in [0, 1, 3, 5, 6] {
        let path = format!(
            "/{}/_update/{}?if_primary_term=1&if_seq_no={seq}",
            fx.ix.transactions, n.id
        );
        proxy.drop_responses("POST", &path, 1);
    }
    proxy.drop_responses("POST", &format!("/{}/_update/", fx.ix.accounts), all);
    proxy.drop_responses("POST", &format!("/{}/_create/", fx.ix.locks), all);
    proxy.drop_responses("DELETE", &format!("/{}/_doc/", fx.ix.locks), all);
    let report = fx
        .proto_via(&proxy.url())
        .transfer(&n.request(), true, RunLimits::default())
        .await;
    let ctx = format!(
        "{:?}\nsteps: {:#?}\nproxy log: {:#?}",
        report.verdict,
        report.steps,
        proxy.log()
    );
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{ctx}"
    );
    // create + 2 lock acquires + 3 transitions + 2 claims + 4 account writes
    // + 2 lock releases, + the pre-flight's probe of the accounts
    assert_eq!(proxy.dropped(), 15, "{ctx}");
    assert_outcome(&fx, &n, &TxnState::Finished, &ctx).await;
}
