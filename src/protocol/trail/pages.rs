//! A record's lists in bounded documents. The transactions, plan and steps
//! of a record grow with the run (a bulk recovery of 10 000 transactions
//! takes some 50 000 steps); written whole into one document they make
//! megabytes, which a proxy in front of the cluster refuses (nginx's
//! `client_max_body_size` is 1 MiB by default; Amazon OpenSearch Service
//! takes 10 MiB on small instances), leaving the record unfinished.
//!
//! So the run record holds the first [`RECORD_BUDGET`] of its lists (it is
//! rewritten while the run goes on: kept small), and the rest go into
//! *parts*: documents `{run id}-part-{n}`, numbered from 1 in
//! the order they are written, each holding under [`PAGE_BUDGET`] of items,
//! the run's id (`run_id`) and the transactions it concerns (what `history
//! ID` finds it by). The plan's parts are written right after the run
//! record, the steps' parts right before it is completed, so a crash
//! leaves the run record unfinished; they are read back in order up to the
//! first missing one, and a completed record says how many there are. A
//! part after the plan's stores the planned transactions it lists without
//! indexing them ([`Listed`]): each transaction of a run is indexed once.

use super::record::{ActOutcome, Record, RecordStatus, TrailStep};
use crate::protocol::report::Tally;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;

pub use super::listed::Listed;

/// The most bytes of list items one audit document holds as the index
/// stores it (packed, `super::compact`; a page takes at least one item,
/// whatever its size). Well under nginx's 1 MiB default. (A file trail
/// writes the same pages in the full form, which has no such limit.)
pub const PAGE_BUDGET: usize = 256 * 1024;

/// The most bytes of lists (transactions, plan) the run record itself
/// holds; a run's lists past it go into its plan's parts. The run record
/// is the document rewritten while the run goes on (each heartbeat, a
/// resume, its completion), and a partial update re-indexes the whole
/// document, its `transactions` with it
/// (<https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-update>:
/// the update "gets the document, updates it, and reindexes the
/// result"): a bulk run's ids are indexed once, in its parts, not once
/// more on every rewrite. A single act's lists, and a small bulk run's,
/// stay whole in the record as they always did.
pub const RECORD_BUDGET: usize = 8 * 1024;

/// The lists of one audit document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// The transactions the page concerns (what `history` finds it by).
    #[serde(default)]
    pub transactions: Vec<String>,
    /// Step labels as previewed.
    #[serde(default)]
    pub plan: Vec<String>,
    /// Steps as they ended.
    #[serde(default)]
    pub steps: Vec<TrailStep>,
    /// Of the transactions a checkpoint says ended, those refused (the
    /// others ended done, failed or stopped): what a listing of the job
    /// counts (`protocol::jobs::listing`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Those that failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// Those stopped part-way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stopped: Vec<String>,
    /// When a checkpoint page was built (the cluster's time): its
    /// transactions had ended by then, so a transaction document modified
    /// no later, in the state a step here wrote, was last written by this
    /// run (`protocol::jobs::OwnWrites`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Page {
    fn is_empty(&self) -> bool {
        self.transactions.is_empty()
            && self.plan.is_empty()
            && self.steps.is_empty()
            && self.refused.is_empty()
            && self.failed.is_empty()
            && self.stopped.is_empty()
    }
}

/// How a job's transaction ended, as a checkpoint keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedAs {
    /// Completed, ended by another process, or nothing to do.
    Done,
    /// Refused before writing.
    Refused,
    /// Failed.
    Failed,
    /// Stopped part-way, in a protocol state.
    Stopped,
}

impl From<ActOutcome> for EndedAs {
    fn from(o: ActOutcome) -> Self {
        match o {
            ActOutcome::Completed | ActOutcome::NothingToDo => EndedAs::Done,
            ActOutcome::Refused => EndedAs::Refused,
            ActOutcome::Failed => EndedAs::Failed,
            ActOutcome::Stopped => EndedAs::Stopped,
        }
    }
}

/// One part document: a page of run `run_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The run record's id.
    pub run_id: String,
    /// Its number, from 1.
    pub part: u32,
    /// What it holds.
    #[serde(flatten)]
    pub page: Page,
}

/// The id of part `n` of run `run`.
pub fn part_id(run: &str, n: u32) -> String {
    format!("{run}-part-{n:05}")
}

/// Fills pages in order, each under a byte budget (the first under its own).
struct Pager {
    budget: usize,
    /// The first page's budget.
    first: usize,
    pages: Vec<Page>,
    used: usize,
    /// The transactions the current page lists for its steps.
    listed: HashSet<String>,
}

impl Pager {
    fn new(budget: usize) -> Pager {
        Pager::with_first(budget, budget)
    }

    fn with_first(first: usize, budget: usize) -> Pager {
        Pager {
            budget,
            first,
            pages: vec![Page::default()],
            used: 0,
            listed: HashSet::new(),
        }
    }

