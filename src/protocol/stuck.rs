//! Recovery of every stuck transaction.
//!
//! "Stuck" is the article's definition, written once in
//! [`super::read::rules`]: in created, pending, committed or terminating,
//! and not modified within the recovery window (or with no usable
//! modification time). The stuck query ([`super::read::Queries::stuck`])
//! pages through every hit from one consistent view, oldest first; each
//! transaction is then re-read by id before anything is done to it.

use super::read::Listing;
use super::report::ProcedureReport;
use super::transaction::Transaction;
use super::Protocol;
use crate::error::Result;
use futures::stream::{self, StreamExt};
use std::time::Duration;

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

    /// Recovers every stuck transaction, at most `concurrency` at a time;
    /// refuses a partial view of them.
    pub async fn recover_all_stuck(&self, concurrency: usize) -> Result<Vec<ProcedureReport>> {
        self.recover_all_stuck_allowing(concurrency, false).await
    }

    /// [`Self::recover_all_stuck`], acting on a partial view only when
    /// `allow_partial`. Each transaction is re-read and re-checked against
    /// the recovery window, so one that moved since the search is left alone.
    pub async fn recover_all_stuck_allowing(
        &self,
        concurrency: usize,
        allow_partial: bool,
    ) -> Result<Vec<ProcedureReport>> {
        let ids = self.stuck_ids_to_recover(allow_partial).await?;
        let reports = stream::iter(ids)
            .map(|id| async move { self.recover(&id, false).await })
            .buffer_unordered(concurrency.max(1))
            .collect::<Vec<_>>()
            .await;
        Ok(reports)
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
