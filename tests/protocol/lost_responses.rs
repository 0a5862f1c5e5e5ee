//! Lost responses: the server applies a write, the answer never reaches the
//! client (a `FaultProxy` swallows it and closes the connection). For every
//! kind of write the protocol makes, the procedure — going through the proxy —
//! must find out from a re-read (or, for `op_type=create`, from the 409 of a
//! second create) that the write was its own, and carry on without applying
//! anything twice. A write whose outcome stays unknown for longer than the
//! retry policy allows makes the procedure give up, leaving the transaction
//! where recovery can finish it.
//!
//! Index names are unique per test, so a rule such as
//! `POST /{accounts}/_doc/A?` targets the writes of exactly one account.
//! (The client sends conditional writes as `POST /{index}/_doc/{id}?if_...`,
//! creates as `POST /{index}/_create/{id}` and lock releases as
//! `DELETE /{index}/_doc/{id}?if_...`.)

use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::account::SettledOutcome;
use estx::protocol::{
    NewTransfer, Procedure, ProcedureReport, Protocol, RunLimits, Step, StepResult, TxnState,
    Verdict,
};
use estx::Error;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// A write of the protocol whose response the proxy can swallow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    /// `op_type=create` of the transaction document.
    CreateTxn,
    /// A conditional write of the transaction document (a state transition).
    TxnDoc,
    /// A conditional write of the source account.
    Src,
    /// A conditional write of the destination account.
    Dest,
    /// `op_type=create` of the lock documents of both accounts.
    AcquireLocks,
    /// Conditional delete of the lock documents of both accounts.
    ReleaseLocks,
}

/// The names one case works with: accounts `A{tag}`/`B{tag}`, transaction `t{tag}`.
struct Names {
    id: String,
    src: String,
    dest: String,
}

impl Names {
    fn new(tag: &str) -> Names {
        Names {
            id: format!("t{tag}"),
            src: format!("A{tag}"),
            dest: format!("B{tag}"),
        }
    }

    fn request(&self) -> NewTransfer {
        NewTransfer {
            id: Some(self.id.clone()),
            src: self.src.clone(),
            dest: self.dest.clone(),
            amount: 100,
        }
    }
}

/// The `(method, path fragment)` drop rules matching `write`.
fn rules(fx: &Fx, n: &Names, write: Write) -> Vec<(&'static str, String)> {
    let ix = &fx.ix;
    match write {
        Write::CreateTxn => vec![("POST", format!("/{}/_create/{}", ix.transactions, n.id))],
        Write::TxnDoc => vec![("POST", format!("/{}/_doc/{}?", ix.transactions, n.id))],
        Write::Src => vec![("POST", format!("/{}/_doc/{}?", ix.accounts, n.src))],
        Write::Dest => vec![("POST", format!("/{}/_doc/{}?", ix.accounts, n.dest))],
        Write::AcquireLocks => vec![
            ("POST", format!("/{}/_create/{}", ix.locks, n.src)),
            ("POST", format!("/{}/_create/{}", ix.locks, n.dest)),
        ],
        Write::ReleaseLocks => vec![
            ("DELETE", format!("/{}/_doc/{}?", ix.locks, n.src)),
            ("DELETE", format!("/{}/_doc/{}?", ix.locks, n.dest)),
        ],
    }
}

/// What runs through the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// A fresh transfer (optionally under locks).
    Transfer { locks: bool },
    /// `run_procedure` (forced) on a staged transaction.
    Proc(Procedure),
}

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
        // Nothing was applied yet: the undo only writes the fence.
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

/// Seeds the case's accounts (and stages its transaction when asked).
async fn prepare(fx: &Fx, tag: &str, staged: Option<usize>, pre_rollback: usize) -> Names {
    let n = Names::new(tag);
    match staged {
        None => {
            fx.account(&n.src, 500).await;
            fx.account(&n.dest, 500).await;
        }
        Some(k) => {
            let (id, src, dest) = stage(fx, tag, k).await;
            assert_eq!(
                (id.as_str(), src.as_str(), dest.as_str()),
                (n.id.as_str(), n.src.as_str(), n.dest.as_str())
            );
        }
    }
    if pre_rollback > 0 {
        let limits = RunLimits {
            max_steps: Some(pre_rollback),
        };
        let report = fx
            .proto
            .run_procedure(&n.id, Procedure::Rollback, true, limits)
            .await;
        assert!(
            matches!(report.verdict, Verdict::Stopped(_)),
            "{:?}",
            report.verdict
        );
        assert_eq!(fx.state(&n.id).await, TxnState::Terminating);
    }
    n
}

async fn run(p: &Protocol, n: &Names, run: Run) -> ProcedureReport {
    match run {
        Run::Transfer { locks } => p.transfer(&n.request(), locks, RunLimits::default()).await,
        Run::Proc(procedure) => {
            p.run_procedure(&n.id, procedure, true, RunLimits::default())
                .await
        }
    }
}

