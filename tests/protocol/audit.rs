//! The audit: every kind of finding built by hand, the repair of exactly the
//! unambiguous dangling applies, and the balance total with transfers in
//! flight.

use crate::fixture::Fx;
use crate::procedures::stage;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::account::SettledOutcome;
use estx::protocol::audit::AuditReport;
use estx::protocol::time::format_timestamp;
use estx::protocol::{NewTransfer, RunLimits, TxnState, Verdict};
use serde_json::{json, Value};

fn ago(minutes: i64) -> String {
    format_timestamp(Utc::now() - ChronoDuration::minutes(minutes))
}

async fn txn(fx: &Fx, id: &str, state: &str, src: &str, dest: &str, amount: i64) {
    fx.put_txn(
        id,
        json!({"src_acct": src, "dest_acct": dest, "amount": amount, "transaction_state": state,
               "creation_time": ago(60), "modification_time": ago(30)}),
    )
    .await;
}

async fn account(fx: &Fx, id: &str, doc: Value) {
    fx.put(&fx.ix.accounts, id, doc).await;
}

fn kinds(r: &AuditReport) -> Vec<(String, String)> {
    r.findings
        .iter()
        .map(|f| (f.kind.to_string(), f.id.clone()))
        .collect()
}

fn detail<'a>(r: &'a AuditReport, kind: &str, id: &str) -> &'a str {
    r.findings
        .iter()
        .find(|f| f.kind.as_str() == kind && f.id == id)
        .map(|f| f.detail.as_str())
        .unwrap_or_else(|| panic!("no {kind} finding for {id}: {:#?}", r.findings))
}

/// Every kind of finding in one world. Money at the start: 1000 per pair
/// (A/B, C/D, E/F), 500 each for G, H, I, and 5 on M: 4505.
async fn seed_findings(fx: &Fx) -> i64 {
    // (a) A rolled-back transfer a late, unfenced worker applied to A anyway.
    txn(fx, "ra", "rolled-back", "A", "B", 100).await;
    account(
        fx,
        "A",
        json!({"balance": 400, "pending_transactions": ["ra"], "owner": "ops"}),
    )
    .await;
    account(fx, "B", json!({"balance": 500, "pending_transactions": []})).await;
    // (b) A finished transfer C settled as applied, then applied again.
    txn(fx, "fa", "finished", "C", "D", 50).await;
    account(
        fx,
        "C",
        json!({"balance": 400, "pending_transactions": ["fa"],
               "settled_transactions": [{"id": "fa", "outcome": "applied", "at": ago(20)}]}),
    )
    .await;
    account(
        fx,
        "D",
        json!({"balance": 550, "pending_transactions": [],
               "settled_transactions": [{"id": "fa", "outcome": "applied", "at": ago(20)}]}),
    )
    .await;
    // (c) A finished transfer still pending on E with no settled record:
    // steps 5-6 skipped, or a second apply? Ambiguous.
    txn(fx, "fc", "finished", "E", "F", 30).await;
    account(
        fx,
        "E",
        json!({"balance": 470, "pending_transactions": ["fc"]}),
    )
    .await;
    account(fx, "F", json!({"balance": 530, "pending_transactions": []})).await;
    // (d) G carries a transaction that does not exist.
    account(
        fx,
        "G",
        json!({"balance": 500, "pending_transactions": ["ghost"]}),
    )
    .await;
    // missing_account, unknown_state, malformed_transaction.
    account(fx, "H", json!({"balance": 500, "pending_transactions": []})).await;
    account(fx, "I", json!({"balance": 500, "pending_transactions": []})).await;
    txn(fx, "tm", "pending", "H", "nope", 10).await;
    txn(fx, "tu", "paused", "H", "I", 10).await;
    fx.put_txn("tx", json!({"src_acct": "H", "dest_acct": "I", "transaction_state": "pending", "modification_time": ago(30)}))
        .await;
    // malformed_account.
    account(
        fx,
        "M",
        json!({"balance": 5, "pending_transactions": [1, 2]}),
    )
    .await;
    // stale_lock: owner rolled back; an owner missing from the
    // transactions is no evidence (not a finding).
    fx.put(
        &fx.ix.locks,
        "B",
        json!({"owner": "ra", "created_at": ago(40), "expires_at": ago(38)}),
    )
    .await;
    fx.put(
        &fx.ix.locks,
        "L",
        json!({"owner": "never-was", "created_at": ago(1)}),
    )
    .await;
    fx.refresh().await;
    4505
}

