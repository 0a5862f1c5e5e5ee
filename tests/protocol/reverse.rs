//! `reverse`: the compensating transfer of a finished one, linked both ways,
//! refused twice and from every state it must not start from, idempotent
//! under crashes (rerun carries on) and lost responses (one reversal, the
//! balances back where they started).

use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::reverse::{reversal_id, ReverseOptions, ReverseRefusal, ReverseVerdict};
use estx::protocol::{Protocol, RunLimits, TxnState};
use serde_json::{json, Value};

/// A finished transfer `t{tag}` (A -> B, 100) on accounts of 500 each.
async fn finished(fx: &Fx, tag: &str) -> (String, String, String) {
    let staged = stage(fx, tag, 7).await;
    assert_eq!(fx.state(&staged.0).await, TxnState::Finished);
    staged
}

async fn reverse(p: &Protocol, id: &str, opts: ReverseOptions) -> ReverseVerdict {
    let r = p.reverse(id, opts).await;
    eprintln!("reverse {id}: {} steps: {:#?}", r.verdict, r.steps);
    r.verdict
}

/// Both accounts are back at 500, nothing pending, and the two
/// transactions are finished and name each other.
async fn assert_reversed(fx: &Fx, id: &str, src: &str, dest: &str) {
    let rev = reversal_id(id);
    assert_eq!(fx.acct(src).await.balance, 500);
    assert_eq!(fx.acct(dest).await.balance, 500);
    assert!(fx.acct(src).await.pending.is_empty());
    assert!(fx.acct(dest).await.pending.is_empty());
    assert_eq!(fx.state(&rev).await, TxnState::Finished);
    let original = fx.source(&fx.ix.transactions, id).await;
    let reversal = fx.source(&fx.ix.transactions, &rev).await;
    assert_eq!(original["reversed_by"], json!(rev), "{original:?}");
    assert_eq!(original["transaction_state"], "finished");
    assert_eq!(reversal["reverses"], json!(id), "{reversal:?}");
    assert_eq!(reversal["src_acct"], json!(dest));
    assert_eq!(reversal["dest_acct"], json!(src));
    assert_eq!(reversal["amount"], json!(100));
}

#[tokio::test]
async fn reverse_twice_second_refused_naming_the_first() {
    let fx = Fx::new().await;
    let (id, src, dest) = finished(&fx, "rv1").await;
    // A field the application wrote survives the link.
    let mut doc = fx.source(&fx.ix.transactions, &id).await;
    doc.insert("app_note".into(), json!("invoice 7"));
    fx.put_txn(&id, Value::Object(doc)).await;

    let first = reverse(&fx.proto, &id, ReverseOptions::default()).await;
    assert!(matches!(first, ReverseVerdict::Reversed), "{first}");
    assert_reversed(&fx, &id, &src, &dest).await;
    assert_eq!(
        fx.source(&fx.ix.transactions, &id).await["app_note"],
        "invoice 7"
    );

    let second = reverse(&fx.proto, &id, ReverseOptions::default()).await;
    match &second {
        ReverseVerdict::Refused(ReverseRefusal::AlreadyReversed { by }) => {
            assert_eq!(by, &reversal_id(&id))
        }
        other => panic!("second reverse: {other}"),
    }
    assert!(second.to_string().contains(&reversal_id(&id)), "{second}");
    assert_eq!(estx::cli::exit::of_reverse(&second), 1);
    assert_reversed(&fx, &id, &src, &dest).await;
}

