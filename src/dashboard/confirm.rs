//! The confirmation dialog's logic: opening it on exactly what the operator
//! selected (a transaction, or a lock row), its keys (`y` never forces; only
//! the force key acts past the protocol's refusal), the run it starts
//! (carrying what the dialog showed, so the run can check it is still the
//! same), and the comparison of what ran with what the dialog previewed.

use super::app::{App, Dialog, LogLevel, RunChoice, Running};
use super::event::{Action, ActionOutcome, Expected, IoRequest, Run};
use super::keymap::{DialogOp, Op};
use super::layers::OverlayKind;
use crate::protocol::intervene::{Documents, Plan, PlanStep};
use crate::protocol::report::{StepReport, StepResult, RELEASE_LOCK};
use crossterm::event::{KeyCode, KeyEvent};

/// Opens the dialog for `action` on the transaction the operator can see
/// selected ([`super::target`]; otherwise says why and does nothing), and
/// asks for a re-read.
pub fn open_dialog(app: &mut App, action: Action) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    let id = match super::target::transaction_target(app) {
        Ok(id) => id,
        Err(why) => {
            let text = format!("{}: {why}", action.title());
            app.push_log(LogLevel::Error, text);
            return vec![];
        }
    };
    show(app, action, id)
}

/// Opens the dialog releasing the lock under the locks pane's cursor.
pub fn open_lock_dialog(app: &mut App) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    let Some(resource) = app.lock_at_cursor().map(|l| l.info.resource.clone()) else {
        let text = format!(
            "no lock selected ({}/{} in the locks pane)",
            app.keys.key(Op::Down),
            app.keys.key(Op::Up)
        );
        app.push_log(LogLevel::Info, text);
        return vec![];
    };
    show(app, Action::ReleaseLock, resource)
}

/// Opens the dialog for `action` on `target` (from the audit pane).
pub fn open_on(app: &mut App, action: Action, target: String) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    show(app, action, target)
}

/// Why no act may start now (read-only mode, an act or a bulk run under
/// way), in the log's words: the one "may I act" check of every act, the
/// dialogs' and the jobs view's resume alike.
pub fn act_refusal(app: &App) -> Option<String> {
    if app.settings.read_only {
        return Some(format!(
            "read-only mode: {} are disabled",
            app.keys.write_actions()
        ));
    }
    if let Some(r) = &app.running {
        return Some(format!(
            "wait: {} {} is still running",
            r.action.title(),
            r.target
        ));
    }
    app.bulk.as_ref().map(|b| {
        format!(
            "wait: the bulk {} is still running ({}/{})",
            b.action.bulk_verb(),
            b.done,
            b.total
        )
    })
}

fn may_act(app: &mut App) -> bool {
    match act_refusal(app) {
        Some(why) => {
            app.push_log(LogLevel::Error, why);
            false
        }
        None => true,
    }
}

/// Opens the one dialog for `action` on the marked transactions.
pub fn open_bulk_dialog(app: &mut App, action: Action) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    super::bulk::open(app, action)
}

fn show(app: &mut App, action: Action, target: String) -> Vec<IoRequest> {
    app.overlays
        .open_dialog(Dialog::new(action, target.clone()));
    vec![IoRequest::LoadPreview(action, target)]
}

/// Keys while the dialog is open (from the one key table).
pub fn on_dialog_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    let max = super::ui::dialog_scroll_max(app);
    let Some(dialog) = app.overlays.dialog_mut() else {
        return vec![];
    };
    let force = dialog.reason_for.is_some_and(RunChoice::is_forced);
    if let Some(typed) = dialog.typed.as_mut() {
        match key.code {
            KeyCode::Enter => return confirm_typed(app, force),
            KeyCode::Esc => dialog.typed = None,
            KeyCode::Backspace => {
                typed.pop();
            }
            KeyCode::Char(c) => typed.push(c),
            _ => {}
        }
        return vec![];
    }
    if let Some(force) = dialog.reason_for.map(RunChoice::is_forced) {
        match key.code {
            KeyCode::Enter => return confirm(app, force),
            KeyCode::Esc => dialog.reason_for = None,
            KeyCode::Backspace => {
                dialog.reason.pop();
            }
            KeyCode::Char(c) => dialog.reason.push(c),
            _ => {}
        }
        return vec![];
    }
    match app.keys.dialog_op(key.code) {
        Some(DialogOp::Confirm) => ask_reason(app, false),
        Some(DialogOp::Force) => ask_reason(app, true),
        Some(DialogOp::Press) if dialog.confirm_focused => ask_reason(app, false),
        Some(DialogOp::Press | DialogOp::Cancel) => {
            app.overlays.close(OverlayKind::Dialog);
            vec![]
        }
        Some(DialogOp::Focus) => {
            dialog.confirm_focused = !dialog.confirm_focused;
            vec![]
        }
        Some(DialogOp::ScrollDown) => {
            dialog.scroll = dialog.scroll.saturating_add(1).min(max);
            vec![]
        }
        Some(DialogOp::ScrollUp) => {
            dialog.scroll = dialog.scroll.saturating_sub(1);
            vec![]
        }
        None => vec![],
    }
}

