//! Before step 1: whether the product lets these credentials make the
//! partial updates an act is made of, on each index it writes. A role with
//! field or document level security on one index only (say the accounts)
//! is refused every `_update` there, and nowhere else: without asking, a
//! rollback's `pending -> terminating` lands on the transaction and the
//! first account write is refused, leaving the transaction half acted on.
//! Privileges cannot tell (`_has_privileges` does not report field
//! security), so the pre-flight asks the product itself with a partial
//! update that changes nothing ([`Cluster::probe_partial_update`]) on a
//! document the act is about to write, which the product answers exactly as
//! it would answer the act's own update, writing nothing.
//!
//! [`Cluster::probe_partial_update`]: crate::cluster::Cluster::probe_partial_update

use super::transaction::Transfer;
use super::Protocol;
use crate::error::{Error, Result};

/// Whether a procedure asks the partial-update pre-flight
/// ([`Protocol::check_partial_updates`]) before its first write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Preflight {
    /// Ask it.
    Ask,
    /// The caller asked it on the same indices, just before.
    Asked,
}

impl Protocol {
    /// Refuses, with nothing written, when the product refuses partial
    /// updates of `t`'s documents to these credentials: the transaction
    /// and both accounts ([`Error::UpdateRefused`]), a write block
    /// ([`Error::Blocked`]) or a role without the update privilege
    /// ([`Error::Auth`]), each of which would refuse the act's own writes.
    /// Any other answer (a busy or unreachable cluster) leaves the act to
    /// its own writes, which handle it.
    pub(crate) async fn check_partial_updates(&self, t: &Transfer) -> Result<()> {
        let ix = &self.config.indices;
        let targets = [
            (&ix.transactions, &t.id),
            (&ix.accounts, &t.src),
            (&ix.accounts, &t.dest),
        ];
        let mut asked: Vec<&str> = Vec::new();
        for (index, id) in targets {
            // One document per index: the products decide per index.
            if asked.contains(&index.as_str()) {
                continue;
            }
            asked.push(index);
            self.ask_partial_update(index, id).await?;
        }
        Ok(())
    }

    /// [`Protocol::check_partial_updates`] of one index the act writes
    /// documents of its own in (the audit trail's records), asked on a
    /// document id that need not exist: the products refuse the request
    /// before they look the document up.
    pub(crate) async fn check_partial_updates_on(&self, index: &str) -> Result<()> {
        self.ask_partial_update(index, "").await
    }

    /// What the run's own pre-flights would refuse, asked writing nothing,
    /// for a preview ([`crate::protocol::intervene::Previewed::writes_refused`]):
    /// with `documents` (an act that updates transactions and accounts),
    /// the write check of the mappings, blocks and source
    /// ([`Protocol::check_writable`]) and the partial-update question on
    /// both indices; in every case the audit index's question, when the
    /// record goes to the cluster ([`crate::protocol::trail::Trail::open`]).
    /// `None` when nothing refuses, or when the answer is inconclusive (a
    /// busy or unreachable cluster: the run's own reads will say so).
    pub async fn writes_refused(&self, documents: bool) -> Option<Error> {
        let ix = &self.config.indices;
        let mut indices: Vec<&str> = Vec::new();
        if documents {
            if let Some(e) = self.mappings_refuse_writes().await {
                return Some(e);
            }
            indices.extend([ix.transactions.as_str(), ix.accounts.as_str()]);
        }
        if self.config.audit_file.is_none() {
            indices.push(&ix.audit);
        }
        for index in indices {
            // An id with no document: the products refuse (or not) the
            // request before they look the document up.
            if let Err(e) = self.ask_partial_update(index, "").await {
                return Some(e);
            }
        }
        None
    }

    /// The part of [`Protocol::writes_refused`] read from what discovery
    /// already knows (mappings, blocks, a lossy source: the run's
    /// [`Protocol::check_writable`]), sending no update: what a read
    /// command (`show`) can say of a procedure's preview.
    pub async fn mappings_refuse_writes(&self) -> Option<Error> {
        match self.check_writable().await {
            Err(e @ Error::Invalid(_)) => Some(e),
            Err(e) => {
                tracing::warn!(error = %e, "write check of a preview inconclusive");
                None
            }
            Ok(()) => None,
        }
    }

    /// One question of the pre-flight: refused ([`Error::UpdateRefused`],
    /// [`Error::Blocked`], [`Error::Auth`]) or not; an inconclusive answer
    /// leaves the act to its own writes.
    async fn ask_partial_update(&self, index: &str, id: &str) -> Result<()> {
        match self.cluster().probe_partial_update(index, id).await {
            Ok(()) => Ok(()),
            Err(e @ (Error::UpdateRefused { .. } | Error::Blocked { .. } | Error::Auth { .. })) => {
                Err(e)
            }
            Err(e) => {
                tracing::warn!(index, error = %e, "partial-update pre-flight inconclusive");
                Ok(())
            }
        }
    }
}
