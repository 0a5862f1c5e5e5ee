//! `list --format table|json|ndjson|csv`: the rows of `list` for incident
//! reports and scripts, written page by page as they are read. Every format
//! carries the full ids and every column; the machine formats carry the
//! as-of time on each row (the table says it under the rows). JSON and
//! NDJSON rows have one shape; a CSV row is the same row flattened
//! (problems joined by `; `, absent values empty).

use super::list::TxnRow;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
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
    pub row: &'a TxnRow,
}

/// A CSV row: [`JsonRow`] flattened to one value per column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    /// When the rows were read.
    pub as_of: String,
    /// Transaction id.
    pub id: String,
    /// State as written.
    pub state: Option<String>,
    /// Source account.
    pub src_acct: Option<String>,
    /// Destination account.
    pub dest_acct: Option<String>,
    /// Amount.
    pub amount: Option<i64>,
    /// Creation time.
    pub creation_time: Option<String>,
    /// Last modification.
    pub modification_time: Option<String>,
    /// Seconds since the last modification.
    pub age_seconds: Option<i64>,
    /// Stuck (undated included).
    pub stuck: bool,
    /// Needs investigation (undated included).
    pub needs_investigation: bool,
    /// In flight with no usable modification time.
    pub undated: bool,
    /// The transaction this one reverses.
    pub reverses: Option<String>,
    /// The reversal that compensates this one.
    pub reversed_by: Option<String>,
    /// What is malformed, joined by `; `.
    pub problems: String,
}

impl CsvRow {
    /// The flat row of `row` read at `as_of`.
    pub fn of(as_of: &str, row: &TxnRow) -> CsvRow {
        CsvRow {
            as_of: as_of.to_string(),
            id: row.id.clone(),
            state: row.state.clone(),
            src_acct: row.src_acct.clone(),
            dest_acct: row.dest_acct.clone(),
            amount: row.amount,
            creation_time: row.creation_time.clone(),
            modification_time: row.modification_time.clone(),
            age_seconds: row.age_seconds,
            stuck: row.stuck,
            needs_investigation: row.needs_investigation,
            undated: row.undated,
            reverses: row.reverses.clone(),
            reversed_by: row.reversed_by.clone(),
            problems: row.problems.join("; "),
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
    csv: csv::Writer<Stdout>,
}

impl MachineWriter {
    /// A writer of `format` (not `Table`) for rows read at `as_of`.
    pub fn new(format: ListFormat, as_of: String) -> MachineWriter {
        MachineWriter {
            format,
            as_of,
            rows: 0,
            csv: csv::Writer::from_writer(Stdout),
        }
    }

    /// Writes one row.
    pub fn row(&mut self, row: &TxnRow) {
        let j = JsonRow {
            as_of: &self.as_of,
            row,
        };
        match self.format {
            ListFormat::Json => {
                let text = serde_json::to_string_pretty(&j).unwrap_or_default();
                let sep = if self.rows == 0 { "[" } else { "," };
                super::output::out(format_args!("{sep}{text}"));
            }
            ListFormat::Ndjson => {
                super::output::out(serde_json::to_string(&j).unwrap_or_default());
            }
            ListFormat::Csv => {
                if let Err(e) = self.csv.serialize(CsvRow::of(&self.as_of, row)) {
                    tracing::warn!(error = %e, "csv row not written");
                }
            }
            ListFormat::Table => {}
        }
        self.rows += 1;
    }

    /// Ends the output (closes the JSON array; a CSV with no rows still
    /// gets its header).
    pub fn finish(mut self) {
        match self.format {
            ListFormat::Json if self.rows == 0 => super::output::out("[]"),
            ListFormat::Json => super::output::out("]"),
            ListFormat::Csv if self.rows == 0 => {
                let _ = self.csv.write_record(csv_header());
            }
            _ => {}
        }
        let _ = self.csv.flush();
    }
}

/// The CSV header line's columns (the fields of [`CsvRow`]).
pub fn csv_header() -> [&'static str; 15] {
    [
        "as_of",
        "id",
        "state",
        "src_acct",
        "dest_acct",
        "amount",
        "creation_time",
        "modification_time",
        "age_seconds",
        "stuck",
        "needs_investigation",
        "undated",
        "reverses",
        "reversed_by",
        "problems",
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_header_matches_the_serialised_one() {
        let row = TxnRow {
            id: "t, \"quoted\"".into(),
            state: Some("pending".into()),
            src_acct: None,
            dest_acct: Some("B".into()),
            amount: Some(5),
            creation_time: None,
            modification_time: None,
            age_seconds: None,
            stuck: true,
            needs_investigation: true,
            undated: true,
            reverses: None,
            reversed_by: Some("t-reversal".into()),
            problems: vec!["a".into(), "b".into()],
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(CsvRow::of("now", &row)).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let header = text.lines().next().unwrap();
        assert_eq!(header, csv_header().join(","));
        let back: Vec<CsvRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, vec![CsvRow::of("now", &row)]);
    }
}
