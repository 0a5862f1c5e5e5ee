//! A camelCase deployment (a Java application's names and upper-case
//! states) with a schema map in the profile: every command works on the
//! application's documents and leaves them in the application's names and
//! values; without the map the tool refuses to write and `doctor` proposes
//! the map to paste.

use super::*;
use estx::protocol::schema::{Field, Schema};
use estx::protocol::TxnState;

/// The map of the Java application, as a profile names it.
const JAVA_MAP: &str = r#"
[profiles.java.schema]
transaction_state = "transactionState"
src_acct = "srcAcct"
dest_acct = "dstAcct"
creation_time = "creationTime"
modification_time = "modificationTime"
pending_transactions = "pendingTransactions"
created_at = "createdAt"

[profiles.java.schema.states]
created = "CREATED"
pending = "PENDING"
committed = "COMMITTED"
terminating = "TERMINATING"
finished = "FINISHED"
rolled-back = "ROLLED_BACK"
"#;

/// The article's names the application does not use: none may appear in
/// its documents (the tool's own fields, `pending_deltas` and the reverse
/// links, are documented additions).
const ARTICLE_NAMES: [&str; 7] = [
    "transaction_state",
    "src_acct",
    "dest_acct",
    "creation_time",
    "modification_time",
    "pending_transactions",
    "created_at",
];

fn java_schema() -> Schema {
    let table: toml::Table = toml::from_str(JAVA_MAP).unwrap();
    Schema::from_table(table["profiles"]["java"]["schema"].as_table().unwrap()).unwrap()
}

/// Indices mapped as the Java application maps them, and its documents.
fn java_world() -> World {
    java_world_with_times("date")
}

/// [`java_world`] with `modificationTime` mapped as `time_type`.
fn java_world_with_times(time_type: &str) -> World {
    let w = World::bare();
    let create = |index: &str, props: Value| {
        let body = json!({"mappings": {"properties": props}}).to_string();
        let (status, text) = common::http("PUT", &format!("{}/{index}", w.g.url), Some(&body));
        assert_eq!(status, 200, "{text}");
    };
    create(
        &w.ix.transactions,
        json!({"transactionState": {"type": "keyword"}, "srcAcct": {"type": "keyword"},
               "dstAcct": {"type": "keyword"}, "amount": {"type": "long"},
               "creationTime": {"type": "date"}, "modificationTime": {"type": time_type}}),
    );
    create(
        &w.ix.accounts,
        json!({"balance": {"type": "long"}, "pendingTransactions": {"type": "keyword"}}),
    );
    create(
        &w.ix.locks,
        json!({"owner": {"type": "keyword"}, "createdAt": {"type": "date"}}),
    );
    let account = |id: &str, balance: i64, pending: &[&str]| {
        w.put(
            &w.ix.accounts,
            id,
            &json!({"balance": balance, "pendingTransactions": pending}),
        );
    };
    // t2 (A->B 50) is committed: applied to both accounts.
    account("A", 950, &["t2"]);
    account("B", 1050, &["t2"]);
    account("C", 1000, &[]);
    account("D", 1000, &[]);
    let txn = |id: &str, state: &str, src: &str, dst: &str, amount: i64, min: i64| {
        w.put(
            &w.ix.transactions,
            id,
            &json!({"srcAcct": src, "dstAcct": dst, "amount": amount, "transactionState": state,
                    "creationTime": ago(min + 1), "modificationTime": ago(min),
                    "appNote": "kept"}),
        );
    };
    txn("t1", "PENDING", "A", "B", 100, 10); // pending, applied nowhere yet
    txn("t2", "COMMITTED", "A", "B", 50, 10);
    txn("t3", "CREATED", "C", "D", 30, 10);
    txn("t5", "FINISHED", "C", "D", 0, 20);
    // A value the map does not name, and the article's spelling of a state
    // this application writes otherwise: both unknown, never acted on.
    txn("t6", "PAUSED", "C", "D", 5, 10);
    txn("t7", "pending", "C", "D", 5, 10);
    // A lock of the finished t5, as the application writes its locks.
    w.put(
        &w.ix.locks,
        "invoice-5",
        &json!({"owner": "t5", "createdAt": ago(20)}),
    );
    // The audit trail's index (the three others exist: nothing else made).
    w.run(&["init"]).code(0);
    w.refresh();
    w
}

