use super::*;
use crate::cluster::Translate;
use crate::protocol::Indices;
use serde_json::{json, Map, Value};

fn java() -> Schema {
    let table: toml::Table = toml::from_str(
        r#"
        transaction_state = "transactionState"
        src_acct = "srcAcct"
        dest_acct = "dstAcct"
        modification_time = "modificationTime"
        creation_time = "creationTime"
        pending_transactions = "pendingTransactions"
        [states]
        pending = "PENDING"
        committed = "COMMITTED"
        created = "CREATED"
        finished = "FINISHED"
        terminating = "TERMINATING"
        rolled-back = "ROLLED_BACK"
        "#,
    )
    .unwrap();
    Schema::from_table(&table).unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn documents_change_names_at_the_boundary_both_ways_in_order() {
    let b = Boundary::new(&java(), &Indices::default()).unwrap();
    let app = obj(
        json!({"note": 1, "transactionState": "PENDING", "srcAcct": "A",
        "dstAcct": "B", "amount": 5, "modificationTime": "x", "transaction_state": "theirs"}),
    );
    let canonical = b.read("transactions", app.clone());
    let keys: Vec<&str> = canonical.keys().map(String::as_str).collect();
    assert_eq!(
        &keys[..6],
        [
            "note",
            "transaction_state",
            "src_acct",
            "dest_acct",
            "amount",
            "modification_time"
        ]
    );
    assert_eq!(canonical["transaction_state"], "pending");
    assert_eq!(b.write("transactions", &canonical), app);
    // Other indices (the audit trail, heartbeats) are never touched.
    assert_eq!(b.read("estx-audit", app.clone()), app);
}

#[test]
fn unmapped_state_values_stay_unknown() {
    let s = java();
    assert_eq!(s.state_from_app("PAUSED"), "PAUSED");
    // The article's spelling, which this application does not write, is
    // never taken for the state.
    assert_eq!(s.state_from_app("pending"), "unmapped:pending");
    assert_eq!(s.state_to_app("unmapped:pending"), "pending");
    assert_eq!(s.state_to_app("committed"), "COMMITTED");
}

#[test]
fn the_default_map_translates_nothing_and_bad_tables_are_refused() {
    assert!(Boundary::new(&Schema::default(), &Indices::default()).is_none());
    let bad = |t: &str| Schema::from_table(&toml::from_str(t).unwrap()).unwrap_err();
    assert!(bad("state = \"x\"").0.contains("unknown field"));
    assert!(bad("src_acct = \"a\"\ndest_acct = \"a\"")
        .0
        .contains("both named"));
    assert!(bad("[states]\npending = \"P\"\ncommitted = \"P\"")
        .0
        .contains("both written"));
    assert!(bad("[states]\npaused = \"P\"").0.contains("unknown state"));
}

#[test]
fn proposals_find_camel_case_and_upper_case_states() {
    let mapped = [
        "transactionState",
        "srcAcct",
        "dstAcct",
        "amount",
        "creationTime",
        "modificationTime",
        "balance",
        "pendingTransactions",
        "owner",
        "createdAt",
    ];
    let p = propose::propose(
        &Schema::default(),
        |_, n| mapped.contains(&n),
        &["PENDING".into(), "COMMITTED".into(), "PAUSED".into()],
    );
    assert_eq!(p.schema.name(Field::State), "transactionState");
    assert_eq!(p.schema.name(Field::Destination), "dstAcct");
    assert_eq!(p.schema.name(Field::Pending), "pendingTransactions");
    assert_eq!(p.schema.name(Field::LockCreated), "createdAt");
    assert_eq!(p.schema.name(Field::LockExpires), "expires_at");
    assert_eq!(p.schema.state_value("rolled-back"), "ROLLED_BACK");
    assert_eq!(p.unmatched_states, ["PAUSED"]);
    assert!(p.differs(&Schema::default()));
    let toml_text = p.schema.to_toml("java");
    let table: toml::Table = toml::from_str(&toml_text).unwrap();
    let back = Schema::from_table(table["profiles"]["java"]["schema"].as_table().unwrap());
    assert_eq!(back.unwrap(), p.schema);
}
