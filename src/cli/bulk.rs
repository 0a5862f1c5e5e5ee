//! `rollback` and `recover` of a selection: resolve it through the read
//! side, print the plan (`--dry-run`) or record one bulk intervention
//! (reason required, flagged `bulk`), run each transaction through the same
//! protocol procedure as one `rollback`/`recover` (rollbacks a few at a
//! time; recoveries in batches unless `--sequential`), and report each as
//! it ends (`--format ndjson`) or together at the end. SIGINT/SIGTERM stop
//! new transactions from starting; the running ones finish their procedure,
//! so every transaction is left in a protocol state (exit 5 when some were
//! not started). `recover --all-stuck` alone also releases the locks whose
//! owner ended, lease expired or holder dead (stale on evidence), as it always did.

use super::actions::{not_started, observed, print_verdict, Tally};
use super::bulk_rows::{BulkOutcome, BulkSummary, LeftOutRow, Line};
use super::dry_run::{self, action_name};
use super::exit;
use super::intervention::{self, begin, ReasonArgs};
use super::outcome::{self, ErrorOutcome, LockOutcome, ProcedureOutcome};
use super::output::{err, fail, out, plural};
use super::selection::{OutcomeFormat, SelectionArgs};
use crate::protocol::batch::BatchOptions;
use crate::protocol::lock_release::SweptLock;
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::trail::bulk::{BulkOptions, BulkRun, Selection};
use crate::protocol::trail::{
    plan_labels, ActionKind, Interface, Intervention, Outcome, TrailStep,
};
use crate::protocol::{Procedure, ProcedureReport, Protocol, RunLimits};
use crate::signals::{StopSignal, StopSignals};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// How the selected transactions are run.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    /// Each through its procedure, this many at a time.
    OneByOne(usize),
    /// Recovery in batches ([`Protocol::recover_batched`]).
    Batched(BatchOptions),
}

/// What a bulk command was asked.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Rollback or recovery.
    pub procedure: Procedure,
    /// The selection and its options.
    pub select: &'a SelectionArgs,
    /// `--json`.
    pub json: bool,
    /// `--reason`.
    pub why: &'a ReasonArgs,
    /// How to run.
    pub runner: Runner,
}

