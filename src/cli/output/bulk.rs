//! What bulk `rollback`/`recover` print for scripts: typed rows, serialised
//! as they are. `--json` prints one [`BulkOutcome`] (or [`DryRunOutcome`])
//! at the end; `--format ndjson` prints one [`Line`] per transaction as it
//! ends (the same [`ProcedureOutcome`] rows as `--json`), then a summary.

use super::outcome::{LockOutcome, ProcedureOutcome, VerdictOutcome};
use crate::cli::exit;
use crate::protocol::intervene::Tally;
use crate::protocol::Procedure;
use serde::Serialize;
use std::collections::BTreeMap;

/// An id the selection named that is not acted on (unknown, or not
/// matching the filters): a refusal, nothing written.
#[derive(Debug, Serialize)]
pub struct LeftOutRow {
    /// The id as given.
    pub txn: String,
    /// `refused`, and why.
    pub verdict: VerdictOutcome,
    /// Always 1 (refused, nothing written).
    pub exit_code: i32,
}

impl LeftOutRow {
    /// The row of `l`: refused (exit 1), or `acked` (set aside on purpose
    /// by an ack: exit 0).
    pub fn of(l: &crate::protocol::intervene::LeftOut) -> LeftOutRow {
        match &l.acked {
            Some(_) => LeftOutRow {
                txn: l.txn.clone(),
                verdict: VerdictOutcome {
                    kind: "acked",
                    message: l.why.clone(),
                },
                exit_code: exit::DONE,
            },
            None => LeftOutRow::new(&l.txn, &l.why),
        }
    }

    /// The row of `txn`, left out because of `why`.
    pub fn new(txn: &str, why: &str) -> LeftOutRow {
        LeftOutRow {
            txn: txn.to_string(),
            verdict: VerdictOutcome {
                kind: "refused",
                message: why.to_string(),
            },
            exit_code: exit::REFUSED,
        }
    }
}

/// `rollback`/`recover` of a selection with `--json`.
#[derive(Debug, Serialize)]
pub struct BulkOutcome {
    /// `rollback` or `recover`.
    pub action: Procedure,
    /// The selection as given (`--all-stuck`, `--state=pending`, ...).
    pub selection: Vec<String>,
    /// The recovery window transactions were judged by, in seconds.
    pub recovery_window_seconds: f64,
    /// One item per transaction that ran, in id order.
    pub transactions: Vec<ProcedureOutcome>,
    /// Ids given that were not acted on.
    pub left_out: Vec<LeftOutRow>,
    /// Transactions not started because the run was stopped (SIGINT/SIGTERM).
    pub not_started: Vec<String>,
    /// With `recover --all-stuck`: locks whose owner was terminal or
    /// missing, and what their release did.
    pub released_locks: Vec<LockOutcome>,
    /// With `--allow-partial`: how the listing of the locks swept was
    /// partial (abandoned locks may remain), else null.
    pub locks_listing_partial: Option<String>,
    /// A resume some of whose transactions were refused as recent: the job
    /// stays unfinished, resumable from this time (RFC 3339, the cluster's
    /// clock); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumable_from: Option<String>,
    /// The worst exit code of all items (5 when stopped part-way).
    pub exit_code: i32,
}

/// The last line of `--format ndjson`: counts and the exit code.
#[derive(Debug, Serialize)]
pub struct BulkSummary {
    /// `rollback` or `recover`.
    pub action: Procedure,
    /// Transactions selected (that exist and match).
    pub selected: usize,
    /// Verdict counts of those that ran.
    #[serde(flatten)]
    pub tally: Tally,
    /// Ids given that were not acted on.
    pub left_out: usize,
    /// Not started because the run was stopped.
    pub not_started: usize,
    /// The signal that stopped the run, if one did.
    pub stopped_by: Option<&'static str>,
    /// The process exit code.
    pub exit_code: i32,
}

/// One step a dry run predicts.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedStep {
    /// What the step is.
    pub label: String,
    /// `index/id` it would act on.
    pub target: String,
    /// `write` or `noop`.
    pub result: &'static str,
    /// What it would write, or why nothing.
    pub detail: String,
}

/// A predicted balance change of one account.
#[derive(Debug, Clone, Serialize)]
pub struct BalanceChange {
    /// Account id.
    pub account: String,
    /// Units added (negative: taken).
    pub delta: i64,
}