/// The transaction is `end`, the balances are exactly what one transfer (or
/// none) makes, nothing is left pending, the fencing records say how each
/// account settled it, and no lock is left behind.
async fn assert_outcome(
    fx: &Fx,
    n: &Names,
    end: &TxnState,
    settled: Option<SettledOutcome>,
    ctx: &str,
) {
    assert_eq!(&fx.state(&n.id).await, end, "{ctx}");
    let (a, b) = (fx.acct(&n.src).await, fx.acct(&n.dest).await);
    let expected = if *end == TxnState::Finished {
        (400, 600)
    } else {
        (500, 500)
    };
    assert_eq!(
        (a.balance, b.balance),
        expected,
        "{ctx}: balances of {}/{}",
        n.src,
        n.dest
    );
    assert!(
        a.pending.is_empty() && b.pending.is_empty(),
        "{ctx}: pending left: {a:?} {b:?}"
    );
    assert_eq!(
        a.settled_of(&n.id).map(|s| s.outcome),
        settled,
        "{ctx}: {a:?}"
    );
    assert_eq!(
        b.settled_of(&n.id).map(|s| s.outcome),
        settled,
        "{ctx}: {b:?}"
    );
    for acct in [&n.src, &n.dest] {
        let lock = fx.cluster().get(&fx.ix.locks, acct).await.unwrap();
        assert!(
            lock.is_none(),
            "{ctx}: lock on {acct} left behind: {lock:?}"
        );
    }
}

fn settled_for(end: &TxnState, staged: Option<usize>) -> Option<SettledOutcome> {
    match (end, staged) {
        (TxnState::Finished, _) => Some(SettledOutcome::Applied),
        // Rolled back while still created: no account was ever touched.
        (_, Some(0)) => None,
        _ => Some(SettledOutcome::Undone),
    }
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
        assert_outcome(&fx, &n, &c.end, settled_for(&c.end, c.staged), &ctx).await;
    }
}

#[tokio::test]
async fn every_account_write_losing_its_response_still_moves_the_amount_once() {
    let fx = Fx::new().await;
    let n = prepare(&fx, "all", None, 0).await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.drop_responses("POST", &format!("/{}/_doc/", fx.ix.accounts), 1000);
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
    // Apply and remove on each account: four writes, each lost once, none re-sent.
    assert_eq!(proxy.dropped(), 4, "{ctx}");
    assert!(
        report
            .steps
            .iter()
            .all(|s| matches!(s.result, StepResult::Updated(_))),
        "{ctx}"
    );
    assert_outcome(
        &fx,
        &n,
        &TxnState::Finished,
        Some(SettledOutcome::Applied),
        &ctx,
    )
    .await;
}

#[tokio::test]
async fn every_write_of_a_locked_transfer_losing_its_response_still_ends_right() {
    let fx = Fx::new().await;
    let n = prepare(&fx, "every", None, 0).await;
    let proxy = FaultProxy::start(&fx.url);
    // The create is the one write confirmed by sending it again (409 + read),
    // so only its first response may be lost; every other write is confirmed
    // by a re-read and never re-sent, so all of their responses may be lost.
    proxy.drop_responses("POST", &format!("/{}/_create/", fx.ix.transactions), 1);
    let all = 1000;
    proxy.drop_responses("POST", &format!("/{}/_doc/", fx.ix.transactions), all);
    proxy.drop_responses("POST", &format!("/{}/_doc/", fx.ix.accounts), all);
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
    // create + 2 lock acquires + 3 transitions + 4 account writes + 2 lock releases
    assert_eq!(proxy.dropped(), 12, "{ctx}");
    assert_outcome(
        &fx,
        &n,
        &TxnState::Finished,
        Some(SettledOutcome::Applied),
        &ctx,
    )
    .await;
}

// ---------------------------------------------------------------------------
// More lost responses than the retry policy allows.

/// A tracing layer that, the first time the executor reports an unknown
/// outcome on document `doc_id`, adds a drop rule to the proxy: so the write
/// is applied and its response lost, and then the re-reads that would have
/// recognised it are lost too. The executor logs before it waits and re-reads,
/// so the rule is always in place in time (no timing involved).
struct ArmOnUnknown {
    proxy: Arc<FaultProxy>,
    doc_id: String,
    then: (&'static str, String, usize),
    armed: AtomicBool,
}

#[derive(Default)]
struct EventFields {
    message: String,
    id: String,
}

impl Visit for EventFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_debug(field, &value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "id" => self.id = format!("{value:?}").trim_matches('"').to_string(),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for ArmOnUnknown {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = EventFields::default();
        event.record(&mut fields);
        if fields.message.contains("unknown outcome")
            && fields.id == self.doc_id
            && !self.armed.swap(true, Ordering::SeqCst)
        {
            let (method, path, count) = &self.then;
            self.proxy.drop_responses(method, path, *count);
        }
    }
}

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
        let guard = if c.lose_rereads {
            // The write's own response, then the two re-reads the policy allows.
            proxy.drop_responses(method, &path, 1);
            let doc_id = match c.lost {
                Write::Src => n.src.clone(),
                Write::Dest => n.dest.clone(),
                _ => n.id.clone(),
            };
            let layer = ArmOnUnknown {
                proxy: Arc::clone(&proxy),
                doc_id,
                then: ("GET", path.clone(), 2),
                armed: AtomicBool::new(false),
            };
            Some(tracing::subscriber::set_default(
                tracing_subscriber::registry().with(layer),
            ))
        } else {
            proxy.drop_responses(method, &path, 100);
            None
        };
        let report = run(&fx.proto_via(&proxy.url()), &n, c.run).await;
        drop(guard);
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
        let settled = if c.end == TxnState::Finished {
            SettledOutcome::Applied
        } else {
            SettledOutcome::Undone
        };
        assert_outcome(&fx, &n, &c.end, Some(settled), &ctx).await;
    }
}
