//! The one event channel's vocabulary: what the terminal, the poller and
//! action tasks send to the UI loop (`Event`), and what the pure `update`
//! function asks the loop to do in return (`IoRequest`).

use crate::error::Error;
use crate::protocol::audit::pace::AuditCost;
use crate::protocol::audit::AuditReport;
use crate::protocol::batch::BatchOptions;
use crate::protocol::intervene::{
    Act, ActRefusal, AnyAct, AnyPlan, BulkAct, Choices, Intervention, LeftOut, LocksOfPlan,
    Recover, ReleaseLocksOf, Rollback, Runner, Selection, SelectionPlan, Subject, Verdicts,
};
use crate::protocol::read::poll::Snapshot;
use crate::protocol::report::StepReport;
use crate::protocol::trail::receipts::Verification;
use crate::protocol::trail::Interface;
use crate::protocol::trail::{ActOutcome, Record};
use crate::protocol::transaction::TxnState;
use crate::protocol::views::TransactionDetail;
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use crossterm::event::{KeyEvent, MouseEvent};
use std::path::PathBuf;
use std::time::Duration;

/// What R, F or L does on the marked rows of the table: the one bulk act
/// of a procedure over them (as `rollback`/`recover --ids-from` runs it),
/// or each one's own release of its locks. A single act is the library's
/// own ([`AnyAct`]); this names only how a marked set is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OnMarks {
    /// R or F: the one bulk act of this procedure over the marks.
    Procedure(Procedure),
    /// L: each marked transaction's locks released, each its own act.
    ReleaseLocks,
}

impl OnMarks {
    /// The act on one marked transaction `id`, as it would be alone:
    /// what its item is called in the log, and (for L) what runs.
    pub fn item(self, id: String) -> AnyAct {
        match self {
            OnMarks::Procedure(Procedure::Rollback) => Rollback::new(id).into(),
            OnMarks::Procedure(Procedure::Recover) => Recover::new(id).into(),
            OnMarks::ReleaseLocks => ReleaseLocksOf {
                txn: id,
                allow_partial: true,
            }
            .into(),
        }
    }

    /// Its title before what it acts on (the act's own, [`Act::title`]).
    pub fn title(self) -> &'static str {
        self.item(String::new()).title()
    }

    /// Whether it destroys or undoes work (the act's own rule).
    pub fn destructive(self) -> bool {
        self.item(String::new()).destructive()
    }

    /// The verb a bulk summary uses.
    pub fn verb(self) -> &'static str {
        match self {
            OnMarks::Procedure(Procedure::Rollback) => "roll back",
            OnMarks::Procedure(Procedure::Recover) => "recover",
            OnMarks::ReleaseLocks => "release locks",
        }
    }

    /// The one bulk act R or F confirms on the marked rows `ids`: what
    /// `rollback`/`recover --ids-from FILE` makes of the same ids (rollbacks
    /// a few at a time, recoveries in batches), so its preview is what the
    /// command line's `--dry-run` prints. `None` for L (a release of the
    /// marked transactions' locks is each one's own act).
    pub fn bulk_intervention(
        self,
        ids: Vec<String>,
        choices: Choices,
    ) -> Option<Intervention<BulkAct>> {
        let OnMarks::Procedure(procedure) = self else {
            return None;
        };
        let act = BulkAct {
            ids_source: Some(MARKS.into()),
            ..BulkAct::on(procedure, Selection::ids(ids), runner_for(procedure))
        };
        Some(Intervention::new(act, choices))
    }
}

/// What the dialog showed of its target, so a confirmed run can check it is
/// still acting on the same thing (same state, same last modification).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Transaction state (for lock actions: the owner's state).
    pub state: Option<TxnState>,
    /// Last modification (for lock actions: the lock's creation time).
    pub modified: Option<chrono::DateTime<Utc>>,
}

/// How the dashboard runs a bulk `procedure` (a marked set, or a resumed
/// job): rollbacks a few at a time, recoveries in batches.
pub fn runner_for(procedure: Procedure) -> Runner {
    match procedure {
        Procedure::Rollback => Runner::OneByOne(BULK_CONCURRENCY),
        Procedure::Recover => Runner::Batched(BatchOptions::default()),
    }
}

/// What the audit record names as the source of a marked set's ids.
pub const MARKS: &str = "the dashboard's marks";

