//! The jobs view (`J`): the bulk runs whose audit record is still
//! `running` — jobs under way (here or in another process) and jobs a
//! process that died left unfinished — with who started them, read from
//! the audit trail when the view opens (`r` reads again), each judged live,
//! presumed dead or unknown by its heartbeat (`jobs::job_life`, at the
//! screen's clock, again at each tick). Enter on one asks to resume it from
//! its record, as `--resume RUN_ID` does: a job presumed dead at once, any
//! other only forced, with a reason typed first; then `y` (on a production
//! profile, the profile's name, typed) and Enter start it as this
//! dashboard's bulk run (its progress bar, `P`, the stop key).

pub mod draw;

use super::{hint, Context, Effect, Hint, Outcome};
use crate::dashboard::event::{Action, IoRequest, ResumeConfirmed};
use crate::dashboard::keymap::Op;
use crate::dashboard::load::Load;
use crate::dashboard::log::LogLevel;
use crate::dashboard::settings::Settings;
use crate::protocol::intervene::reason_missing;
use crate::protocol::jobs::{job_life, JobLife};
use crate::protocol::time::human_age;
use crate::protocol::trail::{ActionKind, Record};
use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent};
use std::collections::HashSet;

/// The jobs view's state (kept while it is closed: the list shows again,
/// as read, while it is read again).
#[derive(Debug, Clone, Default)]
pub struct JobsView {
    /// The unfinished jobs, newest first, or why they could not be read.
    pub list: Load<Vec<Record>>,
    /// What the view shows of each listed job at the screen's clock, in
    /// the list's order (derived when the list or the clock changes:
    /// [`JobsView::judge`]).
    pub rows: Vec<JobRow>,
    /// The selected job.
    pub cursor: usize,
    /// Asking to resume the selected job.
    pub prompt: Option<ResumePrompt>,
}

/// What the jobs view shows of one listed job beyond its record, derived
/// when the list or the screen's clock changes ([`JobsView::judge`]), never
/// while drawing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    /// Its life by its heartbeat.
    pub life: JobLife,
    /// How long before the screen's clock it started (`20m00s`).
    pub started_ago: String,
    /// The transactions its checkpoints recorded steps of: at least that
    /// many ended (one refused, or with nothing to do, ends without any).
    pub ended: usize,
}

impl JobRow {
    /// The row of `r` at `now`.
    fn of(r: &Record, now: DateTime<Utc>) -> JobRow {
        let ended: HashSet<&str> = r.steps.iter().map(|s| s.txn.as_str()).collect();
        JobRow {
            life: job_life(r, now),
            started_ago: human_age((now - r.started_at).num_seconds()),
            ended: ended.len(),
        }
    }
}

/// The resume prompt of the selected job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumePrompt {
    /// The job is not presumed dead: the reason to force its resume, typed
    /// so far.
    Reason(String),
    /// The confirming word typed so far, with the reason when forced.
    Confirm {
        /// What was typed.
        typed: String,
        /// The reason it is forced with (a job not presumed dead).
        forced_with: Option<String>,
    },
}

/// The dashboard's action that resumes `r` (a bulk rollback or recovery).
pub fn action_of(r: &Record) -> Option<Action> {
    match r.action {
        ActionKind::Rollback => Some(Action::Rollback),
        ActionKind::Recover => Some(Action::Recover),
        _ => None,
    }
}

/// What the operator types to resume a job: the profile's name on a
/// production profile, else `y`.
pub fn resume_word(settings: &Settings) -> String {
    match settings.guard(true, None) {
        Some(g) => g.profile,
        None => "y".to_string(),
    }
}

impl JobsView {
    /// The selected job.
    pub fn selected(&self) -> Option<&Record> {
        self.list.value().and_then(|l| l.get(self.cursor))
    }

    /// The selected job's life (unknown before it was judged).
    pub fn selected_life(&self) -> JobLife {
        self.rows
            .get(self.cursor)
            .map_or(JobLife::Unknown, |r| r.life)
    }

    /// Derives every listed job's row at `now`: its life (the protocol's
    /// rule), its age and its progress.
    pub fn judge(&mut self, now: DateTime<Utc>) {
        self.rows = self
            .list
            .value()
            .map_or_else(Vec::new, |l| l.iter().map(|r| JobRow::of(r, now)).collect());
    }

    /// Opened (`J`, or `r` in it): reads the jobs again.
    pub fn open(&mut self) -> Vec<IoRequest> {
        self.prompt = None;
        self.list.reload();
        vec![IoRequest::LoadJobs]
    }

    /// The jobs were read.
    pub fn loaded(&mut self, jobs: Result<Vec<Record>, String>, now: DateTime<Utc>) {
        let n = jobs.as_ref().map_or(0, Vec::len);
        self.list = Load::of(jobs);
        self.cursor = self.cursor.min(n.saturating_sub(1));
        self.judge(now);
    }

