//! Writes that keep what the tool cannot see or did not set.
//!
//! Field-level security: a role reads documents without its hidden fields
//! (the proxy strips them from every `_source`, as both products do). A
//! whole document written back would delete them; the tool writes only the
//! fields a step sets, as a partial update, which both products refuse to
//! such a role — so the act stops with nothing changed. Where a partial
//! update passes (`FlsProduct::PassUpdates`), the server merges it and the
//! hidden fields stay, on the transaction and on both accounts.
//!
//! An ingest pipeline stamping `modification_time` on every write: the
//! tool's own write, whose answer was lost, is still recognised as its own.
//!
//! Derived source (OpenSearch 3.2+): refused before the first write.
//!
//! Every document is compared as stored, read straight from the server.

use crate::common::proxy::FlsProduct;
use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::batch::BatchOptions;
use estx::protocol::{Procedure, ProcedureReport, RunLimits, StepResult, TxnState, Verdict};
use serde_json::{json, Map, Value};

/// The field the operator's role may not read.
const HIDDEN: &str = "customer_note";

/// The stored documents of a case: transaction, source, destination.
type Stored = Vec<(String, Map<String, Value>)>;

/// Stages `t{tag}` stopped after `k` steps (`procedures::stage`) and gives
/// the transaction and both accounts a field of the application's the role
/// cannot read. Returns the ids and the documents as stored.
async fn world(fx: &Fx, tag: &str, k: usize) -> ((String, String, String), Stored) {
    let (id, src, dest) = stage(fx, tag, k).await;
    for (index, doc) in docs(fx, &id, &src, &dest) {
        let mut source = fx.source(&index, &doc).await;
        source.insert(HIDDEN.into(), json!(format!("kept: {doc}")));
        fx.put(&index, &doc, Value::Object(source)).await;
    }
    let stored = stored(fx, &id, &src, &dest).await;
    ((id, src, dest), stored)
}

fn docs(fx: &Fx, id: &str, src: &str, dest: &str) -> [(String, String); 3] {
    [
        (fx.ix.transactions.clone(), id.to_string()),
        (fx.ix.accounts.clone(), src.to_string()),
        (fx.ix.accounts.clone(), dest.to_string()),
    ]
}

/// The three documents as stored (read from the server, not the proxy).
async fn stored(fx: &Fx, id: &str, src: &str, dest: &str) -> Stored {
    let mut out = Vec::new();
    for (index, doc) in docs(fx, id, src, dest) {
        out.push((format!("{index}/{doc}"), fx.source(&index, &doc).await));
    }
    out
}

/// Asserts the audit index holds no record (`what` wrote one otherwise).
async fn assert_no_record(fx: &Fx, what: &str) {
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let records = fx
        .cluster()
        .scan(&fx.ix.audit, json!({"query": {"match_all": {}}}))
        .await
        .unwrap();
    assert!(records.is_empty(), "{what} wrote a record: {records:?}");
}

fn show(label: &str, docs: &Stored) {
    println!("--- {label}");
    for (name, source) in docs {
        println!("{name}: {}", Value::Object(source.clone()));
    }
}