/// Most items a bulk run works on at once.
pub const BULK_CONCURRENCY: usize = 4;

/// The marked transactions previewed for a bulk dialog ([`Marked`]), or
/// why nothing can run (e.g. no audit index).
pub type BulkReread = Result<Marked, NoPlan>;

/// The marked transactions previewed for a bulk dialog, by what runs on
/// them: each transaction's own plan on its documents.
#[derive(Debug, Clone)]
pub enum Marked {
    /// A rollback or recovery of the marks: the one bulk act's plan
    /// ([`OnMarks::bulk_intervention`] previewed: each transaction's own
    /// plan in [`SelectionPlan::items`]).
    Bulk(SelectionPlan),
    /// The release of each marked transaction's locks, each its own act:
    /// their plans, and the marks that could not be previewed.
    LocksOf {
        /// Each one's plan, in mark order.
        items: Vec<LocksOfPlan>,
        /// The marks left out, with why.
        left_out: Vec<LeftOut>,
    },
}

impl Marked {
    /// What each would do, counted (what `--dry-run` counts too).
    pub fn verdicts(&self) -> Verdicts {
        match self {
            Marked::Bulk(plan) => plan.verdicts(),
            Marked::LocksOf { items, left_out } => Verdicts::of(items, left_out, &[]),
        }
    }
}

/// Why an act could not be previewed for its dialog: nothing will run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoPlan {
    /// The audit trail every act is recorded in has no index.
    TrailMissing(String),
    /// The audit trail cannot be checked.
    TrailUnusable(Error),
    /// The preview failed.
    Failed(Error),
    /// The act refuses its target, which it could not read.
    Refused(ActRefusal),
    /// The target could not be read.
    Unreadable(String),
}

impl std::fmt::Display for NoPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoPlan::TrailMissing(index) => write!(
                f,
                "{}; nothing will run",
                ActRefusal::AuditIndexMissing(index.clone())
            ),
            NoPlan::TrailUnusable(e) => {
                write!(f, "cannot open the audit trail: {e}; nothing will run")
            }
            NoPlan::Failed(e) => write!(f, "{e}"),
            NoPlan::Refused(r) => write!(f, "{r}"),
            NoPlan::Unreadable(id) => write!(f, "could not read `{id}`"),
        }
    }
}

/// A confirmed act as the loop runs it: the library's act with the
/// operator's choices (`y` never forces; only the dialog's force key
/// does), and what the dialog showed of its subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// What, and how: the act the dialog previewed, with the force, the
    /// reason and the typed confirmation the operator gave.
    pub intervention: Intervention<AnyAct>,
    /// What the dialog showed; the run re-reads and stops if it changed.
    pub expected: Expected,
}

impl Run {
    /// `act` confirmed in the dashboard (`force`: by the force key), with
    /// the operator's `reason` and what they typed to confirm it on a
    /// production profile (`confirmed`), expecting its subject as
    /// `expected`.
    pub fn new(
        act: impl Into<AnyAct>,
        force: bool,
        reason: Option<String>,
        confirmed: Option<String>,
        expected: Expected,
    ) -> Run {
        let choices = Choices::new(Interface::Dashboard, reason)
            .forced(force)
            .confirmed(confirmed);
        Run {
            intervention: Intervention::new(act.into(), choices),
            expected,
        }
    }

    /// The act.
    pub fn act(&self) -> &AnyAct {
        &self.intervention.act
    }

    /// What it acts on (a transaction, a lock, an account).
    pub fn subject(&self) -> Subject {
        self.intervention.act.subject()
    }

    /// How the log names it: `Roll back t-1`.
    pub fn title(&self) -> String {
        titled(self.act())
    }
}

/// How the log and a dialog name `act`: its title and its subject
/// (`Roll back t-1`, `Release the lock on A`).
pub fn titled(act: &AnyAct) -> String {
    format!("{} {}", act.title(), act.subject())
}

/// Why a poll failed, as far as retrying is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollFailure {
    /// Could not reach the cluster, or it failed transiently: retry with backoff.
    Transient(Error),
    /// Credentials refused: do not retry until the operator asks (`r`).
    Auth(Error),
    /// Anything else (bad mapping, decode error): retry with backoff.
    Other(Error),
}

