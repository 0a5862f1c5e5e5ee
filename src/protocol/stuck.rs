//! Recovery of every stuck transaction, and the sweep of the locks their
//! ending leaves to nobody (stale on evidence, owner not in flight), as one procedure.
//!
//! "Stuck" is the article's definition, written once in
//! [`super::read::rules`]: in created, pending, committed or terminating,
//! and not modified within the recovery window (or with no usable
//! modification time). The stuck query ([`super::read::Queries::stuck`])
//! pages through every hit from one consistent view, oldest first; each
//! transaction is then re-read by id before anything is done to it.

use super::batch::BatchOptions;
use super::locks::LockView;
use super::locks::Sweep;
use super::read::Listing;
use super::report::ProcedureReport;
use super::transaction::Transaction;
use super::Protocol;
use crate::error::Result;
use futures::stream::{self, StreamExt};
use std::time::Duration;

/// How a recovery of every stuck transaction goes through them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Each transaction on its own ([`Protocol::recover`]), at most
    /// `concurrency` at a time.
    OneAtATime {
        /// Transactions recovered at the same time.
        concurrency: usize,
    },
    /// In batches of reads and conditional bulk writes
    /// ([`Protocol::recover_all_stuck_batched`]).
    Batched(BatchOptions),
}

/// What a recovery of every stuck transaction did.
#[derive(Debug)]
pub struct StuckRecovery {
    /// One report per stuck transaction found (in no particular order).
    pub reports: Vec<ProcedureReport>,
    /// The sweep of locks stale on evidence (owner not in flight), run after
    /// every transaction: what it released and how complete its listing
    /// was, or why it did not run to the end (a partial listing refused,
    /// the cluster failing); the reports above stand either way.
    pub locks: Result<Sweep>,
}

impl StuckRecovery {
    /// How many locks the sweep released.
    pub fn released_locks(&self) -> usize {
        self.locks.as_ref().map_or(0, |s| {
            s.swept.iter().filter(|l| l.outcome.released()).count()
        })
    }
}

impl Protocol {
    /// Every stuck transaction, oldest first, as found by search. Refuses a
    /// partial view (some shards failed): see [`Protocol::stuck`] to see one.
    pub async fn stuck_transactions(&self) -> Result<Vec<Transaction>> {
        let l = self.stuck().await?;
        l.summary
            .coverage
            .require_complete(false, "list stuck transactions")?;
        Ok(l.transactions)
    }

    /// Transactions matching `states` (all when empty) older than
    /// `older_than`, oldest first. Refuses a partial view.
    pub async fn list_transactions(
        &self,
        states: &[String],
        older_than: Option<Duration>,
    ) -> Result<Vec<Transaction>> {
        let mut out = Vec::new();
        let s = self
            .list_pages(states, older_than, |page| {
                out.extend(page);
                true
            })
            .await?;
        s.coverage.require_complete(false, "list transactions")?;
        Ok(out)
    }

    /// Recovers every stuck transaction, at most `concurrency` at a time,
    /// then sweeps the locks stale on evidence (never unknown ones); refuses a
    /// partial view of them. See [`Self::recover_all_stuck_with`].
    pub async fn recover_all_stuck(&self, concurrency: usize) -> Result<StuckRecovery> {
        self.recover_all_stuck_with(Pace::OneAtATime { concurrency }, false)
            .await
    }

    /// The recovery of every stuck transaction, one procedure for the CLI
    /// and the demo: each transaction at `pace` (re-read and re-checked
    /// against the recovery window, so one that moved since the search is
    /// left alone), then the sweep of every lock whose owner is terminal or
    /// missing ([`Self::release_abandoned_locks_allowing`]: those nobody else
    /// will release). A partial view of the transactions is refused before
    /// anything is written unless `allow_partial`; the same holds for the
    /// listing of the locks, whose refusal or failure is reported in
    /// [`StuckRecovery::locks`] without losing the transactions' reports.
    pub async fn recover_all_stuck_with(
        &self,
        pace: Pace,
        allow_partial: bool,
    ) -> Result<StuckRecovery> {
        self.check_schema().await?;
        let reports = match pace {
            Pace::OneAtATime { concurrency } => {
                let ids = self.stuck_ids_to_recover(allow_partial).await?;
                stream::iter(ids)
                    .map(|id| async move { self.recover(&id, false).await })
                    .buffer_unordered(concurrency.max(1))
                    .collect::<Vec<_>>()
                    .await
            }
            Pace::Batched(opts) => self.recover_all_stuck_batched(opts, allow_partial).await?,
        };
        let locks = self.release_abandoned_locks_allowing(allow_partial).await;
        Ok(StuckRecovery { reports, locks })
    }

    /// The locks the closing sweep of a recovery of every stuck transaction
    /// would release, judged now ([`LockView::is_sweepable`], the sweep's
    /// own rule): what its preview names. Locks whose owner is stuck are
    /// not among them: that owner's recovery releases them (its own plan
    /// names them). A partial listing is refused unless `allow_partial`.
    pub async fn sweepable_locks(&self, allow_partial: bool) -> Result<Vec<LockView>> {
        let listing = match self.list_locks_with(!allow_partial).await {
            Ok(l) => l,
            Err(crate::error::Error::IndexMissing(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        listing
            .summary
            .coverage
            .require_complete(allow_partial, "sweep abandoned locks")?;
        Ok(listing
            .locks
            .into_iter()
            .filter(LockView::is_sweepable)
            .collect())
    }

    /// The ids of every stuck transaction, for a recovery of all of them:
    /// refuses a partial view unless `allow_partial`, and mappings that would
    /// reject the protocol's writes (before anything is written).
    pub(crate) async fn stuck_ids_to_recover(&self, allow_partial: bool) -> Result<Vec<String>> {
        let Listing {
            transactions,
            summary,
        } = self.stuck().await?;
        summary
            .coverage
            .require_complete(allow_partial, "recover every stuck transaction")?;
        if !transactions.is_empty() {
            self.check_writable().await?;
        }
        Ok(transactions.into_iter().map(|t| t.id).collect())
    }
}
