//! `rollback` and `recover` of a selection: resolve it through the read
//! side, print the plan (`--dry-run`), rehearse it on a local copy
//! (`--rehearse`, [`super::rehearse`]) or record one bulk intervention
//! (reason required, flagged `bulk`), run each transaction through the same
//! protocol procedure as one `rollback`/`recover` (rollbacks a few at a
//! time; recoveries in batches unless `--sequential`), and report each as
//! it ends (`--format ndjson`) or together at the end. SIGINT/SIGTERM stop
//! new transactions from starting; the running ones finish their procedure,
//! so every transaction is left in a protocol state (exit 5 when some were
//! not started). `recover --all-stuck` alone also releases the locks whose
//! owner ended, lease expired or holder dead (stale on evidence), as it always did.

use super::dry_run;
use super::job;
use super::request::Request;
use super::start::{not_started_code, recorded};
use super::verdict::{not_started, observed, print_verdict};
use crate::cli::exit;
use crate::cli::output::bulk::{BulkOutcome, BulkSummary, LeftOutRow, Line};
use crate::cli::output::outcome::{self, ErrorOutcome, LockOutcome, ProcedureOutcome};
use crate::cli::output::{err, fail, out, plural};
use crate::cli::selection::OutcomeFormat;
use crate::protocol::intervene::{
    self, ActRefusal, BulkAct, BulkDone, Done, Intervention, NotStarted, Runner, Started, Stop,
    Tally,
};
use crate::protocol::jobs::{Pace, Progress};
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::locks::SweptLock;
use crate::protocol::{Procedure, ProcedureRefusal, ProcedureReport, Protocol, Verdict};
use crate::signals::{StopSignal, StopSignals};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Prints a failure before anything ran (as JSON too when the output is
/// machine-read); returns its exit code.
fn failed(e: &crate::Error, machine: bool) -> i32 {
    if machine {
        outcome::print(&ErrorOutcome::from(e));
    }
    fail(e)
}

/// Runs a bulk `rollback`/`recover` (or prints its plan with `--dry-run`);
/// returns the exit code.
pub async fn run(p: Protocol, req: Request<'_>) -> i32 {
    let format = req.select.format(req.json);
    let machine = format != OutcomeFormat::Text;
    let selection = match req.select.selection() {
        Ok(s) => s,
        Err(why) => {
            err(format_args!("{why}; nothing was done"));
            return exit::USAGE;
        }
    };
    let act = BulkAct {
        procedure: req.procedure,
        selection,
        ids_source: req.select.ids_source(),
        allow_partial: req.select.allow_partial,
        runner: req.runner,
    };
    let what = act.selection.describe(act.ids_source.as_deref()).join(" ");
    let mut choices = req.why.choices();
    // `--ids-from` the file a stopped job left, with no reason given: the
    // job's own, as its `--resume` would (the line its stop printed works
    // as printed).
    if let (None, Some(job)) = (choices.reason_text(), req.select.ids_job()) {
        if let Ok(Some(reason)) = intervene::job_reason(&p, &job).await {
            err(format_args!(
                "no --reason given: continuing job {job} with its own (\"{reason}\")"
            ));
            choices.reason = Some(reason);
        }
    }
    let i = Intervention::new(act, choices);
    if req.select.rehearse {
        let job = req.select.ids_job();
        return super::rehearse::run(&p, i, format, &what, job).await;
    }
    if req.select.plans_only() {
        let summary = req.job.summary.then(|| req.job.left_to.clone());
        let plan_out = req.select.plan_out.as_deref();
        return match dry_run::plan_and_print(&p, &i, format, &what, summary, plan_out).await {
            Ok(code) => code,
            Err(e) => failed(&e, machine),
        };
    }
    let mut started = match intervene::start(&p, i).await {
        Ok(s) => s,
        Err(NotStarted::Plan(e) | NotStarted::Trail(e)) => return failed(&e, machine),
        // Refused before reading anything.
        Err(n @ NotStarted::Refused(ActRefusal::ReasonMissing { .. })) => {
            return not_started_code(&n)
        }
        Err(n) => return not_started(not_started_code(&n), machine),
    };
    if let Some(job) = req.select.ids_job() {
        match started.own_writes_of(&job).await {
            Ok(n) => err(format_args!(
                "the ids were left by job {job}: {} it last wrote itself (on its record's \
                 evidence) are not refused as recent",
                plural(n, "transaction")
            )),
            Err(e) => err(format_args!(
                "the ids were left by job {job}, whose record cannot be used ({e}): its \
                 writes are judged by the recovery window as any other"
            )),
        }
    }
    execute(p, req, started, format, &what, Vec::new()).await
}

/// `--resume RUN_ID`: continues the unfinished bulk run from its record
/// ([`intervene::resume`]) as a started bulk act; returns the exit code.
/// A job not presumed dead (its heartbeat recent, or none recorded) is
/// refused unless `--force` with `--reason`.
pub async fn resume(p: Protocol, req: Request<'_>, run: &str) -> i32 {
    let format = req.format();
    let machine = format != OutcomeFormat::Text;
    let choices = req.why.choices().forced(req.force);
    let started = match intervene::resume(&p, run, req.runner, choices).await {
        Ok(s) => s,
        Err(NotStarted::Plan(e) | NotStarted::Trail(e)) => return failed(&e, machine),
        Err(n) => return not_started(not_started_code(&n), machine),
    };
    if let Some(r) = started.resumed() {
        err(format_args!(
            "resuming job {run}: {} ended before (skipped), {} to read and decide again",
            plural(r.ended, "transaction"),
            started.plan().selected.transactions.len()
        ));
    }
    let what = format!("the unfinished run {run}");
    execute(p, req, started, format, &what, Vec::new()).await
}

/// Runs a started bulk act as a job: says what runs and its id, runs it
/// paced (`--max-rate`, and slower when the cluster throttles), showing its
/// progress; SIGINT/SIGTERM stop new transactions from starting and a
/// running batch before its next write. Prints the outcome in `format`, and
/// writes the transactions left by a stop to a file. `refused` are rows
/// refused before the run (an `apply`'s drifted items), printed and
/// counted with those the selection left out.
pub async fn execute(
    p: Protocol,
    req: Request<'_>,
    started: Started<BulkAct>,
    format: OutcomeFormat,
    what: &str,
    refused: Vec<LeftOutRow>,
) -> i32 {
    let machine = format != OutcomeFormat::Text;
    let act = started.intervention().act.clone();
    let selected = &started.plan().selected;
    let ids = selected.ids();
    let left_out: Vec<LeftOutRow> = selected
        .left_out
        .iter()
        .map(LeftOutRow::of)
        .chain(refused)
        .collect();
    for l in &left_out {
        match format {
            OutcomeFormat::Ndjson => Line::LeftOut(l).print(),
            OutcomeFormat::Text => err(format_args!(
                "{}: {}: {}",
                l.txn, l.verdict.kind, l.verdict.message
            )),
            OutcomeFormat::Json => {}
        }
    }
    let job = started.record().to_string();
    let pace = Arc::new(Pace::new(req.job.max_rate));
    let p = observed(p, machine, true).with_pace(pace.clone());
    if format == OutcomeFormat::Text {
        out(header(&p, req, act.sweeps(), ids.len(), what));
    }
    let stop = Arc::new(Stop::default());
    let signal = Arc::new(Mutex::new(None::<StopSignal>));
    let watcher = watch_signals(stop.clone(), signal.clone());
    if format == OutcomeFormat::Text || req.job.shows_progress() {
        err(format_args!(
            "job {job}: Ctrl-C stops it; `--resume {job}` continues it if it dies"
        ));
    }
    let progress = Arc::new(Progress::new(ids.len()));
    let ticker = req
        .job
        .shows_progress()
        .then(|| job::show_progress(job.clone(), progress.clone(), p.cluster().clone()));
    let on_done = |r: &ProcedureReport| {
        progress.ended(&r.verdict);
        if format == OutcomeFormat::Ndjson {
            Line::Transaction(&ProcedureOutcome::from(r)).print();
        }
    };
    let index = started.index().to_string();
    let done = started.run_bulk(&p, &stop, on_done).await;
    if let Some(w) = watcher {
        w.abort();
    }
    if let Some(t) = ticker {
        t.abort();
        job::end_progress();
        err(format_args!("job {job}: {}", progress.view()));
    }
    let stats = pace.stats();
    if req.job.shows_progress() || req.job.max_rate.is_some() || stats.throttled > 0 {
        job::report_pace(&job, &stats);
    }
    let b = &done.value;
    let verb = req.procedure.name();
    write_left(&job, verb, b, req.job.left_to.as_deref());
    let stopped_by = signal.lock().map(|s| *s).unwrap_or(None);
    let code = match &b.failed {
        Some(e) => failed(e, machine),
        None => print_outcome(&p, req, b, &act, format, left_out, stopped_by, what),
    };
    if let Some(from) = b.resumable_from {
        return still_resumable(&done, &job, req, from, code);
    }
    recorded(&done, &index, code)
}

/// Says that the resumed job stays unfinished on purpose, and from when the
/// line that resumes it runs; returns the exit code (`code`, or the
/// cluster's when its checkpoints could not be written).
fn still_resumable(
    done: &Done<BulkDone>,
    job: &str,
    req: Request<'_>,
    from: chrono::DateTime<chrono::Utc>,
    code: i32,
) -> i32 {
    let later = done
        .value
        .reports
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Refused(ProcedureRefusal::Recent { .. })))
        .count();
    let verb = req.procedure.name();
    let at = from.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    err(format_args!(
        "job {job} is not finished: {} modified within the recovery window, not shown by \
         the job's record to be its own writes (in flight when it stopped, or another \
         worker's), wait for the window to end; the job stays resumable: run \
         `estx-tui {verb} --resume {job}` from {at} (the cluster's time)",
        plural(later, "transaction")
    ));
    if let Some(e) = &done.record_error {
        err(format_args!(
            "cannot write down what ended in audit record {job}: {e}; the next resume reads \
             those transactions again"
        ));
        return exit::worst([code, exit::of_error(e)]);
    }
    code
}

