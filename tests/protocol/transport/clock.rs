//! One clock: times the protocol writes and judges come from the cluster,
//! so a writer whose clock is an hour off neither makes its transactions
//! unrecoverable nor gets fresh ones recovered under its feet.

use super::{proto_on, ten, two_accounts, via};
use crate::common::{wait_until, FaultProxy};
use chrono::{Duration as ChronoDuration, Utc};
use estx::cluster::ClockSource;
use estx::protocol::time::format_timestamp;
use estx::protocol::{ProcedureRefusal, Protocol, RunLimits, TxnState, Verdict};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn the_cluster_clock_follows_the_date_header() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.shift_date(3600);
    let ahead = via(&proxy);
    for _ in 0..3 {
        ahead.get(&fx.ix.accounts, "A").await.unwrap();
    }
    fx.cluster().get(&fx.ix.accounts, "A").await.unwrap();
    let offset = (ahead.clock_offset() - fx.cluster().clock_offset()).num_milliseconds();
    assert!(
        (3_598_000..=3_602_000).contains(&offset),
        "offset {offset} ms"
    );
    let skew = ahead.clock_skew().expect("an hour off is warned about");
    assert!(skew.to_string().contains("behind"), "{skew}");
    let now_gap = (ahead.now() - fx.cluster().now()).num_seconds();
    assert!((3598..=3602).contains(&now_gap), "{now_gap}");
}

#[tokio::test]
async fn writers_an_hour_off_neither_block_nor_rush_recovery() {
    for hours in [1, -1] {
        let fx = two_accounts().await;
        let skew = ChronoDuration::hours(hours);
        let writer = proto_on(&fx, fx.cluster().with_local_clock_skew(skew));
        let id = format!("skewed{hours}");
        let report = writer
            .transfer(&ten(&id), false, RunLimits { max_steps: Some(2) })
            .await;
        assert!(
            matches!(report.verdict, Verdict::Stopped(_)),
            "{:?}",
            report.verdict
        );
        let written = fx.txn(&id).await.modification_time.unwrap();
        let off = (written - Utc::now()).num_seconds().abs();
        assert!(off < 60, "{hours}h writer stamped a time {off}s off");

        // Fresh: the 2-minute window protects it, whoever's clock judges.
        let judges = [
            fx.proto.clone(),
            proto_on(&fx, fx.cluster().with_local_clock_skew(-skew)),
        ];
        for judge in &judges {
            let r = judge.recover(&id, false).await;
            assert!(
                matches!(r.verdict, Verdict::Refused(ProcedureRefusal::Recent { .. })),
                "{hours}h writer: fresh transaction not protected: {:?}",
                r.verdict
            );
        }
        // Once the (sub-second) window has passed, a process whose clock is
        // off the other way recovers it.
        let mut config = fx.proto.config().clone();
        config.recovery_window = Duration::from_millis(500);
        let quick = Protocol::new(fx.cluster().with_local_clock_skew(-skew), config);
        wait_until(
            "the transaction is recovered",
            Duration::from_secs(20),
            || async {
                let r = quick.recover(&id, false).await;
                matches!(r.verdict, Verdict::Completed(TxnState::Finished))
            },
        )
        .await;
        assert_eq!(
            (fx.acct("A").await.balance, fx.acct("B").await.balance),
            (90, 110)
        );
    }
}

#[tokio::test]
async fn the_recovery_window_keeps_its_milliseconds() {
    let fx = two_accounts().await;
    let modified = fx.cluster().now() - ChronoDuration::milliseconds(10_000);
    fx.put_txn(
        "ms",
        json!({"src_acct": "A", "dest_acct": "B", "amount": 10, "transaction_state": "created",
            "modification_time": format_timestamp(modified)}),
    )
    .await;
    let mut config = fx.proto.config().clone();
    // 10.9 s: truncated to whole seconds it would be 10 s, and this
    // transaction (10.0 s old) would already count as abandoned.
    config.recovery_window = Duration::from_millis(10_900);
    let judge = Protocol::new(fx.cluster().clone(), config);
    let r = judge.recover("ms", false).await;
    assert!(
        matches!(r.verdict, Verdict::Refused(ProcedureRefusal::Recent { .. })),
        "{:?}",
        r.verdict
    );
    assert_eq!(fx.state("ms").await, TxnState::Created);
}

#[tokio::test]
async fn a_refused_clock_probe_still_reads_the_date() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.shift_date(-3600);
    proxy.answer(
        "POST",
        "_search",
        1,
        crate::common::proxy::Canned::text(403, "Forbidden"),
    );
    let behind = via(&proxy);
    assert_eq!(behind.clock_offset(), ChronoDuration::zero());
    proto_on(&fx, behind.clone()).sync_clock().await;
    let offset = behind.clock_offset().num_seconds();
    assert!((-3602..=-3598).contains(&offset), "{offset}");
    assert_eq!(proxy.canned(), 1, "{:?}", proxy.log());
    let status = behind.clock_status();
    assert!(
        matches!(&status.source, ClockSource::DateHeader { why: Some(w), .. } if w.contains("403")),
        "{status:?}"
    );
}

/// Elasticsearch and OpenSearch send no `Date`: a machine whose clock is
/// ten minutes off must still judge ages on the cluster's clock. Behind, it
/// would find nothing stuck; ahead, it would recover inside the window.
#[tokio::test]
async fn without_a_date_header_the_clusters_own_clock_is_asked() {
    let fx = two_accounts().await;
    let proxy = FaultProxy::start(&fx.url);
    proxy.strip_date(true);
    let real = fx.cluster().now();
    let fields = |modified| {
        json!({"src_acct": "A", "dest_acct": "B", "amount": 10, "transaction_state": "created",
            "modification_time": format_timestamp(modified)})
    };
    fx.put_txn("old", fields(real - ChronoDuration::minutes(5)))
        .await;
    fx.put_txn("fresh", fields(real)).await;
    for minutes in [-10, 10] {
        let skewed = via(&proxy).with_local_clock_skew(ChronoDuration::minutes(minutes));
        let proto = proto_on(&fx, skewed.clone());
        let gap = (proto.now().await - Utc::now()).num_seconds().abs();
        assert!(gap < 5, "{minutes} min off: now is {gap}s from the truth");
        let status = skewed.clock_status();
        assert!(
            matches!(status.source, ClockSource::Cluster { .. }),
            "{status:?}"
        );
        assert!(
            (status.offset.num_seconds() + minutes * 60).abs() <= 2,
            "{status:?}"
        );
        let fresh = proto.recover("fresh", false).await;
        assert!(
            matches!(
                fresh.verdict,
                Verdict::Refused(ProcedureRefusal::Recent { .. })
            ),
            "{minutes} min off: fresh transaction not protected: {:?}",
            fresh.verdict
        );
    }
    let behind = proto_on(
        &fx,
        via(&proxy).with_local_clock_skew(ChronoDuration::minutes(-10)),
    );
    let r = behind.recover("old", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
        "a 5-minute-old transaction was not recovered: {:?}",
        r.verdict
    );
    assert!(
        proxy.log().iter().any(|l| l.contains("_search")),
        "{:?}",
        proxy.log()
    );
}