#[tokio::test]
async fn refused_from_every_state_that_is_not_finished() {
    let fx = Fx::new().await;
    let cases = [(0, "created"), (2, "pending"), (5, "committed")];
    for (k, state) in cases {
        let (id, src, dest) = stage(&fx, &format!("rs{k}"), k).await;
        let before = (fx.acct(&src).await.balance, fx.acct(&dest).await.balance);
        let v = reverse(&fx.proto, &id, ReverseOptions::default()).await;
        let text = v.to_string();
        match (k, &v) {
            (5, ReverseVerdict::Refused(ReverseRefusal::Committed)) => {
                assert!(text.contains("--finish-committed"), "{text}")
            }
            (_, ReverseVerdict::Refused(ReverseRefusal::InFlight(s))) => {
                assert_eq!(s.as_str(), state);
                assert!(text.contains("recover") && text.contains("roll"), "{text}");
            }
            _ => panic!("{state}: {text}"),
        }
        assert_eq!(
            before,
            (fx.acct(&src).await.balance, fx.acct(&dest).await.balance)
        );
        assert!(fx
            .cluster()
            .get(&fx.ix.transactions, &reversal_id(&id))
            .await
            .unwrap()
            .is_none());
    }
    // Rolled back: nothing moved, nothing to reverse.
    let (id, _, _) = stage(&fx, "rsrb", 2).await;
    fx.backdate(&id, 10).await;
    let rb = fx.proto.rollback(&id, false).await;
    assert!(estx::cli::exit::of_report(&rb) == 0, "{}", rb.verdict);
    let v = reverse(&fx.proto, &id, ReverseOptions::default()).await;
    assert!(
        matches!(v, ReverseVerdict::Refused(ReverseRefusal::RolledBack)),
        "{v}"
    );
    // A missing transaction is not found (exit 1).
    let v = reverse(&fx.proto, "nope", ReverseOptions::default()).await;
    assert!(
        matches!(v, ReverseVerdict::Failed(_)) && estx::cli::exit::of_reverse(&v) == 1,
        "{v}"
    );
}

#[tokio::test]
async fn a_committed_transaction_is_finished_first_when_confirmed() {
    let fx = Fx::new().await;
    let (id, src, dest) = stage(&fx, "rvc", 5).await;
    fx.backdate(&id, 10).await;
    let opts = ReverseOptions {
        finish_committed: true,
        ..ReverseOptions::default()
    };
    let v = reverse(&fx.proto, &id, opts).await;
    assert!(matches!(v, ReverseVerdict::Reversed), "{v}");
    assert_reversed(&fx, &id, &src, &dest).await;
}

#[tokio::test]
async fn a_crash_after_each_write_is_carried_on_by_a_rerun() {
    let fx = Fx::new().await;
    // Create, link, then the reversal's seven steps: crash after each.
    for crash_after in 1..=8 {
        let tag = format!("rvk{crash_after}");
        let (id, src, dest) = finished(&fx, &tag).await;
        let opts = ReverseOptions {
            limits: RunLimits {
                max_steps: Some(crash_after),
            },
            ..ReverseOptions::default()
        };
        let v = reverse(&fx.proto, &id, opts).await;
        assert!(
            matches!(v, ReverseVerdict::Stopped(_)),
            "{crash_after}: {v}"
        );
        // The reversal's in-flight transaction is as recovery expects; a
        // rerun (recent, so no recovery-window question) finishes it.
        let again = fx.proto.reverse(&id, ReverseOptions::default()).await;
        assert!(
            matches!(again.verdict, ReverseVerdict::Reversed),
            "{crash_after}: {} {:#?}",
            again.verdict,
            again.steps
        );
        assert!(again.resumed, "{crash_after}");
        assert_reversed(&fx, &id, &src, &dest).await;
    }
}

