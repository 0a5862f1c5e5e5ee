//! A bulk run in progress as the screen shows it: its counts by outcome,
//! its pace and time left, whether it is paused or stopping.

use super::event::OnMarks;
use crate::protocol::trail::ActOutcome;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// A bulk run in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkProgress {
    /// What it does on its transactions.
    pub on: OnMarks,
    /// Items in the run.
    pub total: usize,
    /// Items ended (a transaction stopped part-way is left, not ended).
    pub done: usize,
    /// Items that failed (neither refused nor stopped).
    pub failed: usize,
    /// The items that ended or were stopped, by outcome.
    pub counts: OutcomeCounts,
    /// The stop was confirmed: no new item starts.
    pub stopping: bool,
    /// Quit once it has stopped (the stop was asked by quitting, or by a
    /// stop signal).
    pub quit_when_stopped: bool,
    /// Its job (audit record), once written.
    pub run: Option<String>,
    /// Where a stop writes the ids it leaves (`None`: not known yet, or no
    /// state directory).
    pub left_file: Option<std::path::PathBuf>,
    /// When it started (the screen's clock).
    pub started: DateTime<Utc>,
    /// Paused by the operator: no write goes until resumed.
    pub paused: bool,
    /// Items ended a minute since the start ([`BulkProgress::pace`]).
    pub per_minute: u64,
    /// At that rate, the time the rest takes (unknown before an item
    /// ended, and while paused).
    pub eta: Option<Duration>,
}

impl BulkProgress {
    /// A run of `total` items `on` the marks (or a job's), started `now`.
    pub fn new(on: OnMarks, total: usize, now: DateTime<Utc>) -> BulkProgress {
        BulkProgress {
            on,
            total,
            done: 0,
            failed: 0,
            counts: OutcomeCounts::default(),
            stopping: false,
            quit_when_stopped: false,
            run: None,
            left_file: None,
            started: now,
            paused: false,
            per_minute: 0,
            eta: None,
        }
    }

    /// One item ended (or was stopped part-way) with `outcome`.
    pub fn count(&mut self, outcome: ActOutcome) {
        self.counts.add(outcome);
        self.done = self.counts.ended();
        self.failed = self.counts.failed;
    }

    /// Derives the rate and the time left as of `now` (on each item that
    /// ends and each tick): items ended over the time since the start.
    pub fn pace(&mut self, now: DateTime<Utc>) {
        let ms = (now - self.started).num_milliseconds().max(1) as u64;
        let done = self.done as u64;
        self.per_minute = done * 60_000 / ms;
        let left = self.total.saturating_sub(self.done) as u64;
        self.eta = (done > 0 && !self.paused)
            .then(|| Duration::from_millis(left.saturating_mul(ms) / done));
    }
}

/// Items of a run counted by how each ended: the run is told by its
/// counts ("2 completed, 1 refused"), never reduced to its worst outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutcomeCounts {
    /// Ran to the end (or another process ended it).
    pub completed: usize,
    /// Nothing needed doing.
    pub nothing_to_do: usize,
    /// Refused before changing anything.
    pub refused: usize,
    /// Failed.
    pub failed: usize,
    /// Stopped part-way by a stop: left, not ended.
    pub stopped: usize,
}

impl OutcomeCounts {
    /// Counts one more `outcome`.
    pub fn add(&mut self, outcome: ActOutcome) {
        let n = match outcome {
            ActOutcome::Completed => &mut self.completed,
            ActOutcome::NothingToDo => &mut self.nothing_to_do,
            ActOutcome::Refused => &mut self.refused,
            ActOutcome::Failed => &mut self.failed,
            ActOutcome::Stopped => &mut self.stopped,
        };
        *n += 1;
    }

    /// Items that ended (every outcome but stopped part-way).
    pub fn ended(&self) -> usize {
        self.completed + self.nothing_to_do + self.refused + self.failed
    }

    /// The ended ones' counts that are not zero: `2 completed, 1 refused`
    /// (`none` when none ended).
    pub fn brief(&self) -> String {
        let parts: Vec<String> = [
            (self.completed, "completed"),
            (self.nothing_to_do, "nothing to do"),
            (self.refused, "refused"),
            (self.failed, "failed"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}