/// Prints a bulk act's outcome in `format`; returns the exit code.
#[allow(clippy::too_many_arguments)]
fn print_outcome(
    p: &Protocol,
    req: Request<'_>,
    b: &BulkDone,
    act: &BulkAct,
    format: OutcomeFormat,
    left_out: Vec<LeftOutRow>,
    stopped_by: Option<StopSignal>,
    what: &str,
) -> i32 {
    let locks: Vec<LockOutcome> = b.swept.iter().map(LockOutcome::from).collect();
    let code = exit::worst(
        b.reports
            .iter()
            .map(exit::of_report)
            .chain(left_out.iter().map(|l| l.exit_code))
            .chain(locks.iter().map(LockOutcome::exit_code))
            .chain((!b.not_started.is_empty()).then_some(exit::STOPPED)),
    );
    match format {
        OutcomeFormat::Json => outcome::print(&BulkOutcome {
            action: req.procedure,
            selection: act.selection.describe(act.ids_source.as_deref()),
            recovery_window_seconds: p.config().recovery_window.as_secs_f64(),
            transactions: b.reports.iter().map(ProcedureOutcome::from).collect(),
            left_out,
            not_started: b.not_started.clone(),
            released_locks: locks,
            locks_listing_partial: b.locks_partial.clone(),
            resumable_from: b
                .resumable_from
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            exit_code: code,
        }),
        OutcomeFormat::Ndjson => {
            for l in &locks {
                Line::Lock(l).print();
            }
            Line::Summary(&BulkSummary {
                action: req.procedure,
                selected: b.reports.len() + b.not_started.len(),
                tally: Tally::of(&b.reports),
                left_out: left_out.len(),
                not_started: b.not_started.len(),
                stopped_by: stopped_by.map(StopSignal::name),
                exit_code: code,
            })
            .print();
        }
        OutcomeFormat::Text => {
            print_text(&b.reports, &b.not_started, stopped_by, b.sweep, what);
            print_swept(&b.swept);
            if let Some(d) = &b.locks_partial {
                err(format_args!(
                    "the locks listing was {d}: some abandoned locks may remain"
                ));
            }
        }
    }
    code
}

