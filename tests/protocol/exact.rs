//! Numbers kept exactly: every field the tool does not change keeps the text
//! the application wrote through a transfer, a recovery and a rollback (read
//! back as raw JSON from the server), and a balance the tool cannot compute
//! with exactly is refused before step 1, with the reason.

use crate::fixture::Fx;
use estx::protocol::read::doctor::Severity;
use estx::protocol::{NewTransfer, ProcedureRefusal, RunLimits, TxnState, Verdict};
use serde_json::{json, Value};

/// Fields an application keeps beside the protocol's: an integer beyond 64
/// bits and a decimal with 23 significant digits (f64 keeps 17).
const EXTRA: [&str; 2] = [
    r#""limit":123456789012345678901234567890"#,
    r#""rate":0.12345678901234567890123"#,
];

/// The accounts and transactions map the extra fields as `double` (an
/// integer beyond `long` is refused by a `long` field), and the balance too
/// if `money_as_double` (as some applications store money).
async fn world(money_as_double: bool) -> Fx {
    Fx::with_mappings(
        |_| {},
        |bodies| {
            let mut doubles = vec!["limit", "rate"];
            if money_as_double {
                doubles.push("balance");
            }
            for (_, body) in bodies.iter_mut().take(2) {
                let props = body["mappings"]["properties"].as_object_mut().unwrap();
                for field in &doubles {
                    props.insert(field.to_string(), json!({"type": "double"}));
                }
            }
        },
    )
    .await
}

fn http() -> reqwest::Client {
    reqwest::Client::new()
}

