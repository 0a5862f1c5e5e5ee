//! Time fields in the mapping's own format (issue 15's mapping variety):
//! `date` with `epoch_millis`, `epoch_second`, a custom pattern, a plain
//! `long`, `date_nanos`, and the article scripts' `SSSSSS` (milliseconds
//! padded to six digits). For each, as the application wrote its documents:
//! discovery picks the format, `stuck` reads the ages right (an
//! `epoch_second` value is not 1970), a `pending` recovery and a rollback
//! complete, and what the tool wrote has the application's shape. A format
//! the tool cannot write is refused before the first write, by name.

use crate::fixture::Fx;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use estx::protocol::time_format::TimeFormat;
use estx::protocol::{NewTransfer, RunLimits, TxnState, Verdict};
use serde_json::{json, Value};

/// One way an application maps and writes its times.
struct Case {
    name: &'static str,
    mapping: Value,
    /// The value the application writes for a time (independent of the tool).
    write: fn(DateTime<Utc>) -> Value,
    /// Whether a value the tool wrote has the application's shape.
    shape: fn(&Value) -> bool,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "epoch_millis",
            mapping: json!({"type": "date", "format": "epoch_millis"}),
            write: |t| json!(t.timestamp_millis()),
            shape: |v| v.as_i64().is_some_and(|n| n > 100_000_000_000),
        },
        Case {
            name: "epoch_second",
            mapping: json!({"type": "date", "format": "epoch_second"}),
            write: |t| json!(t.timestamp()),
            shape: |v| v.as_i64().is_some_and(|n| n < 100_000_000_000),
        },
        Case {
            name: "custom pattern",
            mapping: json!({"type": "date", "format": "yyyy/MM/dd HH:mm:ss"}),
            write: |t| json!(t.format("%Y/%m/%d %H:%M:%S").to_string()),
            shape: |v| v.as_str().is_some_and(|s| s.len() == 19 && s.contains('/')),
        },
        Case {
            name: "long",
            mapping: json!({"type": "long"}),
            write: |t| json!(t.timestamp_millis()),
            shape: |v| v.as_i64().is_some_and(|n| n > 100_000_000_000),
        },
        Case {
            name: "date_nanos",
            mapping: json!({"type": "date_nanos"}),
            write: |t| json!(t.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string()),
            shape: |v| {
                v.as_str()
                    .is_some_and(|s| s.ends_with('Z') && s.len() == 30)
            },
        },
        Case {
            name: "article SimpleDateFormat SSSSSS",
            mapping: json!({"type": "date"}),
            write: |t| {
                let ms = t.timestamp_subsec_millis();
                json!(format!("{}.{ms:06}Z", t.format("%Y-%m-%dT%H:%M:%S")))
            },
            shape: |v| {
                v.as_str()
                    .is_some_and(|s| s.len() == 27 && s.contains(".000"))
            },
        },
    ]
}

/// A world whose transactions map both time fields as `mapping`.
async fn world(mapping: &Value) -> Fx {
    let mapping = mapping.clone();
    Fx::with_mappings(
        |_| {},
        move |bodies| {
            let props = bodies[0].1.pointer_mut("/mappings/properties").unwrap();
            props["modification_time"] = mapping.clone();
            props["creation_time"] = mapping;
        },
    )
    .await
}

