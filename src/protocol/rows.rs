//! The transaction row: the one flat shape of a transaction that every
//! front end prints or exports (`list`'s table and its JSON, NDJSON and CSV,
//! `show --json`'s `transaction`, the dashboard's `e` export and the support
//! bundle's `stuck.csv`), so the columns, their names and the stuck and
//! needs-investigation rule (the read side's [`urgency`]) are written once.
//!
//! It lives below the CLI and the dashboard, which both use it. A CSV row is
//! the same row flattened ([`CsvRow`]: problems joined by `; `, absent values
//! empty, RFC 4180 quoting by the `csv` crate), with what a reading adds
//! beside it ([`Beside`]: the stuck transaction's cause, the live job
//! working on it).

use super::jobs::{HeldBy, OthersUnavailable};
use super::read::rules::urgency_with;
use super::read::verdict::Cause;
use super::read::Urgency;
use super::time::format_timestamp;
use super::{ProtocolConfig, Transaction};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One transaction as a row (`list --json`, and `show --json`'s
/// `transaction`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransactionRow {
    /// Transaction id.
    pub id: String,
    /// State as written (`None` when missing).
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
    /// Seconds since the last modification (`None` when undated).
    pub age_seconds: Option<i64>,
    /// In flight and untouched for the recovery window (or undated).
    pub stuck: bool,
    /// Stuck for over the investigation threshold (or undated).
    pub needs_investigation: bool,
    /// In flight with no usable modification time.
    pub undated: bool,
    /// The transaction this one reverses (it is a compensating transfer).
    pub reverses: Option<String>,
    /// The reversal that compensates this one.
    pub reversed_by: Option<String>,
    /// What is malformed.
    pub problems: Vec<String>,
}

impl TransactionRow {
    /// The row of `t` at `now`, judged by the windows of `c`.
    pub fn of(t: &Transaction, now: DateTime<Utc>, c: &ProtocolConfig) -> TransactionRow {
        TransactionRow::with_windows(t, now, c.recovery_window, c.investigate_after)
    }

    /// [`Self::of`] with the two windows given directly.
    pub fn with_windows(
        t: &Transaction,
        now: DateTime<Utc>,
        recovery_window: Duration,
        investigate_after: Duration,
    ) -> TransactionRow {
        let u = urgency_with(t, now, recovery_window, investigate_after);
        TransactionRow {
            id: t.id.clone(),
            state: t.state.as_ref().map(|s| s.as_str().to_string()),
            src_acct: t.src.clone(),
            dest_acct: t.dest.clone(),
            amount: t.amount,
            creation_time: t.creation_time.map(format_timestamp),
            modification_time: t.modification_time.map(format_timestamp),
            age_seconds: t.age_seconds(now),
            stuck: u.is_stuck(),
            needs_investigation: u.needs_investigation(),
            undated: u == Urgency::Undated,
            reverses: t.reverses.clone(),
            reversed_by: t.reversed_by.clone(),
            problems: t.problems.iter().map(ToString::to_string).collect(),
        }
    }

    /// The mark of `list`'s first column: `?` undated, `!!` needs
    /// investigation, `!` stuck.
    pub fn mark(&self) -> &'static str {
        if self.undated {
            "?"
        } else if self.needs_investigation {
            "!!"
        } else if self.stuck {
            "!"
        } else {
            ""
        }
    }

    /// The table's last column: the reversal links, then what is malformed.
    pub fn notes(&self) -> Vec<String> {
        let links = [
            self.reversed_by
                .as_ref()
                .map(|r| format!("reversed by {r}")),
            self.reverses.as_ref().map(|r| format!("reverses {r}")),
        ];
        links
            .into_iter()
            .flatten()
            .chain(self.problems.iter().cloned())
            .collect()
    }
}

/// What a reading adds beside a row's columns in the machine formats and
/// `show --json` (`protocol::read::RowNotes`): the cause of a stuck
/// transaction and the live job (another operator's, or another
/// process's) working on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Beside<'a> {
    /// Its cause, when it is stuck and causes were judged.
    pub cause: Option<&'a Cause>,
    /// The live job holding it.
    pub in_job: Option<&'a HeldBy>,
    /// Why other operators' jobs cannot be seen (`in_job` then names only
    /// this trail's own), when they cannot.
    pub others_unavailable: Option<OthersUnavailable>,
}

