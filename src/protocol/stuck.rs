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
use super::locks::Sweep;
use super::read::Listing;
use super::report::ProcedureReport;
use super::Protocol;
use crate::error::Result;

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

/// The ids of every stuck transaction, for a recovery of all of them:
/// refuses a partial view unless `allow_partial`, and mappings that would
/// reject the protocol's writes (before anything is written).
pub(crate) async fn stuck_ids_to_recover(p: &Protocol, allow_partial: bool) -> Result<Vec<String>> {
    let Listing {
        transactions,
        summary,
    } = p.stuck().await?;
    summary
        .coverage
        .require_complete(allow_partial, "recover every stuck transaction")?;
    if !transactions.is_empty() {
        p.check_writable().await?;
    }
    Ok(transactions.into_iter().map(|t| t.id).collect())
}