    /// The page with room for `size` more bytes (a new one when the current
    /// one is full).
    fn room(&mut self, size: usize) -> &mut Page {
        let full = self.pages.last().is_some_and(|p| !p.is_empty());
        let budget = if self.pages.len() == 1 {
            self.first
        } else {
            self.budget
        };
        if full && self.used + size > budget {
            self.pages.push(Page::default());
            self.used = 0;
            self.listed.clear();
        }
        self.used += size;
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    fn transaction(&mut self, txn: String) {
        let size = size_of(&txn);
        self.room(size).transactions.push(txn);
    }

    fn plan(&mut self, line: String) {
        let size = super::compact::packed_line_size(&line);
        self.room(size).plan.push(line);
    }

    /// A step, and its transaction in the page's list unless already there
    /// (room is kept for both).
    fn step(&mut self, step: TrailStep) {
        self.room(super::compact::packed_size(&step) + size_of(&step.txn));
        let new_txn = !step.txn.is_empty() && self.listed.insert(step.txn.clone());
        let last = self.pages.len() - 1;
        let page = &mut self.pages[last];
        if new_txn {
            page.transactions.push(step.txn.clone());
        }
        page.steps.push(step);
    }

    /// How `txn` ended, in the current page (those not done are listed).
    fn ended_as(&mut self, txn: String, how: EndedAs) {
        let size = size_of(&txn);
        let list = match how {
            EndedAs::Done => return,
            EndedAs::Refused => &mut self.room(size).refused,
            EndedAs::Failed => &mut self.room(size).failed,
            EndedAs::Stopped => &mut self.room(size).stopped,
        };
        list.push(txn);
    }

    fn pages(self) -> Vec<Page> {
        self.pages
    }
}

fn size_of<T: Serialize>(item: &T) -> usize {
    super::compact::json_len(item) + 1
}

/// The transactions and plan of an intervention as pages: the first, under
/// `first` bytes, for the run record ([`RECORD_BUDGET`]), the others,
/// each under `budget`, for its parts.
pub fn plan_pages(
    transactions: &[String],
    plan: &[String],
    first: usize,
    budget: usize,
) -> Vec<Page> {
    let mut pager = Pager::with_first(first, budget);
    for t in transactions {
        pager.transaction(t.clone());
    }
    for line in plan {
        pager.plan(line.clone());
    }
    pager.pages()
}

/// Steps as pages, each listing the transactions of its steps.
pub fn step_pages(steps: Vec<TrailStep>, budget: usize) -> Vec<Page> {
    let mut pager = Pager::new(budget);
    for s in steps {
        pager.step(s);
    }
    pager
        .pages()
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect()
}

/// The transactions a job has ended, each with how it ended and its steps
/// (none for one refused or with nothing to do), as pages: a checkpoint's
/// parts. Every transaction is listed in the page of its steps, or in the
/// page it falls in when it has none, so the parts say which transactions
/// ended; one that did not end done is also listed as what it ended (in
/// the page of its last step).
pub fn ended_pages(ended: Vec<(String, EndedAs, Vec<TrailStep>)>, budget: usize) -> Vec<Page> {
    let mut pager = Pager::new(budget);
    for (txn, how, steps) in ended {
        if steps.is_empty() {
            pager.transaction(txn.clone());
        }
        for s in steps {
            pager.step(s);
        }
        pager.ended_as(txn, how);
    }
    pager
        .pages()
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect()
}

/// Whether the stored `record` (as the audit index holds it) holding
/// `steps` itself stays within the budget (a run without parts then keeps
/// them inline, as records always did).
pub fn fits_inline(record: &Map<String, Value>, steps: &[TrailStep], budget: usize) -> bool {
    // The steps are sized only up to what is left (a bulk run's do not
    // fit, and are not written out whole to learn it).
    let used = size_of(record) + 1;
    used <= budget && super::compact::json_fits(&steps, budget - used)
}

/// What a running job's checkpoints (the parts after its plan's) say
/// ended: how many transactions, and of them how many refused, failed or
/// stopped part-way (the rest ended done).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checkpointed {
    /// Transactions ended.
    pub ended: usize,
    /// Of them, refused.
    pub refused: usize,
    /// Failed.
    pub failed: usize,
    /// Stopped part-way.
    pub stopped: usize,
}

impl Checkpointed {
    /// As a [`Tally`]: checkpoints say which ended refused, failed or
    /// stopped, not how the others ended done, so those count as completed.
    pub fn tally(&self) -> Tally {
        Tally {
            completed: self
                .ended
                .saturating_sub(self.refused + self.failed + self.stopped),
            refused: self.refused,
            failed: self.failed,
            stopped: self.stopped,
            ..Tally::default()
        }
    }

    /// What the checkpoints among `parts` of `record` say ended: those after
    /// the plan's parts of a record still running (a finished one's parts
    /// after its plan's are its steps).
    pub(super) fn of_record(record: &Record, parts: &[Part]) -> Checkpointed {
        if record.status != RecordStatus::Running {
            return Checkpointed::default();
        }
        Checkpointed::of(
            parts
                .iter()
                .filter(|p| p.part > record.parts)
                .map(|p| &p.page),
        )
    }

