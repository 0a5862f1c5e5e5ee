//! `list --format table|json|ndjson|csv`: full ids, every column and the
//! as-of time; NDJSON and CSV parse back (with a standard CSV reader) to the
//! same rows as the JSON array.

use super::*;
use estx::protocol::rows::{csv_header, CsvRow};

/// The CSV row the JSON row `v` flattens to.
fn flat(v: &Value) -> CsvRow {
    let s = |k: &str| v[k].as_str().map(str::to_string);
    CsvRow {
        as_of: s("as_of").unwrap(),
        id: s("id").unwrap(),
        state: s("state"),
        src_acct: s("src_acct"),
        dest_acct: s("dest_acct"),
        amount: v["amount"].as_i64(),
        creation_time: s("creation_time"),
        modification_time: s("modification_time"),
        age_seconds: v["age_seconds"].as_i64(),
        stuck: v["stuck"].as_bool().unwrap(),
        needs_investigation: v["needs_investigation"].as_bool().unwrap(),
        undated: v["undated"].as_bool().unwrap(),
        reverses: s("reverses"),
        reversed_by: s("reversed_by"),
        problems: v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect::<Vec<_>>()
            .join("; "),
        cause: v["cause"]["cause"].as_str().map(str::to_string),
        in_job: v["in_job"]["job"]
            .as_str()
            .map(|job| format!("{job} ({})", v["in_job"]["operator"].as_str().unwrap())),
    }
}

#[test]
fn csv_and_ndjson_parse_back_to_the_same_rows() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let long = "txn-20261123093748-0123456789abcdef-with-a-very-long-suffix";
    w.stage(long, "A", "B", 10, 2);
    w.backdate(long, 90);
    w.run(&["transfer", "A", "B", "5", "--id", "done,1"])
        .code(0);
    // Quotes, commas and a missing time in one malformed document.
    w.put(
        &w.ix.transactions,
        "odd",
        &json!({"src_acct": "A", "dest_acct": "B", "amount": 1, "transaction_state": "on,hold \"x\""}),
    );
    w.refresh();

    let json_out = w.run(&["list", "--all", "--format", "json"]);
    let rows = json_out.code(0).json();
    let rows = rows.as_array().unwrap().clone();
    assert_eq!(rows.len(), 3, "{json_out}");
    let as_of = rows[0]["as_of"].as_str().unwrap().to_string();
    assert!(
        rows.iter().all(|r| r["as_of"] == json!(as_of)),
        "{json_out}"
    );
    assert_eq!(ids(&json!(rows)), set(&[long, "done,1", "odd"]));

    let nd = w.run(&["list", "--all", "--format", "ndjson"]);
    let nd_rows: Vec<Value> = nd
        .code(0)
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // Same rows (the as-of time differs per run: compare the rest).
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("as_of");
        v.as_object_mut().unwrap().remove("age_seconds");
        v
    };
    assert_eq!(
        nd_rows.iter().cloned().map(strip).collect::<Vec<_>>(),
        rows.iter().cloned().map(strip).collect::<Vec<_>>()
    );

    let csv_out = w.run(&["list", "--all", "--format", "csv"]);
    let text = csv_out.code(0).stdout.clone();
    assert_eq!(text.lines().next(), Some(csv_header().join(",").as_str()));
    let back: Vec<CsvRow> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}: {csv_out}"));
    // The CSV of a run is exactly the flattened NDJSON of the same rows.
    let expected: Vec<CsvRow> = nd_rows.iter().map(flat).collect();
    let norm = |r: &CsvRow| CsvRow {
        as_of: String::new(),
        age_seconds: None,
        ..r.clone()
    };
    assert_eq!(
        back.iter().map(norm).collect::<Vec<_>>(),
        expected.iter().map(norm).collect::<Vec<_>>()
    );
    let odd = back.iter().find(|r| r.id == "odd").unwrap();
    assert!(
        odd.problems.contains('"') && odd.problems.contains("; "),
        "{odd:?}"
    );
    assert!(back.iter().all(|r| !r.as_of.is_empty()));

    // The table shows full ids and says when it was read.
    w.run(&["list", "--all"])
        .code(0)
        .stdout_has(long)
        .stdout_has("(as of ");
    // No rows: CSV still has its header, JSON an empty array, NDJSON nothing.
    let none = ["list", "--state", "terminating"];
    let empty_csv = w.run(&[&none[..], &["--format", "csv"]].concat());
    assert_eq!(empty_csv.code(0).stdout.trim(), csv_header().join(","));
    assert_eq!(
        w.run(&[&none[..], &["--format", "json"]].concat()).json(),
        json!([])
    );
    assert_eq!(
        w.run(&[&none[..], &["--format", "ndjson"]].concat()).stdout,
        ""
    );
}
