//! A worker held after its reads and its claim, right before its account
//! write, while another actor moves the transaction on (recovery finishes it,
//! or an operator rolls it back). Released, its write must fail — the account
//! moved — and it must stop without moving money, whatever options the
//! processes run with.

use crate::fixture::Fx;
use estx::protocol::decide::NoopReason;
use estx::protocol::executor::ApplyGate;
use estx::protocol::{
    NewTransfer, Procedure, ProtocolConfig, RunLimits, Step, StepResult, TxnState, Verdict,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Holds the first apply on `account` until released.
struct Hold {
    reached: Arc<Notify>,
    release: Arc<Notify>,
    calls: Arc<AtomicUsize>,
}

impl Hold {
    fn on(account: &str) -> (Hold, ApplyGate) {
        let hold = Hold {
            reached: Arc::new(Notify::new()),
            release: Arc::new(Notify::new()),
            calls: Arc::new(AtomicUsize::new(0)),
        };
        let (reached, release, calls) = (
            hold.reached.clone(),
            hold.release.clone(),
            hold.calls.clone(),
        );
        let account = account.to_string();
        let gate: ApplyGate = Arc::new(move |acct: &str| {
            let held = acct == account && calls.fetch_add(1, Ordering::SeqCst) == 0;
            let (reached, release) = (reached.clone(), release.clone());
            Box::pin(async move {
                if held {
                    reached.notify_one();
                    release.notified().await;
                }
            })
        });
        (hold, gate)
    }
}

/// The options the processes run with.
#[derive(Debug, Clone, Copy)]
struct Options {
    locks: bool,
    /// The other actor passes `--force` (else its recovery window is zero).
    force: bool,
    /// Retry hard (many unknown outcomes allowed) or not at all.
    patient: bool,
}

fn configure(c: &mut ProtocolConfig, o: Options) {
    if !o.force {
        c.recovery_window = Duration::ZERO;
    }
    c.retry.max_unknown = if o.patient { 20 } else { 0 };
    c.lock_wait = Duration::from_millis(200);
}

#[tokio::test]
async fn a_held_worker_released_after_another_actor_moved_on_cannot_apply() {
    let mut n = 0;
    for held_at in [Step::ApplySource, Step::ApplyDestination] {
        for other in [Procedure::Recover, Procedure::Rollback] {
            for (locks, force, patient) in [(false, true, true), (true, false, false)] {
                let o = Options {
                    locks,
                    force,
                    patient,
                };
                n += 1;
                race(n, held_at, other, o).await;
            }
        }
    }
}

async fn race(n: usize, held_at: Step, other: Procedure, o: Options) {
    let ctx = format!("held at [{held_at}], {other:?} runs, {o:?}");
    let fx = Fx::with(|c| configure(c, o)).await;
    let (id, src, dest) = (format!("t{n}"), format!("A{n}"), format!("B{n}"));
    fx.account(&src, 500).await;
    fx.account(&dest, 500).await;
    let held_acct = if held_at == Step::ApplySource {
        &src
    } else {
        &dest
    };
    let (hold, gate) = Hold::on(held_acct);
    let worker = fx.proto.clone().with_apply_gate(gate);
    let req = NewTransfer {
        id: Some(id.clone()),
        src: src.clone(),
        dest: dest.clone(),
        amount: 100,
    };
    let running =
        tokio::spawn(async move { worker.transfer(&req, o.locks, RunLimits::default()).await });
    hold.reached.notified().await;

    // The worker has read the account, claimed the transaction while pending,
    // and decided its write. Another actor now moves the transaction on.
    let report = fx
        .proto
        .run_procedure(&id, other, o.force, RunLimits::default())
        .await;
    let end = match other {
        Procedure::Recover => TxnState::Finished,
        Procedure::Rollback => TxnState::RolledBack,
    };
    assert!(
        matches!(&report.verdict, Verdict::Completed(s) if *s == end),
        "{ctx}: {:?}\n{:#?}",
        report.verdict,
        report.steps
    );

    hold.release.notify_one();
    let held = running.await.unwrap();
    let ctx = format!("{ctx}\nworker: {:?}\n{:#?}", held.verdict, held.steps);
    // It reports what became of the transaction: ended by the other actor.
    assert!(
        matches!(&held.verdict, Verdict::EndedElsewhere(s) if *s == end)
            || matches!(held.verdict, Verdict::Stopped(_)),
        "{ctx}"
    );
    let last = held.steps.iter().rev().find(|s| s.step.is_some()).unwrap();
    assert_eq!(last.step, Some(held_at), "{ctx}");
    assert_eq!(
        last.result,
        StepResult::Noop(NoopReason::StateIs(end.clone())),
        "{ctx}"
    );
    assert_eq!(hold.calls.load(Ordering::SeqCst), 1, "{ctx}: claimed again");

    let (a, b) = (fx.acct(&src).await, fx.acct(&dest).await);
    let expected = if end == TxnState::Finished {
        (400, 600)
    } else {
        (500, 500)
    };
    assert_eq!((a.balance, b.balance), expected, "{ctx}");
    assert_eq!(a.balance + b.balance, 1000, "{ctx}: total not conserved");
    for acct in [&a, &b] {
        assert!(
            acct.pending.is_empty() && acct.deltas.is_empty(),
            "{ctx}: {acct:?}"
        );
    }
    assert_eq!(fx.state(&id).await, end, "{ctx}");
}
