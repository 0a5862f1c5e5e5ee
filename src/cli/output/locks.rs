//! The human table for `locks`, built from the same JSON values the
//! `--json` output prints, so the two can never disagree. (`list` prints
//! its rows as it pages, from its own row type: see `list.rs`.)
//!
//! Marks in the first column: `!` a stale lock, `?` a lock whose holder
//! cannot be judged.

use super::print::plural;
use super::table::{cell, problems_cell, Table};
use crate::protocol::time::human_age;
use serde_json::Value;

/// An age cell from a JSON `age_seconds` (`-` when unknown).
fn age_cell(v: &Value) -> String {
    v.as_i64().map(human_age).unwrap_or_else(|| "-".into())
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
        "SHAPE",
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
            cell(&l["shape"]),
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
    use crate::cli::output::locks::*;
    #[test]
    fn empty_tables_say_so() {
        assert_eq!(locks_table(&[]), vec!["no locks held"]);
    }
}
