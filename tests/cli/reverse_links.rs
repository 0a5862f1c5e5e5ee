//! `show` and `list` display the reversal links both ways: `reversed_by` on
//! the original, `reverses` on its compensating transfer, in the text, the
//! JSON, the NDJSON and the CSV.

use super::*;

#[test]
fn show_and_list_display_the_links_both_ways() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100", "--id", "t1"]).code(0);
    w.run(&["transfer", "A", "B", "7", "--id", "t2"]).code(0);
    w.run(&["reverse", "t1", "--reason", "INC-9 wrong payee"])
        .code(0);
    w.refresh();

    // show: text and JSON, both ways; an unreversed one names neither.
    w.run(&["show", "t1"])
        .code(0)
        .stdout_has("reversed by  t1-reversal");
    w.run(&["show", "t1-reversal"])
        .code(0)
        .stdout_has("reverses     t1");
    let plain = w.run(&["show", "t2"]);
    assert!(!plain.code(0).stdout.contains("revers"), "{plain}");
    let j = w.run(&["show", "t1", "--json"]).code(0).json();
    assert_eq!(j["transaction"]["reversed_by"], "t1-reversal", "{j:#}");
    assert_eq!(j["transaction"]["reverses"], Value::Null);
    let j = w.run(&["show", "t1-reversal", "--json"]).code(0).json();
    assert_eq!(j["transaction"]["reverses"], "t1", "{j:#}");
    assert_eq!(j["transaction"]["reversed_by"], Value::Null);

    // list: the table's notes column, and the machine formats' fields.
    let table = w.run(&["list", "--all"]);
    let line = |id: &str| {
        table
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no row {id}: {table}"))
            .to_string()
    };
    assert!(line("t1").ends_with("reversed by t1-reversal"), "{table}");
    assert!(line("t1-reversal").ends_with("reverses t1"), "{table}");
    assert!(!line("t2").contains("revers"), "{table}");

    let nd = w.run(&["list", "--all", "--format", "ndjson"]);
    let rows: BTreeMap<String, Value> = nd
        .code(0)
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["id"].as_str().unwrap().to_string(), v))
        .collect();
    assert_eq!(rows["t1"]["reversed_by"], "t1-reversal", "{nd}");
    assert_eq!(rows["t1-reversal"]["reverses"], "t1", "{nd}");
    assert_eq!(rows["t2"]["reversed_by"], Value::Null, "{nd}");

    let csv_out = w.run(&["list", "--all", "--format", "csv"]);
    let back: Vec<estx::protocol::rows::CsvRow> =
        csv::Reader::from_reader(csv_out.code(0).stdout.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
    let by_id = |id: &str| back.iter().find(|r| r.id == id).unwrap().clone();
    assert_eq!(by_id("t1").reversed_by.as_deref(), Some("t1-reversal"));
    assert_eq!(by_id("t1-reversal").reverses.as_deref(), Some("t1"));
    assert_eq!(by_id("t2").reverses, None);
}
