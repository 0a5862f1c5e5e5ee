//! The jobs view (`J`): the bulk runs whose audit record is still
//! `running` — jobs under way (here or in another process) and jobs a
//! process that died left unfinished — with who started them, read from
//! the audit trail when the view opens (`r` reads again), each judged live,
//! presumed dead or unknown by its heartbeat (`jobs::job_life`, at the
//! screen's clock, again at each tick). Enter on one asks to resume it from
//! its record, as `--resume RUN_ID` does, in the confirmation dialog every
//! act uses: a job presumed dead with `y`, any other only with the force
//! key, with a reason; on a production profile the profile's name, typed;
//! it then runs as this dashboard's bulk run (its progress bar, `P`, the
//! stop key).

pub mod draw;

use super::{hint, Context, Effect, Hint, Outcome};
use crate::dashboard::event::IoRequest;
use crate::dashboard::keymap::Op;
use crate::dashboard::layers::dialog::{Dialog, Resume};
use crate::dashboard::load::Load;
use crate::protocol::jobs::{job_life, JobLife};
use crate::protocol::time::human_age;
use crate::protocol::trail::{ActionKind, Record};
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use crossterm::event::KeyEvent;
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

/// The procedure a resume of `r` runs (a bulk rollback or recovery).
pub fn procedure_of(r: &Record) -> Option<Procedure> {
    match r.action {
        ActionKind::Rollback => Some(Procedure::Rollback),
        ActionKind::Recover => Some(Procedure::Recover),
        _ => None,
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

    /// Enter on a job: asks to resume it in the confirmation dialog,
    /// the one flow of every act (a job not presumed dead only forced,
    /// with a reason).
    fn ask_resume(&mut self, cx: &Context) -> Outcome {
        self.judge(cx.now);
        let Some(r) = self.selected() else {
            return Outcome::stay();
        };
        let Some(procedure) = procedure_of(r) else {
            return Outcome::stay();
        };
        let resume = Resume {
            run: r.record_id.clone(),
            procedure,
            total: r.transactions.len(),
            life: self.selected_life(),
        };
        let dialog = Dialog::resume(resume);
        Outcome::with(Effect::ConfirmResume(Box::new(dialog)))
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
