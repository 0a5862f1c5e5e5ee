//! A job's checkpoints: the steps of the transactions it has ended, written
//! into its record's parts while it runs (every [`EVERY`], or sooner past
//! [`MAX_PENDING`] transactions), so a run killed part-way leaves in its
//! unfinished record which transactions ended, and `--resume` skips them.
//!
//! A page is built once and written until it lands (a retried create of
//! the same page is recognised as ours), so its part number always holds
//! the same content; what could not be written by the end is left to the
//! record's completion, which writes the rest of the steps.

use crate::protocol::trail::pages::{EndedAs, Listed, Page};
use crate::protocol::trail::{RecordId, Trail, TrailStep};
use std::collections::{HashSet, VecDeque};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// How often ended transactions are written down.
pub const EVERY: Duration = Duration::from_secs(1);
/// Ended transactions that are written at once, whatever the time.
pub const MAX_PENDING: usize = 2000;
/// Runs of fewer transactions keep no checkpoints: they end in moments,
/// their record keeps its steps inline as it always did, and a resume of
/// one reads and decides each of its transactions again (at no risk: a
/// step already made is found done).
pub const MIN_TRANSACTIONS: usize = 100;

/// One ended transaction: its id, how it ended and its steps.
pub type Ended = (String, EndedAs, Vec<TrailStep>);

/// The checkpoints of one run.
#[derive(Debug)]
pub struct Checkpoints {
    trail: Trail,
    record: RecordId,
    /// The transactions the run's record and plan's parts list (indexed
    /// there, stored unindexed in the checkpoints: [`Listed`]).
    listed: Listed,
    /// The number the next part gets.
    next: u32,
    /// Parts written by this run.
    pub written: u32,
    /// Transactions with steps in a part written.
    saved: HashSet<String>,
    pending: Vec<Ended>,
    unwritten: VecDeque<Page>,
}

impl Checkpoints {
    /// The checkpoints of run `record`, whose parts so far number `parts`
    /// and whose plan lists `listed`.
    pub fn new(trail: Trail, record: RecordId, parts: u32, listed: Listed) -> Checkpoints {
        Checkpoints {
            trail,
            record,
            listed,
            next: parts + 1,
            written: 0,
            saved: HashSet::new(),
            pending: Vec::new(),
            unwritten: VecDeque::new(),
        }
    }

    /// Writes down what `ended` brings, every [`EVERY`], until it closes;
    /// what ended since the last checkpoint is left to the record's
    /// completion (which writes every step not in a checkpoint).
    pub async fn keep(mut self, mut ended: UnboundedReceiver<Ended>) -> Checkpoints {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + EVERY, EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                got = ended.recv() => match got {
                    Some(e) => {
                        self.pending.push(e);
                        if self.pending.len() >= MAX_PENDING {
                            self.flush().await;
                        }
                    }
                    None => break,
                },
                _ = tick.tick() => self.flush().await,
            }
        }
        self
    }

    /// Writes the pending transactions' pages, in order, in one `_bulk`,
    /// up to the first that fails (it and those after it are tried again at
    /// the next tick, unchanged, at the same numbers).
    async fn flush(&mut self) {
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            self.unwritten.extend(self.trail.checkpoint_pages(pending));
        }
        if self.unwritten.is_empty() {
            return;
        }
        let pages: Vec<Page> = self.unwritten.iter().cloned().collect();
        let w = self
            .trail
            .checkpoints(&self.record, self.next, pages, &self.listed)
            .await;
        for page in self.unwritten.drain(..w.written) {
            self.saved.extend(page.transactions);
        }
        self.written += u32::try_from(w.written).unwrap_or(u32::MAX);
        self.next = w.next;
        if let Some(e) = w.error {
            tracing::warn!(record = %self.record, part = self.next, error = %e,
                "cannot write a checkpoint; trying again");
        }
    }

    /// Writes `rest` down as checkpoints, now (a few tries), when a run
    /// leaves its job unfinished on purpose (a resume some of whose
    /// transactions cannot run yet): the record stays `running`, and these
    /// parts say what ended. `Err` when some could not be written (their
    /// transactions are read and decided again by the next resume).
    pub async fn close(mut self, rest: Vec<Ended>) -> crate::error::Result<u32> {
        self.pending.extend(rest);
        for _ in 0..3 {
            self.flush().await;
            if self.unwritten.is_empty() {
                return Ok(self.written);
            }
        }
        Err(crate::error::Error::Invalid(format!(
            "{} checkpoint page(s) of run `{}` could not be written",
            self.unwritten.len(),
            self.record
        )))
    }

    /// The transactions whose steps are all in parts written (one whose
    /// steps go on in a page left unwritten is not).
    pub fn saved(&self) -> HashSet<String> {
        let mut saved = self.saved.clone();
        for page in &self.unwritten {
            for t in &page.transactions {
                saved.remove(t);
            }
        }
        saved
    }
}
