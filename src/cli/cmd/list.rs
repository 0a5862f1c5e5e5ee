//! `list`: transactions printed page by page as they are read (never the
//! whole history loaded first), as an aligned table or a JSON array, with a
//! summary whose counts are counted from the very rows printed. Stuck and
//! "needs investigation" come from the one rule in the protocol module.

use crate::cli::output::list::{ListFormat, MachineWriter};
use crate::cli::output::{err, fail, out, plural};
use crate::cli::values;
use crate::protocol::read::{row_notes, ListScope, RowNotes};
use crate::protocol::rows::TransactionRow;
use crate::protocol::time::parse_duration;
use crate::protocol::time::{format_timestamp, human_age};
use crate::protocol::Protocol;
use std::time::Duration;

/// `list`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Only transactions in this state (repeatable): created, pending,
    /// committed, terminating, finished, rolled-back.
    #[arg(long = "state", value_name = "STATE", value_parser = values::state)]
    pub states: Vec<String>,
    /// Only transactions last modified longer ago than this.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub older_than: Option<Duration>,
    /// The whole history, finished and rolled back included (default:
    /// everything not finished or rolled back).
    #[arg(long, conflicts_with_all = ["states", "stuck", "investigate"])]
    pub all: bool,
    /// Only stuck transactions (in flight, untouched for the recovery window).
    #[arg(long, conflicts_with_all = ["states", "investigate"])]
    pub stuck: bool,
    /// Only transactions needing investigation (stuck for over --investigate-after).
    #[arg(long, conflicts_with = "states")]
    pub investigate: bool,
    /// List even when some shards failed to answer (rows may be missing).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print JSON instead of a table (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format: every column, full ids and the as-of time.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

impl Args {
    /// The format asked for (`--json` is `--format json`).
    pub fn format(&self) -> ListFormat {
        if self.json {
            ListFormat::Json
        } else {
            self.format
        }
    }
}

/// The table line of one row.
fn line(row: &TransactionRow) -> String {
    let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    format!(
        "{:<2} {:<36} {:<12} {:<14} {:<14} {:>10} {:>8}  {}",
        row.mark(),
        row.id,
        o(&row.state),
        o(&row.src_acct),
        o(&row.dest_acct),
        row.amount
            .map(|a| a.to_string())
            .unwrap_or_else(|| "-".into()),
        row.age_seconds.map(human_age).unwrap_or_else(|| "-".into()),
        row.notes().join("; ")
    )
}

/// Counts of the rows printed, for the summary line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ListCounts {
    /// Rows.
    pub rows: usize,
    /// Stuck rows (investigation and undated included).
    pub stuck: usize,
    /// Rows needing investigation (undated included).
    pub investigate: usize,
    /// Undated rows.
    pub undated: usize,
}

impl ListCounts {
    fn add(&mut self, r: &TransactionRow) {
        self.rows += 1;
        self.stuck += usize::from(r.stuck);
        self.investigate += usize::from(r.needs_investigation);
        self.undated += usize::from(r.undated);
    }

    /// The summary line.
    pub fn summary(&self) -> String {
        let mut s = plural(self.rows, "transaction");
        if self.stuck > 0 {
            s.push_str(&format!(
                ": {} stuck, of which {} need investigation (!!)",
                self.stuck, self.investigate
            ));
            if self.undated > 0 {
                s.push_str(&format!(
                    " and {} have no modification time (?)",
                    self.undated
                ));
            }
        }
        s
    }
}

/// `list`.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let scope = if a.all {
        ListScope::All
    } else if a.investigate {
        ListScope::NeedsInvestigation
    } else if a.stuck {
        ListScope::Stuck
    } else if !a.states.is_empty() {
        ListScope::States(a.states.clone())
    } else {
        ListScope::NotFinished
    };
    let now = p.now().await;
    let c = p.config().clone();
    let mut tally = ListCounts::default();
    let mut first = true;
    let table = a.format() == ListFormat::Table;
    let mut machine = (!table).then(|| MachineWriter::new(a.format(), now, c.runbooks.clone()));
    // Machine rows carry each stuck transaction's cause, judged on one
    // reading of the locks and the healing verdict, and the live job
    // holding each (`in_job`); what cannot be read is said on stderr and
    // leaves its column empty.
    let notes = if table {
        RowNotes::default()
    } else {
        let (notes, unread) = row_notes(&p, now).await;
        for u in unread {
            err(u);
        }
        if let Some(why) = notes.others_unavailable() {
            err(why);
        }
        notes
    };
    let result = p
        .list_scope(&scope, a.older_than, a.allow_partial, |page| {
            for t in &page {
                let row = TransactionRow::of(t, now, &c);
                tally.add(&row);
                if let Some(w) = machine.as_mut() {
                    let cause = notes.cause(t);
                    let beside = notes.beside(&row.id, cause.as_ref());
                    w.row(&row, beside);
                } else {
                    if first {
                        out(format_args!(
                            "{:<2} {:<36} {:<12} {:<14} {:<14} {:>10} {:>8}  NOTES (REVERSAL LINKS, PROBLEMS)",
                            "", "ID", "STATE", "SOURCE", "DEST", "AMOUNT", "AGE"
                        ));
                    }
                    out(line(&row));
                }
                first = false;
            }
            true
        })
        .await;
    if let Some(w) = machine {
        w.finish();
    }
    let summary = match result {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if let Some(p) = summary.coverage.describe() {
        if a.allow_partial {
            err(format_args!("{p}: rows may be missing"));
        } else {
            err(format_args!(
                "refused: {p}; the list stopped before the partial page. Pass --allow-partial to see it anyway"
            ));
            return 1;
        }
    }
    if table {
        if tally.rows == 0 {
            out(format_args!(
                "no transactions match (as of {})",
                format_timestamp(now)
            ));
        } else {
            out("");
            out(format_args!(
                "{} (as of {})",
                tally.summary(),
                format_timestamp(now)
            ));
        }
    }
    0
}
