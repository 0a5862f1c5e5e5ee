//! What a listing of transactions asks and what it finds: the scope of
//! `list` ([`ListScope`]) and the transactions a scan found with what the
//! scan saw ([`Listing`]). Data only: the reads that make them are
//! [`super`]'s, and the acts that select by them use these types without
//! importing the read facade.

use super::scan::ScanSummary;
use crate::protocol::transaction::Transaction;

/// Which transactions `list` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListScope {
    /// Everything not finished or rolled back (the default).
    NotFinished,
    /// The whole history.
    All,
    /// These states.
    States(Vec<String>),
    /// Stuck ones (see [`super::rules::urgency`]).
    Stuck,
    /// Ones needing investigation.
    NeedsInvestigation,
}

/// Transactions found by a scan, with what the scan saw.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The transactions, in the query's order.
    pub transactions: Vec<Transaction>,
    /// Total, coverage, consistency.
    pub summary: ScanSummary,
}
