//! Bulk actions, the state side: marks (by id, so polls, sorts and filters
//! never move them; Space marks only a row of the table), which of them
//! the table shows (a bulk act acts on those only, naming the others as
//! not included), the one dialog for R/F/L on the marked set (what each
//! re-read transaction would do, grouped: "37 roll back, 3 refused: …", and
//! the balance effect of the ones that run), its confirmation (a reason is
//! required: the trail's rule for bulk actions), and the progress of the
//! run (per-item outcomes in the log; Esc stops starting new items).
//! Bulk runs are unforced: a transaction the protocol refuses without
//! force is left out and named, to be forced one by one.

use super::app::{App, Dialog, LogLevel};
use super::dialog::{Bulk, BulkPlan, BulkProgress};
use super::event::{Action, BulkReread, Expected, IoRequest, Run};
use super::load::Load;
use crate::protocol::intervene::{Documents, Plan, PlanStep};

/// Most items a bulk run works on at once.
pub const BULK_CONCURRENCY: usize = 4;

/// Space: marks or unmarks the selected row of the table (only a row the
/// operator sees: [`super::target::visible_row`]; otherwise says why).
pub fn toggle_mark(app: &mut App) {
    let id = match super::target::visible_row(app) {
        Ok(id) => id,
        Err(why) => {
            app.push_log(LogLevel::Error, format!("mark: {why}"));
            return;
        }
    };
    if !app.marks.remove(&id) {
        app.marks.insert(id);
    }
}

/// Marks every row of the current filter.
pub fn mark_all(app: &mut App) {
    let ids: Vec<String> = app.visible().iter().map(|t| t.id.clone()).collect();
    let n = ids.len();
    app.marks.extend(ids);
    app.push_log(
        LogLevel::Info,
        format!(
            "marked {n} row(s) of the filter; {} marked",
            app.marks.len()
        ),
    );
}

/// Clears every mark.
pub fn clear_marks(app: &mut App) {
    if !app.marks.is_empty() {
        app.push_log(
            LogLevel::Info,
            format!("cleared {} mark(s)", app.marks.len()),
        );
    }
    app.marks.clear();
}

/// Opens the one dialog for `action` on the marked rows the table shows
/// and asks for a re-read; marks it does not show are left out and named.
/// With no marked row shown, says so and opens nothing.
pub fn open(app: &mut App, action: Action) -> Vec<IoRequest> {
    let marks = app.view.marks.clone();
    if marks.shown.is_empty() {
        app.push_log(
            LogLevel::Error,
            format!(
                "{}: none of the {} marked transaction(s) is a row of the table \
                 ({} hidden by the filter, {} no longer listed): clear the filter \
                 (Esc, s, x, X) to see them, or u to clear the marks; nothing done",
                action.title(),
                app.marks.len(),
                marks.filtered.len(),
                marks.unlisted.len()
            ),
        );
        return vec![];
    }
    let ids = marks.shown;
    app.overlays.open_dialog(Dialog {
        preview: Load::Idle,
        bulk: Some(Bulk {
            ids: ids.clone(),
            filtered: marks.filtered,
            unlisted: marks.unlisted,
            items: Load::Loading,
            plan: None,
        }),
        ..Dialog::new(action, format!("{} marked transaction(s)", ids.len()))
    });
    vec![IoRequest::LoadBulkPreview(action, ids)]
}

/// The bulk re-read arrived: keeps it in the dialog `b` and derives the
/// plan from it.
pub fn reread(b: &mut Bulk, action: Action, items: BulkReread) {
    b.items = Load::of(items);
    b.plan = plan(action, b);
}

/// What the re-read bulk dialog would do (`None` while loading or failed).
pub fn plan(action: Action, bulk: &Bulk) -> Option<BulkPlan> {
    let items = bulk.items.value()?;
    let mut out = BulkPlan::default();
    for (id, previewed) in items {
        match classify(action, id, previewed) {
            Ok((run, effect)) => {
                *out.by_state.entry(run.expected.state.clone()).or_default() += 1;
                out.runs.push(run);
                for (acct, delta) in effect {
                    *out.effect.entry(acct).or_default() += delta;
                }
            }
            Err(why) => out.left_out.entry(why).or_default().push(id.clone()),
        }
    }
    Some(out)
}

