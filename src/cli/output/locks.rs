//! The human table for `locks`, built from the same JSON values the
//! `--json` output prints, so the two can never disagree. (`list` prints
//! its rows as it pages, from its own row type: see `list.rs`.)
//!
//! Marks in the first column: `!` a stale lock, `?` a lock whose holder
//! cannot be judged.

use super::print::plural;
use super::table::{cell, problems_cell, Table};
use crate::protocol::locks::{lock_json, LockView, Staleness};
use crate::protocol::time::human_age;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// An age cell from a JSON `age_seconds` (`-` when unknown).
fn age_cell(v: &Value) -> String {
    v.as_i64().map(human_age).unwrap_or_else(|| "-".into())
}

/// The mark of one lock row, by its judgement.
pub fn lock_mark(s: &Staleness) -> &'static str {
    match s {
        Staleness::Stale(_) => "!",
        Staleness::Unknown(_) => "?",
        Staleness::Live => "",
    }
}

/// The `locks` table and its summary line: each row from the lock's
/// `lock_json` value (as `--json` prints it), its mark from the judgement.
pub fn locks_table(locks: &[LockView], now: DateTime<Utc>) -> Vec<String> {
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
    for v in locks {
        let mark = lock_mark(&v.staleness);
        let l = &lock_json(v, now);
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
        assert_eq!(locks_table(&[], Utc::now()), vec!["no locks held"]);
    }
}
