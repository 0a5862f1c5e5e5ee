//! What `rollback` or `recover` was asked: the procedure, its target (one
//! id or a selection), and how to run and print it.

use super::job::JobArgs;
use super::start::ReasonArgs;
use crate::cli::selection::{OutcomeFormat, SelectionArgs};
use crate::protocol::intervene::Runner;
use crate::protocol::Procedure;

/// A rollback or recovery as the command line asked it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Rollback or recovery.
    pub procedure: Procedure,
    /// The one transaction, when no selector is given.
    pub id: Option<&'a str>,
    /// The selection and its options (`--dry-run`, `--format`).
    pub select: &'a SelectionArgs,
    /// `--force` (one transaction only).
    pub force: bool,
    /// `--json`.
    pub json: bool,
    /// `--reason`.
    pub why: &'a ReasonArgs,
    /// How a selection runs.
    pub runner: Runner,
    /// The job options (`--resume`, `--max-rate`, `--progress`, `--left-to`).
    pub job: &'a JobArgs,
}

impl Request<'_> {
    /// The output format (`--json` is `--format json`).
    pub fn format(&self) -> OutcomeFormat {
        self.select.format(self.json)
    }
}