#[tokio::test]
async fn a_lost_response_on_each_write_makes_one_reversal() {
    let fx = Fx::new().await;
    let (id, src, dest) = finished(&fx, "rvl").await;
    let rev = reversal_id(&id);
    let proxy = FaultProxy::start(&fx.url);
    let ix = &fx.ix;
    // The create's first answer (confirmed by a second create's 409 and a
    // read), the link's on the original, and every account write. On the
    // reversal, writes are told apart by the version they are conditional
    // on (one shard: the index's sequence numbers). From the create at `c`
    // (the link on the original takes c+1): begin @c, the source's claim
    // @c+2 (lost, landed) and again @c+3, the destination's claim @c+4
    // (lost) and again @c+5, commit @c+6, finish @c+7. A claim whose answer
    // is lost is made again (it writes nothing new to recognise), so only
    // its first attempt loses its answer.
    let c = fx
        .cluster()
        .get(&ix.transactions, &id)
        .await
        .unwrap()
        .unwrap()
        .seq_no
        + 1;
    proxy.drop_responses("POST", &format!("/{}/_create/{rev}", ix.transactions), 1);
    proxy.drop_responses("POST", &format!("/{}/_update/{id}?", ix.transactions), 1);
    for seq in [c, c + 2, c + 4, c + 6, c + 7] {
        let path = format!(
            "/{}/_update/{rev}?if_primary_term=1&if_seq_no={seq}",
            ix.transactions
        );
        proxy.drop_responses("POST", &path, 1);
    }
    proxy.drop_responses("POST", &format!("/{}/_update/", ix.accounts), 1000);
    let p = fx.proto_via(&proxy.url());
    let r = p.reverse(&id, ReverseOptions::default()).await;
    let ctx = format!("{}\n{:#?}\n{:#?}", r.verdict, r.steps, proxy.log());
    assert!(matches!(r.verdict, ReverseVerdict::Reversed), "{ctx}");
    // create + link + 5 reversal writes + 4 account writes (apply and
    // remove on each), every rule used: each write lost its answer once;
    // and the pre-flight's probe of the accounts, asked once for the whole
    // reversal (its run does not ask again), whose lost answer leaves the
    // act to its own writes.
    assert_eq!(proxy.dropped(), 12, "{ctx}");
    assert_reversed(&fx, &id, &src, &dest).await;
    assert_eq!(fx.total(&[&src, &dest]).await, 1000);
    // A retry after all that is refused and names the reversal.
    let again = p.reverse(&id, ReverseOptions::default()).await;
    assert!(
        matches!(&again.verdict, ReverseVerdict::Refused(ReverseRefusal::AlreadyReversed { by }) if *by == rev),
        "{}",
        again.verdict
    );
    // Exactly one reversal exists: its id is the only one derived from `id`.
    fx.refresh().await;
    let hits = fx
        .cluster()
        .scan(
            &fx.ix.transactions,
            json!({"query": {"term": {"reverses": id}}}),
        )
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
}

#[tokio::test]
async fn an_id_taken_by_another_document_is_refused() {
    let fx = Fx::new().await;
    let (id, src, dest) = finished(&fx, "rvt").await;
    fx.put_txn(
        &reversal_id(&id),
        json!({"src_acct": src, "dest_acct": dest, "amount": 3, "transaction_state": "finished",
               "modification_time": "2020-01-01T00:00:00Z"}),
    )
    .await;
    let v = reverse(&fx.proto, &id, ReverseOptions::default()).await;
    assert!(
        matches!(v, ReverseVerdict::Refused(ReverseRefusal::IdTaken(_))),
        "{v}"
    );
    assert_eq!(fx.acct(&src).await.balance, 400);
    assert!(fx
        .source(&fx.ix.transactions, &id)
        .await
        .get("reversed_by")
        .is_none());
}