/// `y` / `!`: checks there is something to confirm and that `y` is not
/// refused, then opens the reason field (Enter in it runs).
fn ask_reason(app: &mut App, force: bool) -> Vec<IoRequest> {
    let Some(dialog) = app.overlays.take_dialog() else {
        return vec![];
    };
    let title = format!("{} {}", dialog.action.title(), dialog.target);
    if !dialog.can_confirm() {
        app.push_log(LogLevel::Error, format!("{title}: nothing to confirm"));
        return vec![];
    }
    if dialog.bulk.is_some() {
        if force {
            app.push_log(
                LogLevel::Error,
                format!("{title}: bulk runs never force; force them one by one"),
            );
            app.overlays.open_dialog(dialog);
            return vec![];
        }
        app.overlays.open_dialog(Dialog {
            reason_for: Some(RunChoice::Plain),
            ..dialog
        });
        return vec![];
    }
    if dialog.preview.value().is_none() {
        return vec![];
    }
    if !force {
        if let Some(why) = dialog.refusal_now(
            app.now,
            app.settings.recovery_window,
            &app.keys.force_hint(),
        ) {
            app.push_log(LogLevel::Error, format!("{title}: refused: {why}"));
            app.overlays.open_dialog(dialog);
            return vec![];
        }
    }
    app.overlays.open_dialog(Dialog {
        reason_for: Some(RunChoice::of(force)),
        ..dialog
    });
    vec![]
}

/// Enter in the typed confirmation (production): runs when what was typed
/// is what the guard asks; otherwise says so, empties the field and runs
/// nothing.
fn confirm_typed(app: &mut App, force: bool) -> Vec<IoRequest> {
    let Some(dialog) = app.overlays.dialog_mut() else {
        return vec![];
    };
    match dialog.guard(&app.settings) {
        Some(g) if !g.accepts(dialog.typed.as_deref()) => {
            let typed = dialog.typed.replace(String::new()).unwrap_or_default();
            let text = format!(
                "{} {}: `{}` does not confirm it: type {}; nothing done",
                dialog.action.title(),
                dialog.target,
                typed.trim(),
                g.asks()
            );
            app.push_log(LogLevel::Error, text);
            vec![]
        }
        _ => confirm(app, force),
    }
}

/// Enter in the reason field: runs, unless the trail's rule wants a
/// reason that was not given (then the field stays open), or a production
/// profile wants the run confirmed by typing (then that field opens).
fn confirm(app: &mut App, force: bool) -> Vec<IoRequest> {
    let Some(mut dialog) = app.overlays.take_dialog() else {
        return vec![];
    };
    let bulk = dialog.bulk.is_some();
    let reason_given = dialog
        .action
        .missing_reason(force, bulk, &dialog.reason)
        .is_none();
    if reason_given && dialog.typed.is_none() && dialog.guard(&app.settings).is_some() {
        dialog.typed = Some(String::new());
        app.overlays.open_dialog(dialog);
        // The field is the dialog's last line: show it.
        let max = super::ui::dialog_scroll_max(app);
        if let Some(d) = app.overlays.dialog_mut() {
            d.scroll = max;
        }
        return vec![];
    }
    if bulk {
        return super::bulk::confirm(app, dialog);
    }
    let title = format!("{} {}", dialog.action.title(), dialog.target);
    if !dialog.preview.is_done() {
        return vec![];
    }
    if let Some(why) = dialog.action.missing_reason(force, false, &dialog.reason) {
        app.push_log(
            LogLevel::Error,
            format!("{title}: {why}; type one, then Enter"),
        );
        app.overlays.open_dialog(dialog);
        return vec![];
    }
    let reason = Some(dialog.reason.trim().to_string()).filter(|r| !r.is_empty());
    let (expected, planned) = expected_and_planned(&dialog);
    app.running = Some(Running {
        action: dialog.action,
        target: dialog.target.clone(),
        forced: force,
        planned,
        seen: Vec::new(),
    });
    let how = if force {
        "confirmed FORCED"
    } else {
        "confirmed"
    };
    app.push_log(LogLevel::Info, format!("{title}: {how}, running"));
    vec![IoRequest::Run(Run {
        action: dialog.action,
        target: dialog.target,
        force,
        expected,
        reason,
        confirmed: dialog.typed,
    })]
}