    /// The tally of checkpoint `pages` (a transaction whose steps span two
    /// pages counted once).
    pub fn of<'a>(pages: impl IntoIterator<Item = &'a Page>) -> Checkpointed {
        let (mut ended, mut refused, mut failed, mut stopped) = (
            HashSet::new(),
            HashSet::new(),
            HashSet::new(),
            HashSet::new(),
        );
        for p in pages {
            ended.extend(p.transactions.iter());
            refused.extend(p.refused.iter());
            failed.extend(p.failed.iter());
            stopped.extend(p.stopped.iter());
        }
        Checkpointed {
            ended: ended.len(),
            refused: refused.len(),
            failed: failed.len(),
            stopped: stopped.len(),
        }
    }
}

/// Adds a part's page to the record it belongs to.
pub fn merge(record: &mut Record, page: Page) {
    let mut known: HashSet<String> = record.transactions.iter().cloned().collect();
    for t in page.transactions {
        if known.insert(t.clone()) {
            record.transactions.push(t);
        }
    }
    record.plan.extend(page.plan);
    record.steps.extend(page.steps);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(txn: &str, n: usize) -> TrailStep {
        TrailStep {
            txn: txn.into(),
            label: format!("step {n}"),
            target: "accounts/A".into(),
            result: "updated".into(),
            detail: "x".repeat(100),
            wrote_state: None,
            receipt: None,
        }
    }

    #[test]
    fn checkpoints_say_how_each_transaction_ended_and_count_it_once() {
        // t0 done with steps over two small pages, t1 refused without a
        // step, t2 failed, t3 stopped, t4 nothing to do.
        let ended = vec![
            (
                "t0".to_string(),
                EndedAs::Done,
                vec![step("t0", 0), step("t0", 1)],
            ),
            ("t1".to_string(), EndedAs::Refused, vec![]),
            ("t2".to_string(), EndedAs::Failed, vec![step("t2", 0)]),
            ("t3".to_string(), EndedAs::Stopped, vec![step("t3", 0)]),
            (
                "t4".to_string(),
                EndedAs::from(ActOutcome::NothingToDo),
                vec![],
            ),
        ];
        let pages = ended_pages(ended, 200);
        assert!(pages.len() > 1, "{pages:#?}");
        let c = Checkpointed::of(&pages);
        let want = Checkpointed {
            ended: 5,
            refused: 1,
            failed: 1,
            stopped: 1,
        };
        assert_eq!(c, want, "{pages:#?}");
    }

    #[test]
    fn pages_stay_under_the_budget_and_keep_the_order() {
        let steps: Vec<TrailStep> = (0..1000).map(|n| step(&format!("t{}", n / 5), n)).collect();
        let pages = step_pages(steps.clone(), 4096);
        assert!(pages.len() > 10, "{}", pages.len());
        for p in &pages {
            let mut stored = match serde_json::to_value(p).unwrap() {
                serde_json::Value::Object(m) => m,
                v => panic!("{v}"),
            };
            super::super::compact::pack(&mut stored);
            let size = size_of(&stored);
            assert!(size <= 4096 + 256, "{size}");
            // Every page lists the transactions of its own steps.
            for s in &p.steps {
                assert!(p.transactions.contains(&s.txn));
            }
        }
        let back: Vec<TrailStep> = pages.into_iter().flat_map(|p| p.steps).collect();
        assert_eq!(back, steps);
    }

    #[test]
    fn the_run_records_page_holds_its_own_budget_and_the_parts_the_rest() {
        let ids: Vec<String> = (0..2000).map(|n| format!("txn-{n:06}")).collect();
        let plan: Vec<String> = ids.iter().map(|t| format!("{t}: x")).collect();
        let pages = plan_pages(&ids, &plan, 1024, 16 * 1024);
        let size = |p: &Page| serde_json::to_vec(p).unwrap().len();
        assert!(size(&pages[0]) <= 1024 + 128, "{}", size(&pages[0]));
        assert!(pages[1..].iter().all(|p| size(p) <= 16 * 1024 + 128));
        assert!(pages.len() > 2, "{}", pages.len());
        let back: Vec<String> = pages.iter().flat_map(|p| p.transactions.clone()).collect();
        assert_eq!(back, ids);
        let back: Vec<String> = pages.iter().flat_map(|p| p.plan.clone()).collect();
        assert_eq!(back, plan);
    }

    #[test]
    fn a_small_plan_is_one_page_and_an_item_over_budget_gets_its_own() {
        let ids = vec!["t1".to_string(), "t2".to_string()];
        let pages = plan_pages(&ids, &["terminate".into()], 4096, 4096);
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].transactions, ids);
        let big = "y".repeat(10_000);
        let pages = plan_pages(&ids, &[big.clone(), "after".into()], 4096, 4096);
        assert_eq!(pages.len(), 3, "{pages:?}");
        assert_eq!(pages[1].plan, vec![big]);
        assert_eq!(pages[2].plan, vec!["after".to_string()]);
    }
}