fn expected_findings(accounts_index: &str) -> Vec<(String, String)> {
    [
        ("dangling_pending", "A"),
        ("dangling_pending", "C"),
        ("dangling_pending", "E"),
        ("dangling_pending", "G"),
        ("malformed_account", "M"),
        ("malformed_transaction", "tx"),
        ("missing_account", "tm"),
        ("stale_lock", "B"),
        ("total_mismatch", accounts_index),
        ("unknown_state", "tu"),
    ]
    .iter()
    .map(|(k, i)| (k.to_string(), i.to_string()))
    .collect()
}

#[tokio::test]
async fn every_kind_of_finding_is_reported() {
    let fx = Fx::new().await;
    let expected_total = seed_findings(&fx).await;
    let report = fx.proto.audit(Some(expected_total), false).await.unwrap();
    assert_eq!(
        kinds(&report),
        expected_findings(&fx.ix.accounts),
        "{:#?}",
        report.findings
    );
    assert!(report.repairs.is_empty());
    assert_eq!(report.total_balance, 4355);
    assert_eq!(report.in_flight_delta, 0);

    let a = detail(&report, "dangling_pending", "A");
    assert!(
        a.contains("`ra`") && a.contains("after its rollback") && a.contains("--repair"),
        "{a}"
    );
    let c = detail(&report, "dangling_pending", "C");
    assert!(
        c.contains("`fa`") && c.contains("again") && c.contains("--repair"),
        "{c}"
    );
    let e = detail(&report, "dangling_pending", "E");
    assert!(
        e.contains("`fc`") && e.contains("by hand") && !e.contains("--repair"),
        "{e}"
    );
    let g = detail(&report, "dangling_pending", "G");
    assert!(g.contains("`ghost`") && g.contains("does not exist"), "{g}");
    assert!(detail(&report, "missing_account", "tm").contains("`nope`"));
    assert!(detail(&report, "unknown_state", "tu").contains("paused"));
    assert!(detail(&report, "malformed_transaction", "tx").contains("amount"));
    assert!(detail(&report, "malformed_account", "M").contains("pending_transactions"));
    assert!(
        detail(&report, "stale_lock", "B").contains("rolled-back")
            || detail(&report, "stale_lock", "B").contains("expired")
    );
    assert!(!report.findings.iter().any(|f| f.id == "L"));
    assert!(detail(&report, "total_mismatch", &fx.ix.accounts).contains("-150"));

    // Without an expected total there is no total check.
    let report = fx.proto.audit(None, false).await.unwrap();
    assert!(report
        .findings
        .iter()
        .all(|f| f.kind.as_str() != "total_mismatch"));
    // An audit without repair writes nothing.
    for id in ["A", "C", "E", "G"] {
        assert!(fx.acct(id).await.pending.len() == 1, "{id}");
    }
}

#[tokio::test]
async fn repair_undoes_exactly_the_unambiguous_dangling_applies() {
    let fx = Fx::new().await;
    let expected_total = seed_findings(&fx).await;
    let untouched = ["B", "D", "E", "F", "G", "H", "I", "M"];
    let mut before = Vec::new();
    for id in untouched {
        before.push(
            fx.cluster()
                .get(&fx.ix.accounts, id)
                .await
                .unwrap()
                .unwrap(),
        );
    }

    let report = fx.proto.audit(Some(expected_total), true).await.unwrap();
    assert_eq!(report.repairs.len(), 2, "{:#?}", report.repairs);
    assert!(
        report
            .repairs
            .iter()
            .any(|r| r.starts_with("A:") && r.contains("`ra`")),
        "{:?}",
        report.repairs
    );
    assert!(
        report
            .repairs
            .iter()
            .any(|r| r.starts_with("C:") && r.contains("`fa`")),
        "{:?}",
        report.repairs
    );
    let dangling: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind.as_str() == "dangling_pending")
        .map(|f| f.id.as_str())
        .collect();
    assert_eq!(dangling, ["E", "G"], "{:#?}", report.findings);

    // (a): the late apply is undone, no history written; other fields kept.
    let a = fx.acct("A").await;
    assert_eq!(a.balance, 500);
    assert!(a.pending.is_empty());
    assert!(a.settled.is_empty(), "{a:?}");
    assert_eq!(fx.source(&fx.ix.accounts, "A").await["owner"], "ops");
    // (b): the second apply is undone; the first one stays.
    let c = fx.acct("C").await;
    assert_eq!(c.balance, 450);
    assert!(c.pending.is_empty());
    assert!(c.settled_of("fa").is_some(), "{c:?}");
    // (c), (d) and everything else: not a byte changed, not even rewritten.
    for (id, was) in untouched.iter().zip(&before) {
        let now = fx
            .cluster()
            .get(&fx.ix.accounts, id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&now, was, "{id} was touched by the repair");
    }
    for t in ["ra", "fa", "fc"] {
        assert!(fx.state(t).await.is_terminal());
    }

    // Once visible to search the books balance, and a second repair has
    // nothing left to do.
    fx.refresh().await;
    let again = fx.proto.audit(Some(expected_total), true).await.unwrap();
    assert!(again.repairs.is_empty(), "{:?}", again.repairs);
    assert_eq!(again.total_balance, 4355 + 150);
    let mut left = expected_findings(&fx.ix.accounts);
    left.retain(|(k, i)| {
        !(k == "total_mismatch" || (k == "dangling_pending" && (i == "A" || i == "C")))
    });
    assert_eq!(kinds(&again), left, "{:#?}", again.findings);
}