/// Writes the transactions a stopped job left (not started, or stopped
/// before their end) one id a line, and says where on stderr.
fn write_left(job: &str, verb: &str, b: &BulkDone, to: Option<&std::path::Path>) {
    let left = b.left();
    if left.is_empty() {
        return;
    }
    match crate::local_files::write_left_ids(job, Some(job), &left, to) {
        Ok(path) => err(format_args!(
            "{} left: their ids are in {} (one a line, after a line naming job {job}); \
             continue with `estx-tui {verb} --ids-from {}`: the job's own writes are not \
             refused as recent",
            plural(left.len(), "transaction"),
            path.display(),
            path.display()
        )),
        Err(e) => err(format_args!(
            "{} left; cannot write their ids to a file: {e}",
            plural(left.len(), "transaction")
        )),
    }
}

/// The line that says what is about to run.
fn header(p: &Protocol, req: Request<'_>, sweep: bool, n: usize, what: &str) -> String {
    let how = match req.runner {
        Runner::OneByOne(c) => format!("{c} at a time"),
        Runner::Batched(o) => format!(
            "in batches of {}, {} at a time",
            o.batch_size, o.concurrency
        ),
    };
    if sweep {
        let window = p.config().recovery_window;
        let window_text = crate::protocol::time::human_age(window.as_secs() as i64);
        return format!("recovering every transaction stuck for over {window_text}, {how}");
    }
    let verb = match req.procedure {
        Procedure::Rollback => "rolling back",
        Procedure::Recover => "recovering",
    };
    format!(
        "{verb} {} selected by {what}, {how}",
        plural(n, "transaction")
    )
}