impl PollFailure {
    /// The error behind it.
    pub fn error(&self) -> &Error {
        match self {
            PollFailure::Transient(e) | PollFailure::Auth(e) | PollFailure::Other(e) => e,
        }
    }

    /// The message to show.
    pub fn message(&self) -> String {
        self.error().to_string()
    }
}

/// How an act ended, for the event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionOutcome {
    /// The act.
    pub act: AnyAct,
    /// One line: the verdict or what was released.
    pub summary: String,
    /// Whether it did what was asked.
    pub ok: bool,
    /// Its receipts verified (`None`: it did not run), for the log's line
    /// after it.
    pub receipts: Option<Verification>,
    /// Its audit record's id (`None`: it did not run): the dashboard's
    /// own, which the others' acts it logs leave out.
    pub record: Option<String>,
}

/// Everything that can wake the UI loop.
#[derive(Debug, Clone)]
pub enum Event {
    /// A key press.
    Key(KeyEvent),
    /// A mouse event.
    Mouse(MouseEvent),
    /// The terminal was resized.
    Resize(u16, u16),
    /// Once a second with the wall clock, so ages and "stale since" tick on
    /// screen (the time travels in the event so `update` stays pure).
    Tick(DateTime<Utc>),
    /// A poll started.
    PollStarted,
    /// A poll finished.
    Polled(Result<Box<Snapshot>, PollFailure>),
    /// The act behind a confirmation dialog was previewed.
    Preview {
        /// The act the dialog is for.
        act: AnyAct,
        /// Its plan with the documents it was judged on
        /// ([`crate::protocol::intervene::Intervention::preview`]), or why
        /// there is none.
        plan: Result<AnyPlan, NoPlan>,
    },
    /// A transaction that is not in the snapshot was read by id (it left the
    /// in-flight list, or the operator looked it up).
    LookedUp {
        /// The id asked for.
        id: String,
        /// The transaction (`None`: no such document), or the error.
        detail: Result<Option<Box<TransactionDetail>>, Error>,
    },
    /// One step of a running action ended.
    Step(StepReport),
    /// An action ended.
    ActionDone(ActionOutcome),
    /// A background (or asked-for) audit ended.
    /// What it cost sets when the next background audit is due.
    Audited(Result<Box<AuditReport>, Error>, AuditCost),
    /// The marked transactions behind a bulk dialog were re-read.
    BulkPreview {
        /// What the dialog does on the marks.
        on: OnMarks,
        /// The bulk act's plan, or why nothing can run (e.g. no audit index).
        plan: BulkReread,
    },
    /// A bulk run's record was written: its id, and the file the ids it
    /// leaves will be written to if it is stopped (`None`: no state
    /// directory; the ids are then only in the log).
    BulkStarted {
        /// The job (its audit record's id).
        run: String,
        /// Where a stop writes the ids left.
        left_file: Option<PathBuf>,
    },
    /// One item of a bulk run ended (or was stopped part-way).
    BulkItem {
        /// The item's own act (its transaction the subject).
        act: AnyAct,
        /// The verdict in one line.
        summary: String,
        /// How it ended: a stopped one is left, not ended, and not failed.
        outcome: ActOutcome,
    },
    /// A bulk run ended.
    BulkDone {
        /// What the run did on its transactions.
        on: OnMarks,
        /// Items that never started (the run was stopped).
        not_started: usize,
        /// The act's sentence with its audit record (empty when each item
        /// was its own act).
        summary: String,
        /// Its audit record alone (`audit record ID`), when the act did
        /// not fail: the log counts the items itself and names it.
        record: Option<String>,
        /// The transactions a stop left (not started, or stopped
        /// part-way), written one id a line for `--ids-from`; `None` when
        /// none were left.
        left: Option<LeftIds>,
        /// The one act's receipts verified (`None`: it did not run, or
        /// each item was its own act, logged with its own line).
        receipts: Option<Verification>,
    },
    /// SIGTERM, SIGHUP or SIGINT reached the dashboard: a bulk run is
    /// stopped cleanly first, then it quits.
    Signal(crate::signals::StopSignal),
    /// The stuck transactions were counted by cause (`c`).
    Grouped(Result<Box<crate::protocol::read::Groups>, Error>),
    /// A bulk dialog's plan was saved: the file and the plan's hash, or
    /// why not.
    PlanSaved(Result<(String, String), String>),
    /// The table was exported: the file and its row count, or why not.
    Exported(Result<(String, usize), String>),
    /// The unfinished bulk jobs were read (the jobs view).
    Jobs(Result<Vec<Record>, Error>),
    /// The interventions of the timeline's window were read (`T`).
    Timeline {
        /// The window's start (the cluster's clock less the window).
        since: DateTime<Utc>,
        /// The interventions started since, newest first.
        entries: Result<Vec<crate::protocol::trail::Entry>, Error>,
    },
    /// A resumed job was planned: how many transactions it runs.
    JobResumed {
        /// The job (its audit record's id).
        run: String,
        /// Transactions left to read and decide again.
        total: usize,
        /// Where a stop writes the ids it leaves.
        left_file: Option<PathBuf>,
    },
    /// The audit trail's records of a transaction were read.
    History {
        /// The transaction.
        id: String,
        /// Its interventions, oldest first, or the error reading them.
        records: Result<Vec<Record>, Error>,
    },
}