/// Writes `body` as it is, bytes and all, bypassing the tool's JSON.
async fn raw_put(fx: &Fx, index: &str, id: &str, body: String) {
    let url = format!("{}/{index}/_doc/{id}?refresh=true", fx.url);
    let answer = http()
        .put(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{:?}", answer.text().await);
}

/// The stored `_source` as the server sends it (raw text).
async fn raw_source(fx: &Fx, index: &str, id: &str) -> String {
    let url = format!("{}/{index}/_doc/{id}", fx.url);
    let text = http().get(url).send().await.unwrap().text().await.unwrap();
    let at = text
        .find(r#""_source":"#)
        .unwrap_or_else(|| panic!("{text}"));
    text[at..].to_string()
}

/// An account holding `balance` beside the extra fields, written raw.
async fn raw_account(fx: &Fx, id: &str, balance: &str) {
    let body = format!(
        r#"{{"balance":{balance},"pending_transactions":[],{}}}"#,
        EXTRA.join(",")
    );
    raw_put(fx, &fx.ix.accounts, id, body).await;
}

fn assert_exact(source: &str, what: &str) {
    for field in EXTRA {
        assert!(source.contains(field), "{what} lost {field}: {source}");
    }
}

/// `_seq_no` read raw (a GET of an index without `_source` has none to decode).
async fn seq_no(fx: &Fx, index: &str, id: &str) -> i64 {
    let url = format!("{}/{index}/_doc/{id}", fx.url);
    let answer: Value = http().get(url).send().await.unwrap().json().await.unwrap();
    answer["_seq_no"]
        .as_i64()
        .unwrap_or_else(|| panic!("{answer}"))
}

fn transfer(tag: &str, amount: i64) -> NewTransfer {
    NewTransfer {
        id: Some(tag.into()),
        src: "A".into(),
        dest: "B".into(),
        amount,
    }
}

#[tokio::test]
async fn fields_the_tool_does_not_change_keep_their_exact_text() {
    let fx = world(false).await;
    raw_account(&fx, "A", "500").await;
    raw_account(&fx, "B", "500").await;
    let before = seq_no(&fx, &fx.ix.accounts, "A").await;

    // A whole transfer.
    let report = fx
        .proto
        .transfer(&transfer("t1", 100), false, RunLimits::default())
        .await;
    assert!(
        matches!(report.verdict, Verdict::Completed(_)),
        "{report:?}"
    );

    // A transfer stopped after its apply on the source, whose transaction
    // document the application extended, finished by recovery.
    let stopped = RunLimits { max_steps: Some(3) };
    let report = fx.proto.transfer(&transfer("t2", 10), false, stopped).await;
    assert!(matches!(report.verdict, Verdict::Stopped(_)), "{report:?}");
    fx.backdate("t2", 5).await;
    let txn = Value::Object(fx.source(&fx.ix.transactions, "t2").await).to_string();
    let extended = format!("{},{}}}", txn.trim_end_matches('}'), EXTRA.join(","));
    raw_put(&fx, &fx.ix.transactions, "t2", extended).await;
    let report = fx.proto.recover("t2", false).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
        "{report:?}"
    );
    assert_exact(
        &raw_source(&fx, &fx.ix.transactions, "t2").await,
        "the recovered transaction",
    );

    // A transfer stopped after its apply, rolled back.
    let report = fx.proto.transfer(&transfer("t3", 1), false, stopped).await;
    assert!(matches!(report.verdict, Verdict::Stopped(_)), "{report:?}");
    fx.backdate("t3", 5).await;
    let report = fx.proto.rollback("t3", false).await;
    assert!(
        matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{report:?}"
    );

    assert!(seq_no(&fx, &fx.ix.accounts, "A").await > before + 3);
    assert_eq!(fx.acct("A").await.balance, 390);
    assert_eq!(fx.acct("B").await.balance, 610);
    for id in ["A", "B"] {
        assert_exact(&raw_source(&fx, &fx.ix.accounts, id).await, id);
    }
}

#[tokio::test]
async fn a_balance_the_tool_cannot_compute_with_exactly_is_refused_before_step_1() {
    let fx = world(true).await;
    raw_account(&fx, "B", "500").await;
    let cases = [
        ("123456789012345678901234567890", "beyond the 64-bit"),
        ("9223372036854775808", "beyond the 64-bit"),
        ("100.5", "fraction"),
        // f64 reads this as the whole number 4503599627370498.
        ("4503599627370497.5", "fraction"),
    ];
    for (i, (balance, reason)) in cases.into_iter().enumerate() {
        raw_account(&fx, "A", balance).await;
        let before = seq_no(&fx, &fx.ix.accounts, "A").await;
        let id = format!("r{i}");
        let report = fx
            .proto
            .transfer(&transfer(&id, 1), false, RunLimits::default())
            .await;
        let why = match &report.verdict {
            Verdict::Failed(e) => e.to_string(),
            Verdict::Refused(ProcedureRefusal::Malformed(why)) => why.to_string(),
            other => panic!("{balance}: expected a refusal, got {other:?}"),
        };
        assert!(why.contains(reason), "{balance}: {why}");
        assert!(why.contains(balance), "{balance}: {why}");
        assert!(report.steps.is_empty(), "{balance}: {:?}", report.steps);
        assert_eq!(seq_no(&fx, &fx.ix.accounts, "A").await, before, "{balance}");
        assert!(raw_source(&fx, &fx.ix.accounts, "A")
            .await
            .contains(&format!(r#""balance":{balance}"#)));
    }
}

/// An accounts index whose mapping makes the stored `_source` lossy.
async fn lossy_world(source: Value) -> Fx {
    Fx::with_mappings(
        |_| {},
        |bodies| {
            bodies[1].1["mappings"]["_source"] = source;
        },
    )
    .await
}

#[tokio::test]
async fn documents_whose_stored_source_is_lossy_are_never_rewritten() {
    let cases = [
        (
            json!({"excludes": ["secret"]}),
            "`_source.excludes: [\"secret\"]`",
        ),
        (json!({"enabled": false}), "`_source.enabled: false`"),
        (json!({"mode": "synthetic"}), "`_source.mode: synthetic`"),
    ];
    for (source, named) in cases {
        let fx = lossy_world(source.clone()).await;
        for id in ["A", "B"] {
            raw_put(
                &fx,
                &fx.ix.accounts,
                id,
                r#"{"balance":500,"pending_transactions":[],"secret":"s","tags":[3,1,1]}"#.into(),
            )
            .await;
        }
        let before = seq_no(&fx, &fx.ix.accounts, "A").await;
        let report = fx
            .proto
            .transfer(&transfer("t", 1), false, RunLimits::default())
            .await;
        let Verdict::Failed(e) = &report.verdict else {
            panic!("{source}: {:?}", report.verdict)
        };
        let why = e.to_string();
        assert!(
            why.contains("refused before the first write"),
            "{source}: {why}"
        );
        assert!(why.contains(named), "{source}: {why}");
        assert!(report.steps.is_empty(), "{source}: {:?}", report.steps);
        assert_eq!(seq_no(&fx, &fx.ix.accounts, "A").await, before, "{source}");
        let created = fx.cluster().get(&fx.ix.transactions, "t").await.unwrap();
        assert!(created.is_none(), "{source}: a transaction was created");

        let doctor = fx.proto.doctor().await.unwrap();
        assert!(
            doctor
                .checks
                .iter()
                .any(|c| c.severity == Severity::Error && c.text.contains(named)),
            "{source}: {doctor:?}"
        );
    }
}
