//! `rollback`/`recover --rehearse`: the bulk act rehearsed on a copy in a
//! local `osmem-server`, started and stopped here with the demo's own code
//! ([`OsmemServer`]: the library's protocol spawns no process), run by
//! [`intervene::rehearse`], and printed: counts per outcome, the net
//! balance effect over the copied accounts, the audit of the copy's
//! receipts and the run's time as an estimate. Nothing is written to the
//! cluster.

use crate::cli::exit;
use crate::cli::output::outcome;
use crate::cli::output::{err, fail, out, plural};
use crate::cli::selection::OutcomeFormat;
use crate::cluster::{Cluster, ConnectOptions};
use crate::demo::OsmemServer;
use crate::protocol::intervene::{
    self, BalanceSums, BulkAct, Copied, Intervention, Rehearsal, RehearsalError, Tally,
};
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::{Procedure, Protocol};
use serde::Serialize;

/// What every rehearsal says of the copy's versions.
const RE_PLANNED: &str = "the copy's documents have new _seq_no/_primary_term: the run \
                          re-planned every transaction on the copy, as a real run re-reads \
                          before each step";

/// What every rehearsal says of its time.
const ESTIMATE: &str = "the run's time on the local copy is an estimate: the cluster's latency \
                        and load differ";

/// Rehearses the bulk act `i` (read from `p`) on a copy in a local
/// `osmem-server` and prints what it found in `format`; returns the exit
/// code: 0 when every selected transaction would end and every receipt of
/// the copy verifies, 1 otherwise (and when the server cannot start), the
/// error's code when the cluster cannot be read.
/// `job` is the job an `--ids-from` file names (its own last writes are
/// not refused as recent by the real run; the copy holds no record of it).
pub async fn run(
    p: &Protocol,
    i: Intervention<BulkAct>,
    format: OutcomeFormat,
    what: &str,
    job: Option<String>,
) -> i32 {
    let procedure = i.act.procedure;
    let selection = i.act.selection.describe(i.act.ids_source.as_deref());
    let starting = tokio::task::spawn_blocking(|| {
        OsmemServer::start_reporting(&mut |step: &str| err(format_args!("rehearsal: {step}")))
    });
    let server = match starting.await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return cannot_start(&e),
        Err(e) => return cannot_start(&e),
    };
    let copy = match Cluster::connect(&ConnectOptions::new(server.url())) {
        Ok(c) => c,
        Err(e) => return cannot_start(&e),
    };
    err(format_args!(
        "rehearsal: copying what {what} selects into osmem-server at {} (nothing is written \
         to the cluster)",
        server.url()
    ));
    let rehearsed = intervene::rehearse(p, copy, i).await;
    // Stopped on every path: here, on drop if anything above panics, and
    // with this process (it was started with -parent-pid).
    server.stop();
    let r = match rehearsed {
        Ok(r) => r,
        Err(RehearsalError::Read(e)) => return fail(&e),
        Err(RehearsalError::NotStarted(n)) => return super::not_started_code(&n),
        Err(e) => {
            err(format_args!(
                "rehearsal failed: {e}; nothing was written to the cluster"
            ));
            return exit::SETUP;
        }
    };
    let mut report = RehearsalOutcome::new(procedure, selection, &r);
    if let Some(job) = job {
        report.notes.push(format!(
            "the ids were left by job {job}, whose record the copy does not hold: its own last \
             writes are judged by the recovery window there, which the real run does not"
        ));
    }
    match format {
        OutcomeFormat::Json => outcome::print(&report),
        OutcomeFormat::Ndjson => match serde_json::to_string(&report) {
            Ok(line) => out(line),
            Err(e) => err(format_args!("cannot print JSON: {e}")),
        },
        OutcomeFormat::Text => print_text(&report, &r, what),
    }
    report.exit_code
}

/// Says the local server could not be had; returns [`exit::SETUP`].
fn cannot_start(e: &dyn std::fmt::Display) -> i32 {
    err(format_args!(
        "cannot rehearse: the local server did not start: {e}; nothing was done"
    ));
    exit::SETUP
}

/// `--rehearse --json`: what the copy's run did and what its audit found.
#[derive(Debug, Serialize)]
pub struct RehearsalOutcome {
    /// Always true: this is a rehearsal, nothing was written to the cluster.
    pub rehearsal: bool,
    /// `rollback` or `recover`.
    pub action: Procedure,
    /// The selection as the options that made it.
    pub selection: Vec<String>,
    /// The transactions the selection resolved to on the cluster.
    pub selected: usize,
    /// The transactions the same selection resolved to on the copy.
    pub selected_on_copy: usize,
    /// Documents copied.
    pub copied: Copied,
    /// The copy's run, counted per outcome.
    pub outcomes: Tally,
    /// Ids the selection named that were not acted on.
    pub left_out: usize,
    /// Locks the copy's run released (the transactions' own and the
    /// closing sweep's).
    pub locks_released: usize,
    /// The copied accounts' balances summed before and after, and the net.
    pub balance: BalanceJson,
    /// The copy's receipts, verified as `audit --receipts` does.
    pub audit: AuditJson,
    /// The run's time on the copy, in seconds: an estimate.
    pub estimated_seconds: f64,
    /// The copy's record id (in its own audit index, gone with it).
    pub record: String,
    /// What the numbers mean and what the copy could not reproduce.
    pub notes: Vec<String>,
    /// The exit code.
    pub exit_code: i32,
}

