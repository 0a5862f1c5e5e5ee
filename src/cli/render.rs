//! Human tables for `list` and `locks`, built from the same JSON values the
//! `--json` output prints, so the two can never disagree.
//!
//! Marks in the first column: `!` a stuck transaction (older than the
//! recovery window) or a stale lock, `!!` a transaction older than
//! `--investigate-after`, `?` a lock whose holder cannot be judged.

use super::output::{cell, plural, problems_cell, Table};
use crate::protocol::time::human_age;
use serde_json::Value;

/// An age cell from a JSON `age_seconds` (`-` when unknown).
fn age_cell(v: &Value) -> String {
    v.as_i64().map(human_age).unwrap_or_else(|| "-".into())
}

/// The mark of one transaction row.
pub fn transaction_mark(t: &Value) -> &'static str {
    if t["needs_investigation"].as_bool() == Some(true) {
        "!!"
    } else if t["stuck"].as_bool() == Some(true) {
        "!"
    } else {
        ""
    }
}

/// The `list` table and its summary line, from `transaction_json` values.
pub fn transactions_table(txns: &[Value]) -> Vec<String> {
    if txns.is_empty() {
        return vec!["no transactions match".into()];
    }
    let mut t = Table::new([
        "", "ID", "STATE", "SOURCE", "DEST", "AMOUNT", "AGE", "PROBLEMS",
    ]);
    let (mut stuck, mut investigate) = (0, 0);
    for x in txns {
        let mark = transaction_mark(x);
        match mark {
            "!!" => investigate += 1,
            "!" => stuck += 1,
            _ => {}
        }
        t.row([
            mark.to_string(),
            cell(&x["id"]),
            cell(&x["state"]),
            cell(&x["src_acct"]),
            cell(&x["dest_acct"]),
            cell(&x["amount"]),
            age_cell(&x["age_seconds"]),
            problems_cell(&x["problems"]),
        ]);
    }
    let mut lines = t.render();
    let mut summary = plural(txns.len(), "transaction");
    if stuck + investigate > 0 {
        summary.push_str(&format!(
            ": {stuck} stuck (!), {investigate} need investigation (!!)"
        ));
    }
    lines.push(String::new());
    lines.push(summary);
    lines
}

/// The mark of one lock row.
pub fn lock_mark(l: &Value) -> &'static str {
    if l["stale"].as_bool() == Some(true) {
        "!"
    } else if l["staleness"]
        .as_str()
        .is_some_and(|s| s.starts_with("unknown"))
    {
        "?"
    } else {
        ""
    }
}

/// The `locks` table and its summary line, from `lock_json` values.
pub fn locks_table(locks: &[Value]) -> Vec<String> {
    if locks.is_empty() {
        return vec!["no locks held".into()];
    }
    let mut t = Table::new([
        "",
        "RESOURCE",
        "HOLDER",
        "OWNER STATE",
        "AGE",
        "EXPIRES",
        "STATUS",
        "PROBLEMS",
    ]);
    let (mut stale, mut unknown) = (0, 0);
    for l in locks {
        let mark = lock_mark(l);
        match mark {
            "!" => stale += 1,
            "?" => unknown += 1,
            _ => {}
        }
        t.row([
            mark.to_string(),
            cell(&l["resource"]),
            cell(&l["holder"]),
            cell(&l["owner_state"]),
            age_cell(&l["age_seconds"]),
            cell(&l["expires_at"]),
            cell(&l["staleness"]),
            problems_cell(&l["problems"]),
        ]);
    }
    let mut lines = t.render();
    lines.push(String::new());
    lines.push(format!(
        "{}: {stale} stale (!), {unknown} with a holder that cannot be judged (?)",
        plural(locks.len(), "lock")
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marks_stuck_and_investigate_rows() {
        let rows = vec![
            json!({"id":"t1","state":"pending","src_acct":"A","dest_acct":"B","amount":100,
                   "age_seconds":7300,"stuck":true,"needs_investigation":true,"problems":[]}),
            json!({"id":"t2","state":"created","src_acct":"A","dest_acct":"B","amount":5,
                   "age_seconds":200,"stuck":true,"needs_investigation":false,"problems":[]}),
            json!({"id":"t3","state":null,"src_acct":null,"dest_acct":"B","amount":null,
                   "age_seconds":null,"stuck":false,"needs_investigation":false,
                   "problems":["`transaction_state` is missing"]}),
        ];
        let lines = transactions_table(&rows);
        assert!(lines[1].starts_with("!!  t1"), "{lines:?}");
        assert!(lines[1].contains("2h01m"));
        assert!(lines[2].starts_with("!   t2"), "{lines:?}");
        assert!(lines[3].contains("`transaction_state` is missing"));
        assert_eq!(
            lines[5],
            "3 transactions: 1 stuck (!), 1 need investigation (!!)"
        );
    }

    #[test]
    fn empty_tables_say_so() {
        assert_eq!(transactions_table(&[]), vec!["no transactions match"]);
        assert_eq!(locks_table(&[]), vec!["no locks held"]);
    }
}
