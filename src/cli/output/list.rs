//! `list --format table|json|ndjson|csv`: the rows of `list` for incident
//! reports and scripts, written page by page as they are read. Every format
//! carries the full ids and every column; the machine formats carry the
//! as-of time on each row (the table says it under the rows). JSON and
//! NDJSON rows have one shape, the protocol's [`TransactionRow`]; a CSV row
//! is the same row flattened (`protocol::rows::CsvRow`: problems joined by
//! `; `, absent values empty).

use crate::protocol::jobs::HeldBy;
use crate::protocol::rows::{CsvWriter, TransactionRow};
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

/// A row of the machine formats: the `list` row and when it was read.
#[derive(Debug, Serialize)]
pub struct JsonRow<'a> {
    /// When the rows were read (the cluster's clock, RFC 3339).
    pub as_of: &'a str,
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
    as_of: String,
    rows: usize,
    csv: CsvWriter<Stdout>,
}

impl MachineWriter {
    /// A writer of `format` (not `Table`) for rows read at `as_of`.
    pub fn new(format: ListFormat, as_of: String) -> MachineWriter {
        MachineWriter {
            format,
            csv: CsvWriter::new(Stdout, as_of.clone()),
            as_of,
            rows: 0,
        }
    }

    /// Writes one row: its cause when stuck, and `in_job` (the live job
    /// holding it, if any).
    pub fn row(
        &mut self,
        row: &TransactionRow,
        cause: Option<serde_json::Value>,
        in_job: Option<&HeldBy>,
    ) {
        let j = JsonRow {
            as_of: &self.as_of,
            row,
            cause,
            in_job: in_job.map(InJob::of),
        };
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
                if let Err(e) = self.csv.row(row) {
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
