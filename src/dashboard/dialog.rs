//! The confirmation dialog's state: what it confirms and on what, what its
//! re-read found ([`Load`]), the reason being typed, and for a bulk dialog
//! the marked rows with what each would do; what a bulk run shows while it
//! runs. Also what the dialog offers, derived from that state alone
//! ([`Dialog::can_confirm`], [`Dialog::needs_force`],
//! [`Dialog::refusal_now`]), so the key handler and the renderer ask the
//! same questions and get the same answers.

use super::event::{Action, Run};
use super::load::Load;
use super::settings::Settings;
use crate::protocol::audit::FindingKind;
use crate::protocol::intervene::{Choices, Documents, Guard, Intervention, Plan};
use crate::protocol::trail::{ActOutcome, Interface};
use crate::protocol::transaction::TxnState;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::time::Duration;

/// A confirmation dialog.
#[derive(Debug, Clone)]
pub struct Dialog {
    /// What it confirms.
    pub action: Action,
    /// What it acts on: a transaction id, a lock's resource (for
    /// [`Action::ReleaseLock`]) or an account (the audit's repair).
    pub target: String,
    /// What the act would do, from the documents as re-read just now
    /// ([`Intervention::preview`]: steps, the refusal of an unforced run,
    /// balance change, lock releases, and the documents themselves).
    pub preview: Load<Plan>,
    /// `false`: Cancel has focus (the default); `true`: Confirm has.
    pub confirm_focused: bool,
    /// Lines its text is scrolled down (long previews at 80×24).
    pub scroll: usize,
    /// A bulk dialog (R/F/L on the marked set); `txn` then only names it.
    pub bulk: Option<Bulk>,
    /// The operator's reason for the audit trail, as typed so far.
    pub reason: String,
    /// The reason field is open (after `y` or `!`): keys type into it and
    /// Enter makes this run.
    pub reason_for: Option<RunChoice>,
    /// On a production profile, after the reason: what the operator has
    /// typed so far to confirm a bulk or forced run (the count or the
    /// profile's name, [`Dialog::guard`]); `None` while not asked.
    pub typed: Option<String>,
}

/// Which run the operator chose in a dialog: `y` (the protocol decides) or
/// the force key (past its refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunChoice {
    /// `y`: unforced.
    Plain,
    /// The force key.
    Forced,
}

impl RunChoice {
    /// `Forced` when `force`, else `Plain`.
    pub fn of(force: bool) -> RunChoice {
        if force {
            RunChoice::Forced
        } else {
            RunChoice::Plain
        }
    }

    /// Whether it runs forced.
    pub fn is_forced(self) -> bool {
        self == RunChoice::Forced
    }
}

impl Dialog {
    /// A dialog for `action` on `target`, its preview asked for.
    pub fn new(action: Action, target: String) -> Dialog {
        Dialog {
            action,
            target,
            preview: Load::Loading,
            confirm_focused: false,
            scroll: 0,
            bulk: None,
            reason: String::new(),
            reason_for: None,
            typed: None,
        }
    }

    /// The act it confirms, before the operator's choices (`y` or the
    /// force key, and the reason) are added to it ([`Run::intervention`]).
    pub fn intervention(&self) -> Intervention {
        let choices = Choices::new(Interface::Dashboard, None);
        self.action.intervention(&self.target, choices)
    }

