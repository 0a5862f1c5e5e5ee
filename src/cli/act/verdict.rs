//! How the acts on one transaction print: each step as it ends (by the
//! observer installed in [`crate::cli::context::printing_observer`]), then
//! the verdict: successes on stdout, refusals and failures as one line on
//! stderr. With `--json`, only the outcome ([`crate::cli::output::outcome`])
//! is printed, at the end.

use crate::cli::context::printing_observer;
use crate::cli::exit;
use crate::cli::output::bulk::Line;
use crate::cli::output::outcome::{self, ErrorOutcome, ProcedureOutcome};
use crate::cli::output::{err, out};
use crate::cli::selection::OutcomeFormat;
use crate::protocol::{ProcedureReport, Protocol, Verdict};

/// Prints the verdict of one procedure and returns its exit code. With
/// `batch`, every line names the transaction (many are reported together).
pub fn print_verdict(report: &ProcedureReport, batch: bool) -> i32 {
    let was = report
        .started_in
        .as_ref()
        .map(|s| format!(" (was {s})"))
        .unwrap_or_default();
    let txn = &report.txn;
    let prefix = if batch {
        format!("{txn}: ")
    } else {
        String::new()
    };
    let code = exit::of_report(report);
    match &report.verdict {
        Verdict::Completed(_) | Verdict::EndedElsewhere(_) => {
            out(format_args!("{txn}: {}{was}", report.verdict))
        }
        Verdict::NothingToDo(_) => out(format_args!("{txn}: {}", report.verdict)),
        Verdict::Refused(r) => err(format_args!("{prefix}refused: {r}")),
        Verdict::Stopped(why) => err(format_args!(
            "{txn}: stopped: {why}; the transaction is left for recovery (see `estx-tui show {txn}`)"
        )),
        Verdict::Failed(e @ crate::Error::Unreachable(_)) if code != exit::STOPPED => {
            err(format_args!("{prefix}{e} (is --url / ESTX_URL right, and the cluster up?)"))
        }
        Verdict::Failed(e) if code != exit::STOPPED => err(format_args!("{prefix}{e}")),
        Verdict::Failed(e) => err(format_args!(
            "{txn}: failed: {e}; the transaction is left where it stopped for recovery (see `estx-tui show {txn}`)"
        )),
    }
    if report.verdict.is_done() && report.lock_left_behind() {
        err(format_args!(
            "{txn}: a lock could not be released; the next `estx-tui recover --all-stuck` releases it"
        ));
    }
    if let Verdict::Failed(e) = &report.verdict {
        tracing::warn!(txn = %txn, error = %e, "procedure failed");
    }
    code
}

/// Prints one procedure's outcome, as JSON or as text; returns its exit code.
pub fn finish(report: &ProcedureReport, json: bool) -> i32 {
    if json {
        let row = ProcedureOutcome::from(report);
        outcome::print(&row);
        row.exit_code
    } else {
        print_verdict(report, false)
    }
}

/// [`finish`] in `format`: `ndjson` prints the outcome as one line.
pub fn finish_as(report: &ProcedureReport, format: OutcomeFormat) -> i32 {
    match format {
        OutcomeFormat::Ndjson => {
            let row = ProcedureOutcome::from(report);
            Line::Transaction(&row).print();
            row.exit_code
        }
        OutcomeFormat::Json => finish(report, true),
        OutcomeFormat::Text => finish(report, false),
    }
}

/// The intervention could not start (its audit record could not be
/// written, or it was refused): the reason is on stderr; with `--json`,
/// stdout still says so.
pub fn not_started(code: i32, json: bool) -> i32 {
    if json {
        outcome::print(&ErrorOutcome {
            error: "the intervention did not start (the reason is on stderr); nothing was written"
                .into(),
            exit_code: code,
        });
    }
    code
}

/// The protocol handle a command runs with: printing each step as it ends,
/// unless the outcome is printed as JSON at the end.
pub fn observed(p: Protocol, json: bool, batch: bool) -> Protocol {
    if json {
        p
    } else {
        p.with_observer(printing_observer(batch))
    }
}