/// The balance part of [`RehearsalOutcome`].
#[derive(Debug, Serialize)]
pub struct BalanceJson {
    /// Accounts summed.
    pub accounts: usize,
    /// Their sum before the run.
    pub before: i64,
    /// Their sum after.
    pub after: i64,
    /// After minus before (0: money conserved).
    pub net_effect: i64,
}

impl From<BalanceSums> for BalanceJson {
    fn from(b: BalanceSums) -> Self {
        BalanceJson {
            accounts: b.accounts,
            before: b.before,
            after: b.after,
            net_effect: b.net_effect(),
        }
    }
}

/// The audit part of [`RehearsalOutcome`].
#[derive(Debug, Serialize)]
pub struct AuditJson {
    /// Whether every receipt verifies.
    pub ok: bool,
    /// Records read (the rehearsal's own).
    pub records: usize,
    /// Balance writes checked.
    pub writes: usize,
    /// Each mismatch in words (record, transaction, account, what).
    pub mismatches: Vec<String>,
}

impl RehearsalOutcome {
    fn new(procedure: Procedure, selection: Vec<String>, r: &Rehearsal) -> RehearsalOutcome {
        let v = &r.done.value;
        let outcomes = v.tally();
        let audit = AuditJson {
            ok: r.receipts.ok(),
            records: r.receipts.records,
            writes: r.receipts.writes,
            mismatches: r
                .receipts
                .mismatches
                .iter()
                .map(ToString::to_string)
                .collect(),
        };
        let clean = v.failed.is_none()
            && audit.ok
            && v.left_out.is_empty()
            && outcomes.refused + outcomes.stopped + outcomes.failed + outcomes.not_started == 0
            && !v
                .swept
                .iter()
                .any(|s| matches!(s.outcome, ReleaseOutcome::Refused(_)));
        let mut notes = vec![RE_PLANNED.to_string(), ESTIMATE.to_string()];
        if let Some(e) = &v.failed {
            notes.push(format!("the run on the copy failed: {e}"));
        }
        notes.extend(r.notes.iter().cloned());
        RehearsalOutcome {
            rehearsal: true,
            action: procedure,
            selection,
            selected: r.selected,
            selected_on_copy: r.selected_on_copy(),
            copied: r.copied,
            outcomes,
            left_out: v.left_out.len(),
            locks_released: r.locks_released(),
            balance: r.balances.into(),
            audit,
            estimated_seconds: r.elapsed.as_secs_f64(),
            record: r.done.record.to_string(),
            notes,
            exit_code: if clean { exit::DONE } else { exit::REFUSED },
        }
    }
}

/// The text report.
fn print_text(o: &RehearsalOutcome, r: &Rehearsal, what: &str) {
    out(format_args!(
        "rehearsal: {} of {} selected by {what}, run on a local copy; nothing was written to \
         the cluster",
        o.action,
        plural(o.selected, "transaction")
    ));
    let c = &o.copied;
    out(format_args!(
        "copied: {}, {}, {}, into indices with the mappings as discovered",
        plural(c.transactions, "transaction"),
        plural(c.accounts, "account"),
        plural(c.locks, "lock")
    ));
    if o.selected_on_copy != o.selected {
        out(format_args!(
            "the selection resolved to {} on the copy",
            plural(o.selected_on_copy, "transaction")
        ));
    }
    out(format_args!("outcome on the copy: {}", o.outcomes));
    for l in &r.done.value.left_out {
        err(format_args!("{}: refused: {}", l.txn, l.why));
    }
    out(format_args!("locks released: {}", o.locks_released));
    let b = &o.balance;
    out(format_args!(
        "net balance effect {:+} over {} (sum before {}, after {})",
        b.net_effect,
        plural(b.accounts, "account"),
        b.before,
        b.after
    ));
    if o.audit.ok {
        out(format_args!(
            "audit of the copy: every receipt verifies ({}, {})",
            plural(o.audit.records, "record"),
            plural(o.audit.writes, "balance write")
        ));
    } else {
        out(format_args!(
            "audit of the copy: {} do not verify:",
            plural(o.audit.mismatches.len(), "receipt")
        ));
        for m in &o.audit.mismatches {
            out(format_args!("    {m}"));
        }
    }
    out(format_args!(
        "estimated time: {:.2} s (the run on the local copy; the cluster's latency and load \
         differ)",
        o.estimated_seconds
    ));
    let said = [RE_PLANNED, ESTIMATE];
    for n in o.notes.iter().filter(|n| !said.contains(&n.as_str())) {
        out(format_args!("note: {n}"));
    }
    out(format_args!("note: {RE_PLANNED}"));
}