#[tokio::test]
async fn every_mapped_time_format_is_read_and_written_as_the_application_does() {
    for case in cases() {
        let fx = world(&case.mapping).await;
        let name = case.name;
        let ten_ago = Utc::now() - ChronoDuration::minutes(10);
        let at = (case.write)(ten_ago);
        fx.put(
            &fx.ix.accounts,
            "A",
            json!({"balance": 90, "pending_transactions": ["p"]}),
        )
        .await;
        fx.account("B", 100).await;
        let txn = |state: &str, src: &str, dest: &str| {
            json!({"src_acct": src, "dest_acct": dest, "amount": 10, "transaction_state": state,
                "creation_time": at, "modification_time": at})
        };
        fx.put_txn("p", txn("pending", "A", "B")).await;
        fx.put_txn("c", txn("created", "B", "A")).await;
        fx.refresh().await;

        let d = fx.proto.rediscover().await.unwrap();
        let chosen = d.times.modification.write.clone().unwrap();
        let written = chosen.write(Utc::now());
        assert!(
            (case.shape)(&written),
            "{name}: writes {written} ({chosen})"
        );

        let stuck = fx.proto.stuck_transactions().await.unwrap();
        let now = fx.proto.now().await;
        let mut ages: Vec<(String, i64)> = stuck
            .iter()
            .map(|t| (t.id.clone(), t.age_seconds(now).unwrap_or(-1)))
            .collect();
        ages.sort();
        assert_eq!(ages.len(), 2, "{name}: {ages:?}");
        for (id, age) in &ages {
            assert!((595..=700).contains(age), "{name}: {id} is {age}s old");
        }

        let r = fx.proto.recover("p", false).await;
        assert!(
            matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
            "{name}: {:?}",
            r.verdict
        );
        assert_eq!(
            (fx.acct("A").await.balance, fx.acct("B").await.balance),
            (90, 110),
            "{name}"
        );
        let r = fx.proto.rollback("c", false).await;
        assert!(
            matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)),
            "{name}: {:?}",
            r.verdict
        );
        for id in ["p", "c"] {
            let src = fx.source(&fx.ix.transactions, id).await;
            let m = &src["modification_time"];
            assert!((case.shape)(m), "{name}: {id} written as {m}");
            assert_ne!(*m, at, "{name}: {id} not stamped");
        }
    }
}

#[tokio::test]
async fn existing_documents_decide_when_the_mapping_accepts_several_formats() {
    let fx =
        world(&json!({"type": "date", "format": "strict_date_optional_time||epoch_millis"})).await;
    let at = json!((Utc::now() - ChronoDuration::minutes(10)).timestamp_millis());
    fx.account("A", 100).await;
    fx.account("B", 100).await;
    fx.put_txn(
        "c",
        json!({"src_acct": "A", "dest_acct": "B", "amount": 10, "transaction_state": "created",
            "creation_time": at, "modification_time": at}),
    )
    .await;
    fx.refresh().await;
    let d = fx.proto.rediscover().await.unwrap();
    assert_eq!(d.times.modification.seen, Some(TimeFormat::EpochMillis));
    assert_eq!(d.times.modification.write, Ok(TimeFormat::EpochMillis));
    let r = fx.proto.rollback("c", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{:?}",
        r.verdict
    );
    let m = &fx.source(&fx.ix.transactions, "c").await["modification_time"];
    assert!(m.is_i64(), "written as {m}");
}

#[tokio::test]
async fn a_time_format_the_tool_cannot_write_is_refused_before_the_first_write() {
    let fx = Fx::with_mappings(
        |_| {},
        |bodies| {
            let props = bodies[0].1.pointer_mut("/mappings/properties").unwrap();
            props["creation_time"] = json!({"type": "date", "format": "dd.MM.yyyy HH:mm"});
        },
    )
    .await;
    fx.account("A", 100).await;
    fx.account("B", 100).await;
    let req = NewTransfer {
        id: Some("t".into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 10,
    };
    let r = fx.proto.transfer(&req, true, RunLimits::default()).await;
    let Verdict::Failed(e) = &r.verdict else {
        panic!("{:?}", r.verdict)
    };
    assert!(
        e.to_string()
            .contains("`creation_time` is mapped `date` with format `dd.MM.yyyy HH:mm`"),
        "{e}"
    );
    assert!(
        fx.cluster()
            .get(&fx.ix.transactions, "t")
            .await
            .unwrap()
            .is_none(),
        "nothing written"
    );
    assert_eq!(fx.acct("A").await.balance, 100);
}
