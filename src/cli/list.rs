//! `list`: transactions printed page by page as they are read (never the
//! whole history loaded first), as an aligned table or a JSON array, with a
//! summary whose counts are counted from the very rows printed. Stuck and
//! "needs investigation" come from the one rule in the protocol module.

use super::export::{ListFormat, MachineWriter};
use super::output::{err, fail, out, plural};
use super::subcommands::ListArgs;
use crate::protocol::read::{urgency, ListScope, Urgency};
use crate::protocol::time::{format_timestamp, human_age};
use crate::protocol::{Protocol, ProtocolConfig, Transaction};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// One `list --json` row.
#[derive(Debug, Clone, Serialize)]
pub struct TxnRow {
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

impl TxnRow {
    /// The row of `t` at `now`.
    pub fn of(t: &Transaction, now: DateTime<Utc>, c: &ProtocolConfig) -> TxnRow {
        let u = urgency(t, now, c);
        TxnRow {
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
            problems: t.problems.clone(),
        }
    }

    fn mark(&self) -> &'static str {
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

    fn line(&self) -> String {
        let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        format!(
            "{:<2} {:<36} {:<12} {:<14} {:<14} {:>10} {:>8}  {}",
            self.mark(),
            self.id,
            o(&self.state),
            o(&self.src_acct),
            o(&self.dest_acct),
            self.amount
                .map(|a| a.to_string())
                .unwrap_or_else(|| "-".into()),
            self.age_seconds
                .map(human_age)
                .unwrap_or_else(|| "-".into()),
            self.notes().join("; ")
        )
    }

    /// The table's last column: the reversal links, then what is malformed.
    fn notes(&self) -> Vec<String> {
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

/// Counts of the rows printed, for the summary line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Rows.
    pub rows: usize,
    /// Stuck rows (investigation and undated included).
    pub stuck: usize,
    /// Rows needing investigation (undated included).
    pub investigate: usize,
    /// Undated rows.
    pub undated: usize,
}

impl Tally {
    fn add(&mut self, r: &TxnRow) {
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
pub async fn run(p: &Protocol, a: &ListArgs) -> i32 {
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
    let mut tally = Tally::default();
    let mut first = true;
    let table = a.format() == ListFormat::Table;
    let mut machine = (!table).then(|| MachineWriter::new(a.format(), format_timestamp(now)));
    let result = p
        .list_scope(&scope, a.older_than, a.allow_partial, |page| {
            for t in &page {
                let row = TxnRow::of(t, now, &c);
                tally.add(&row);
                if let Some(w) = machine.as_mut() {
                    w.row(&row);
                } else {
                    if first {
                        out(format_args!(
                            "{:<2} {:<36} {:<12} {:<14} {:<14} {:>10} {:>8}  NOTES (REVERSAL LINKS, PROBLEMS)",
                            "", "ID", "STATE", "SOURCE", "DEST", "AMOUNT", "AGE"
                        ));
                    }
                    out(row.line());
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