    /// A key while the view is on top.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        if let Some(prompt) = self.prompt.as_mut() {
            let typed = match prompt {
                ResumePrompt::Reason(t) | ResumePrompt::Confirm { typed: t, .. } => t,
            };
            match key.code {
                KeyCode::Enter => return self.enter(cx),
                KeyCode::Esc => self.prompt = None,
                KeyCode::Backspace => {
                    typed.pop();
                }
                KeyCode::Char(c) => typed.push(c),
                _ => {}
            }
            return Outcome::stay();
        }
        let n = self.list.value().map_or(0, Vec::len);
        match cx.keys.main_op(key.code) {
            Some(Op::Down | Op::PageDown) => {
                self.cursor = (self.cursor + 1).min(n.saturating_sub(1))
            }
            Some(Op::Up | Op::PageUp) => self.cursor = self.cursor.saturating_sub(1),
            Some(Op::Refresh) => {
                return Outcome {
                    close: false,
                    effects: self.open().into_iter().map(Effect::Io).collect(),
                }
            }
            Some(Op::Open) => return self.ask_resume(cx),
            Some(Op::Quit) => return Outcome::with(Effect::Quit),
            _ => return Outcome::close(),
        }
        Outcome::stay()
    }

    /// Enter on a job: opens the resume prompt, unless no act may start
    /// now (the one check every act passes, [`Context::refusal`]).
    fn ask_resume(&mut self, cx: &Context) -> Outcome {
        let Some(r) = self.selected() else {
            return Outcome::stay();
        };
        if let Some(why) = cx.refusal {
            let text = format!("resume {}: {why}", r.record_id);
            return Outcome::with(Effect::Log(LogLevel::Error, text));
        }
        self.judge(cx.now);
        self.prompt = Some(if self.selected_life().resumable(false) {
            ResumePrompt::Confirm {
                typed: String::new(),
                forced_with: None,
            }
        } else {
            ResumePrompt::Reason(String::new())
        });
        Outcome::stay()
    }

    /// Enter in the prompt: a reason given moves on to the confirmation
    /// (a blank one is refused); a confirmation resumes.
    fn enter(&mut self, cx: &Context) -> Outcome {
        match self.prompt.take() {
            // The trail's one rule: a forced act needs a reason.
            Some(ResumePrompt::Reason(reason))
                if reason_missing(ActionKind::Recover, true, true, Some(&reason)).is_some() =>
            {
                self.prompt = Some(ResumePrompt::Reason(String::new()));
                let life = self.selected_life();
                let text = format!("the job is {life}: forcing its resume needs a reason");
                Outcome::with(Effect::Log(LogLevel::Error, text))
            }
            Some(ResumePrompt::Reason(reason)) => {
                self.prompt = Some(ResumePrompt::Confirm {
                    typed: String::new(),
                    forced_with: Some(reason.trim().to_string()),
                });
                Outcome::stay()
            }
            Some(ResumePrompt::Confirm { typed, forced_with }) => {
                self.resume(cx, typed, forced_with)
            }
            None => Outcome::stay(),
        }
    }

    /// Enter in the confirmation: starts the job when what was typed is
    /// what the prompt asks; otherwise says so and runs nothing.
    fn resume(&mut self, cx: &Context, typed: String, forced_with: Option<String>) -> Outcome {
        let Some(r) = self.selected() else {
            return Outcome::stay();
        };
        let (run, total) = (r.record_id.clone(), r.transactions.len());
        let Some(action) = action_of(r) else {
            return Outcome::stay();
        };
        // The one production guard (the profile's name, typed), as every
        // act's; elsewhere `y`.
        let word = resume_word(cx.settings);
        let accepted = match cx.settings.guard(true, None) {
            Some(g) => g.accepts(Some(&typed)),
            None => typed.trim() == word,
        };
        if !accepted {
            self.prompt = Some(ResumePrompt::Confirm {
                typed: String::new(),
                forced_with,
            });
            let text = format!(
                "resume {run}: `{}` does not confirm it: type {word}; nothing done",
                typed.trim()
            );
            return Outcome::with(Effect::Log(LogLevel::Error, text));
        }
        let text = format!(
            "resuming job {run}: reading its record ({} pauses, {} stops)",
            cx.keys.label(Op::PauseJob),
            cx.keys.label(Op::StopJob)
        );
        let confirmed = ResumeConfirmed {
            typed: cx.settings.production().then_some(typed.trim().to_string()),
            forced_with,
        };
        Outcome::with(Effect::Log(LogLevel::Info, text))
            .then(Effect::ResumeJob {
                run,
                action,
                total,
                confirmed,
            })
            .closing()
    }

    /// The key bar while the view is on top.
    pub fn hints() -> Vec<Hint> {
        vec![
            hint(0, "j/k", "select"),
            hint(0, "Enter", "resume"),
            hint(0, "r", "read again"),
            hint(0, "Esc", "close"),
        ]
    }
}
