//! The reading and the judging of every lock shape.

use super::*;
use crate::protocol::read::rules::urgency;
use crate::protocol::time::format_timestamp;
use crate::protocol::time::parse_timestamp;
use crate::protocol::transaction::Transaction;
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

fn lock(v: Value) -> LockInfo {
    lock_at("A", v)
}

fn lock_at(resource: &str, v: Value) -> LockInfo {
    LockInfo::from_source(resource, v.as_object().unwrap())
}

fn at(s: &str) -> DateTime<Utc> {
    parse_timestamp(&json!(s)).unwrap()
}

const NO_BEAT: Heartbeat = Heartbeat::NotConfigured;

#[test]
fn reads_every_shape() {
    let ours = lock(
        json!({"owner":"t1","process_id":"w:1","created_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:02:00Z"}),
    );
    assert_eq!(ours.owner.as_deref(), Some("t1"));
    assert_eq!(ours.shape, LockShape::Own);
    assert!(ours.problems.is_empty());
    assert_eq!(ours.holder_label(), "txn t1 (w:1)");
    assert_eq!(
        lock(json!({"process_id":123})).holder_label(),
        "process 123"
    );
    assert_eq!(
        lock(json!({"lock_type":"shared","lock_count":2})).holder_label(),
        "shared lock x2"
    );
    assert_eq!(
        lock(json!({"lock_type":"exclusive"})).holder_label(),
        "exclusive lock"
    );
    assert_eq!(lock(json!({})).holder_label(), "global lock");
    let kestra = lock_at(
        "execution_e1",
        json!({"category":"execution","id":"e1","owner":"9b2e-instance","createdAt":"2026-01-01T00:00:00Z"}),
    );
    assert_eq!(kestra.holder_label(), "instance 9b2e-instance");
    assert_eq!(kestra.holder_id(), Some("9b2e-instance"));
    assert_eq!(kestra.created_at, Some(at("2026-01-01T00:00:00Z")));
    assert_eq!(kestra.expires_at, None);
}

#[test]
fn times_are_read_under_the_names_applications_use() {
    for name in shape::CREATED_NAMES {
        let l = lock(json!({"process_id": 1, name: "2026-01-01T00:00:00Z"}));
        assert_eq!(l.created_at, Some(at("2026-01-01T00:00:00Z")), "{name}");
        assert_eq!(l.shape, LockShape::GuideDocument, "{name}");
    }
    for name in shape::LEASE_NAMES {
        let l = lock(json!({"owner": "t", name: "2026-01-01T00:00:00Z"}));
        assert_eq!(l.expires_at, Some(at("2026-01-01T00:00:00Z")), "{name}");
        assert_eq!(l.shape, LockShape::Own, "{name}");
    }
    let odd = lock(json!({"owner": "t", "createdAt": "soon", "timestamp": 1767225600000i64}));
    assert_eq!(odd.created_at, Some(at("2026-01-01T00:00:00Z")));
    assert_eq!(odd.problems.len(), 1, "{:?}", odd.problems);
}

fn owner(state: &str, minutes_ago: i64, now: DateTime<Utc>) -> Transaction {
    let t = format_timestamp(now - chrono::Duration::minutes(minutes_ago));
    Transaction::from_source(
        "t1",
        json!({"src_acct":"A","dest_acct":"B","amount":1,"transaction_state":state,
               "creation_time":t,"modification_time":t})
        .as_object()
        .unwrap(),
    )
}

#[test]
fn staleness_rules() {
    let now = at("2026-01-01T00:05:00Z");
    let config = &ProtocolConfig::default();
    let l = lock(json!({"owner":"t1","expires_at":"2026-01-01T00:10:00Z"}));
    let pending = owner("pending", 1, now);
    assert_eq!(
        l.staleness(Owner::Is(&pending), NO_BEAT, now, config),
        Staleness::Live
    );
    let finished = owner("finished", 0, now);
    assert!(l
        .staleness(Owner::Is(&finished), NO_BEAT, now, config)
        .is_stale());
    let expired = lock(json!({"owner":"t1","expires_at":"2026-01-01T00:01:00Z"}));
    assert!(expired
        .staleness(Owner::Is(&pending), NO_BEAT, now, config)
        .is_stale());
    assert!(matches!(
        lock(json!({"process_id":1})).staleness(Owner::Missing, NO_BEAT, now, config),
        Staleness::Unknown(_)
    ));
    assert!(matches!(
        l.staleness(Owner::Unreadable, NO_BEAT, now, config),
        Staleness::Unknown(UnknownReason::OwnerUnreadable { .. })
    ));
}