#[tokio::test]
async fn two_operators_reversing_at_once_make_one_reversal() {
    let fx = Fx::new().await;
    let (id, src, dest) = finished(&fx, "rvx").await;
    let other = fx.proto_via(&fx.url);
    let (a, b) = tokio::join!(
        fx.proto.reverse(&id, ReverseOptions::default()),
        other.reverse(&id, ReverseOptions::default()),
    );
    // Both work on the same reversal: each finishes it, finds it done, or
    // stops where the other moved it on (and says so); at least one ends it.
    let mut reversed = 0;
    for r in [&a, &b] {
        match &r.verdict {
            ReverseVerdict::Reversed => reversed += 1,
            ReverseVerdict::Refused(ReverseRefusal::AlreadyReversed { .. }) => {}
            ReverseVerdict::Stopped(why) if why.contains("another process") => {}
            other => panic!("{other} {:#?}", r.steps),
        }
    }
    assert!(reversed >= 1, "{} / {}", a.verdict, b.verdict);
    assert_reversed(&fx, &id, &src, &dest).await;
    assert_eq!(fx.total(&[&src, &dest]).await, 1000);
}

/// The plan's steps as the run reports them: the label and whether it
/// writes.
fn planned(plan: &estx::protocol::intervene::ReversalPlan) -> Vec<(String, bool)> {
    use estx::protocol::intervene::Planned;
    plan.steps()
        .iter()
        .map(|s| (s.reported(), s.writes()))
        .collect()
}

/// A run's steps: the label and whether it wrote.
fn ran(r: &estx::protocol::reverse::ReverseReport) -> Vec<(String, bool)> {
    r.steps
        .iter()
        .map(|s| {
            let wrote = matches!(s.result, estx::protocol::StepResult::Updated(_));
            (s.label.clone(), wrote)
        })
        .collect()
}

/// The plan of reversing `id` as the protocol makes it for every front end
/// (finishing a committed original first).
async fn plan_of(p: &Protocol, id: &str) -> estx::protocol::intervene::ReversalPlan {
    use estx::protocol::intervene::{Choices, Intervention, Reverse};
    use estx::protocol::trail::Interface;
    let act = Reverse {
        txn: id.to_string(),
        finish_committed: true,
    };
    let i = Intervention::new(act, Choices::new(Interface::Cli, Some("test".into())));
    i.plan(p).await.unwrap()
}

/// The plan of a reversal says what the run does, step for step (and
/// whether each writes): fresh, finishing a committed original first, and
/// resumed after a crash after each write.
#[tokio::test]
async fn the_plan_is_the_steps_a_run_takes_fresh_or_resumed() {
    let fx = Fx::new().await;
    let opts = |crash: Option<usize>| ReverseOptions {
        finish_committed: true,
        limits: RunLimits { max_steps: crash },
        ..ReverseOptions::default()
    };
    let (fresh, ..) = finished(&fx, "rvp").await;
    let (committed, ..) = stage(&fx, "rvpc", 5).await;
    fx.backdate(&committed, 10).await;
    for id in [&fresh, &committed] {
        let plan = plan_of(&fx.proto, id).await;
        let refusal = estx::protocol::intervene::Planned::refusal(&plan);
        assert!(refusal.is_none(), "{id}: {refusal:?}");
        let r = fx.proto.reverse(id, opts(None)).await;
        assert!(
            matches!(r.verdict, ReverseVerdict::Reversed),
            "{}",
            r.verdict
        );
        assert_eq!(planned(&plan), ran(&r), "{id}");
        assert!(planned(&plan).len() > 8, "{id}: {:?}", planned(&plan));
    }
    // Crashed after each write (create, link, the reversal's steps), then
    // planned again and run again: what the plan says is what the rerun does.
    for crash_after in [1, 2, 3, 5, 8] {
        let (id, src, dest) = finished(&fx, &format!("rvpk{crash_after}")).await;
        let r = fx.proto.reverse(&id, opts(Some(crash_after))).await;
        assert!(
            matches!(r.verdict, ReverseVerdict::Stopped(_)),
            "{}",
            r.verdict
        );
        let plan = plan_of(&fx.proto, &id).await;
        let again = fx.proto.reverse(&id, opts(None)).await;
        assert!(again.resumed, "{crash_after}");
        assert_eq!(planned(&plan), ran(&again), "crash after {crash_after}");
        assert_reversed(&fx, &id, &src, &dest).await;
    }
}
