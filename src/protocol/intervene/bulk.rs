//! A rollback or recovery over a selection, as one act: what it is (the
//! procedure, the selection, how it runs) and the [`Stop`] that keeps new
//! transactions from starting. Planning and running it are in
//! `bulk_run`, what it did in `bulk_done`.

use super::plan::{PlanStep, Planned, TxnPlan};
use super::selection::{Selected, Selection};
use super::{Act, BulkDone, Done, Runs, Started, Subject};
use crate::error::Result;
use crate::protocol::batch::BatchOptions;
use crate::protocol::locks::LockView;
use crate::protocol::trail::ActionKind;
use crate::protocol::views::DocVersion;
use crate::protocol::{Procedure, Protocol};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How the selected transactions are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// Each through its procedure, this many at a time.
    OneByOne(usize),
    /// Recovery in batches ([`Protocol::recover_batched`]).
    Batched(BatchOptions),
}

/// A rollback or recovery over a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkAct {
    /// Which procedure.
    pub procedure: Procedure,
    /// What it acts on.
    pub selection: Selection,
    /// Where `--ids-from` read its ids (the record names it).
    pub ids_source: Option<String>,
    /// Act on a partial view of the transactions (some shards failed).
    pub allow_partial: bool,
    /// How to run.
    pub runner: Runner,
}

impl BulkAct {
    /// `procedure` on every stuck transaction (`recover --all-stuck`,
    /// which also sweeps), run by `runner`.
    pub fn all_stuck(procedure: Procedure, runner: Runner) -> BulkAct {
        BulkAct::on(procedure, Selection::all_stuck(), runner)
    }

    /// `procedure` on `selection`, run by `runner`, on a whole view of
    /// the transactions, naming no id source.
    pub fn on(procedure: Procedure, selection: Selection, runner: Runner) -> BulkAct {
        BulkAct {
            procedure,
            selection,
            ids_source: None,
            allow_partial: false,
            runner,
        }
    }

    /// Whether this is `recover --all-stuck` and nothing else, which also
    /// sweeps the locks stale on evidence.
    pub fn sweeps(&self) -> bool {
        let s = &self.selection;
        self.procedure == Procedure::Recover
            && s.all_stuck
            && s.states.is_empty()
            && s.older_than.is_none()
            && s.ids.is_none()
    }
}

/// The act over a selection: planned by resolving the selection
/// (`bulk_run`), previewed with each transaction's own plan
/// (`bulk_preview`), and run with checkpoints and a [`Stop`]
/// ([`Started::run_bulk`]; here with a stop nobody sets).
impl Act for BulkAct {
    type Plan = SelectionPlan;

    fn action(&self) -> ActionKind {
        match self.procedure {
            Procedure::Rollback => ActionKind::Rollback,
            Procedure::Recover => ActionKind::Recover,
        }
    }

    fn title(&self) -> &'static str {
        match self.procedure {
            Procedure::Rollback => "Roll back",
            Procedure::Recover => "Recover",
        }
    }

    fn subject(&self) -> Subject {
        Subject::Selection
    }

    fn destructive(&self) -> bool {
        self.procedure == Procedure::Rollback
    }

    fn is_bulk(&self) -> bool {
        true
    }

    fn forced(&mut self, forced: bool) {
        self.selection.include_held = forced;
    }

    async fn plan(&self, p: &Protocol) -> Result<SelectionPlan> {
        self.selection_plan(p).await
    }

    async fn preview(&self, p: &Protocol) -> Result<SelectionPlan> {
        self.preview_items(p).await
    }
}

impl Runs for BulkAct {
    type Result = BulkDone;

    async fn run(started: Started<BulkAct>, p: &Protocol) -> Done<BulkDone> {
        started.run_bulk(p, &Stop::default(), |_| {}).await
    }
}

/// A bulk act's plan: its selection resolved (each transaction with its
/// procedure's steps from the state it was read in, then the closing
/// sweep of `recover --all-stuck`) and, previewed, each selected
/// transaction's own plan on its documents as re-read.
#[derive(Debug, Clone)]
pub struct SelectionPlan {
    /// Which procedure.
    pub procedure: Procedure,
    /// The selection as the options that made it (the record's targets).
    pub targets: Vec<String>,
    /// What the selection resolved to.
    pub selected: Selected,
    /// Whether it closes with the sweep of the locks stale on evidence
    /// ([`BulkAct::sweeps`]).
    pub sweeps: bool,
    /// Previewed ([`crate::protocol::intervene::Intervention::preview`]):
    /// each selected transaction's own plan on its documents, in selection
    /// order; empty when planned for the record.
    pub items: Vec<TxnPlan>,
    /// Previewed, for `recover --all-stuck`: the locks its closing sweep
    /// ([`PlanStep::Sweep`]) would release, as judged now (stale on
    /// evidence, owner not in flight).
    pub sweep: Vec<LockView>,
    /// Previewed on a deployment without a locks index
    /// ([`crate::protocol::read::Target::Absent`]): no lock is released
    /// and the sweep has nothing to do, which the preview says.
    pub locks_absent: bool,
    /// Previewed: each item's transaction and accounts with the version
    /// they were judged at, by transaction id (what a plan file binds its
    /// approval to, [`super::PlanFile`]).
    pub versions: BTreeMap<String, Vec<DocVersion>>,
}

impl Planned for SelectionPlan {
    fn transactions(&self) -> Vec<String> {
        self.selected.ids()
    }

    fn targets(&self) -> Vec<String> {
        self.targets.clone()
    }

    /// Each transaction with its procedure's steps, then the sweep.
    fn steps(&self) -> Vec<PlanStep> {
        let items = self.selected.transactions.iter().map(|t| PlanStep::Item {
            txn: t.id.clone(),
            steps: t
                .state
                .as_ref()
                .and_then(|s| crate::protocol::steps::plan(self.procedure, s).ok())
                .unwrap_or_default(),
        });
        items
            .chain(self.sweeps.then_some(PlanStep::Sweep))
            .collect()
    }
}

/// Keeps new transactions of a bulk act from starting, and says who
/// stopped it (a signal's name, the dashboard's stop key).
#[derive(Debug, Default)]
pub struct Stop {
    pub(super) flag: AtomicBool,
    by: Mutex<Option<String>>,
}

impl Stop {
    /// Stops the run (the first caller is remembered).
    pub fn stop(&self, by: &str) {
        if let Ok(mut slot) = self.by.lock() {
            slot.get_or_insert_with(|| by.to_string());
        }
        self.flag.store(true, Ordering::SeqCst);
    }

    /// The flag itself, for a wait that ends when it is set
    /// ([`crate::protocol::jobs::Pace::unpaused`]).
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// Whether it was stopped.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Who stopped it, if anyone did.
    pub fn by(&self) -> Option<String> {
        self.by.lock().ok().and_then(|s| s.clone())
    }
}