/// A CSV row: a [`TransactionRow`] read at `as_of`, flattened to one value
/// per column, with what the reading says [`Beside`] it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    /// When the rows were read (the cluster's clock, RFC 3339).
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
    /// A stuck transaction's cause, by name (`holder_dead`, ...: `list
    /// --json`'s `cause.cause`); empty when not stuck or not judged.
    pub cause: Option<String>,
    /// The live job working on it, `JOB_ID (operator)` (as a forced
    /// record's `overrode` names it); empty when none.
    pub in_job: Option<String>,
}

impl CsvRow {
    /// The flat row of `row` read at `as_of`, with what is `beside` it.
    pub fn of(as_of: &str, row: &TransactionRow, beside: Beside<'_>) -> CsvRow {
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
            cause: beside.cause.map(|c| c.kind().name().to_string()),
            in_job: beside
                .in_job
                .map(|h| format!("{} ({})", h.job, h.operator.user)),
        }
    }
}

/// The CSV header line's columns (the fields of [`CsvRow`]), written even
/// when there is no row.
pub fn csv_header() -> [&'static str; 17] {
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
        "cause",
        "in_job",
    ]
}

/// Writes CSV rows as they come, the header first (also with no row).
pub struct CsvWriter<W: std::io::Write> {
    csv: csv::Writer<W>,
    as_of: String,
    rows: usize,
}

impl<W: std::io::Write> CsvWriter<W> {
    /// A writer to `out` of rows read at `as_of` (RFC 3339).
    pub fn new(out: W, as_of: String) -> CsvWriter<W> {
        CsvWriter {
            csv: csv::Writer::from_writer(out),
            as_of,
            rows: 0,
        }
    }

    /// Writes one row, with what is `beside` it.
    pub fn row(&mut self, row: &TransactionRow, beside: Beside<'_>) -> csv::Result<()> {
        self.rows += 1;
        self.csv.serialize(CsvRow::of(&self.as_of, row, beside))
    }

    /// Ends the output (a CSV with no rows still gets its header) and gives
    /// the output back.
    pub fn finish(mut self) -> csv::Result<W> {
        if self.rows == 0 {
            self.csv.write_record(csv_header())?;
        }
        self.csv
            .into_inner()
            .map_err(|e| csv::Error::from(std::io::Error::other(e.to_string())))
    }
}

/// The CSV text of `rows` as of `as_of`, each with what is beside it
/// (header first; RFC 4180 quoting).
pub fn to_csv<'a>(
    rows: impl IntoIterator<Item = (&'a TransactionRow, Beside<'a>)>,
    as_of: DateTime<Utc>,
) -> String {
    let mut w = CsvWriter::new(Vec::new(), format_timestamp(as_of));
    for (row, beside) in rows {
        if let Err(e) = w.row(row, beside) {
            tracing::warn!(error = %e, "csv row not written");
        }
    }
    match w.finish() {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            tracing::warn!(error = %e, "csv not written");
            String::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn sample() -> TransactionRow {
        TransactionRow {
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
        }
    }

    #[test]
    fn the_empty_header_matches_the_serialised_one() {
        let row = sample();
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(CsvRow::of("now", &row, Beside::default()))
            .unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let header = text.lines().next().unwrap();
        assert_eq!(header, csv_header().join(","));
        let back: Vec<CsvRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, vec![CsvRow::of("now", &row, Beside::default())]);
    }

    #[test]
    fn no_rows_still_give_the_whole_header() {
        let as_of = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        assert_eq!(
            to_csv(std::iter::empty(), as_of),
            format!("{}\n", csv_header().join(","))
        );
    }

    #[test]
    fn a_row_is_quoted_as_rfc_4180_wants_with_its_as_of_time() {
        let as_of = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        assert_eq!(
            to_csv([(&sample(), Beside::default())], as_of),
            format!(
                "{}\n{}\n",
                csv_header().join(","),
                "2026-03-01T12:00:00.000Z,\"t, \"\"quoted\"\"\",pending,,B,5,,,,true,true,true,,t-reversal,a; b,,"
            )
        );
    }

    #[test]
    fn the_json_row_has_the_columns_of_the_csv_in_order() {
        let v = serde_json::to_value(sample()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        // The CSV adds what is beside the row (`cause`, `in_job`) last.
        assert_eq!(keys, csv_header()[1..15]);
        assert_eq!(csv_header()[15..], ["cause", "in_job"]);
    }
}
