//! The confirmation dialog, the one confirmation flow of every act: its
//! state (what it confirms and on what: one typed [`Pending`] act, one
//! act on one target, the one bulk act over the marked rows, or a job's
//! resume; what its re-read found ([`Load`]),
//! the reason being typed, and for a bulk dialog the marked rows with what
//! each would do), what it offers, derived from that state alone
//! ([`Dialog::can_confirm`], [`Dialog::needs_force`],
//! [`Dialog::refusal_now`]) so the key handler and the renderer ask the
//! same questions and get the same answers, its keys ([`keys`]: `y` never
//! forces; only the force key acts past the protocol's refusal) and its
//! drawing ([`draw`]).

pub mod bulk;
pub mod documents;
pub mod draw;
pub mod keys;
pub mod reverse;

pub use keys::planned_lines;

use crate::dashboard::event::{titled, Marked, OnMarks, Run};
use crate::dashboard::load::Load;
use crate::dashboard::settings::Settings;
use crate::protocol::audit::FindingKind;
use crate::protocol::intervene::{
    reason_missing, Act, AnyAct, AnyPlan, Choices, Guard, Intervention, JudgedOn, Planned,
};
use crate::protocol::jobs::JobLife;
use crate::protocol::trail::Interface;
use crate::protocol::transaction::TxnState;
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::time::Duration;

/// A confirmation dialog.
#[derive(Debug, Clone)]
pub struct Dialog {
    /// What the act would do, from the documents as re-read just now
    /// ([`Intervention::preview`]: steps, the refusal of an unforced run,
    /// balance change, lock releases, and the documents themselves).
    pub preview: Load<AnyPlan>,
    /// `false`: Cancel has focus (the default); `true`: Confirm has.
    pub confirm_focused: bool,
    /// Lines its text is scrolled down (long previews at 80×24).
    pub scroll: usize,
    /// The operator's reason for the audit trail, as typed so far.
    pub reason: String,
    /// The reason field is open (after `y` or `!`): keys type into it and
    /// Enter makes this run.
    pub reason_for: Option<RunChoice>,
    /// On a production profile, after the reason: what the operator has
    /// typed so far to confirm a bulk or forced run (the count or the
    /// profile's name, [`Dialog::guard`]); `None` while not asked.
    pub typed: Option<String>,
    /// An ack's duration field ([`AckFor`]); `None` for every other act.
    pub lasts: Option<AckFor>,
    /// The act it confirms, one of its kinds ([`Pending`]).
    pub pending: Pending,
}

/// An ack's duration, a field of its own beside the reason (Tab moves
/// between them): what was typed (the act's, 4h, to start with) and
/// whether keys type into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckFor {
    /// The duration as typed so far (`30m`, `8h`, `1d`).
    pub text: String,
    /// Keys type into this field, not the reason.
    pub focused: bool,
}

impl AckFor {
    /// The field for `pending`'s ack, holding the act's duration; none
    /// for any other act.
    fn of(pending: &Pending) -> Option<AckFor> {
        match pending {
            Pending::One(AnyAct::Acknowledge(a)) => a.direction.lasts().map(|lasts| AckFor {
                text: crate::protocol::time::human_duration(lasts),
                focused: false,
            }),
            _ => None,
        }
    }

    /// The duration typed, if it is one longer than zero; else why not.
    pub fn duration(&self) -> Result<std::time::Duration, String> {
        match crate::protocol::time::parse_duration(&self.text)? {
            d if d.is_zero() => Err(format!("`{}` is zero", self.text.trim())),
            d => Ok(d),
        }
    }
}

/// The one act a dialog confirms, by kind: each kind carries what it
/// runs, so no kind is an optional side part of another.
#[derive(Debug, Clone)]
pub enum Pending {
    /// One act on its subject: the library's act as `y` runs it (with
    /// the operator's choices added, [`Run::intervention`]).
    One(AnyAct),
    /// The one bulk act over the marked rows (R/F/L on the marked set).
    Bulk(Box<Bulk>),
    /// The resume of an unfinished bulk job (the jobs view's Enter).
    Resume(Resume),
}

