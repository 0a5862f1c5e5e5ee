//! `list --format table|json|ndjson|csv`: the rows of `list` for incident
//! reports and scripts, written page by page as they are read. Every format
//! carries the full ids and every column; the machine formats carry the
//! as-of time on each row (the table says it under the rows). JSON and
//! NDJSON rows have one shape, the protocol's [`TransactionRow`] with its
//! `cause` and `in_job` ([`JsonRow`], also `show --json`'s `transaction`);
//! a CSV row is the same row flattened (`protocol::rows::CsvRow`: problems
//! joined by `; `, absent values empty).

use crate::protocol::jobs::{HeldBy, OthersUnavailable};
use crate::protocol::read::verdict::Runbooks;
use crate::protocol::rows::{Beside, CsvWriter, TransactionRow};
use crate::protocol::time::format_timestamp;
use chrono::{DateTime, Utc};
use clap::ValueEnum;
use serde::Serialize;
use std::io::Write;

/// How `list` prints its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ListFormat {
    /// An aligned table with a summary (for people).
    #[default]
    Table,
    /// One JSON array.
    Json,
    /// One JSON object per line.
    Ndjson,
    /// Comma-separated values with a header line (RFC 4180 quoting).
    Csv,
}

/// A row of the machine formats: the `list` row, when it was read and
/// what the reading says beside it; without `as_of`, `show --json`'s
/// `transaction`.
#[derive(Debug, Serialize)]
pub struct JsonRow<'a> {
    /// When the rows were read (the cluster's clock, RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<&'a str>,
    /// Every column of `list`.
    #[serde(flatten)]
    pub row: &'a TransactionRow,
    /// A stuck transaction's cause (`cause`, `safe_act`, `evidence`,
    /// `runbook`: [`crate::protocol::read::verdict::Cause::json`]); absent
    /// when it is not stuck.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<serde_json::Value>,
    /// The live job (another operator's, or another process's) working on
    /// it: `null` when none (`protocol::jobs::LiveJobs`).
    pub in_job: Option<InJob<'a>>,
    /// Why other operators' jobs cannot be seen (`file_trail`: `in_job`
    /// names only the file trail's own jobs); absent when they can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub others_unavailable: Option<OthersUnavailable>,
}

/// A live job holding a row, as `list --json` says it.
#[derive(Debug, Serialize)]
pub struct InJob<'a> {
    /// Who runs it.
    pub operator: &'a str,
    /// The job's id (`jobs`, `--resume`).
    pub job: &'a str,
    /// What it does.
    pub action: crate::protocol::trail::ActionKind,
    /// Seconds since its last heartbeat.
    pub heartbeat_age_s: i64,
}

impl<'a> JsonRow<'a> {
    /// `row` with what is `beside` it at `now` (the cause's evidence in
    /// words, its runbook from `runbooks`), read `as_of`.
    pub fn new(
        as_of: Option<&'a str>,
        row: &'a TransactionRow,
        beside: Beside<'a>,
        now: DateTime<Utc>,
        runbooks: &Runbooks,
    ) -> JsonRow<'a> {
        JsonRow {
            as_of,
            row,
            cause: beside.cause.map(|c| c.json(now, runbooks)),
            in_job: beside.in_job.map(InJob::of),
            others_unavailable: beside.others_unavailable,
        }
    }
}

impl<'a> InJob<'a> {
    fn of(h: &'a HeldBy) -> InJob<'a> {
        InJob {
            operator: &h.operator.user,
            job: &h.job,
            action: h.action,
            heartbeat_age_s: h.heartbeat_age_s,
        }
    }
}

/// Stdout that ignores a closed pipe (`list --format csv | head`).
struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::io::stdout().lock().write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(buf.len()),
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

/// Writes rows of one machine format as they come.
pub struct MachineWriter {
    format: ListFormat,
    now: DateTime<Utc>,
    as_of: String,
    runbooks: Runbooks,
    rows: usize,
    csv: CsvWriter<Stdout>,
}

impl MachineWriter {
    /// A writer of `format` (not `Table`) for rows read at `now`, causes
    /// linked to the profile's `runbooks`.
    pub fn new(format: ListFormat, now: DateTime<Utc>, runbooks: Runbooks) -> MachineWriter {
        let as_of = format_timestamp(now);
        MachineWriter {
            format,
            now,
            csv: CsvWriter::new(Stdout, as_of.clone()),
            as_of,
            runbooks,
            rows: 0,
        }
    }

    /// Writes one row with what is `beside` it: its cause when stuck, and
    /// `in_job` (the live job holding it, if any).
    pub fn row(&mut self, row: &TransactionRow, beside: Beside<'_>) {
        let j = JsonRow::new(Some(&self.as_of), row, beside, self.now, &self.runbooks);
        match self.format {
            ListFormat::Json => {
                let text = serde_json::to_string_pretty(&j).unwrap_or_default();
                let sep = if self.rows == 0 { "[" } else { "," };
                super::print::out(format_args!("{sep}{text}"));
            }
            ListFormat::Ndjson => {
                super::print::out(serde_json::to_string(&j).unwrap_or_default());
            }
            ListFormat::Csv => {
                if let Err(e) = self.csv.row(row, beside) {
                    tracing::warn!(error = %e, "csv row not written");
                }
            }
            ListFormat::Table => {}
        }
        self.rows += 1;
    }

    /// Ends the output (closes the JSON array; a CSV with no rows still
    /// gets its header).
    pub fn finish(self) {
        match self.format {
            ListFormat::Json if self.rows == 0 => super::print::out("[]"),
            ListFormat::Json => super::print::out("]"),
            ListFormat::Csv => {
                if let Err(e) = self.csv.finish() {
                    tracing::warn!(error = %e, "csv not written");
                }
            }
            _ => {}
        }
    }
}
