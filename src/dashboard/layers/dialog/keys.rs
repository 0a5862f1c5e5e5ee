//! The confirmation dialog's keys (from the one key table): `y` or the
//! force key open the reason field (`y` never forces; only the force key
//! acts past the protocol's refusal), Enter in it runs (a production
//! profile first asks for the count or its name, typed); the run carries
//! what the dialog showed, so it can check it is still the same.

use super::{Dialog, RunChoice};
use crate::dashboard::event::{Expected, IoRequest, PlanToSave, ResumeConfirmed, Run};
use crate::dashboard::keymap::{DialogOp, Op};
use crate::dashboard::layers::{Context, Effect, Outcome};
use crate::dashboard::log::LogLevel;
use crate::protocol::intervene::{AckDirection, AnyAct, JudgedOn, Planned};
use crossterm::event::{KeyCode, KeyEvent};

impl Dialog {
    /// A key while the dialog is on top.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        let force = self.reason_for.is_some_and(RunChoice::is_forced);
        if let Some(typed) = self.typed.as_mut() {
            match key.code {
                KeyCode::Enter => return self.confirm_typed(cx, force),
                KeyCode::Esc => self.typed = None,
                KeyCode::Backspace => {
                    typed.pop();
                }
                KeyCode::Char(c) => typed.push(c),
                _ => {}
            }
            return Outcome::stay();
        }
        if let Some(force) = self.reason_for.map(RunChoice::is_forced) {
            let field = match self.lasts.as_mut() {
                Some(lasts) if lasts.focused => &mut lasts.text,
                _ => &mut self.reason,
            };
            match key.code {
                KeyCode::Enter => return self.confirm(cx, force),
                KeyCode::Esc => self.reason_for = None,
                KeyCode::Tab | KeyCode::BackTab => {
                    if let Some(lasts) = self.lasts.as_mut() {
                        lasts.focused = !lasts.focused;
                    }
                }
                KeyCode::Backspace => {
                    field.pop();
                }
                KeyCode::Char(c) => field.push(c),
                _ => {}
            }
            return Outcome::stay();
        }
        match cx.keys.dialog_op(key.code) {
            Some(DialogOp::Confirm) => self.ask_reason(cx, false),
            Some(DialogOp::Force) => self.ask_reason(cx, true),
            Some(DialogOp::Press) if self.confirm_focused => self.ask_reason(cx, false),
            Some(DialogOp::Press | DialogOp::Cancel) => Outcome::close(),
            Some(DialogOp::Focus) => {
                self.confirm_focused = !self.confirm_focused;
                Outcome::stay()
            }
            Some(DialogOp::ScrollDown) => {
                let max = super::draw::scroll_max(&cx.draw, self, cx.screen);
                self.scroll = self.scroll.saturating_add(1).min(max);
                Outcome::stay()
            }
            Some(DialogOp::ScrollUp) => {
                self.scroll = self.scroll.saturating_sub(1);
                Outcome::stay()
            }
            Some(DialogOp::SavePlan) => match self.selection_plan() {
                Some(plan) => Outcome::with(Effect::Io(IoRequest::SavePlan(PlanToSave(Box::new(
                    plan.clone(),
                ))))),
                None => Outcome::stay(),
            },
            None => Outcome::stay(),
        }
    }

    fn title(&self) -> String {
        self.heading()
    }

    /// `y` / `!`: checks there is something to confirm and that `y` is not
    /// refused, then opens the reason field (Enter in it runs).
    fn ask_reason(&mut self, cx: &Context, force: bool) -> Outcome {
        let title = self.title();
        if !self.loaded() {
            // Too early: the plan `y` would confirm is not shown yet; the
            // dialog stays open for it.
            let text = format!("{title}: the plan is still being read; confirm once it shows");
            return Outcome::with(Effect::Log(LogLevel::Info, text));
        }
        if !self.can_confirm() {
            let text = format!("{title}: nothing to confirm");
            return Outcome::with(Effect::Log(LogLevel::Error, text)).closing();
        }
        if self.bulk().is_some() {
            if force {
                let text = format!("{title}: bulk runs never force; force them one by one");
                return Outcome::with(Effect::Log(LogLevel::Error, text));
            }
            self.reason_for = Some(RunChoice::Plain);
            return Outcome::stay();
        }
        if self.resuming().is_none() && self.preview.value().is_none() {
            return Outcome::close();
        }
        if !force {
            let window = cx.settings.recovery_window;
            if let Some(why) = self.refusal_now(cx.now, window, &cx.keys.force_hint()) {
                let text = format!("{title}: refused: {why}");
                return Outcome::with(Effect::Log(LogLevel::Error, text));
            }
        }
        self.reason_for = Some(RunChoice::of(force));
        Outcome::stay()
    }

    /// Enter in the typed confirmation (production): runs when what was
    /// typed is what the guard asks; otherwise says so, empties the field
    /// and runs nothing.
    fn confirm_typed(&mut self, cx: &Context, force: bool) -> Outcome {
        match self.guard(cx.settings) {
            Some(g) if !g.accepts(self.typed.as_deref()) => {
                let typed = self.typed.replace(String::new()).unwrap_or_default();
                let text = format!(
                    "{}: `{}` does not confirm it: type {}; nothing done",
                    self.title(),
                    typed.trim(),
                    g.asks()
                );
                Outcome::with(Effect::Log(LogLevel::Error, text))
            }
            _ => self.confirm(cx, force),
        }
    }

    /// Enter in the reason field: runs, unless the trail's rule wants a
    /// reason that was not given (then the field stays open), or a
    /// production profile wants the run confirmed by typing (then that
    /// field opens).
    fn confirm(&mut self, cx: &Context, force: bool) -> Outcome {
        let bulk = self.bulk().is_some();
        let reason_given = self.reason_missing(force, &self.reason).is_none();
        if reason_given && self.typed.is_none() && self.guard(cx.settings).is_some() {
            self.typed = Some(String::new());
            // The field is the dialog's last line: show it.
            self.scroll = super::draw::scroll_max(&cx.draw, self, cx.screen);
            return Outcome::stay();
        }
        if bulk {
            return Outcome::with(Effect::StartBulk(Box::new(self.clone()))).closing();
        }
        if self.resuming().is_none() && !self.preview.is_done() {
            return Outcome::close();
        }
        let title = self.title();
        if let Some(why) = self.reason_missing(force, &self.reason) {
            let text = format!("{title}: {why}; type one, then Enter");
            return Outcome::with(Effect::Log(LogLevel::Error, text));
        }
        let reason = Some(self.reason.trim().to_string()).filter(|r| !r.is_empty());
        if let Some(r) = self.resuming() {
            let text = format!(
                "resuming job {}: reading its record ({} pauses, {} stops)",
                r.run,
                cx.keys.label(Op::PauseJob),
                cx.keys.label(Op::StopJob)
            );
            let confirmed = ResumeConfirmed {
                typed: self.typed.as_ref().map(|t| t.trim().to_string()),
                reason,
                forced: force,
            };
            return Outcome::with(Effect::Log(LogLevel::Info, text))
                .then(Effect::ResumeJob {
                    run: r.run.clone(),
                    procedure: r.procedure,
                    total: r.total,
                    confirmed,
                })
                .closing();
        }
        let Some(act) = self.act().cloned() else {
            return Outcome::close();
        };
        let (expected, planned) = self.expected_and_planned();
        let how = if force {
            "confirmed FORCED"
        } else {
            "confirmed"
        };
        let act = match (act, &self.lasts) {
            (AnyAct::Acknowledge(mut a), Some(lasts)) => match lasts.duration() {
                Ok(d) => {
                    if let AckDirection::Give { lasts, .. } = &mut a.direction {
                        *lasts = d;
                    }
                    AnyAct::Acknowledge(a)
                }
                Err(why) => {
                    let text = format!("{title}: for: {why}; nothing done");
                    return Outcome::with(Effect::Log(LogLevel::Error, text));
                }
            },
            (act, _) => act,
        };
        let run = Run::new(act, force, reason, self.typed.clone(), expected);
        Outcome::with(Effect::Start { run, planned })
            .then(Effect::Log(
                LogLevel::Info,
                format!("{title}: {how}, running"),
            ))
            .closing()
    }

    /// What a confirmed run must still find (the target as previewed: the
    /// transaction's state and last modification, or the lock's owner
    /// state and creation), and the lines the dialog previewed in the form
    /// the log compares with what ran: a rollback's or recovery's planned
    /// steps, a reversal's writes.
    fn expected_and_planned(&self) -> (Expected, Vec<String>) {
        let plan = self.preview.value();
        let as_of = |t: &crate::protocol::transaction::Transaction| Expected {
            state: t.state.clone(),
            modified: t.modification_time,
        };
        let judged = plan.and_then(|p| p.judged());
        let expected = match judged {
            Some(JudgedOn::Procedure(t)) => as_of(&t.detail.txn),
            Some(JudgedOn::LocksOf(l)) => as_of(&l.detail.txn),
            Some(JudgedOn::Reversal(r)) => as_of(&r.original.txn),
            Some(JudgedOn::Lock(l)) => Expected {
                state: l.view.as_ref().and_then(|l| l.owner_state.clone()),
                modified: l.view.as_ref().and_then(|l| l.info.created_at),
            },
            Some(JudgedOn::Audit(_) | JudgedOn::Acks(_)) | None => Expected {
                state: None,
                modified: None,
            },
        };
        // A procedure's or a reversal's steps are reported as planned.
        let planned = match (plan, judged) {
            (Some(p), Some(JudgedOn::Procedure(_) | JudgedOn::Reversal(_))) => planned_lines(p),
            _ => Vec::new(),
        };
        (expected, planned)
    }
}

/// The lines a plan previews, in the form the log compares with the steps
/// a run reports ("ran as previewed"): each step as the run reports it,
/// `label: write|no-op`.
pub fn planned_lines(plan: &impl Planned) -> Vec<String> {
    plan.steps()
        .iter()
        .map(|s| {
            let what = if s.writes() { "write" } else { "no-op" };
            format!("{}: {what}", s.reported())
        })
        .collect()
}