/// What a dry run found for one transaction.
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    /// Transaction id.
    pub txn: String,
    /// Its state now.
    pub state: Option<String>,
    /// Seconds since its last modification (`null`: undated).
    pub age_seconds: Option<i64>,
    /// `roll_back`, `recover`, `nothing_to_do` or `refused`.
    pub would: &'static str,
    /// Why it would be refused.
    pub refusal: Option<String>,
    /// The refusal's kind, for the counts (`3 refused: committed`).
    #[serde(skip)]
    pub refusal_kind: Option<String>,
    /// The steps it would go through, in order.
    pub steps: Vec<PlannedStep>,
    /// Where it would end if nobody else interferes.
    pub ends_in: Option<String>,
    /// Balance changes of its accounts.
    pub balance_changes: Vec<BalanceChange>,
    /// The balance change in words ("completes the debit of 90 already
    /// made on A: credits B +90"), when it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance_in_words: Option<String>,
    /// The exit code the real run would give this item alone (0 or 1).
    pub exit_code: i32,
}

/// The counts of a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSummary {
    /// `rollback` or `recover`.
    pub action: Procedure,
    /// Transactions selected (that exist and match).
    pub selected: usize,
    /// How many would run.
    pub would_run: usize,
    /// How many are already terminal.
    pub nothing_to_do: usize,
    /// Refusals by kind (`committed`, `recent`, ...).
    pub refused: BTreeMap<String, usize>,
    /// Ids given that were not acted on.
    pub left_out: usize,
    /// Sum of every balance change (what the run would add to the total).
    pub net_balance_effect: i64,
    /// Balance change by account (accounts unchanged omitted).
    pub balance_effect: BTreeMap<String, i64>,
    /// Every lock the run would release (sorted): those of the
    /// transactions that run, then those of the closing sweep.
    pub lock_releases: Vec<String>,
    /// `recover --all-stuck` alone: the closing sweep of stale locks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPlan>,
    /// The locks index, when the deployment has none (not named, absent):
    /// no lock is released and the sweep has nothing to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_locks_index: Option<String>,
    /// Why the run would be refused before its first write whatever the
    /// documents (the product refuses its writes or its audit record,
    /// `Plan::writes_refused`), in the run's own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes_refused: Option<String>,
    /// The exit code of the dry run (1 when anything would be refused).
    pub exit_code: i32,
}

/// The sweep that closes `recover --all-stuck`, as previewed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SweepPlan {
    /// What it does, in the words the audit record keeps.
    pub step: &'static str,
    /// The locks it would release, as judged now.
    pub locks: Vec<SweptRow>,
}

/// One lock the sweep would release.
#[derive(Debug, Clone, Serialize)]
pub struct SweptRow {
    /// The locked resource.
    pub resource: String,
    /// Who holds it.
    pub holder: String,
    /// Why it is stale.
    pub judged: String,
}

/// `--dry-run --json`.
#[derive(Debug, Serialize)]
pub struct DryRunOutcome {
    /// Each selected transaction's plan.
    pub plan: Vec<PlanRow>,
    /// Ids given that would not be acted on.
    pub left_out: Vec<LeftOutRow>,
    /// The counts.
    pub summary: PlanSummary,
}

/// One line of `--format ndjson`, tagged by `type`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line<'a> {
    /// A transaction that ran, as it ended.
    Transaction(&'a ProcedureOutcome),
    /// An id not acted on.
    LeftOut(&'a LeftOutRow),
    /// A lock released by `recover --all-stuck`'s sweep.
    Lock(&'a LockOutcome),
    /// The end of a run.
    Summary(&'a BulkSummary),
    /// One transaction of a dry run.
    Plan(&'a PlanRow),
    /// The end of a dry run.
    PlanSummary(&'a PlanSummary),
}

impl Line<'_> {
    /// Prints the line as one compact JSON object.
    pub fn print(&self) {
        match serde_json::to_string(self) {
            Ok(s) => super::print::out(s),
            // These rows hold only strings and numbers: serialising cannot fail.
            Err(e) => super::print::err(format_args!("cannot print JSON: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::output::bulk::*;

    #[test]
    fn ndjson_lines_are_tagged_objects() {
        let row = LeftOutRow::new("t9", "no transaction `t9`");
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&Line::LeftOut(&row)).unwrap()).unwrap();
        assert_eq!(v["type"], "left_out");
        assert_eq!(v["txn"], "t9");
        assert_eq!(v["verdict"]["kind"], "refused");
        let s = BulkSummary {
            action: Procedure::Rollback,
            selected: 2,
            tally: Tally {
                completed: 2,
                ..Tally::default()
            },
            left_out: 1,
            not_started: 0,
            stopped_by: None,
            exit_code: 1,
        };
        let v = serde_json::to_value(Line::Summary(&s)).unwrap();
        assert_eq!(v["type"], "summary");
        assert_eq!(v["completed"], 2);
        assert_eq!(v["exit_code"], 1);
    }
}
