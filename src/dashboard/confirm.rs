//! The confirmation dialog's logic: opening it on exactly what the operator
//! selected (a transaction, or a lock row), its keys (`y` never forces; only
//! the force key acts past the protocol's refusal), the run it starts
//! (carrying what the dialog showed, so the run can check it is still the
//! same), and the comparison of what ran with what the dialog previewed.

use super::app::{App, Dialog, LogLevel};
use super::event::{titled, ActionOutcome, IoRequest, OnMarks};
use super::keymap::Op;
pub use super::layers::dialog::planned_lines;
use super::log::receipts_words;
use crate::protocol::intervene::{Acknowledge, Act, AnyAct, PlanStep, ReleaseLock};
use crate::protocol::report::{StepReport, StepResult, RELEASE_LOCK};

/// Opens the dialog for the act `act` makes of the transaction the
/// operator can see selected ([`super::selection::target`]; otherwise says
/// why and does nothing), and asks for its preview.
pub fn open_dialog(app: &mut App, act: impl Fn(String) -> AnyAct) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    let id = match super::selection::target::transaction_target(app) {
        Ok(id) => id,
        Err(why) => {
            let text = format!("{}: {why}", act(String::new()).title());
            app.push_log(LogLevel::Error, text);
            return vec![];
        }
    };
    show(app, act(id))
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
    show(app, ReleaseLock::new(resource).into())
}

/// Opens a resume dialog (from the jobs view), when an act may start.
pub fn open_resume(app: &mut App, dialog: Dialog) {
    if may_act(app) {
        app.overlays.open_dialog(dialog);
    }
}

/// Opens the dialog for `act` (from the audit pane).
pub fn open_on(app: &mut App, act: AnyAct) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    show(app, act)
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
        return Some(format!("wait: {} is still running", titled(&r.act)));
    }
    app.bulk.as_ref().map(|b| {
        format!(
            "wait: the bulk {} is still running ({}/{})",
            b.on.verb(),
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

/// Opens the one dialog doing `on` the marked transactions.
pub fn open_bulk_dialog(app: &mut App, on: OnMarks) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    super::bulk::open(app, on)
}

/// How long an ack made in the dashboard holds unless the dialog's
/// duration field is changed (`AckFor`).
pub const DASHBOARD_ACK: std::time::Duration = std::time::Duration::from_secs(4 * 3600);

/// Opens the dialog acknowledging the marked rows the table shows
/// (`bulk`), or the selected transaction, or taking its ack back when it
/// has one.
pub fn open_ack_dialog(app: &mut App, bulk: bool) -> Vec<IoRequest> {
    if !may_act(app) {
        return vec![];
    }
    let ack = |ids| Acknowledge::ids(ids, DASHBOARD_ACK, None).into();
    if bulk {
        let ids = app.view.table.marks.shown.clone();
        if ids.is_empty() {
            app.push_log(LogLevel::Info, "Acknowledge: no marked row is shown");
            return vec![];
        }
        return show(app, ack(ids));
    }
    let id = match super::selection::target::transaction_target(app) {
        Ok(id) => id,
        Err(why) => {
            app.push_log(LogLevel::Error, format!("Acknowledge: {why}"));
            return vec![];
        }
    };
    let acked = app
        .snapshot
        .as_ref()
        .is_some_and(|s| s.acks.get(&id).is_some());
    let act = if acked {
        Acknowledge::take_back(vec![id]).into()
    } else {
        ack(vec![id])
    };
    show(app, act)
}

fn show(app: &mut App, act: AnyAct) -> Vec<IoRequest> {
    app.overlays.open_dialog(Dialog::new(act.clone()));
    vec![IoRequest::LoadPreview(act)]
}

/// Records a step the running action reported, in the form of [`planned_lines`]
/// (`label: write|no-op|error`).
pub fn step_seen(app: &mut App, r: &StepReport) {
    let Some(run) = app.running.as_mut() else {
        return;
    };
    if !run.act.reports_on(&r.txn) {
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
    let title = titled(&outcome.act);
    app.push_log(level, format!("{title}: {}", outcome.summary));
    let compared = running.filter(|r| !r.planned.is_empty() && !r.seen.is_empty());
    let as_previewed = compared.as_ref().is_some_and(|r| r.planned == r.seen);
    let mut receipts = outcome.receipts.as_ref().map(receipts_words);
    // Receipts that verify ride on the "ran as previewed" line; any other
    // word on them is a line of its own.
    if !matches!(&receipts, Some((LogLevel::Info, _)) if as_previewed) {
        if let Some((level, text)) = receipts.take() {
            app.push_log(level, format!("{title}: {text}"));
        }
    }
    if let Some(run) = compared {
        if as_previewed {
            let verified = receipts.map(|(_, t)| format!("; {t}")).unwrap_or_default();
            app.push_log(
                LogLevel::Info,
                format!(
                    "{title}: ran as previewed ({} lines){verified}",
                    run.planned.len()
                ),
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