/// What a confirmed run must still find (the target as previewed: the
/// transaction's state and last modification, or the lock's owner state
/// and creation), and the lines the dialog previewed in the form the log
/// compares with what ran: a rollback's or recovery's planned steps, a
/// reversal's writes.
fn expected_and_planned(dialog: &Dialog) -> (Expected, Vec<String>) {
    let plan = dialog.preview.value();
    let as_of = |t: &crate::protocol::transaction::Transaction| Expected {
        state: t.state.clone(),
        modified: t.modification_time,
    };
    let expected = match plan.and_then(|p| p.documents.as_ref()) {
        Some(Documents::Transaction(det)) => as_of(&det.txn),
        Some(Documents::Reversal { original, .. }) => as_of(&original.txn),
        Some(Documents::Lock(l)) => Expected {
            state: l.as_ref().and_then(|l| l.owner_state.clone()),
            modified: l.as_ref().and_then(|l| l.info.created_at),
        },
        Some(Documents::Audit(_)) | None => Expected {
            state: None,
            modified: None,
        },
    };
    let compared = dialog.action.procedure().is_some() || dialog.action == Action::Reverse;
    let planned = match plan {
        Some(p) if compared => planned_lines(p),
        _ => Vec::new(),
    };
    (expected, planned)
}

/// The lines a plan previews, in the form the log compares with the steps
/// a run reports ("ran as previewed"): each step as the run reports it,
/// `label: write|no-op`.
pub fn planned_lines(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .map(|s| {
            let what = if s.writes() { "write" } else { "no-op" };
            format!("{}: {what}", s.reported())
        })
        .collect()
}

/// Records a step the running action reported, in the form of [`planned_lines`]
/// (`label: write|no-op|error`).
pub fn step_seen(app: &mut App, r: &StepReport) {
    let Some(run) = app.running.as_mut() else {
        return;
    };
    if !run.action.reports_for(&run.target, &r.txn) {
        return;
    }
    let label = if r.step.is_none() && r.label == RELEASE_LOCK {
        let resource = r.target.rsplit('/').next().unwrap_or(&r.target);
        PlanStep::ReleaseLock {
            resource: resource.to_string(),
            held_by: None,
        }
        .to_string()
    } else {
        r.label.clone()
    };
    let what = match r.result {
        StepResult::Updated(_) => "write",
        StepResult::Noop(_) => "no-op",
        StepResult::Error(_) => "error",
    };
    run.seen.push(format!("{label}: {what}"));
}

/// The end of an action: logs its outcome and whether it did what the
/// dialog previewed; polls at once.
pub fn action_done(app: &mut App, outcome: ActionOutcome) -> Vec<IoRequest> {
    let running = app.running.take();
    let level = if outcome.ok {
        LogLevel::Updated
    } else {
        LogLevel::Error
    };
    let title = format!("{} {}", outcome.action.title(), outcome.txn);
    app.push_log(level, format!("{title}: {}", outcome.summary));
    if let Some(run) = running.filter(|r| !r.planned.is_empty() && !r.seen.is_empty()) {
        if run.planned == run.seen {
            app.push_log(
                LogLevel::Info,
                format!("{title}: ran as previewed ({} lines)", run.planned.len()),
            );
        } else {
            let at = run
                .planned
                .iter()
                .zip(&run.seen)
                .position(|(a, b)| a != b)
                .unwrap_or(run.planned.len().min(run.seen.len()));
            let said = |v: &[String]| v.get(at).cloned().unwrap_or_else(|| "(nothing)".into());
            app.push_log(
                LogLevel::Error,
                format!(
                    "{title}: differed from the preview at line {}: previewed {}, ran {} \
                     (the documents changed between the preview and the run)",
                    at + 1,
                    said(&run.planned),
                    said(&run.seen)
                ),
            );
        }
    }
    vec![IoRequest::PollNow]
}