/// Runs the binary with the `java` profile (the map) in force.
fn java(w: &World, args: &[&str]) -> Out {
    w.g.run_env(&[("ESTX_PROFILE", "java")], args)
}

fn write_profile(w: &World) {
    let dir = w.g.log.with_file_name("config").join("estx-tui");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), JAVA_MAP).unwrap();
}

/// Every document of the three indices keeps the application's names.
fn assert_application_names(w: &World) {
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks] {
        common::refresh(&w.g.url, index);
        let (status, body) = common::http(
            "POST",
            &w.url(index, "_search"),
            Some(r#"{"size":100,"query":{"match_all":{}}}"#),
        );
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        for hit in v["hits"]["hits"].as_array().unwrap() {
            let src = hit["_source"].as_object().unwrap();
            for name in ARTICLE_NAMES {
                assert!(!src.contains_key(name), "{name} written into {hit}");
            }
        }
    }
}

fn raw_state(w: &World, id: &str) -> String {
    w.txn(id)["transactionState"].as_str().unwrap().to_string()
}

#[test]
fn without_the_map_writes_are_refused_and_doctor_proposes_it() {
    let w = java_world();
    let before: Vec<Value> = ["t1", "t2", "t3"].iter().map(|t| w.txn(t)).collect();
    let out = w.run(&["recover", "--all-stuck"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("[profiles.NAME.schema]"), "{out}");
    w.run(&["rollback", "t3", "--force"])
        .stderr_has("transactionState");
    let after: Vec<Value> = ["t1", "t2", "t3"].iter().map(|t| w.txn(t)).collect();
    assert_eq!(before, after, "nothing written without the map");

    let out = w.run(&["doctor"]);
    out.code(3)
        .stdout_has("transaction_state = \"transactionState\"")
        .stdout_has("dest_acct = \"dstAcct\"")
        .stdout_has("pending_transactions = \"pendingTransactions\"")
        .stdout_has("created_at = \"createdAt\"")
        .stdout_has("pending = \"PENDING\"")
        .stdout_has("rolled-back = \"ROLLED_BACK\"")
        .stdout_has("values no state matches (left unknown): PAUSED");
    let json = w.run(&["doctor", "--json"]).json();
    let proposal = json["schema"]["proposal"].as_str().expect("a proposal");
    let table: toml::Table = toml::from_str(proposal).unwrap();
    let proposed = Schema::from_table(table["profiles"]["NAME"]["schema"].as_table().unwrap());
    assert_eq!(proposed.unwrap(), java_schema(), "{proposal}");
}

#[test]
fn with_the_map_every_command_works_in_the_applications_names() {
    let w = java_world();
    write_profile(&w);

    // doctor: the map in force and what each name resolved to; nothing to
    // propose.
    let d = java(&w, &["doctor", "--json"]).json();
    assert_eq!(d["schema"]["proposal"], Value::Null, "{d}");
    let field = |c: &str| {
        d["schema"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["canonical"] == c)
            .unwrap()
            .clone()
    };
    assert_eq!(field("transaction_state")["name"], "transactionState");
    assert_eq!(field("transaction_state")["resolved"], "keyword: exact");
    assert_eq!(d["schema"]["unknown_states"], json!(["PAUSED", "pending"]));
    // Every field fits, but two values on the cluster are unmapped: a
    // warning saying which and how each could be mapped.
    java(&w, &["doctor"])
        .code(1)
        .stdout_has("transaction_state      transactionState")
        .stdout_has("not in the map (shown as unknown, never acted on): PAUSED, pending")
        .stdout_has(
            "warn  the map leaves state values on the cluster unmapped: `PAUSED`, `pending`",
        )
        .stdout_has("under [profiles.java.schema.states]: `PAUSED` matches no state")
        .stdout_has("`pending` spells pending, which the map writes `PENDING`");

    // Reads: list, show, locks, check, the dashboard's poll.
    let out = java(&w, &["list", "--json"]);
    let rows = out.code(0).json();
    assert_eq!(ids(&rows), set(&["t1", "t2", "t3", "t6", "t7"]), "{out}");
    let row = |id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(row("t1")["state"], "pending", "{out}");
    assert_eq!(row("t1")["src_acct"], "A", "{out}");
    assert_eq!(row("t2")["dest_acct"], "B", "{out}");
    assert_eq!(row("t1")["stuck"], true, "{out}");
    assert_eq!(row("t7")["stuck"], false, "{out}");
    let show = java(&w, &["show", "t2", "--json"]).json();
    assert_eq!(show["transaction"]["state"], "committed", "{show}");
    java(&w, &["show", "t6"]).code(0).stdout_has("PAUSED");
    let locks = java(&w, &["locks", "--json"]).json();
    assert_eq!(locks[0]["owner"], "t5", "{locks}");
    assert_eq!(locks[0]["stale"], true, "{locks}");
    assert!(locks[0]["age_seconds"].as_i64().unwrap() >= 1190, "{locks}");
    let check = java(&w, &["check", "--json"]);
    let stuck = check.json()["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "stuck")
        .unwrap()["count"]
        .clone();
    assert_eq!(stuck, 3, "{check}");
    let config = ProtocolConfig {
        indices: w.ix.indices(),
        schema: java_schema(),
        ..ProtocolConfig::default()
    };
    let proto = Protocol::new(
        Cluster::connect(&ConnectOptions::new(&w.g.url)).unwrap(),
        config,
    );
    let snap = w.block(proto.poll_snapshot(100)).unwrap();
    let count = |s: TxnState| {
        snap.state_counts
            .iter()
            .find(|c| c.state.as_ref() == Some(&s))
            .map(|c| c.count)
    };
    assert_eq!(count(TxnState::Pending), Some(1), "{:?}", snap.state_counts);
    assert_eq!(
        count(TxnState::Committed),
        Some(1),
        "{:?}",
        snap.state_counts
    );
    assert_eq!(count(TxnState::Created), Some(1), "{:?}", snap.state_counts);
    assert_eq!(
        count(TxnState::Unknown("PAUSED".into())),
        Some(1),
        "{:?}",
        snap.state_counts
    );

    // Writes: release-lock, rollback, recover --all-stuck, a transfer.
    java(&w, &["release-lock", "invoice-5"])
        .code(0)
        .stdout_has("released");
    java(&w, &["rollback", "t3"]).code(0);
    assert_eq!(raw_state(&w, "t3"), "ROLLED_BACK");
    w.refresh();
    java(&w, &["recover", "--all-stuck"]).code(0);
    assert_eq!(raw_state(&w, "t1"), "FINISHED");
    assert_eq!(raw_state(&w, "t2"), "FINISHED");
    java(&w, &["transfer", "A", "B", "10", "--id", "t8", "--locks"]).code(0);
    assert_eq!(raw_state(&w, "t8"), "FINISHED");
    assert_eq!(w.txn("t8")["srcAcct"], "A");
    // Unknown states untouched.
    assert_eq!(raw_state(&w, "t6"), "PAUSED");
    assert_eq!(raw_state(&w, "t7"), "pending");
    assert_eq!(w.txn("t1")["appNote"], "kept");

    // Money conserved; nothing pending; the application's names kept.
    let balance = |a: &str| w.acct(a)["balance"].as_i64().unwrap();
    let balances: Vec<i64> = ["A", "B", "C", "D"].iter().map(|a| balance(a)).collect();
    assert_eq!(balances, vec![840, 1160, 1000, 1000]);
    for a in ["A", "B", "C", "D"] {
        assert_eq!(w.acct(a)["pendingTransactions"], json!([]), "{a}");
    }
    assert_application_names(&w);
    assert!(w.source(&w.ix.locks, "invoice-5").is_none());

    // With the unknown documents gone, the audit is clean.
    for t in ["t6", "t7"] {
        let (status, body) = common::http(
            "DELETE",
            &w.url(&w.ix.transactions, &format!("_doc/{t}")),
            None,
        );
        assert_eq!(status, 200, "{body}");
    }
    w.refresh();
    java(&w, &["audit"]).code(0);
    java(&w, &["check"]).code(0);
    let doctor = java(&w, &["doctor"]);
    assert!(!doctor.stdout.contains("unmapped"), "{doctor}");
    // The map names every field the tool reads.
    assert_eq!(java_schema().name(Field::LockCreated), "createdAt");
}

/// Every message an operator reads about a field (refusals, `audit`'s
/// findings, `doctor`'s warnings) names it as the application does, and an
/// unknown state as the application wrote it.
#[test]
fn messages_name_fields_in_the_applications_names() {
    let w = java_world_with_times("keyword");
    write_profile(&w);
    // t9: no `modificationTime`; t10 moves
    // money from E, whose `pendingTransactions` is not an array.
    w.put(
        &w.ix.transactions,
        "t9",
        &json!({"srcAcct": "C", "dstAcct": "D", "amount": 7,
                "transactionState": "PENDING", "creationTime": ago(11)}),
    );
    w.put(
        &w.ix.transactions,
        "t10",
        &json!({"srcAcct": "E", "dstAcct": "D", "amount": 5, "transactionState": "PENDING",
                "creationTime": ago(11), "modificationTime": ago(10)}),
    );
    w.put(
        &w.ix.accounts,
        "E",
        &json!({"balance": 1000, "pendingTransactions": 5}),
    );
    w.refresh();
    let article = |out: &Out| {
        for name in ARTICLE_NAMES {
            assert!(!out.stdout.contains(&format!("`{name}`")), "{name}: {out}");
            assert!(!out.stderr.contains(&format!("`{name}`")), "{name}: {out}");
        }
        assert!(!out.stdout.contains("`unmapped:"), "{out}");
    };

    let out = java(&w, &["rollback", "t9", "--force"]);
    assert_ne!(out.code, 0, "{out}");
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("`modificationTime` is missing"), "{out}");
    article(&out);
    let out = java(&w, &["rollback", "t10", "--force"]);
    assert_ne!(out.code, 0, "{out}");
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(
        text.contains("`pendingTransactions` is not an array"),
        "{out}"
    );
    article(&out);

    let out = java(&w, &["audit"]);
    // t9's only problem is its modification time: undated (counted as
    // stuck), not malformed, whatever the application calls the field.
    out.stdout_has("`modificationTime` is missing: its age is unknown, so it counts as stuck")
        .stdout_has("`pendingTransactions` is not an array")
        .stdout_has("`transactionState` holds an unknown state `PAUSED`")
        .stdout_has("`transactionState` holds an unknown state `pending`");
    article(&out);

    let out = java(&w, &["doctor"]);
    out.stdout_has("`modificationTime` is `keyword`, not a date");
    article(&out);
}

/// With a profile in use that has no map, `doctor` proposes the map as that
/// profile's table, ready to paste.
#[test]
fn the_proposal_names_the_profile_in_use() {
    let w = java_world();
    let dir = w.g.log.with_file_name("config").join("estx-tui");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[profiles.payments]\n").unwrap();
    let run = |args: &[&str]| w.g.run_env(&[("ESTX_PROFILE", "payments")], args);
    let out = run(&["doctor"]);
    out.code(3)
        .stdout_has("[profiles.payments.schema]")
        .stdout_has("[profiles.payments.schema.states]")
        .stdout_has("paste into the profile):");
    assert!(!out.stdout.contains("[profiles.NAME.schema]\n"), "{out}");
    assert!(!out.stdout.contains("NAME being its name"), "{out}");
    let json = run(&["doctor", "--json"]).json();
    let proposal = json["schema"]["proposal"].as_str().expect("a proposal");
    let table: toml::Table = toml::from_str(proposal).unwrap();
    let proposed = Schema::from_table(table["profiles"]["payments"]["schema"].as_table().unwrap());
    assert_eq!(proposed.unwrap(), java_schema(), "{proposal}");
}