#[tokio::test]

async fn a_repaired_second_apply_keeps_the_accounts_record_that_it_applied_the_transfer() {
    // `fa` finished: C really did apply it once. Undoing the second apply
    // must leave the fence saying "applied", not "undone" (which means
    // "rolled back here, or never applied").
    let fx = Fx::new().await;
    txn(&fx, "fa", "finished", "C", "D", 50).await;
    account(
        &fx,
        "C",
        json!({"balance": 400, "pending_transactions": ["fa"],
               "settled_transactions": [{"id": "fa", "outcome": "applied", "at": ago(20)}]}),
    )
    .await;
    account(
        &fx,
        "D",
        json!({"balance": 550, "pending_transactions": []}),
    )
    .await;
    fx.refresh().await;
    let report = fx.proto.audit(None, true).await.unwrap();
    assert_eq!(report.repairs.len(), 1, "{report:#?}");
    let c = fx.acct("C").await;
    assert_eq!((c.balance, c.pending.len()), (450, 0));
    assert_eq!(
        c.settled_of("fa").map(|s| s.outcome),
        Some(SettledOutcome::Applied),
        "{c:?}"
    );
}

#[tokio::test]
async fn normal_transfers_leave_a_clean_audit() {
    let fx = Fx::new().await;
    for (id, b) in [("A", 1000), ("B", 700), ("C", 300)] {
        fx.account(id, b).await;
    }
    for (i, (src, dest, amount, locks)) in [
        ("A", "B", 120, false),
        ("B", "C", 75, true),
        ("C", "A", 10, true),
        ("A", "C", 1, false),
    ]
    .into_iter()
    .enumerate()
    {
        let req = NewTransfer {
            id: Some(format!("n{i}")),
            src: src.into(),
            dest: dest.into(),
            amount,
        };
        let report = fx.proto.transfer(&req, locks, RunLimits::default()).await;
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "{:?}",
            report.verdict
        );
    }
    fx.refresh().await;
    let report = fx.proto.audit(Some(2000), false).await.unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!(report.total_balance, 2000);
    assert_eq!(report.total_balance, fx.total(&["A", "B", "C"]).await);
    assert_eq!(report.in_flight_delta, 0);
    let repaired = fx.proto.audit(Some(2000), true).await.unwrap();
    assert!(
        repaired.repairs.is_empty() && repaired.findings.is_empty(),
        "{repaired:#?}"
    );
}

