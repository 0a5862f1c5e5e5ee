//! The jobs view (`J`), the state side: the bulk runs whose audit record
//! is still `running` — jobs under way (here or in another process) and
//! jobs a process that died left unfinished — with who started them, read
//! from the audit trail when the view opens (`r` reads again), each judged
//! live, presumed dead or unknown by its heartbeat (`jobs::job_life`, at
//! the screen's clock, again at each tick). Enter on one asks to resume it
//! from its record, as `--resume RUN_ID` does: a job presumed dead at once,
//! any other only forced, with a reason typed first; then `y` (on a
//! production profile, the profile's name, typed) and Enter start it as
//! this dashboard's bulk run (its progress bar, `P`, the stop key).

use super::app::{App, LogLevel};
use super::dialog::BulkProgress;
use super::event::{Action, IoRequest};
use super::keymap::Op;
use super::load::Load;
use super::overlay::{Overlay, OverlayKind};
use crate::protocol::jobs::{job_life, JobLife};
use crate::protocol::time::human_age;
use crate::protocol::trail::{ActionKind, Record};
use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent};
use std::collections::HashSet;

/// The jobs view's state.
#[derive(Debug, Clone, Default)]
pub struct JobsState {
    /// The unfinished jobs, newest first, or why they could not be read.
    pub list: Load<Vec<Record>>,
    /// What the view shows of each listed job at the screen's clock, in
    /// the list's order (derived when the list or the clock changes:
    /// [`judge`]).
    pub rows: Vec<JobRow>,
    /// The selected job.
    pub cursor: usize,
    /// Asking to resume the selected job.
    pub prompt: Option<ResumePrompt>,
}

/// What the jobs view shows of one listed job beyond its record, derived
/// when the list or the screen's clock changes ([`judge`]), never while
/// drawing.
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

/// How the operator confirmed a resume: what they typed on a production
/// profile, and the reason when they forced it over a job not presumed
/// dead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeConfirmed {
    /// The profile's name typed (a production profile), if asked.
    pub typed: Option<String>,
    /// The reason of a forced resume.
    pub forced_with: Option<String>,
}

impl JobsState {
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
}

/// Derives every listed job's row at `now`: its life (the protocol's
/// rule), its age and its progress.
pub fn judge(jobs: &mut JobsState, now: DateTime<Utc>) {
    jobs.rows = jobs
        .list
        .value()
        .map_or_else(Vec::new, |l| l.iter().map(|r| JobRow::of(r, now)).collect());
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
pub fn resume_word(app: &App) -> String {
    match app.settings.guard(true, None) {
        Some(g) => g.profile,
        None => "y".to_string(),
    }
}

/// `J`: opens the view and reads the jobs.
pub fn open(app: &mut App) -> Vec<IoRequest> {
    app.overlays.open(Overlay::Jobs);
    app.jobs.prompt = None;
    app.jobs.list.reload();
    vec![IoRequest::LoadJobs]
}

/// The jobs were read.
pub fn loaded(app: &mut App, jobs: Result<Vec<Record>, String>) {
    let n = jobs.as_ref().map_or(0, Vec::len);
    app.jobs.list = Load::of(jobs);
    app.jobs.cursor = app.jobs.cursor.min(n.saturating_sub(1));
    judge(&mut app.jobs, app.now);
}

/// Keys while the view is open.
pub fn on_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    if let Some(prompt) = app.jobs.prompt.as_mut() {
        let typed = match prompt {
            ResumePrompt::Reason(t) | ResumePrompt::Confirm { typed: t, .. } => t,
        };
        match key.code {
            KeyCode::Enter => return enter(app),
            KeyCode::Esc => app.jobs.prompt = None,
            KeyCode::Backspace => {
                typed.pop();
            }
            KeyCode::Char(c) => typed.push(c),
            _ => {}
        }
        return vec![];
    }
    let n = app.jobs.list.value().map_or(0, Vec::len);
    let cursor = &mut app.jobs.cursor;
    match app.keys.main_op(key.code) {
        Some(Op::Down | Op::PageDown) => *cursor = (*cursor + 1).min(n.saturating_sub(1)),
        Some(Op::Up | Op::PageUp) => *cursor = cursor.saturating_sub(1),
        Some(Op::Refresh) => return open(app),
        Some(Op::Open) => ask_resume(app),
        Some(Op::Quit) => return super::stop::quit(app),
        _ => {
            app.overlays.close(OverlayKind::Jobs);
        }
    }
    vec![]
}

