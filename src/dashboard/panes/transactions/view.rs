//! What the transaction table shows, derived once (by `derive`, never
//! while drawing): the loaded rows its filter keeps, in its order, the page
//! they come from, what each row shows beside its documents (its signs and
//! cause), where the selection is among them, the first row on screen, and
//! the marks by what the table shows of them. Pure: it imports nothing of
//! the dashboard.

use crate::protocol::read::poll::Snapshot;
use crate::protocol::read::verdict::CauseKind;
use crate::protocol::read::TablePage;
use crate::protocol::transaction::Transaction;
use chrono::{DateTime, Utc};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

/// The table's derived rows, page, cursor, scroll and marks.
#[derive(Debug, Clone, Default)]
pub struct TableView {
    /// Indices into `snapshot.transactions`, filtered and sorted.
    pub rows: Vec<usize>,
    /// What each of `rows` shows beside its documents, in the same order.
    pub notes: Vec<RowNote>,
    /// The page of the filter's matches the rows come from, with their
    /// total (`None` while the poll asked for that filter or page runs).
    pub page: Option<TablePage>,
    /// The marks, by what the table shows of them.
    pub marks: MarkedRows,
    /// Position of the selected transaction among `rows`, if it is one.
    pub cursor: Option<usize>,
    /// First row of the table on screen.
    pub offset: usize,
}

/// The causes of a snapshot's stuck rows, judged once per snapshot (every
/// row against its locks and the stuck per account), not at every event:
/// a bulk run's progress redraws the table many times a second.
#[derive(Debug, Clone, Default)]
pub struct RowCauses {
    /// The snapshot judged: when it was taken, how many rows it lists.
    of: Option<(DateTime<Utc>, usize)>,
    by_id: HashMap<String, CauseKind>,
}

impl RowCauses {
    /// Judges `snap`'s rows under the recovery `window` unless they are
    /// the ones judged last.
    pub fn follow(&mut self, snap: &Snapshot, window: Duration) {
        let of = Some((snap.taken_at, snap.transactions.len()));
        if self.of != of {
            self.judge(snap, window);
        }
    }

    /// Judges `snap`'s rows under the recovery `window` (a new poll).
    pub fn judge(&mut self, snap: &Snapshot, window: Duration) {
        let causes = snap.causes_of(&snap.transactions, window);
        self.by_id = snap
            .transactions
            .iter()
            .zip(causes)
            .filter_map(|(t, c)| Some((t.id.clone(), c?.kind())))
            .collect();
        self.of = Some((snap.taken_at, snap.transactions.len()));
    }

    /// The cause of row `id` (`None`: not stuck, or not listed).
    pub fn get(&self, id: &str) -> Option<CauseKind> {
        self.by_id.get(id).copied()
    }
}

/// What a row shows beside its documents, derived with the view when the
/// data, marks or poll change (never while drawing): the signs before its
/// id and its cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowNote {
    /// Marked for a bulk act (`✓`).
    pub marked: bool,
    /// Acknowledged (`~`).
    pub acked: bool,
    /// Held by another operator's live job (`@`).
    pub held: bool,
    /// A stuck row's cause, judged on the poll
    /// (`Snapshot::causes_of`); `None` when it is not stuck.
    pub cause: Option<CauseKind>,
}

impl RowNote {
    /// The signs before the id, in order: `✓` marked, `~` acknowledged,
    /// `@` held by another's job (empty when none).
    pub fn signs(&self) -> String {
        [(self.marked, '✓'), (self.acked, '~'), (self.held, '@')]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, c)| *c)
            .collect()
    }

    /// Whether its cause is one an operator can act on now (a dead
    /// holder: recover, or release its lock), as the view by cause sorts
    /// first.
    pub fn actionable(&self) -> bool {
        self.cause == Some(CauseKind::HolderDead)
    }

    /// The cause column's short words (`None`: not stuck). An unknown
    /// cause is `unkn.`: not `?`, the mark of a malformed row, and no wider
    /// than the column's least (5), so no narrow table loses its amount
    /// to it.
    pub fn cause_word(&self) -> Option<&'static str> {
        self.cause.map(|k| match k {
            CauseKind::HolderDead => "dead holder",
            CauseKind::HolderLive => "contention",
            CauseKind::HotAccount => "hot acct",
            CauseKind::Refused => "refused",
            CauseKind::AppRecovering => "app recovering",
            CauseKind::Unknown => "unkn.",
        })
    }
}

/// The marked transactions by what the table shows of them (each list by
/// id). A bulk act acts on `shown` only; the others stay marked, are
/// counted in the table's title and named in the bulk dialog as not
/// included, so nothing the operator cannot see is acted on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkedRows {
    /// Marked rows of the table.
    pub shown: Vec<String>,
    /// Marked and listed, but hidden by the filter.
    pub filtered: Vec<String>,
    /// Marked but no longer listed (they left the in-flight list).
    pub unlisted: Vec<String>,
}

impl MarkedRows {
    /// Marks the table does not show.
    pub fn hidden(&self) -> usize {
        self.filtered.len() + self.unlisted.len()
    }
}

/// Splits `marks` by whether `rows` of `snap` show them.
pub fn marked_rows(marks: &BTreeSet<String>, snap: &Snapshot, rows: &[usize]) -> MarkedRows {
    let mut out = MarkedRows::default();
    if marks.is_empty() {
        return out;
    }
    let shown: HashSet<&str> = rows
        .iter()
        .filter_map(|&i| snap.transactions.get(i))
        .map(|t| t.id.as_str())
        .collect();
    let listed: HashSet<&str> = snap.transactions.iter().map(|t| t.id.as_str()).collect();
    for id in marks {
        let list = if shown.contains(id.as_str()) {
            &mut out.shown
        } else if listed.contains(id.as_str()) {
            &mut out.filtered
        } else {
            &mut out.unlisted
        };
        list.push(id.clone());
    }
    out
}

/// Text filter: id, state, source or destination contains `needle` (lowercase).
pub fn matches_text(t: &Transaction, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    let has = |s: &str| s.to_lowercase().contains(needle);
    has(&t.id)
        || t.state.as_ref().is_some_and(|s| has(s.as_str()))
        || t.src.as_deref().is_some_and(has)
        || t.dest.as_deref().is_some_and(has)
}