#[tokio::test]
async fn transfers_in_flight_do_not_unbalance_the_books() {
    // Half applied: the source was debited, the destination not yet credited.
    let fx = Fx::new().await;
    let (id, src, dest) = stage(&fx, "h", 2).await;
    assert_eq!(fx.total(&[&src, &dest]).await, 900);
    fx.refresh().await;
    let report = fx.proto.audit(Some(1000), false).await.unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!((report.total_balance, report.in_flight_delta), (900, -100));
    // The check is live: a wrong expectation is still caught.
    let wrong = fx.proto.audit(Some(900), false).await.unwrap();
    assert_eq!(
        kinds(&wrong),
        [("total_mismatch".to_string(), fx.ix.accounts.clone())]
    );
    // Finishing it changes nothing for the audit.
    let done = fx.proto.recover(&id, false).await;
    assert!(
        matches!(done.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        done.verdict
    );
    fx.refresh().await;
    let report = fx.proto.audit(Some(1000), false).await.unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!((report.total_balance, report.in_flight_delta), (1000, 0));

    // Half undone: a rollback that undid the source and died.
    let fx = Fx::new().await;
    let (id, _, _) = stage(&fx, "u", 3).await;
    fx.kit().stop_rollback(&id, 2, false).await;
    assert_eq!(fx.state(&id).await, TxnState::Terminating);
    fx.refresh().await;
    let report = fx.proto.audit(Some(1000), false).await.unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!((report.total_balance, report.in_flight_delta), (1100, 100));
}

/// Under a running workload (transfers with and without locks, searches
/// lagging writes by one refresh), the audit reports nothing that is not
/// there: every finding is confirmed by reads by id, and the balance total
/// checked against the expected one is corrected from the same view.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_live_traffic_the_audit_reports_nothing_that_is_not_there() {
    use estx::demo::{self, RecoveryScope, WorkloadOptions};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    let fx = Fx::new().await;
    let accounts: Vec<String> = (0..6).map(|i| format!("L{i}")).collect();
    for a in &accounts {
        fx.account(a, 1000).await;
    }
    fx.refresh().await;
    let load = demo::spawn(
        fx.proto.clone(),
        accounts.clone(),
        WorkloadOptions {
            workers: 3,
            crash_rate: 0.0,
            pause: Duration::from_millis(0),
            recovery_interval: Duration::from_secs(3600),
            recovery: RecoveryScope::Off,
        },
    );
    // A cluster refreshes by itself; osmem-server does not: refresh often,
    // so searches lag writes as they do on a real cluster.
    let stop = Arc::new(AtomicBool::new(false));
    let refresher = {
        let (cluster, ix, stop) = (fx.cluster().clone(), fx.ix.indices(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                for i in [&ix.transactions, &ix.accounts, &ix.locks] {
                    let _ = cluster.refresh(i).await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let mut audits = 0;
    let mut in_flight_seen = 0;
    while audits < 25 {
        // The expected total too: the correction for transfers in flight
        // comes from the same view as the balances.
        let report = fx.proto.audit(Some(6000), false).await.unwrap();
        assert!(report.consistent_view, "osmem offers a point-in-time view");
        assert!(
            report.findings.is_empty(),
            "audit {audits} under traffic reported {:?} (workload {:?})",
            report.findings,
            load.stats()
        );
        in_flight_seen += usize::from(report.in_flight_delta != 0);
        audits += 1;
    }
    let stats = load.stats();
    load.stop().await;
    stop.store(true, Ordering::Relaxed);
    refresher.await.unwrap();
    assert!(stats.transfers >= 5, "the workload ran: {stats:?}");
    fx.refresh().await;
    let settled = fx.proto.audit(Some(6000), false).await.unwrap();
    assert!(settled.findings.is_empty(), "{:?}", settled.findings);
    eprintln!(
        "{audits} audits under traffic, {in_flight_seen} saw transfers half applied; {stats:?}"
    );
}

/// A measured audit counts the requests it sent itself, not those other
/// work on the same cluster sends meanwhile (the poll, an act): its cost
/// paces the background audit (`protocol::audit::pace`).
#[tokio::test]
async fn a_measured_audit_counts_its_own_requests_only() {
    let fx = Fx::new().await;
    let total = seed_findings(&fx).await;
    fx.refresh().await;
    let proxy = crate::common::FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let before = proxy.forwarded();
    let others = async {
        for _ in 0..5 {
            p.cluster()
                .count(&fx.ix.accounts, json!({"match_all": {}}))
                .await
                .unwrap();
        }
    };
    let ((report, cost), ()) = tokio::join!(p.audit_measured(Some(total)), others);
    let report = report.unwrap();
    assert!(!report.findings.is_empty());
    let sent = (proxy.forwarded() - before) as u64;
    assert_eq!(cost.requests, sent - 5, "{}", proxy.log().join("\n"));
    assert!(cost.requests >= 3, "{cost}");
    assert!(cost.elapsed > std::time::Duration::ZERO);
}
