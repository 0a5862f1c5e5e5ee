//! Bulk actions, the state side: marks (by id, so polls, sorts and filters
//! never move them; Space marks only a row of the table), which of them
//! the table shows (a bulk act acts on those only, naming the others as
//! not included), the one dialog for R/F/L on the marked set (the plan of
//! the one bulk act over them, what `rollback`/`recover --ids-from …
//! --dry-run` prints: what each re-read transaction would do, grouped: "37
//! roll back, 3 refused: …", and the balance effect of the ones that run), its confirmation (a reason is
//! required: the trail's rule for bulk actions), and the progress of the
//! run (per-item outcomes in the log, counted by outcome; the stop is
//! [`super::stop`]'s).
//! Bulk runs are unforced: a transaction the protocol refuses without
//! force is left out and named, to be forced one by one.

use super::app::{App, Dialog, LogLevel};
use super::event::{
    BulkReread, Expected, IoRequest, LeftIds, Marked, OnMarks, Run, BULK_CONCURRENCY,
};
use super::keymap::Op;
use super::layers::dialog::{Bulk, BulkPlan, Pending};
use super::load::Load;
use super::log::receipts_words;
use super::progress::BulkProgress;
use crate::protocol::intervene::{AnyAct, ItemPlan, Would};
use crate::protocol::trail::receipts::Verification;
use crate::protocol::trail::ActOutcome;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Space: marks or unmarks the selected row of the table (only a row the
/// operator sees: [`super::selection::target::visible_row`]; otherwise says why).
pub fn toggle_mark(app: &mut App) {
    let id = match super::selection::target::visible_row(app) {
        Ok(id) => id,
        Err(why) => {
            app.push_log(LogLevel::Error, format!("mark: {why}"));
            return;
        }
    };
    if !app.selection.marks.remove(&id) {
        app.selection.marks.insert(id);
    }
}

/// Marks every row of the current filter.
pub fn mark_all(app: &mut App) {
    let ids: Vec<String> = app.visible().iter().map(|t| t.id.clone()).collect();
    let n = ids.len();
    app.selection.marks.extend(ids);
    app.push_log(
        LogLevel::Info,
        format!(
            "marked {n} row(s) of the filter; {} marked",
            app.selection.marks.len()
        ),
    );
}

/// Clears every mark.
pub fn clear_marks(app: &mut App) {
    if !app.selection.marks.is_empty() {
        app.push_log(
            LogLevel::Info,
            format!("cleared {} mark(s)", app.selection.marks.len()),
        );
    }
    app.selection.marks.clear();
}

/// Opens the one dialog doing `on` the marked rows the table shows and
/// asks for a re-read; marks it does not show are left out and named.
/// With no marked row shown, says so and opens nothing.
pub fn open(app: &mut App, on: OnMarks) -> Vec<IoRequest> {
    let marks = app.view.table.marks.clone();
    if marks.shown.is_empty() {
        app.push_log(
            LogLevel::Error,
            format!(
                "{}: none of the {} marked transaction(s) is a row of the table \
                 ({} hidden by the filter, {} no longer listed): clear the filter \
                 (Esc, s, x, X) to see them, or u to clear the marks; nothing done",
                on.title(),
                app.selection.marks.len(),
                marks.filtered.len(),
                marks.unlisted.len()
            ),
        );
        return vec![];
    }
    let ids = marks.shown;
    let bulk = Bulk {
        on,
        ids: ids.clone(),
        filtered: marks.filtered,
        unlisted: marks.unlisted,
        preview: Load::Loading,
        plan: None,
    };
    app.overlays.open_dialog(Dialog {
        preview: Load::Idle,
        ..Dialog::of(Pending::Bulk(Box::new(bulk)))
    });
    vec![IoRequest::LoadBulkPreview(on, ids)]
}

/// The bulk act's plan arrived: keeps it in the dialog `b` and derives
/// what the dialog shows from it.
pub fn reread(b: &mut Bulk, plan: BulkReread) {
    b.preview = Load::of(plan);
    b.plan = b.preview.value().map(|p| plan_of(b.on, p));
}

/// What the bulk dialog would do, from the marks' plan `p`: its
/// [`Marked::verdicts`] (what `--dry-run` counts, the same refusals), each
/// run carrying what its transaction was re-read as. Bulk runs never force:
/// a refused transaction is left out, to be forced one by one.
pub fn plan_of(on: OnMarks, p: &Marked) -> BulkPlan {
    let v = p.verdicts();
    let mut left_out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (kind, ids) in v.refused {
        left_out.insert(format!("refused: {kind}"), ids);
    }
    if !v.nothing_to_do.is_empty() {
        left_out.insert("nothing to do".into(), v.nothing_to_do);
    }
    for l in v.left_out {
        left_out.entry(l.why).or_default().push(l.txn);
    }
    let runs = match p {
        Marked::Bulk(plan) => runs_of(on, &plan.items),
        Marked::LocksOf { items, .. } => runs_of(on, items),
    };
    BulkPlan {
        runs,
        left_out,
        by_state: v.by_state,
        effect: v.balance_effect,
    }
}

/// The unforced runs of the transactions whose plans would run, each
/// carrying what it was re-read as.
fn runs_of<I: ItemPlan>(on: OnMarks, items: &[I]) -> Vec<Run> {
    let run = |item: &I| {
        let txn = &item.detail().txn;
        let expected = Expected {
            state: txn.state.clone(),
            modified: txn.modification_time,
        };
        Run::new(on.item(txn.id.clone()), false, None, None, expected)
    };
    items
        .iter()
        .filter(|item| item.would() == Would::Run)
        .map(run)
        .collect()
}

/// Enter in the bulk dialog's reason field: starts the run (the reason is
/// required), clears the marks it acts on.
pub fn confirm(app: &mut App, dialog: Dialog) -> Vec<IoRequest> {
    let Some(b) = dialog.bulk() else {
        return vec![];
    };
    let (on, n) = (b.on, b.ids.len());
    let title = format!("{} {n} marked", on.verb());
    let Some(plan) = b.plan.clone() else {
        return vec![];
    };
    if plan.runs.is_empty() {
        app.push_log(LogLevel::Error, format!("{title}: nothing to confirm"));
        return vec![];
    }
    if let Some(why) = dialog.reason_missing(false, &dialog.reason) {
        app.push_log(
            LogLevel::Error,
            format!("{title}: {why}; type one, then Enter"),
        );
        app.overlays.open_dialog(dialog);
        return vec![];
    }
    let reason = dialog.reason.trim().to_string();
    let runs: Vec<Run> = plan
        .runs
        .into_iter()
        .map(|r| {
            Run::new(
                r.intervention.act,
                false,
                Some(reason.clone()),
                dialog.typed.clone(),
                r.expected,
            )
        })
        .collect();
    app.push_log(
        LogLevel::Info,
        format!(
            "{title}: confirmed, running {} ({} at a time; {} pauses, {} stops)",
            runs.len(),
            BULK_CONCURRENCY,
            app.keys.label(Op::PauseJob),
            app.keys.label(Op::StopJob)
        ),
    );
    // Only the marks it acts on are cleared: the hidden ones stay marked.
    if let Some(b) = dialog.bulk() {
        for id in &b.ids {
            app.selection.marks.remove(id);
        }
    }
    app.bulk = Some(BulkProgress::new(on, runs.len(), app.now));
    vec![IoRequest::RunBulk(on, runs)]
}

/// `P` during a bulk run: pauses it (no write goes; the items under way
/// wait where they are) or resumes it.
pub fn pause(app: &mut App) -> Vec<IoRequest> {
    let Some(b) = app.bulk.as_mut().filter(|b| !b.stopping) else {
        app.push_log(LogLevel::Info, "no bulk run to pause");
        return vec![];
    };
    b.paused = !b.paused;
    let paused = b.paused;
    b.pace(app.now);
    let text = if paused {
        "bulk run paused: no write goes until P resumes it (S stops it)"
    } else {
        "bulk run resumed"
    };
    app.push_log(LogLevel::Info, text);
    vec![IoRequest::PauseBulk(paused)]
}

/// A bulk run's record was written: the bar knows its job, and the stop
/// question where the ids it leaves would go.
pub fn started(app: &mut App, run: String, left_file: Option<PathBuf>) {
    if let Some(b) = app.bulk.as_mut() {
        b.run = Some(run);
        b.left_file = left_file;
    }
}

/// One item of the bulk run, its own act `act`, ended (or was stopped
/// part-way).
pub fn item_done(app: &mut App, act: &AnyAct, summary: &str, outcome: ActOutcome) {
    if let Some(b) = app.bulk.as_mut() {
        b.count(outcome);
        b.pace(app.now);
    }
    let level = match outcome {
        ActOutcome::Completed => LogLevel::Updated,
        ActOutcome::NothingToDo => LogLevel::Noop,
        _ => LogLevel::Error,
    };
    let title = super::event::titled(act);
    app.push_log(level, format!("{title}: {summary}"));
}

/// The bulk run ended (`not_started`: items a stop kept from starting;
/// `summary`: the one act's audit record, if it was one; `left`: the ids a
/// stop left, as written; `receipts`: the one act's receipts verified).
/// The log counts what ended by outcome and what was left, then says what
/// the receipts prove; a stop asked by quitting quits now.
pub fn done(
    app: &mut App,
    on: OnMarks,
    not_started: usize,
    summary: &str,
    left: Option<LeftIds>,
    receipts: Option<Verification>,
) -> Vec<IoRequest> {
    let Some(b) = app.bulk.take() else {
        return vec![IoRequest::PollNow];
    };
    let c = b.counts;
    let stopped = b.stopping || not_started > 0 || c.stopped > 0;
    // A run that did not start (a refused resume) ended none of its items.
    let all_done = c.ended() >= b.total && c.completed + c.nothing_to_do == c.ended();
    let level = if !stopped && all_done {
        LogLevel::Updated
    } else {
        LogLevel::Error
    };
    let how = if stopped { " stopped" } else { "" };
    let mut text = format!(
        "bulk {}{how}: {} of {} ended ({})",
        on.verb(),
        c.ended(),
        b.total,
        c.brief()
    );
    let left_n = c.stopped + not_started;
    if left_n > 0 {
        let parts: Vec<String> = [
            (c.stopped, "stopped part-way"),
            (not_started, "not started"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{what}: {n}"))
        .collect();
        text.push_str(&format!("; {left_n} left ({})", parts.join(", ")));
    }
    if !summary.is_empty() {
        text.push_str(&format!(" · {summary}"));
    }
    // Receipts that verify ride on the run's line; a mismatch or a missing
    // receipt is an error line of its own.
    let receipts = receipts.as_ref().map(receipts_words);
    if let Some((LogLevel::Info, words)) = &receipts {
        text.push_str(&format!(" · {words}"));
    }
    app.push_log(level, text);
    if let Some((LogLevel::Error, words)) = receipts {
        app.push_log(LogLevel::Error, format!("bulk {}: {words}", on.verb()));
    }
    super::stop::ended(app, on, left, b.quit_when_stopped);
    app.reads.history_asked = None;
    vec![IoRequest::PollNow]
}

/// The resumed job was planned: the bar counts what it runs, and the stop
/// question says where the ids it leaves would go.
pub fn resumed(app: &mut App, run: &str, total: usize, left_file: Option<std::path::PathBuf>) {
    if let Some(b) = app.bulk.as_mut() {
        b.total = total;
        b.run = Some(run.to_string());
        b.left_file = left_file;
    }
    app.push_log(
        LogLevel::Info,
        format!("job {run}: {total} transaction(s) to read and decide again"),
    );
}
