//! Values longer than a keyword field's `ignore_above` (256 characters on an
//! auto-created index's `.keyword`): the field does not index them, so a
//! `terms` query on it misses them. The searches for given accounts and
//! lock owners find them all the same: by phrase on the analysed field, or,
//! on a bare keyword with `ignore_above`, by scanning and checking each hit.

use crate::fixture::Fx;
use serde_json::{json, Value};

/// A 300-character id.
fn long_id(prefix: &str) -> String {
    format!("{prefix}-{}", "x".repeat(300 - prefix.len() - 1))
}

/// Sets `field`'s mapping in `index`'s body.
fn remap(body: &mut Value, field: &str, def: Value) {
    body["mappings"]["properties"][field] = def;
}

/// An in-flight transaction naming a 300-character source account that does
/// not exist: the audit finds it although `src_acct` (a keyword with
/// `ignore_above: 256`) does not index it.
#[tokio::test]
async fn the_audit_finds_a_transaction_naming_a_missing_account_of_300_characters() {
    let fx = Fx::with_mappings(
        |_| {},
        |m| {
            remap(
                &mut m[0].1,
                "src_acct",
                json!({"type": "keyword", "ignore_above": 256}),
            )
        },
    )
    .await;
    let acct = long_id("acct");
    fx.account("acct-b", 100).await;
    let t = estx::protocol::time::format_timestamp(chrono::Utc::now());
    fx.put_txn(
        "t-long",
        json!({"src_acct": acct, "dest_acct": "acct-b", "amount": 10,
            "transaction_state": "created", "creation_time": t, "modification_time": t}),
    )
    .await;
    fx.refresh().await;
    let report = fx.proto.audit(None, false).await.unwrap();
    let found: Vec<(&str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.kind.as_str(), f.id.as_str()))
        .collect();
    assert!(
        found.contains(&("missing_account", "t-long")),
        "{:?}",
        report.findings
    );
}

/// A lock whose owner is a 300-character transaction id, on a locks index
/// mapping `owner` as `text` with a `.keyword` (`ignore_above: 256`): the
/// search for the transaction's locks finds it (and not the lock of an
/// owner whose id only shares words with it), and an operator release of
/// the transaction's locks releases it.
#[tokio::test]
async fn the_locks_of_a_transaction_with_a_300_character_id_are_found() {
    let fx = Fx::with_mappings(
        |_| {},
        |m| {
            let def = json!({"type": "text",
                "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}});
            remap(&mut m[2].1, "owner", def);
        },
    )
    .await;
    let owner = long_id("txn");
    let other = format!("{owner} 2");
    for (resource, o) in [("R1", &owner), ("R2", &other)] {
        fx.put(
            &fx.ix.locks,
            resource,
            json!({"owner": o, "process_id": "w"}),
        )
        .await;
    }
    fx.refresh().await;
    let (ids, summary) = fx.proto.lock_ids_owned_by(&owner).await.unwrap();
    assert_eq!(ids, ["R1"]);
    assert!(!summary.coverage.is_partial());
    let released = fx
        .proto
        .release_transaction_locks(&owner, true)
        .await
        .unwrap();
    let resources: Vec<&str> = released.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(resources, ["R1"]);
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "R1")
        .await
        .unwrap()
        .is_none());
    assert!(fx
        .cluster()
        .get(&fx.ix.locks, "R2")
        .await
        .unwrap()
        .is_some());
}