    /// Whether the preview leaves anything to confirm (loaded, something
    /// to write, not refused for a reason forcing cannot lift).
    pub fn can_confirm(&self) -> bool {
        if let Some(b) = &self.bulk {
            return b.plan.as_ref().is_some_and(|p| !p.runs.is_empty());
        }
        let Some(plan) = self.preview.value() else {
            return false;
        };
        match (&plan.documents, self.action) {
            (Some(Documents::Transaction(det)), Action::Rollback) => {
                det.rollback.refusal.is_none() && !det.rollback.steps.is_empty()
            }
            (Some(Documents::Transaction(det)), Action::Recover) => {
                det.recover.refusal.is_none() && !det.recover.steps.is_empty()
            }
            (Some(Documents::Transaction(_)), Action::ReleaseLocks) => {
                !plan.lock_releases.is_empty()
            }
            (Some(Documents::Lock(l)), Action::ReleaseLock) => l.is_some(),
            // Refused by the admission rule: no steps (nothing will run).
            (Some(Documents::Reversal { .. }), Action::Reverse) => !plan.steps.is_empty(),
            (Some(Documents::Audit(r)), Action::AuditRepair) => r
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::DanglingPending),
            _ => false,
        }
    }

    /// Whether `y` would be refused by the protocol though there is
    /// something to confirm (so only the force key acts).
    pub fn needs_force(&self) -> bool {
        self.can_confirm() && self.preview.value().is_some_and(|p| p.refusal.is_some())
    }

    /// The refusal of an unforced run as of `now`, in the dashboard's
    /// words ([`crate::protocol::intervene::ActRefusal::explain`] with the
    /// force key), when only the force key acts: the recovery window's
    /// refusal (`window`) gives the age now, not the one when the dialog
    /// opened; one that no longer holds says so (the dialog must be
    /// reopened to check it again). Other refusals as previewed.
    pub fn refusal_now(&self, now: DateTime<Utc>, window: Duration, hint: &str) -> Option<String> {
        if !self.needs_force() {
            return None;
        }
        let plan = self.preview.value()?;
        let said = plan.refusal.as_ref()?;
        let (Some(_), Some(Documents::Transaction(det))) = (said.recent(), &plan.documents) else {
            return Some(said.explain(hint));
        };
        Some(
            match crate::protocol::read::rules::recovery_refusal(&det.txn, now, window) {
                Some(r) => r.explain(hint),
                None => format!(
                    "{} — when the dialog opened; it has left the recovery window since: \
                     close and reopen the dialog to check it again",
                    said.explain(hint)
                ),
            },
        )
    }

    /// What the operator must type before the chosen run starts on a
    /// production profile (`settings`): a bulk run's count (the runs `y`
    /// starts) or the profile's name; a forced run's profile name.
    pub fn guard(&self, settings: &Settings) -> Option<Guard> {
        match &self.bulk {
            Some(b) => {
                let count = b.plan.as_ref().map_or(0, |p| p.runs.len());
                settings.guard(false, Some(count))
            }
            None => settings.guard(self.reason_for.is_some_and(RunChoice::is_forced), None),
        }
    }

    /// Whether the preview (or the bulk preview) has arrived.
    pub fn loaded(&self) -> bool {
        match &self.bulk {
            Some(b) => b.preview.is_done(),
            None => self.preview.is_done(),
        }
    }
}

/// A bulk dialog: the marked rows it acts on, the marks it leaves out
/// because the table does not show them, and what the re-read found.
#[derive(Debug, Clone)]
pub struct Bulk {
    /// The marked rows of the table (what it acts on), sorted.
    pub ids: Vec<String>,
    /// Marks hidden by the filter: not included (named in the dialog).
    pub filtered: Vec<String>,
    /// Marks no longer listed: not included (named in the dialog).
    pub unlisted: Vec<String>,
    /// The bulk act's plan over them as re-read ([`Plan::items`]: each
    /// one's own plan), or why nothing can run.
    pub preview: Load<Plan>,
    /// What it would do, derived from the plan when it arrives.
    pub plan: Option<BulkPlan>,
}

/// What a bulk dialog would do, derived from the bulk act's plan
/// ([`Plan::verdicts`], what `--dry-run` counts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkPlan {
    /// The runs `y` starts, each carrying what was re-read.
    pub runs: Vec<Run>,
    /// The others, by what keeps them out ("refused: committed",
    /// "nothing to do", why the selection left one out), with their ids.
    pub left_out: BTreeMap<String, Vec<String>>,
    /// The runs by the state they were re-read in.
    pub by_state: BTreeMap<Option<TxnState>, usize>,
    /// Balance change per account of the runs.
    pub effect: BTreeMap<String, i64>,
}

/// A bulk run in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkProgress {
    /// The action.
    pub action: Action,
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
    /// A run of `total` items of `action`, started `now`.
    pub fn new(action: Action, total: usize, now: DateTime<Utc>) -> BulkProgress {
        BulkProgress {
            action,
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
