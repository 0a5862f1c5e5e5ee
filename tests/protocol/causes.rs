//! Cause verdicts against a cluster (issue 30 item 2): each stuck
//! transaction and each by-cause group reads why it is stuck and which act
//! is safe, judged on the locks' holders (by heartbeat or lease), the stuck
//! per account and the tool's refusals, as `check` and `list --json` read
//! them.

use crate::fixture::Fx;
use crate::procedures::stage;
use chrono::{Duration as ChronoDuration, Utc};
use estx::protocol::locks::LivenessSource;
use estx::protocol::read::verdict::{Cause, CauseKind, Refusal, SafeAct, HOT_ACCOUNT};
use estx::protocol::read::GroupKind;
use estx::protocol::steps::ProcedureRefusal;
use estx::protocol::time::format_timestamp;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

fn ts(offset: ChronoDuration) -> String {
    format_timestamp(Utc::now() + offset)
}

/// A stuck transaction whose worker's heartbeat is old reads holder dead
/// (recover), one whose worker beats reads contention (wait), transactions
/// piling on one account read hot account, a malformed one reads refused
/// with its refusal; the lock holders' groups read the same, the
/// actionable first.
#[tokio::test]
async fn stuck_transactions_and_groups_read_their_cause_and_safe_act() {
    let fx = Fx::with(|c| {
        c.liveness = Some(LivenessSource {
            index: format!("{}-heartbeats", c.indices.locks),
            instance_field: "instance".into(),
            time_field: "heartbeatDate".into(),
            timeout: Duration::from_secs(60),
        })
    })
    .await;
    let hb = fx.proto.config().liveness.clone().unwrap().index;
    fx.cluster()
        .create_index(
            &hb,
            json!({"mappings": {"properties": {"instance": {"type": "keyword"},
                "heartbeatDate": {"type": "date"}}}}),
        )
        .await
        .unwrap();
    // Backdated heartbeats, no sleeping: one worker beat just now, one
    // ten minutes ago (past the 60 s timeout).
    for (worker, ago) in [("worker-alive", 5), ("worker-dead", 600)] {
        let doc = json!({"instance": worker, "heartbeatDate": ts(ChronoDuration::seconds(-ago))});
        fx.put(&hb, worker, doc).await;
    }
    fx.cluster().refresh(&hb).await.unwrap();
    let (dead, dead_src, _) = stage(&fx, "dead", 2).await;
    let (live, live_src, _) = stage(&fx, "live", 2).await;
    for (txn, account, worker) in [
        (&dead, &dead_src, "worker-dead"),
        (&live, &live_src, "worker-alive"),
    ] {
        let lock = json!({"owner": txn, "process_id": worker,
            "created_at": ts(ChronoDuration::minutes(-10))});
        fx.put(&fx.ix.locks, account, lock).await;
    }
    let old = ts(ChronoDuration::minutes(-10));
    for i in 0..HOT_ACCOUNT {
        let doc = json!({"transaction_state": "pending", "src_acct": "hot", "dest_acct": format!("d{i}"),
            "amount": 1, "modification_time": old, "creation_time": old});
        fx.put_txn(&format!("thot{i}"), doc).await;
    }
    // No amount: the tool cannot run it (malformed).
    let doc = json!({"transaction_state": "pending", "src_acct": "m1", "dest_acct": "m2",
        "modification_time": old, "creation_time": old});
    fx.put_txn("tbad", doc).await;
    fx.refresh().await;

    let r = fx.proto.check_reading().await.unwrap();
    let by: BTreeMap<String, Cause> = r
        .stuck
        .iter()
        .map(|s| (s.transaction.id.clone(), s.cause.clone().expect("judged")))
        .collect();
    let cause = |id: &str| {
        by.get(id)
            .unwrap_or_else(|| panic!("{id} not stuck: {by:#?}"))
    };
    assert_eq!(
        (cause(&dead).kind(), cause(&dead).safe_act()),
        (CauseKind::HolderDead, SafeAct::Recover),
        "{by:#?}"
    );
    assert_eq!(
        (cause(&live).word(), cause(&live).safe_act()),
        ("contention", SafeAct::Wait),
        "{by:#?}"
    );
    assert_eq!(
        cause("thot0"),
        &Cause::HotAccount {
            account: "hot".into(),
            stuck: HOT_ACCOUNT
        }
    );
    assert!(
        matches!(
            cause("tbad"),
            Cause::Refused(Refusal::Procedure(ProcedureRefusal::Malformed(_)))
        ),
        "{by:#?}"
    );
    assert_eq!(cause("tbad").safe_act(), SafeAct::Investigate);

    // The groups, judged on the same reading: the dead worker's group
    // recovers, and sorts before the live one's, which waits.
    let (_, reading) = fx.proto.cause_reading().await.unwrap();
    let mut groups = fx.proto.stuck_groups().await.unwrap();
    groups.judge(&reading.evidence());
    let holders: Vec<(&str, &str)> = groups
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Process)
        .map(|g| {
            let c = g.cause.as_ref().expect("judged");
            (g.label.as_str(), c.safe_act().word())
        })
        .collect();
    assert_eq!(
        holders,
        [("worker-dead", "recover"), ("worker-alive", "wait")],
        "{:#?}",
        groups.groups
    );
    let live_group = groups.groups.iter().find(|g| g.label == "worker-alive");
    assert_eq!(
        live_group.and_then(|g| g.cause.as_ref()).map(Cause::word),
        Some("contention")
    );
    let hot = groups
        .groups
        .iter()
        .find(|g| g.kind == GroupKind::Account && g.label == "hot");
    assert_eq!(
        hot.and_then(|g| g.cause.as_ref()).map(Cause::kind),
        Some(CauseKind::HotAccount),
        "{:#?}",
        groups.groups
    );
}