/// Runs a bulk `rollback`/`recover`; returns the exit code.
pub async fn run(p: Protocol, req: Request<'_>) -> i32 {
    let format = req.select.format(req.json);
    let machine = format != OutcomeFormat::Text;
    let failed = |e: &crate::Error| {
        if machine {
            outcome::print(&ErrorOutcome::from(e));
        }
        fail(e)
    };
    let selection = match req.select.selection() {
        Ok(s) => s,
        Err(why) => {
            err(format_args!("{why}; nothing was done"));
            return exit::USAGE;
        }
    };
    let action = match req.procedure {
        Procedure::Rollback => ActionKind::Rollback,
        Procedure::Recover => ActionKind::Recover,
    };
    let mut i = Intervention::new(action, vec![], Interface::Cli);
    i.bulk = true;
    i.reason = req.why.reason.clone();
    i.targets = selection.describe(req.select.ids_source().as_deref());
    if !req.select.dry_run {
        // Refused before reading anything (begin says it the same way).
        if let Some(refusal) = i.missing_reason() {
            err(format_args!(
                "refused: {refusal}: pass --reason TEXT (or set ESTX_REASON); nothing was done"
            ));
            return exit::USAGE;
        }
    }
    let selected = match p.select(&selection, req.select.allow_partial).await {
        Ok(s) => s,
        Err(e) => return failed(&e),
    };
    let what = i.targets.join(" ");
    if req.select.dry_run {
        return dry_run::run(&p, req.procedure, &selected, format, &what).await;
    }
    i.transactions = selected.ids();
    i.plan = selected
        .transactions
        .iter()
        .map(|t| {
            let steps = plan_labels(req.procedure, t.state.as_ref()).join(", ");
            format!("{}: {steps}", t.id)
        })
        .collect();
    let sweep = is_all_stuck_only(req.procedure, &selection);
    if sweep {
        i.plan.push(
            "release the locks stale on evidence (owner ended, lease expired, holder dead)".into(),
        );
    }
    let rec = match begin(&p, i, req.why).await {
        Ok(r) => r,
        Err(code) => return not_started(code, machine),
    };
    let left_out: Vec<LeftOutRow> = selected
        .left_out
        .iter()
        .map(|l| LeftOutRow::new(&l.txn, &l.why))
        .collect();
    for l in &left_out {
        match format {
            OutcomeFormat::Ndjson => Line::LeftOut(l).print(),
            OutcomeFormat::Text => err(format_args!("{}: refused: {}", l.txn, l.verdict.message)),
            OutcomeFormat::Json => {}
        }
    }
    let ids = selected.ids();
    let p = observed(p, machine, true);
    if format == OutcomeFormat::Text {
        out(header(&p, req, sweep, ids.len(), &what));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(Mutex::new(None::<StopSignal>));
    let watcher = watch_signals(stop.clone(), signal.clone());
    let on_done = |r: &ProcedureReport| {
        if format == OutcomeFormat::Ndjson {
            Line::Transaction(&ProcedureOutcome::from(r)).print();
        }
    };
    let ran = match req.runner {
        Runner::OneByOne(concurrency) => {
            let opts = BulkOptions {
                concurrency,
                limits: RunLimits::default(),
            };
            Ok(p.run_many(&ids, req.procedure, opts, &stop, on_done).await)
        }
        Runner::Batched(opts) => p.recover_many_batched(&ids, opts, &stop, on_done).await,
    };
    if let Some(w) = watcher {
        w.abort();
    }
    let stopped_by = signal.lock().map(|s| *s).unwrap_or(None);
    let BulkRun {
        mut reports,
        not_started,
    } = match ran {
        Ok(r) => r,
        Err(e) => {
            let code = failed(&e);
            let summary = format!("failed: {e}");
            return rec.finish(Outcome::Failed, &summary, vec![], code).await;
        }
    };
    reports.sort_by(|a, b| a.txn.cmp(&b.txn));
    // The sweep is a new start: not after a stop.
    let (swept, locks_partial) = if sweep && stopped_by.is_none() {
        match p
            .release_abandoned_locks_allowing(req.select.allow_partial)
            .await
        {
            Ok(s) => (s.swept, s.coverage.describe()),
            Err(e) => {
                let code = failed(&e);
                let summary = format!("ran {}, then failed: {e}", reports.len());
                let steps = trail_steps(&p, &reports, &[]);
                return rec.finish(Outcome::Failed, &summary, steps, code).await;
            }
        }
    } else {
        (Vec::new(), None)
    };
    let locks: Vec<LockOutcome> = swept.iter().map(LockOutcome::from).collect();
    let code = exit::worst(
        reports
            .iter()
            .map(exit::of_report)
            .chain(left_out.iter().map(|l| l.exit_code))
            .chain(locks.iter().map(LockOutcome::exit_code))
            .chain((!not_started.is_empty()).then_some(exit::STOPPED)),
    );
    let tally = Tally::of(&reports);
    let released = swept.iter().filter(|s| s.outcome.released()).count();
    let mut summary = format!(
        "{}: {tally}",
        plural(reports.len() + not_started.len(), "selected transaction")
    );
    if !left_out.is_empty() {
        summary.push_str(&format!("; {} refused before reading", left_out.len()));
    }
    if let Some(s) = stopped_by {
        summary.push_str(&format!(
            "; stopped by {}: {} not started",
            s.name(),
            not_started.len()
        ));
    }
    if sweep {
        let partial = locks_partial
            .as_ref()
            .map(|d| format!(" (locks listing {d})"))
            .unwrap_or_default();
        summary.push_str(&format!(
            "; {} stale on evidence released{partial}",
            plural(released, "lock")
        ));
    }
    let steps = trail_steps(&p, &reports, &swept);
    let record_outcome = match intervention::worst(reports.iter().map(|r| &r.verdict)) {
        _ if !not_started.is_empty() => Outcome::Stopped,
        Outcome::NothingToDo if released > 0 => Outcome::Completed,
        Outcome::NothingToDo | Outcome::Completed if !left_out.is_empty() => Outcome::Refused,
        o => o,
    };
    match format {
        OutcomeFormat::Json => outcome::print(&BulkOutcome {
            action: action_name(req.procedure),
            selection: selection.describe(req.select.ids_source().as_deref()),
            recovery_window_seconds: p.config().recovery_window.as_secs_f64(),
            transactions: reports.iter().map(ProcedureOutcome::from).collect(),
            left_out,
            not_started,
            released_locks: locks,
            locks_listing_partial: locks_partial.clone(),
            exit_code: code,
        }),
        OutcomeFormat::Ndjson => {
            for l in &locks {
                Line::Lock(l).print();
            }
            Line::Summary(&BulkSummary {
                action: action_name(req.procedure),
                selected: reports.len() + not_started.len(),
                tally,
                left_out: left_out.len(),
                not_started: not_started.len(),
                stopped_by: stopped_by.map(StopSignal::name),
                exit_code: code,
            })
            .print();
        }
        OutcomeFormat::Text => {
            print_text(&reports, &not_started, stopped_by, sweep, &what);
            print_swept(&swept);
            if let Some(d) = &locks_partial {
                err(format_args!(
                    "the locks listing was {d}: some abandoned locks may remain"
                ));
            }
        }
    }
    rec.finish(record_outcome, &summary, steps, code).await
}

/// Whether this is `recover --all-stuck` and nothing else, which also
/// sweeps the locks stale on evidence.
fn is_all_stuck_only(procedure: Procedure, s: &Selection) -> bool {
    procedure == Procedure::Recover
        && s.all_stuck
        && s.states.is_empty()
        && s.older_than.is_none()
        && s.ids.is_none()
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
    stop: Arc<AtomicBool>,
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
        stop.store(true, Ordering::SeqCst);
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
    for r in reports {
        print_verdict(r, true);
    }
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

/// The audit-trail steps: every procedure's steps, then each lock the
/// sweep released (or was refused).
fn trail_steps(p: &Protocol, reports: &[ProcedureReport], swept: &[SweptLock]) -> Vec<TrailStep> {
    let locks = &p.config().indices.locks;
    reports
        .iter()
        .flat_map(|r| r.steps.iter().map(TrailStep::from))
        .chain(swept.iter().map(|s| {
            let owner = s.view.info.owner.clone().unwrap_or_default();
            TrailStep::release(locks, &owner, &s.view.info.resource, &s.outcome)
        }))
        .collect()
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