/// What a resume dialog confirms: the job as the jobs view judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The job (its audit record's id).
    pub run: String,
    /// Its procedure (rollback or recover).
    pub procedure: Procedure,
    /// The transactions its record names.
    pub total: usize,
    /// Its life by its heartbeat: one not presumed dead resumes only
    /// forced.
    pub life: JobLife,
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
    /// A dialog confirming `act`, its preview asked for.
    pub fn new(act: impl Into<AnyAct>) -> Dialog {
        Dialog::of(Pending::One(act.into()))
    }

    /// A dialog confirming `pending`.
    pub fn of(pending: Pending) -> Dialog {
        Dialog {
            preview: Load::Loading,
            confirm_focused: false,
            scroll: 0,
            reason: String::new(),
            reason_for: None,
            typed: None,
            lasts: AckFor::of(&pending),
            pending,
        }
    }

    /// The one act it confirms, for a dialog of one act.
    pub fn act(&self) -> Option<&AnyAct> {
        match &self.pending {
            Pending::One(act) => Some(act),
            _ => None,
        }
    }

    /// The bulk act's marked rows and plan, for a bulk dialog.
    pub fn bulk(&self) -> Option<&Bulk> {
        match &self.pending {
            Pending::Bulk(b) => Some(b),
            _ => None,
        }
    }

    /// A bulk dialog's plan as previewed, once it arrived: what `p`
    /// saves as a plan file.
    pub fn selection_plan(&self) -> Option<&crate::protocol::intervene::SelectionPlan> {
        match self.bulk()?.preview.value()? {
            Marked::Bulk(plan) => Some(plan),
            Marked::LocksOf { .. } => None,
        }
    }

    /// [`Dialog::bulk`], to keep its re-read in.
    pub fn bulk_mut(&mut self) -> Option<&mut Bulk> {
        match &mut self.pending {
            Pending::Bulk(b) => Some(b),
            _ => None,
        }
    }

    /// The job as judged, for a resume dialog.
    pub fn resuming(&self) -> Option<&Resume> {
        match &self.pending {
            Pending::Resume(r) => Some(r),
            _ => None,
        }
    }

    /// A dialog resuming the job `resume.run` (as `--resume RUN_ID`
    /// does): the same flow as every act's — `y` (or, for a job not
    /// presumed dead, only the force key), the reason, on a production
    /// profile the profile's name typed.
    pub fn resume(resume: Resume) -> Dialog {
        Dialog {
            preview: Load::Idle,
            ..Dialog::of(Pending::Resume(resume))
        }
    }

    /// How the log and the title name it: `Recover t-1`, `Roll back 3
    /// marked transaction(s)`, `Resume job RUN`.
    pub fn heading(&self) -> String {
        match &self.pending {
            Pending::One(act) => titled(act),
            Pending::Bulk(b) => {
                format!("{} {} marked transaction(s)", b.on.title(), b.ids.len())
            }
            Pending::Resume(r) => format!("Resume job {}", r.run),
        }
    }

    /// Whether what it confirms destroys or undoes work (the act's own
    /// rule; a resume as its procedure's bulk act).
    pub fn destructive(&self) -> bool {
        match &self.pending {
            Pending::One(act) => act.destructive(),
            Pending::Bulk(b) => b.on.destructive(),
            Pending::Resume(r) => OnMarks::Procedure(r.procedure).destructive(),
        }
    }

    /// Why Enter may not run yet: the trail's rule wants a reason not
    /// given (a resume: only when forced, as `--resume` asks).
    pub fn reason_missing(&self, force: bool, reason: &str) -> Option<String> {
        match &self.pending {
            Pending::Resume(r) => (force && reason.trim().is_empty())
                .then(|| format!("the job is {}: forcing its resume needs a reason", r.life)),
            Pending::Bulk(b) => {
                let kind = b.on.item(String::new()).action();
                reason_missing(kind, force, true, Some(reason)).map(|why| why.to_string())
            }
            Pending::One(act) => {
                reason_missing(act.action(), force, false, Some(reason)).map(|why| why.to_string())
            }
        }
    }

    /// The one act it confirms, before the operator's choices (`y` or
    /// the force key, and the reason) are added to it
    /// ([`Run::intervention`]); `None` for a bulk or resume dialog.
    pub fn intervention(&self) -> Option<Intervention<AnyAct>> {
        match &self.pending {
            Pending::One(act) => Some(Intervention::new(
                act.clone(),
                Choices::new(Interface::Dashboard, None),
            )),
            Pending::Bulk(_) | Pending::Resume(_) => None,
        }
    }

    /// Whether the preview leaves anything to confirm (loaded, something
    /// to write, not refused for a reason forcing cannot lift).
    pub fn can_confirm(&self) -> bool {
        match &self.pending {
            Pending::Resume(_) => return true,
            Pending::Bulk(b) => return b.plan.as_ref().is_some_and(|p| !p.runs.is_empty()),
            Pending::One(_) => {}
        }
        let Some(plan) = self.preview.value() else {
            return false;
        };
        match plan.judged() {
            Some(JudgedOn::Procedure(t)) => {
                let p = t.detail.preview(t.procedure);
                p.refusal.is_none() && !p.steps.is_empty()
            }
            Some(JudgedOn::LocksOf(l)) => !l.lock_releases().is_empty(),
            Some(JudgedOn::Lock(l)) => l.view.is_some(),
            // Refused by the admission rule: no steps (nothing will run).
            Some(JudgedOn::Reversal(r)) => !r.steps.is_empty(),
            Some(JudgedOn::Acks(a)) => !a.ids.is_empty(),
            Some(JudgedOn::Audit(r)) => r
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::DanglingPending),
            // Not read (the preview then failed instead).
            None => false,
        }
    }

    /// Whether `y` would be refused by the protocol though there is
    /// something to confirm (so only the force key acts).
    pub fn needs_force(&self) -> bool {
        if let Some(r) = self.resuming() {
            return !r.life.resumable(false);
        }
        self.can_confirm() && self.preview.value().is_some_and(|p| p.refusal().is_some())
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
        if let Some(r) = self.resuming() {
            return Some(format!(
                "job {} is {}: a resume would run its transactions a second time \
                 (fenced: no step applied twice); force it only if its process is gone",
                r.run, r.life
            ));
        }
        let plan = self.preview.value()?;
        let said = plan.refusal()?;
        let det = match (said.recent(), plan.judged()) {
            (Some(_), Some(JudgedOn::Procedure(t))) => &t.detail,
            (Some(_), Some(JudgedOn::LocksOf(l))) => &l.detail,
            _ => return Some(said.explain(hint)),
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
        match &self.pending {
            // A resume is confirmed by the profile's name, forced or not.
            Pending::Resume(_) => settings.guard(true, None),
            Pending::Bulk(b) => {
                let count = b.plan.as_ref().map_or(0, |p| p.runs.len());
                settings.guard(false, Some(count))
            }
            Pending::One(_) => {
                settings.guard(self.reason_for.is_some_and(RunChoice::is_forced), None)
            }
        }
    }

    /// Whether the preview (or the bulk preview) has arrived.
    pub fn loaded(&self) -> bool {
        match &self.pending {
            Pending::Resume(_) => true,
            Pending::Bulk(b) => b.preview.is_done(),
            Pending::One(_) => self.preview.is_done(),
        }
    }
}

/// A bulk dialog: the marked rows it acts on, the marks it leaves out
/// because the table does not show them, and what the re-read found.
#[derive(Debug, Clone)]
pub struct Bulk {
    /// What it does on them.
    pub on: OnMarks,
    /// The marked rows of the table (what it acts on), sorted.
    pub ids: Vec<String>,
    /// Marks hidden by the filter: not included (named in the dialog).
    pub filtered: Vec<String>,
    /// Marks no longer listed: not included (named in the dialog).
    pub unlisted: Vec<String>,
    /// The plan over them as re-read ([`Marked`]: each one's own plan),
    /// or why nothing can run.
    pub preview: Load<Marked>,
    /// What it would do, derived from the plan when it arrives.
    pub plan: Option<BulkPlan>,
}

/// What a bulk dialog would do, derived from the marks' plan
/// ([`Marked::verdicts`], what `--dry-run` counts).
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