/// Runs `run` through a proxy answering as a role that cannot read
/// [`HIDDEN`] on `product`, and checks the outcome against the documents
/// as they were: refused with nothing changed where the product refuses
/// partial updates, `done` with every hidden field intact where it lets
/// them through.
async fn under_fls<F, Fut>(tag: &str, k: usize, done: TxnState, run: F)
where
    F: Fn(estx::protocol::Protocol, String) -> Fut,
    Fut: std::future::Future<Output = Vec<ProcedureReport>>,
{
    for product in [
        FlsProduct::PassUpdates,
        FlsProduct::Elasticsearch,
        FlsProduct::OpenSearch,
    ] {
        let fx = Fx::new().await;
        let ((id, src, dest), before) = world(&fx, &format!("{tag}{product:?}"), k).await;
        let proxy = FaultProxy::start(&fx.url);
        proxy.field_security(Some((product, &[HIDDEN])));
        let reports = run(fx.proto_via(&proxy.url()), id.clone()).await;
        let after = stored(&fx, &id, &src, &dest).await;
        let ctx = format!("{product:?}: {reports:#?}\n{:#?}", proxy.log());
        if product == FlsProduct::PassUpdates {
            show(&format!("{tag}: stored before ({product:?})"), &before);
            show(&format!("{tag}: stored after ({product:?})"), &after);
            assert!(
                reports
                    .iter()
                    .all(|r| matches!(&r.verdict, Verdict::Completed(s) if *s == done)),
                "{ctx}"
            );
            assert_eq!(fx.state(&id).await, done, "{ctx}");
            for ((name, was), (_, now)) in before.iter().zip(&after) {
                assert_eq!(now.get(HIDDEN), was.get(HIDDEN), "{name}: {ctx}");
            }
            assert_eq!(fx.total(&[&src, &dest]).await, 1_000, "{ctx}");
        } else {
            for r in &reports {
                let refused = match &r.verdict {
                    Verdict::Failed(e) => e.to_string(),
                    other => format!("not refused: {other:?}"),
                };
                assert!(
                    refused.contains("refuses partial updates")
                        && refused.contains(&fx.ix.transactions),
                    "{refused}\n{ctx}"
                );
                assert!(!r.wrote(), "{ctx}");
            }
            assert_eq!(after, before, "nothing changed: {ctx}");
        }
    }
}

#[tokio::test]
async fn a_rollback_under_field_security_keeps_the_hidden_fields() {
    // Pending with the source debited: terminate, undo both, rolled back.
    under_fls("fr", 2, TxnState::RolledBack, |p, id| async move {
        vec![p.rollback(&id, false).await]
    })
    .await;
}

