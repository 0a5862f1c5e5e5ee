//! The jobs view (`J`), the state side: the bulk runs whose audit record
//! is still `running` — jobs under way (here or in another process) and
//! jobs a process that died left unfinished — with who started them, read
//! from the audit trail when the view opens (`r` reads again). Enter on
//! one asks to resume it from its record, as `--resume RUN_ID` does: `y`
//! (on a production profile, the profile's name, typed) then Enter starts
//! it as this dashboard's bulk run (its progress bar, `P`, `Esc`).

use super::app::{App, LogLevel};
use super::dialog::BulkProgress;
use super::event::{Action, IoRequest};
use super::keymap::Op;
use super::load::Load;
use super::overlay::{Overlay, OverlayKind};
use crate::protocol::trail::{ActionKind, Record};
use crossterm::event::{KeyCode, KeyEvent};

/// The jobs view's state.
#[derive(Debug, Clone, Default)]
pub struct JobsState {
    /// The unfinished jobs, newest first, or why they could not be read.
    pub list: Load<Vec<Record>>,
    /// The selected job.
    pub cursor: usize,
    /// Asking to resume the selected job: what was typed so far.
    pub resuming: Option<String>,
}

impl JobsState {
    /// The selected job.
    pub fn selected(&self) -> Option<&Record> {
        self.list.value().and_then(|l| l.get(self.cursor))
    }
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
    app.jobs.resuming = None;
    app.jobs.list.reload();
    vec![IoRequest::LoadJobs]
}

/// The jobs were read.
pub fn loaded(app: &mut App, jobs: Result<Vec<Record>, String>) {
    let n = jobs.as_ref().map_or(0, Vec::len);
    app.jobs.list = Load::of(jobs);
    app.jobs.cursor = app.jobs.cursor.min(n.saturating_sub(1));
}

/// Keys while the view is open.
pub fn on_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    if let Some(typed) = app.jobs.resuming.as_mut() {
        match key.code {
            KeyCode::Enter => return resume(app),
            KeyCode::Esc => app.jobs.resuming = None,
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
        Some(Op::Quit) => app.should_quit = true,
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
    match why {
        Some(why) => app.push_log(LogLevel::Error, format!("resume {id}: {why}")),
        None => app.jobs.resuming = Some(String::new()),
    }
}

/// Enter in the resume prompt: starts the job when what was typed is what
/// the prompt asks; otherwise says so and runs nothing.
fn resume(app: &mut App) -> Vec<IoRequest> {
    let typed = app.jobs.resuming.take().unwrap_or_default();
    let Some(r) = app.jobs.selected() else {
        return vec![];
    };
    let (run, total) = (r.record_id.clone(), r.transactions.len());
    let Some(action) = action_of(r) else {
        return vec![];
    };
    let word = resume_word(app);
    if typed.trim() != word {
        app.jobs.resuming = Some(String::new());
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
        format!("resuming job {run}: reading its record (P pauses, Esc stops)"),
    );
    app.bulk = Some(BulkProgress::new(action, total, app.now));
    let confirmed = app
        .settings
        .production()
        .then_some(typed.trim().to_string());
    vec![IoRequest::ResumeJob {
        run,
        action,
        confirmed,
    }]
}

/// The resumed job was planned: the bar counts what it runs.
pub fn resumed(app: &mut App, run: &str, total: usize) {
    if let Some(b) = app.bulk.as_mut() {
        b.total = total;
    }
    app.push_log(
        LogLevel::Info,
        format!("job {run}: {total} transaction(s) to read and decide again"),
    );
}
