//! The transaction table: the loaded rows of the filter in force, in the
//! sort's order, a page at a time. Its view (`view.rs`: the rows with their
//! signs and causes, the page, the cursor, the scroll and the marks,
//! derived once), its derive step,
//! the keys only it handles (moving among the rows; `Enter` opens the
//! detail; the filters, the state cycle, paging and the sort, which change
//! what it lists) and its drawing (`draw.rs`).

pub mod draw;
pub mod view;

use crate::dashboard::app::{next_state_filter, App, Pane};
use crate::dashboard::keymap::Op;
use crate::dashboard::layers::Overlay;
use crate::dashboard::layout::keep_visible;
use crate::dashboard::selection::follow;
use crate::dashboard::sort::SortKey;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::transaction::TxnState;
pub use view::RowCauses;
use view::{marked_rows, matches_text, RowNote, TableView};

/// The table's view of `snap`: its rows, page and marks, the selection's
/// row kept on screen in `fit` rows, scrolled as little as possible from
/// `prev_offset`.
pub fn derive(app: &App, snap: &Snapshot, prev_offset: usize, fit: usize) -> TableView {
    let rows = filtered_rows(app, snap);
    let cursor = app.selection.txn.as_ref().and_then(|id| {
        rows.iter()
            .position(|&i| snap.transactions.get(i).is_some_and(|t| &t.id == id))
    });
    TableView {
        notes: row_notes(app, snap, &rows),
        page: app.table_page().cloned(),
        marks: marked_rows(&app.selection.marks, snap, &rows),
        cursor,
        offset: keep_visible(prev_offset, cursor, rows.len(), fit),
        rows,
    }
}

/// What each of `rows` shows beside its documents: its signs (marked,
/// acknowledged, held by another's live job) and its cause, judged once
/// per poll ([`RowCauses`], in `app.poll`).
fn row_notes(app: &App, snap: &Snapshot, rows: &[usize]) -> Vec<RowNote> {
    rows.iter()
        .filter_map(|&i| snap.transactions.get(i))
        .map(|t| RowNote {
            marked: app.selection.marks.contains(&t.id),
            acked: snap.acks.get(&t.id).is_some(),
            held: app.held_by(&t.id).is_some(),
            cause: app.poll.causes.get(&t.id),
        })
        .collect()
}

/// The loaded rows the filter keeps, sorted: the cluster already ran
/// the filter for the page it answers (the same conditions: a row it
/// returns passes here); until the page asked for arrives, the rows
/// loaded before are narrowed on screen.
fn filtered_rows(app: &App, snap: &Snapshot) -> Vec<usize> {
    let needle = app.query.text.to_lowercase();
    let txns = &snap.transactions;
    let (filter, s) = (app.table_filter(), &app.settings);
    let mut rows: Vec<usize> = (0..txns.len())
        .filter(|&i| {
            let t = &txns[i];
            filter.keeps_with(t, app.now, s.recovery_window, s.investigate_after)
                && matches_text(t, &needle)
        })
        .collect();
    match app.query.sort {
        SortKey::Age => rows.sort_by_key(|&i| txns[i].modification_time),
        SortKey::State => rows.sort_by(|&a, &b| {
            let key = |i: usize| {
                (
                    TxnState::order_key(txns[i].state.as_ref()),
                    txns[i].modification_time,
                )
            };
            key(a).cmp(&key(b))
        }),
        SortKey::Amount => rows.sort_by_key(|&i| (txns[i].amount, txns[i].modification_time)),
        SortKey::Id => rows.sort_by(|&a, &b| txns[a].id.cmp(&txns[b].id)),
    }
    if app.query.sort_desc {
        rows.reverse();
    }
    rows
}

/// `j`/`k` (and the wheel) on the table: selects the row `delta` rows on
/// (the first when none is selected yet).
pub fn step(app: &mut App, delta: isize) {
    let v = &app.view.table;
    if let Some(i) = crate::dashboard::selection::navigation::step(v.cursor, delta, v.rows.len()) {
        app.select_index(i);
    }
}

/// The keys that change what the table lists, from any pane: the text
/// filter (`/`), the state cycle, the urgency toggles, paging and the
/// sort. Whether `op` was one of them.
pub fn on_query_op(app: &mut App, op: Op) -> bool {
    match op {
        Op::Filter => {
            app.query.before_drill = None;
            app.overlays.open(Overlay::Filter);
            app.focus = Pane::Transactions;
        }
        Op::CycleState => {
            app.query.state = next_state_filter(app.query.state.as_ref());
            follow::keep_selection_visible(app);
        }
        Op::StuckOnly => {
            app.query.stuck_only = !app.query.stuck_only;
            follow::keep_selection_visible(app);
        }
        Op::OldOnly => {
            app.query.old_only = !app.query.old_only;
            follow::keep_selection_visible(app);
        }
        Op::NextPage | Op::PrevPage => follow::turn_page(app, op == Op::NextPage),
        Op::Sort => app.cycle_sort(),
        Op::Reverse => app.query.sort_desc = !app.query.sort_desc,
        _ => return false,
    }
    true
}