/// Enter on a job: opens the resume prompt, unless writes are off or a
/// run is under way.
fn ask_resume(app: &mut App) {
    let Some(r) = app.jobs.selected() else {
        return;
    };
    let id = r.record_id.clone();
    let why = if app.settings.read_only {
        Some("read-only mode".to_string())
    } else if let Some(b) = &app.bulk {
        Some(format!(
            "the bulk {} is still running",
            b.action.bulk_verb()
        ))
    } else if app.running.is_some() {
        Some("an action is still running".to_string())
    } else {
        None
    };
    if let Some(why) = why {
        app.push_log(LogLevel::Error, format!("resume {id}: {why}"));
        return;
    }
    judge(&mut app.jobs, app.now);
    app.jobs.prompt = Some(if app.jobs.selected_life().resumable(false) {
        ResumePrompt::Confirm {
            typed: String::new(),
            forced_with: None,
        }
    } else {
        ResumePrompt::Reason(String::new())
    });
}

/// Enter in the prompt: a reason given moves on to the confirmation (a
/// blank one is refused); a confirmation resumes.
fn enter(app: &mut App) -> Vec<IoRequest> {
    match app.jobs.prompt.take() {
        Some(ResumePrompt::Reason(reason)) if reason.trim().is_empty() => {
            app.jobs.prompt = Some(ResumePrompt::Reason(String::new()));
            let life = app.jobs.selected_life();
            let text = format!("the job is {life}: forcing its resume needs a reason");
            app.push_log(LogLevel::Error, text);
            vec![]
        }
        Some(ResumePrompt::Reason(reason)) => {
            app.jobs.prompt = Some(ResumePrompt::Confirm {
                typed: String::new(),
                forced_with: Some(reason.trim().to_string()),
            });
            vec![]
        }
        Some(ResumePrompt::Confirm { typed, forced_with }) => resume(app, typed, forced_with),
        None => vec![],
    }
}

/// Enter in the confirmation: starts the job when what was typed is what
/// the prompt asks; otherwise says so and runs nothing.
fn resume(app: &mut App, typed: String, forced_with: Option<String>) -> Vec<IoRequest> {
    let Some(r) = app.jobs.selected() else {
        return vec![];
    };
    let (run, total) = (r.record_id.clone(), r.transactions.len());
    let Some(action) = action_of(r) else {
        return vec![];
    };
    let word = resume_word(app);
    if typed.trim() != word {
        app.jobs.prompt = Some(ResumePrompt::Confirm {
            typed: String::new(),
            forced_with,
        });
        let text = format!(
            "resume {run}: `{}` does not confirm it: type {word}; nothing done",
            typed.trim()
        );
        app.push_log(LogLevel::Error, text);
        return vec![];
    }
    app.overlays.close(OverlayKind::Jobs);
    app.push_log(
        LogLevel::Info,
        format!(
            "resuming job {run}: reading its record ({} pauses, {} stops)",
            app.keys.label(Op::PauseJob),
            app.keys.label(Op::StopJob)
        ),
    );
    app.bulk = Some(BulkProgress::new(action, total, app.now));
    let confirmed = ResumeConfirmed {
        typed: app
            .settings
            .production()
            .then_some(typed.trim().to_string()),
        forced_with,
    };
    vec![IoRequest::ResumeJob {
        run,
        action,
        confirmed,
    }]
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
