//! A job's trail while it runs and after it died: checkpoints (the steps of
//! the transactions it has ended, written as parts as it goes, numbered
//! after the plan's), and reading an unfinished run back to resume it (its
//! plan whole, and which transactions its parts say have ended).
//!
//! A run record stays `running` until completed; its `parts` counts the
//! plan's parts while it runs, so every part after those is a checkpoint
//! (or a step page its completion wrote before dying): the transactions
//! listed there ended, and a resumed run skips them.

use super::history::parts_of;
use super::pages::{self, Checkpointed, EndedAs, Listed, Page, PAGE_BUDGET};
use super::record::{Record, RecordStatus, TrailStep};
use super::{RecordId, Trail};
use crate::error::{Error, Result};
use crate::protocol::jobs::OwnWrites;
use crate::protocol::report::Tally;
use std::collections::HashSet;

/// An unfinished run, read back.
#[derive(Debug, Clone)]
pub struct Unfinished {
    /// The run record, its plan's parts merged in (transactions and plan whole).
    pub record: Record,
    /// The transactions its checkpoints say have ended.
    pub ended: HashSet<String>,
    /// The parts found after the plan's (checkpoints).
    pub checkpoints: u32,
    /// The steps those checkpoints hold.
    pub steps: usize,
    /// The transactions the run last wrote itself, as its checkpoints say:
    /// not refused as recent by its resume.
    pub own: OwnWrites,
    /// How the transactions its checkpoints list ended, counted (the
    /// resumed run's record adds its own).
    pub earlier: Tally,
}

impl Unfinished {
    /// The planned transactions that have not ended, in the plan's order.
    pub fn left(&self) -> Vec<String> {
        self.record
            .transactions
            .iter()
            .filter(|t| !self.ended.contains(*t))
            .cloned()
            .collect()
    }
}

impl Trail {
    /// Pages of ended transactions for checkpoint parts, each saying when
    /// it was built (the cluster's time: every transaction in it had ended
    /// by then, the evidence of [`OwnWrites`]).
    pub fn checkpoint_pages(&self, ended: Vec<(String, EndedAs, Vec<TrailStep>)>) -> Vec<Page> {
        let at = self.now();
        let mut pages = pages::ended_pages(ended, PAGE_BUDGET);
        for p in &mut pages {
            p.at = Some(at);
        }
        pages
    }

    /// Writes checkpoint part `n` of run `id` (or the first free number
    /// after it: [`Trail::write_part`]), every transaction of it indexed;
    /// returns the number written.
    pub async fn checkpoint(&self, id: &RecordId, n: u32, page: Page) -> Result<u32> {
        self.write_part(&id.0, n, page, &Listed::default()).await
    }

    /// Writes checkpoint pages as parts `n`, `n + 1`, ... of run `id`, in
    /// one `_bulk` ([`Trail::write_parts`]): how many were written, in
    /// order, the number the next part goes under, and why the first not
    /// written was not (it, and those after it, are to be written again
    /// from that number, unchanged). The transactions of `listed` (the
    /// run's plan) are stored unindexed ([`Listed`]).
    pub async fn checkpoints(
        &self,
        id: &RecordId,
        n: u32,
        pages: Vec<Page>,
        listed: &Listed,
    ) -> CheckpointsWritten {
        let w = self.write_parts(&id.0, n, pages, listed).await;
        CheckpointsWritten {
            written: w.numbers.len(),
            next: w.next(n),
            error: w.failed.map(|(_, e)| e),
        }
    }

    /// Reads run `id` back to resume it; refuses one that is finished, or
    /// whose record cannot be read.
    pub async fn unfinished(&self, id: &str) -> Result<Unfinished> {
        let mut record = self.stored(id).await?;
        if record.status == RecordStatus::Finished {
            return Err(Error::Invalid(format!(
                "run `{id}` is finished ({}); there is nothing to resume",
                record
                    .outcome
                    .map_or("no outcome".into(), |o| o.to_string())
            )));
        }
        let plan_parts = record.parts;
        let mut ended = HashSet::new();
        let (mut checkpoints, mut steps) = (0, 0);
        let mut own = OwnWrites::default();
        let parts = match &self.file {
            Some(path) => super::file::parts(path, id)?,
            None => parts_of(self.exec.cluster(), &self.index, id).await?,
        };
        let earlier = Checkpointed::of(
            parts
                .iter()
                .filter(|p| p.part > plan_parts)
                .map(|p| &p.page),
        )
        .tally();
        for part in parts {
            if part.part <= plan_parts {
                pages::merge(&mut record, part.page);
            } else {
                checkpoints += 1;
                steps += part.page.steps.len();
                own.add(&part.page.steps, part.page.at);
                ended.extend(part.page.transactions);
            }
        }
        Ok(Unfinished {
            record,
            ended,
            checkpoints,
            steps,
            own,
            earlier,
        })
    }

    /// The reason run `id` was started with, as its record says: what a
    /// continuation of the job (`--ids-from` the file its stop wrote) is
    /// recorded with when its operator gives none, as a resume is.
    pub async fn reason_of(&self, id: &str) -> Result<Option<String>> {
        Ok(self.stored(id).await?.reason)
    }

    /// The transactions run `id` last wrote itself, as its record says
    /// (its checkpoints, each by its time; a finished record's steps, by
    /// its `finished_at`): what `--ids-from` the file of a run it stopped
    /// does not refuse as recent.
    /// Refused for a run still `running`: its own way back is `--resume`.
    pub async fn own_writes(&self, id: &str) -> Result<OwnWrites> {
        let record = self.stored(id).await?;
        if record.status != RecordStatus::Finished {
            return Err(Error::Invalid(format!(
                "run `{id}` is not finished: continue it with `--resume {id}`"
            )));
        }
        let parts = match &self.file {
            Some(path) => super::file::parts(path, id)?,
            None => parts_of(self.exec.cluster(), &self.index, id).await?,
        };
        let mut own = OwnWrites::default();
        let finished = record.finished_at;
        for part in &parts {
            own.add(&part.page.steps, part.page.at.or(finished));
        }
        own.add(&record.steps, finished);
        Ok(own)
    }
}

/// What [`Trail::checkpoints`] wrote.
#[derive(Debug)]
pub struct CheckpointsWritten {
    /// How many of the pages were written (the first ones).
    pub written: usize,
    /// The number the next part goes under.
    pub next: u32,
    /// Why the first page not written was not.
    pub error: Option<Error>,
}