/// The transactions a stopped bulk run left, written for `--ids-from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftIds {
    /// How many.
    pub count: usize,
    /// The file their ids were written to, or why they could not be.
    pub file: Result<PathBuf, String>,
}

/// What `update` asks the loop to do (the only way state turns into I/O).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoRequest {
    /// Poll now (resets backoff).
    PollNow,
    /// Stop or resume polling.
    SetPaused(bool),
    /// Change the poll interval.
    SetInterval(Duration),
    /// List this page of the table's filter in every poll (the filter or
    /// the page changed); polls at once.
    SetListing(crate::protocol::read::TableFilter),
    /// Preview this act for its confirmation dialog (its subject re-read).
    LoadPreview(AnyAct),
    /// Read one transaction by id for the detail pane.
    LookUp(String),
    /// Run a confirmed action.
    Run(Run),
    /// Run the invariant audit (read-only).
    Audit,
    /// Read the recorded interventions on a transaction (detail pane).
    LoadHistory(String),
    /// Save a bulk dialog's plan as a plan file (`p`).
    SavePlan(PlanToSave),
    /// Re-read the marked transactions for a bulk dialog.
    LoadBulkPreview(OnMarks, Vec<String>),
    /// Run confirmed bulk items (as one bulk act, or a few at a time).
    RunBulk(OnMarks, Vec<Run>),
    /// Start no new bulk item.
    StopBulk,
    /// Count the stuck transactions by cause.
    LoadGroups,
    /// Export every transaction matching the table's filter (every page,
    /// read by the cluster), as of the time it is read.
    Export(crate::protocol::read::TableFilter),
    /// Pause (`true`) or resume the bulk run's writes.
    PauseBulk(bool),
    /// Read the unfinished bulk jobs (the jobs view).
    LoadJobs,
    /// Read the interventions started in this window back from the
    /// cluster's clock (the timeline view).
    LoadTimeline(Duration),
    /// Resume an unfinished job from its record.
    ResumeJob {
        /// Its audit record's id.
        run: String,
        /// Its procedure (rollback or recover).
        procedure: Procedure,
        /// What the operator typed to confirm it on a production profile,
        /// and the reason when forced over a job not presumed dead.
        confirmed: ResumeConfirmed,
    },
}

/// How the operator confirmed a resume: what they typed on a production
/// profile, and the reason when they forced it over a job not presumed
/// dead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeConfirmed {
    /// The profile's name typed (a production profile), if asked.
    pub typed: Option<String>,
    /// The operator's reason (required when forced).
    pub reason: Option<String>,
    /// Forced over a job not presumed dead.
    pub forced: bool,
}

/// A bulk dialog's plan as previewed, to be saved as a plan file
/// ([`IoRequest::SavePlan`]). Requests compare (tests) by the procedure and
/// the transactions planned: a plan holds documents, which do not compare.
#[derive(Debug, Clone)]
pub struct PlanToSave(pub Box<SelectionPlan>);

impl PartialEq for PlanToSave {
    fn eq(&self, other: &Self) -> bool {
        use crate::protocol::intervene::Planned;
        self.0.procedure == other.0.procedure && self.0.transactions() == other.0.transactions()
    }
}

impl Eq for PlanToSave {}