/// An owner that names no transaction is no evidence: Kestra's owner is a
/// server instance, never found among the transactions.
#[test]
fn an_owner_missing_from_the_transactions_is_not_evidence() {
    let now = at("2026-01-01T02:00:00Z");
    let config = &ProtocolConfig::default();
    let kestra = lock_at(
        "execution_e1",
        json!({"category":"execution","id":"e1","owner":"9b2e","createdAt":"2026-01-01T00:00:00Z"}),
    );
    let own =
        lock(json!({"owner":"t-gone","process_id":"h:1","expires_at":"2026-01-01T02:01:00Z"}));
    for l in [&kestra, &own] {
        let s = l.staleness(Owner::Missing, NO_BEAT, now, config);
        assert!(matches!(s, Staleness::Unknown(_)), "{s:?}");
    }
    let Staleness::Unknown(why) = kestra.staleness(Owner::Missing, NO_BEAT, now, config) else {
        unreachable!()
    };
    assert_eq!(
        why.to_string(),
        "held by instance 9b2e, age 2h00m; cannot tell whether it is alive"
    );
}

#[test]
fn every_shape_without_evidence_is_unknown() {
    let now = at("2026-01-01T02:00:00Z");
    let config = &ProtocolConfig::default();
    for (r, v) in [
        ("global", json!({})),
        ("1", json!({"process_id": 123})),
        ("/a", json!({"lock_type": "exclusive"})),
        ("/b", json!({"lock_type": "shared", "lock_count": 2})),
        ("x", json!({"holder": "someone", "since": 3})),
        (
            "execution_e1",
            json!({"category":"execution","id":"e1","owner":"9b2e"}),
        ),
    ] {
        let l = lock_at(r, v);
        let s = l.staleness(Owner::Missing, NO_BEAT, now, config);
        assert!(matches!(s, Staleness::Unknown(_)), "{r}: {s:?}");
    }
}

fn with_liveness() -> ProtocolConfig {
    ProtocolConfig {
        liveness: Some(LivenessSource {
            index: "hb".into(),
            instance_field: "instance".into(),
            time_field: "at".into(),
            timeout: Duration::from_secs(60),
        }),
        ..ProtocolConfig::default()
    }
}

#[test]
fn a_configured_liveness_source_decides_for_process_holders() {
    let now = at("2026-01-01T02:00:00Z");
    let config = &with_liveness();
    let kestra = lock_at(
        "execution_e1",
        json!({"category":"execution","id":"e1","owner":"9b2e","createdAt":"2026-01-01T00:00:00Z"}),
    );
    let fresh = Heartbeat::Seen(at("2026-01-01T01:59:30Z"));
    let old = Heartbeat::Seen(at("2026-01-01T01:58:00Z"));
    assert_eq!(
        kestra.staleness(Owner::Missing, fresh, now, config),
        Staleness::Live
    );
    match kestra.staleness(Owner::Missing, old, now, config) {
        Staleness::Stale(why @ StaleReason::HolderDead { .. }) => assert_eq!(
            why.to_string(),
            "instance 9b2e is dead: no heartbeat for 2m00s, longer than the 1m00s timeout"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        kestra.staleness(Owner::Missing, Heartbeat::Missing, now, config),
        Staleness::Unknown(UnknownReason::NoHeartbeat { .. })
    ));
    // A heartbeat without a configured source is ignored.
    assert!(matches!(
        kestra.staleness(Owner::Missing, old, now, &ProtocolConfig::default()),
        Staleness::Unknown(UnknownReason::HolderUnverified { .. })
    ));
    // A lock naming no holder has no heartbeat to ask about.
    let global = lock_at("global", json!({}));
    assert!(matches!(
        global.staleness(Owner::Missing, old, now, config),
        Staleness::Unknown(UnknownReason::NoHolder { .. })
    ));
}

#[test]
fn a_lock_is_stale_exactly_when_its_owner_is_stuck() {
    let now = at("2026-01-01T02:00:00Z");
    let config = &ProtocolConfig::default();
    let l = lock(json!({"owner":"t1"}));
    for state in ["created", "pending", "committed", "terminating", "odd"] {
        for minutes in [0, 1, 2, 3, 90] {
            let t = owner(state, minutes, now);
            assert_eq!(
                l.staleness(Owner::Is(&t), NO_BEAT, now, config).is_stale(),
                urgency(&t, now, config).is_stuck(),
                "{state} {minutes}m"
            );
        }
    }
    let t = owner("pending", 90, now);
    match l.staleness(Owner::Is(&t), NO_BEAT, now, config) {
        Staleness::Stale(why) => {
            let why = why.to_string();
            assert!(why.contains("stuck") && why.contains("1h30m"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}