/// Catches SIGINT/SIGTERM/SIGHUP while the run goes on: the first sets
/// `stop` (no new transaction starts) and is remembered in `signal`.
fn watch_signals(
    stop: Arc<Stop>,
    signal: Arc<Mutex<Option<StopSignal>>>,
) -> Option<tokio::task::JoinHandle<()>> {
    let mut signals = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "cannot catch stop signals; a signal ends the run at once");
            return None;
        }
    };
    Some(tokio::spawn(async move {
        let s = signals.recv().await;
        if let Ok(mut slot) = signal.lock() {
            *slot = Some(s);
        }
        stop.stop(s.name());
        // On stderr whatever the format: stdout stays machine-readable.
        err(format_args!(
            "{}: stopping: no new transaction starts; the running ones finish",
            s.name()
        ));
        tracing::warn!(signal = s.name(), "bulk run stopped by signal");
        // Further signals: the run is already stopping.
        loop {
            signals.recv().await;
        }
    }))
}

/// The text lines after the run: each verdict, the counts, what was not started.
fn print_text(
    reports: &[ProcedureReport],
    not_started: &[String],
    stopped_by: Option<StopSignal>,
    sweep: bool,
    what: &str,
) {
    let noun = if sweep {
        "stuck transaction"
    } else {
        "selected transaction"
    };
    if reports.is_empty() && not_started.is_empty() {
        if sweep {
            out("no stuck transactions: nothing to do");
        } else {
            out(format_args!(
                "no transactions selected by {what}: nothing to do"
            ));
        }
        return;
    }
    out("");
    let mut refused: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for r in reports {
        match &r.verdict {
            Verdict::Refused(why) => refused.entry(cause(why)).or_default().push(&r.txn),
            _ => {
                print_verdict(r, true);
            }
        }
    }
    print_refused(reports, &refused);
    out("");
    out(format_args!(
        "{}: {}",
        plural(reports.len() + not_started.len(), noun),
        Tally::of(reports)
    ));
    if let Some(s) = stopped_by {
        err(format_args!(
            "stopped by {}: {} not started (left as they were): {}",
            s.name(),
            plural(not_started.len(), "transaction"),
            not_started.join(", ")
        ));
    }
}

/// A refusal's cause, the same for every transaction refused so: a recent
/// one's age (which differs by transaction) left out.
fn cause(why: &ProcedureRefusal) -> String {
    match why {
        ProcedureRefusal::Recent { window, .. } => format!(
            "modified within the {} recovery window: a worker may still be running them \
             (use --force to act anyway)",
            crate::protocol::time::human_age(window.as_secs() as i64)
        ),
        other => other.to_string(),
    }
}

/// The refused transactions on stderr: one line for a cause only one has,
/// one line with the count for a cause many share (the first few ids, the
/// rest in `--json` and `--format ndjson`).
fn print_refused(reports: &[ProcedureReport], by_cause: &BTreeMap<String, Vec<&str>>) {
    const NAMED: usize = 5;
    for (why, txns) in by_cause {
        if let [txn] = txns.as_slice() {
            if let Some(r) = reports.iter().find(|r| r.txn == *txn) {
                print_verdict(r, true);
            }
            continue;
        }
        let named = txns[..txns.len().min(NAMED)].join(", ");
        let more = txns.len().saturating_sub(NAMED);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        err(format_args!(
            "{} refused: {why} ({named}{more})",
            plural(txns.len(), "transaction")
        ));
    }
}

/// The text lines of the abandoned-lock sweep.
fn print_swept(swept: &[SweptLock]) {
    if swept.is_empty() {
        return;
    }
    for s in swept {
        let owner = match (&s.view.info.owner, &s.view.owner_state) {
            (Some(o), Some(st)) => format!("owner `{o}` is {st}"),
            (Some(o), None) => format!("owner `{o}` does not exist"),
            _ => "no owner".into(),
        };
        match &s.outcome {
            ReleaseOutcome::Refused(why) => err(format_args!(
                "lock `{}` ({owner}) not released: {why}",
                s.view.info.resource
            )),
            o => out(format_args!(
                "lock `{}` ({owner}): {}",
                s.view.info.resource,
                if o.released() { "released" } else { "not held" }
            )),
        }
    }
    let released = swept.iter().filter(|s| s.outcome.released()).count();
    out(format_args!(
        "{} whose owner is terminal or missing: {released} released",
        plural(swept.len(), "lock")
    ));
}