/// One item, from its preview ([`crate::protocol::intervene::Intervention::preview`]):
/// its run and balance change, or what keeps it out — the procedure's own
/// refusal, nothing to do or no locks held, or a refusal only forcing
/// lifts (bulk runs never force).
fn classify(
    action: Action,
    id: &str,
    plan: &Result<Plan, String>,
) -> Result<(Run, Vec<(String, i64)>), String> {
    let p = plan.as_ref().map_err(|e| format!("unreadable: {e}"))?;
    let Some(Documents::Transaction(det)) = &p.documents else {
        return Err("not a transaction".into());
    };
    let procedure = action.procedure();
    let steps = p
        .steps
        .iter()
        .any(|s| matches!(s, PlanStep::Protocol { .. }));
    match (&p.refusal, procedure) {
        (Some(r), Some(_)) if r.recent().is_none() => return Err(format!("refused: {r}")),
        (None, Some(_)) if !steps => return Err("nothing to do".into()),
        (_, None) if p.lock_releases.is_empty() => return Err("no locks held".into()),
        (Some(_), _) => return Err("need force (left out: force them one by one)".into()),
        (None, _) => {}
    }
    let run = Run {
        action,
        target: id.to_string(),
        force: false,
        expected: Expected {
            state: det.txn.state.clone(),
            modified: det.txn.modification_time,
        },
        reason: None,
        confirmed: None,
    };
    Ok((run, p.balance_change.clone()))
}

/// Enter in the bulk dialog's reason field: starts the run (the reason is
/// required), clears the marks it acts on.
pub fn confirm(app: &mut App, dialog: Dialog) -> Vec<IoRequest> {
    let n = dialog.bulk.as_ref().map_or(0, |b| b.ids.len());
    let title = format!("{} {n} marked", Action::bulk_verb(dialog.action));
    let Some(plan) = dialog.bulk.as_ref().and_then(|b| b.plan.clone()) else {
        return vec![];
    };
    if plan.runs.is_empty() {
        app.push_log(LogLevel::Error, format!("{title}: nothing to confirm"));
        return vec![];
    }
    if let Some(why) = dialog.action.missing_reason(false, true, &dialog.reason) {
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
        .map(|r| Run {
            reason: Some(reason.clone()),
            confirmed: dialog.typed.clone(),
            ..r
        })
        .collect();
    app.push_log(
        LogLevel::Info,
        format!(
            "{title}: confirmed, running {} ({} at a time; Esc stops starting new ones)",
            runs.len(),
            BULK_CONCURRENCY
        ),
    );
    // Only the marks it acts on are cleared: the hidden ones stay marked.
    if let Some(b) = &dialog.bulk {
        for id in &b.ids {
            app.marks.remove(id);
        }
    }
    app.bulk = Some(BulkProgress::new(dialog.action, runs.len(), app.now));
    vec![IoRequest::RunBulk(runs)]
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
        "bulk run paused: no write goes until P resumes it (Esc stops it)"
    } else {
        "bulk run resumed"
    };
    app.push_log(LogLevel::Info, text);
    vec![IoRequest::PauseBulk(paused)]
}

/// Esc during a bulk run: no new item starts; started ones finish (a
/// paused run is resumed for that).
pub fn stop(app: &mut App) -> Vec<IoRequest> {
    match app.bulk.as_mut() {
        Some(b) if !b.stopping => {
            b.stopping = true;
            b.paused = false;
            app.push_log(
                LogLevel::Info,
                "stopping the bulk run: items already started finish their procedure",
            );
            vec![IoRequest::StopBulk]
        }
        _ => vec![],
    }
}

/// One item of the bulk run ended.
pub fn item_done(app: &mut App, action: Action, id: &str, summary: &str, ok: bool) {
    if let Some(b) = app.bulk.as_mut() {
        b.done += 1;
        b.failed += usize::from(!ok);
        b.pace(app.now);
    }
    let level = if ok {
        LogLevel::Updated
    } else {
        LogLevel::Error
    };
    app.push_log(level, format!("{} {id}: {summary}", action.title()));
}

/// The bulk run ended (`not_started`: items Esc kept from starting;
/// `summary`: the one act's sentence and audit record, if it was one).
pub fn done(app: &mut App, action: Action, not_started: usize, summary: &str) -> Vec<IoRequest> {
    let (done, failed, total) = app
        .bulk
        .take()
        .map_or((0, 0, 0), |b| (b.done, b.failed, b.total));
    // A run that did not start (a refused resume) ended none of its items.
    let level = if failed == 0 && not_started == 0 && done >= total {
        LogLevel::Updated
    } else {
        LogLevel::Error
    };
    let mut text = format!(
        "bulk {}: {done} ended, {failed} failed",
        Action::bulk_verb(action)
    );
    if not_started > 0 {
        text.push_str(&format!(", {not_started} not started (stopped)"));
    }
    if !summary.is_empty() {
        text.push_str(&format!(" · {summary}"));
    }
    app.push_log(level, text);
    app.history_asked = None;
    vec![IoRequest::PollNow]
}