#[tokio::test]
async fn a_recovery_under_field_security_keeps_the_hidden_fields() {
    // Pending with the source debited: the destination is credited, both
    // notes cleared, finished — the destination's balance changes too.
    under_fls("fc", 2, TxnState::Finished, |p, id| async move {
        vec![
            p.run_procedure(&id, Procedure::Recover, false, RunLimits::default())
                .await,
        ]
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batched_recovery_under_field_security_keeps_the_hidden_fields() {
    under_fls("fb", 2, TxnState::Finished, |p, id| async move {
        let opts = BatchOptions {
            force: true,
            ..BatchOptions::default()
        };
        p.recover_batched(&[id], opts).await
    })
    .await;
}

/// An ingest pipeline stamps `modification_time` on every write, and the
/// answer to the commit (which landed) is lost: the re-read shows the state
/// the tool wrote under another stamp. The tool recognises its own write by
/// the state and the version, and finishes; it does not stop as if another
/// process had moved the transaction.
#[tokio::test]
async fn a_pipeline_stamp_does_not_hide_our_own_landed_write() {
    let fx = Fx::new().await;
    // Pending with both accounts applied: recovery's first write is the commit.
    let (id, src, dest) = stage(&fx, "pipe", 3).await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.stamp_writes(Some("modification_time"));
    // The first conditional write of the transaction (reads carry
    // `?realtime=true`).
    let commit = format!("/{id}?if_");
    proxy.drop_responses("POST", &commit, 1);
    let report = fx.proto_via(&proxy.url()).recover(&id, false).await;
    let ctx = format!("{report:#?}\n{:#?}", proxy.log());
    assert_eq!(proxy.dropped(), 1, "{ctx}");
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{ctx}"
    );
    let commit_step = report
        .steps
        .iter()
        .find(|s| s.step == Some(estx::protocol::Step::Commit))
        .expect("a commit step");
    assert!(
        matches!(commit_step.result, StepResult::Updated(_)),
        "{ctx}"
    );
    assert_eq!(fx.total(&[&src, &dest]).await, 1_000);
    // The pipeline's stamp is what is stored, not the tool's.
    let stamp = fx.source(&fx.ix.transactions, &id).await["modification_time"].clone();
    assert!(
        stamp
            .as_str()
            .is_some_and(|s| s.len() > "2026-01-01T00:00:00Z".len()),
        "{stamp}"
    );
}

/// An index with OpenSearch's derived source is refused before the first
/// write, naming the setting; nothing is changed.
#[tokio::test]
async fn derived_source_is_refused_before_the_first_write() {
    let fx = Fx::new().await;
    let ((id, src, dest), before) = world(&fx, "derived", 2).await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.derived_source(true);
    let report = fx.proto_via(&proxy.url()).rollback(&id, false).await;
    let ctx = format!("{report:#?}\n{:#?}", proxy.log());
    let why = match &report.verdict {
        Verdict::Failed(e) => e.to_string(),
        other => format!("not refused: {other:?}"),
    };
    assert!(why.contains("index.derived_source.enabled"), "{why}\n{ctx}");
    assert!(!report.wrote(), "{ctx}");
    assert_eq!(stored(&fx, &id, &src, &dest).await, before, "{ctx}");
}

/// The write shapes the protocol relies on, as the server answers them: a
/// partial update changes only its fields; one that changes nothing is a
/// `noop` at the same `_seq_no`; a fence (`detect_noop` off) advances it.
#[tokio::test]
async fn partial_updates_merge_noops_keep_the_version_and_fences_advance_it() {
    use estx::cluster::{Changes, WriteOutcome};
    let fx = Fx::new().await;
    fx.account("shape", 500).await;
    let (ix, c) = (&fx.ix.accounts, fx.cluster());
    let doc = c.get(ix, "shape").await.unwrap().unwrap();
    let at = (doc.seq_no, doc.primary_term);
    let set = Changes::new().set("balance", json!(400));
    let w = c
        .update_if_routed(ix, "shape", &set, at, None)
        .await
        .unwrap();
    assert!(matches!(w, WriteOutcome::Written { seq_no, .. } if seq_no > at.0));
    let doc = c.get(ix, "shape").await.unwrap().unwrap();
    let at = (doc.seq_no, doc.primary_term);
    let want = json!({"balance": 400, "pending_transactions": []});
    assert_eq!(Value::Object(doc.source), want);
    let same = c
        .update_if_routed(ix, "shape", &set, at, None)
        .await
        .unwrap();
    assert!(matches!(same, WriteOutcome::Written { .. }));
    let doc = c.get(ix, "shape").await.unwrap().unwrap();
    assert_eq!(doc.seq_no, at.0, "a no-op keeps the version");
    let fence = Changes::fence();
    let w = c
        .update_if_routed(ix, "shape", &fence, at, None)
        .await
        .unwrap();
    assert!(matches!(w, WriteOutcome::Written { .. }));
    let doc = c.get(ix, "shape").await.unwrap().unwrap();
    assert!(doc.seq_no > at.0, "a fence advances the version");
    let stale = c
        .update_if_routed(ix, "shape", &set, at, None)
        .await
        .unwrap();
    assert_eq!(stale, WriteOutcome::Conflict);
}

/// Field-level security on the accounts index only: the transaction's
/// first step (e.g. `pending -> terminating`) is a partial update the
/// product lets through, the first account write one it refuses. The act
/// is refused before step 1, with nothing written anywhere: a pre-flight
/// asks the product, with a partial update that changes nothing, whether
/// it refuses partial updates on each index the act writes. `k`: the core
/// steps the transfer made (`procedures::stage`), so that the act's first
/// write is the transaction's.
async fn under_fls_on_accounts<F, Fut>(tag: &str, k: usize, run: F)
where
    F: Fn(estx::protocol::Protocol, String) -> Fut,
    Fut: std::future::Future<Output = Vec<ProcedureReport>>,
{
    for product in [FlsProduct::Elasticsearch, FlsProduct::OpenSearch] {
        let fx = Fx::new().await;
        let ((id, src, dest), before) = world(&fx, &format!("{tag}{product:?}"), k).await;
        let proxy = FaultProxy::start(&fx.url);
        proxy.field_security_on(Some((product, &[HIDDEN])), &[&fx.ix.accounts]);
        let reports = run(fx.proto_via(&proxy.url()), id.clone()).await;
        let after = stored(&fx, &id, &src, &dest).await;
        let ctx = format!("{product:?}: {reports:#?}\n{:#?}", proxy.log());
        for r in &reports {
            let refused = match &r.verdict {
                Verdict::Failed(e) => e.to_string(),
                other => format!("not refused: {other:?}"),
            };
            assert!(
                refused.contains("refuses partial updates") && refused.contains(&fx.ix.accounts),
                "{refused}\n{ctx}"
            );
            assert!(!r.wrote(), "{ctx}");
        }
        assert_eq!(after, before, "nothing changed: {ctx}");
    }
}

#[tokio::test]
async fn a_rollback_under_field_security_on_the_accounts_alone_writes_nothing() {
    // Pending, source debited: `pending -> terminating` comes first.
    under_fls_on_accounts("ar", 2, |p, id| async move {
        vec![p.rollback(&id, false).await]
    })
    .await;
}

#[tokio::test]
async fn a_recovery_under_field_security_on_the_accounts_alone_writes_nothing() {
    // Pending, both accounts applied: `pending -> committed` comes first.
    under_fls_on_accounts(
        "ac",
        3,
        |p, id| async move { vec![p.recover(&id, false).await] },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batched_recovery_under_field_security_on_the_accounts_alone_writes_nothing() {
    under_fls_on_accounts("ab", 3, |p, id| async move {
        let opts = BatchOptions {
            force: true,
            ..BatchOptions::default()
        };
        p.recover_batched(&[id], opts).await
    })
    .await;
}

/// Field-level security on the audit index only: the record's creation is
/// a whole-document write the products let through, its completion a
/// partial update they refuse. Without asking first, the act would run
/// and leave its record unfinished ("running" for ever, then "presumed
/// dead"). The act is refused before its record and before step 1, with
/// nothing written anywhere: the trail asks the same pre-flight as the
/// act's own indices.
#[tokio::test]
async fn an_act_under_field_security_on_the_audit_index_writes_nothing() {
    use estx::protocol::intervene::{self, Choices, Intervention, NotStarted, Rollback};
    use estx::protocol::trail::Interface;
    for product in [FlsProduct::Elasticsearch, FlsProduct::OpenSearch] {
        let fx = Fx::new().await;
        fx.proto.ensure_indices().await.unwrap();
        let ((id, src, dest), before) = world(&fx, &format!("au{product:?}"), 2).await;
        let proxy = FaultProxy::start(&fx.url);
        proxy.field_security_on(Some((product, &[HIDDEN])), &[&fx.ix.audit]);
        let p = fx.proto_via(&proxy.url());
        let i = Intervention::new(
            Rollback::new(id.clone()),
            Choices::new(Interface::Cli, Some("INC-33".into())),
        );
        let ctx = || format!("{product:?}: {:#?}", proxy.log());
        let e = intervene::run(&p, i).await.map(|d| d.to_string());
        match &e {
            Err(NotStarted::Record(e)) => {
                let text = e.to_string();
                assert!(
                    text.contains("refuses partial updates") && text.contains(&fx.ix.audit),
                    "{text}\n{}",
                    ctx()
                );
            }
            other => panic!("not refused before its record: {other:?}\n{}", ctx()),
        }
        assert_eq!(stored(&fx, &id, &src, &dest).await, before, "{}", ctx());
        assert_no_record(&fx, "an act refused before its record").await;
    }
}

/// A preview (what `--dry-run`, the dashboard's dialog and the bulk dialog
/// show) asks the run's own pre-flights, writing nothing: where the product
/// would refuse the run before its first write (field security on an index
/// it writes, the audit index included; a source it cannot write back), the
/// plan says so in the run's own words; where it lets the writes through,
/// the plan carries no such refusal. A lock release updates no transaction
/// or account, so only the audit index is asked for it.
#[tokio::test]
async fn a_preview_says_the_run_would_be_refused_before_its_first_write() {
    use estx::protocol::intervene::{
        BulkAct, Choices, Intervention, ReleaseLocksOf, Rollback, Runner, Selection,
    };
    use estx::protocol::trail::Interface;
    #[derive(Debug, Clone, Copy)]
    enum Case {
        Passed,
        OnAccounts(FlsProduct),
        OnAudit(FlsProduct),
        DerivedSource,
    }
    for case in [
        Case::Passed,
        Case::OnAccounts(FlsProduct::Elasticsearch),
        Case::OnAccounts(FlsProduct::OpenSearch),
        Case::OnAudit(FlsProduct::OpenSearch),
        Case::DerivedSource,
    ] {
        let fx = Fx::new().await;
        fx.proto.ensure_indices().await.unwrap();
        let ((id, src, dest), before) = world(&fx, &format!("pv{case:?}"), 2).await;
        let proxy = FaultProxy::start(&fx.url);
        let expected: Option<&str> = match case {
            Case::Passed => {
                proxy.field_security(Some((FlsProduct::PassUpdates, &[HIDDEN])));
                None
            }
            Case::OnAccounts(product) => {
                proxy.field_security_on(Some((product, &[HIDDEN])), &[&fx.ix.accounts]);
                Some(&fx.ix.accounts)
            }
            Case::OnAudit(product) => {
                proxy.field_security_on(Some((product, &[HIDDEN])), &[&fx.ix.audit]);
                Some(&fx.ix.audit)
            }
            Case::DerivedSource => {
                proxy.derived_source(true);
                Some("index.derived_source.enabled")
            }
        };
        let p = fx.proto_via(&proxy.url());
        let choices = || Choices::new(Interface::Cli, Some("INC-33".into()));
        let one = Intervention::new(Rollback::new(id.clone()), choices());
        let bulk = Intervention::new(
            BulkAct {
                procedure: Procedure::Rollback,
                selection: Selection {
                    ids: Some(vec![id.clone()]),
                    ..Selection::default()
                },
                ids_source: None,
                allow_partial: false,
                runner: Runner::OneByOne(1),
            },
            choices(),
        );
        let ctx = || format!("{case:?}: {:#?}", proxy.log());
        let plans = [
            one.preview(&p).await.unwrap().writes_refused,
            bulk.preview(&p).await.unwrap().writes_refused,
        ];
        for refused in plans {
            match (expected, refused.map(|e| e.to_string())) {
                (None, None) => {}
                (Some(what), Some(text)) => {
                    assert!(text.contains(what), "{text}\n{}", ctx());
                    if !matches!(case, Case::DerivedSource) {
                        assert!(text.contains("refuses partial updates"), "{text}");
                    }
                }
                (e, r) => panic!("expected {e:?}, previewed {r:?}\n{}", ctx()),
            }
        }
        // A release of the transaction's locks writes no transaction or
        // account: refused only for its record.
        let release = Intervention::new(
            ReleaseLocksOf {
                txn: id.clone(),
                allow_partial: false,
            },
            choices(),
        );
        let refused = release.preview(&p).await.unwrap().writes_refused;
        assert_eq!(
            refused.is_some(),
            matches!(case, Case::OnAudit(_)),
            "{refused:?}\n{}",
            ctx()
        );
        assert_eq!(stored(&fx, &id, &src, &dest).await, before, "{}", ctx());
        assert_no_record(&fx, "a preview").await;
    }
}
