//! `--dry-run --summary`: a dry run at incident scale, as roll-ups rather
//! than one plan per transaction: how many per state and what each would
//! do, the balance effect per account (the largest first), and the ids
//! that would run written to a file, one a line, for `--ids-from`.

use crate::cli::output::bulk::{LeftOutRow, PlanRow, PlanSummary};
use crate::cli::output::{err, out, plural};
use std::collections::BTreeMap;
use std::path::Path;

/// Accounts listed by the roll-up (the largest effects).
const ACCOUNTS_SHOWN: usize = 20;

/// Prints the roll-ups of `rows` and writes the ids that would run.
pub fn print(
    rows: &[PlanRow],
    left_out: &[LeftOutRow],
    s: &PlanSummary,
    what: &str,
    to: Option<&Path>,
) {
    out(format_args!(
        "dry run: {} of {} selected by {what}; nothing is written",
        s.action,
        plural(rows.len(), "transaction")
    ));
    out("by state:");
    for (state, (n, verdicts)) in by_state(rows) {
        let list: Vec<String> = verdicts
            .iter()
            .map(|(v, k)| format!("{k} {}", v.replace('_', " ")))
            .collect();
        out(format_args!("  {state:<12} {n:>7}: {}", list.join(", ")));
    }
    let mut accounts: Vec<(&String, &i64)> = s.balance_effect.iter().collect();
    accounts.sort_by_key(|(a, d)| (std::cmp::Reverse(d.unsigned_abs()), (*a).clone()));
    if !accounts.is_empty() {
        out(format_args!(
            "by account (balance effect, the largest {} of {}):",
            accounts.len().min(ACCOUNTS_SHOWN),
            accounts.len()
        ));
        for (a, d) in accounts.iter().take(ACCOUNTS_SHOWN) {
            out(format_args!("  {a:<24} {d:+}"));
        }
    }
    for l in left_out {
        err(format_args!("{}: refused: {}", l.txn, l.verdict.message));
    }
    let ids: Vec<String> = rows
        .iter()
        .filter(|r| r.would != "refused" && r.would != "nothing_to_do")
        .map(|r| r.txn.clone())
        .collect();
    if !ids.is_empty() {
        let name = format!(
            "dry-run-{}",
            chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")
        );
        match crate::local_files::write_left_ids(&name, None, &ids, to) {
            Ok(path) => out(format_args!(
                "ids: {} would run, written to {} (one a line: pass it to --ids-from)",
                ids.len(),
                path.display()
            )),
            Err(e) => err(format_args!("cannot write the ids to a file: {e}")),
        }
    }
    sweep_lines(s);
    counts_line(s);
}

/// Per state: how many, and how many of them each verdict.
fn by_state(rows: &[PlanRow]) -> BTreeMap<String, (usize, BTreeMap<&'static str, usize>)> {
    let mut out: BTreeMap<String, (usize, BTreeMap<&'static str, usize>)> = BTreeMap::new();
    for r in rows {
        let state = r.state.clone().unwrap_or_else(|| "no state".into());
        let entry = out.entry(state).or_default();
        entry.0 += 1;
        *entry.1.entry(r.would).or_default() += 1;
    }
    out
}

/// The last line of a dry run: the counts and the net balance effect.
pub(super) fn counts_line(s: &PlanSummary) {
    let verb = s.action.verb();
    let mut parts = vec![format!("{} {verb}", s.would_run)];
    if s.nothing_to_do > 0 {
        parts.push(format!("{} nothing to do", s.nothing_to_do));
    }
    for (kind, n) in &s.refused {
        parts.push(format!("{n} refused: {kind}"));
    }
    if s.left_out > 0 {
        parts.push(format!("{} not selected or unknown", s.left_out));
    }
    let releases = match &s.no_locks_index {
        Some(ix) => format!("releases no lock (no locks index `{ix}`)"),
        None => format!("releases {}", plural(s.lock_releases.len(), "lock")),
    };
    out(format_args!(
        "{}; net balance effect {:+} over {}; {releases}",
        parts.join(", "),
        s.net_balance_effect,
        plural(s.balance_effect.len(), "account"),
    ));
    if let Some(e) = &s.writes_refused {
        err(format_args!(
            "the run would be refused before its first write, whatever the transactions: {e}"
        ));
    }
}

/// The closing sweep of `recover --all-stuck`, with each lock it would
/// release (nothing for another act).
pub(super) fn sweep_lines(s: &PlanSummary) {
    let Some(sweep) = &s.sweep else {
        return;
    };
    if let Some(ix) = &s.no_locks_index {
        out(format_args!(
            "then: {}: nothing to do, no locks index `{ix}`",
            sweep.step
        ));
        return;
    }
    if sweep.locks.is_empty() {
        out(format_args!("then: {}: none stale now", sweep.step));
        return;
    }
    out(format_args!("then: {}:", sweep.step));
    for l in &sweep.locks {
        out(format_args!(
            "    release lock {} held by {} ({})",
            l.resource, l.holder, l.judged
        ));
    }
}
