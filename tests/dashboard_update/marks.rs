//! Marks and selection follow what the operator sees (issue 18, item 1):
//! a filter that hides the selection selects its first row, Space marks
//! only a row of the table, and a bulk act acts only on the marked rows
//! the table shows, naming the others as not included.

use super::*;

/// Five transactions, `txn5` the oldest (so `g` selects it).
fn five() -> App {
    let mut app = app(false);
    let rows = (1..=5)
        .map(|i| txn(&format!("txn{i}"), "pending", 10 * i))
        .collect();
    update(&mut app, Event::Polled(Ok(Box::new(snapshot(rows)))));
    update(&mut app, key('g'));
    assert_eq!(app.selection.txn.as_deref(), Some("txn5"));
    app
}

fn type_filter(app: &mut App, text: &str) {
    update(app, key('/'));
    for c in text.chars() {
        update(app, key(c));
    }
    update(app, code(KeyCode::Enter));
}

fn last_log(app: &App) -> String {
    app.log.back().map(|e| e.text.clone()).unwrap_or_default()
}

/// The reproduction: `g` selects txn5; `/txn2` Enter leaves only
/// txn2 visible; Space, then `R` rolled back txn5, a row nobody saw.
#[test]
fn space_then_r_after_a_filter_acts_on_the_row_the_filter_shows() {
    let mut app = five();
    type_filter(&mut app, "txn2");
    assert_eq!(
        app.visible().iter().map(|t| &t.id).collect::<Vec<_>>(),
        ["txn2"]
    );
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("txn2"),
        "the row it shows"
    );
    update(&mut app, key(' '));
    assert_eq!(app.selection.marks.iter().collect::<Vec<_>>(), ["txn2"]);
    assert_eq!(
        update(&mut app, key('R')),
        vec![IoRequest::LoadBulkPreview(ROLLBACK, vec!["txn2".into()])]
    );
    let b = app.overlays.dialog().unwrap().bulk().unwrap();
    assert_eq!(b.ids, ["txn2"]);
}

/// The natural flow: `/ id Enter R` rolls back the row the filter found.
#[test]
fn slash_id_enter_r_opens_the_dialog_on_that_row() {
    let mut app = five();
    type_filter(&mut app, "txn3");
    assert_eq!(
        update(&mut app, key('R')),
        vec![IoRequest::LoadPreview(rollback("txn3"))]
    );
}

/// A new filter starts at the top of its rows, even when the selection
/// was one of them, and whatever the table's scroll was.
#[test]
fn a_new_filter_starts_at_the_top_of_its_rows() {
    let mut app = app(false);
    let rows = (0..40)
        .map(|i| txn(&format!("t{i:02}"), "pending", 100 - i))
        .collect();
    update(&mut app, Event::Polled(Ok(Box::new(snapshot(rows)))));
    update(&mut app, key('G'));
    assert_eq!(app.selection.txn.as_deref(), Some("t39"));
    assert!(app.view.table.offset > 0);
    type_filter(&mut app, "t3");
    assert_eq!(app.selection.txn.as_deref(), Some("t30"));
    assert_eq!((app.view.table.cursor, app.view.table.offset), (Some(0), 0));
    // Backspace widens the filter: its top row again.
    update(&mut app, key('/'));
    update(&mut app, code(KeyCode::Backspace));
    assert_eq!(app.query.text, "t");
    assert_eq!(app.selection.txn.as_deref(), Some("t00"));
    // Esc while typing drops the filter; the selection stays a row.
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.selection.txn.as_deref(), Some("t00"));
    assert_eq!(app.view.table.cursor, Some(0));
}

/// `x`, `X` and `s` that hide the selected row select the first visible
/// row; one that keeps it shown leaves it; a poll never moves it.
#[test]
fn toggles_that_hide_the_selection_select_the_first_visible_row() {
    let mut app = app(false);
    update(&mut app, key('G'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    update(&mut app, key('x')); // stuck only: t-new (1 min) is hidden
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    update(&mut app, key('j'));
    assert_eq!(app.selection.txn.as_deref(), Some("t-mid"));
    update(&mut app, key('x'));
    assert_eq!(
        app.selection.txn.as_deref(),
        Some("t-mid"),
        "still shown: kept"
    );
    update(&mut app, key('X')); // over an hour: only t-old
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    update(&mut app, key('X'));
    update(&mut app, key('G'));
    update(&mut app, key('s')); // created: t-new stays
    assert_eq!(app.selection.txn.as_deref(), Some("t-new"));
    update(&mut app, key('s')); // pending
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    // A poll that reorders or drops rows never moves the selection.
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![
            txn("t-x", "pending", 200),
            txn("t-old", "committed", 90),
        ])))),
    );
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    assert_eq!(app.selected_index(), None, "hidden by the poll, kept");
}

/// Space marks only a row of the table: not a selection the filter hides
/// (no row matches), nor a transaction looked up with `#`.
#[test]
fn space_marks_only_a_row_of_the_table() {
    let mut app = five();
    type_filter(&mut app, "nothing-matches");
    assert!(app.visible().is_empty());
    update(&mut app, key(' '));
    assert!(app.selection.marks.is_empty());
    let last = last_log(&app);
    assert!(
        last.contains("txn5 is hidden by the filter") && last.ends_with("nothing marked"),
        "{last}"
    );
    update(&mut app, code(KeyCode::Esc));
    update(&mut app, key('#'));
    for c in "t-elsewhere".chars() {
        update(&mut app, key(c));
    }
    update(&mut app, code(KeyCode::Enter));
    update(&mut app, key(' '));
    assert!(
        app.selection.marks.is_empty(),
        "a look-up is no row to mark"
    );
}

/// Marks the filter hides stay marked, are counted in the view, and are
/// left out of a bulk act, which names them; with none shown nothing opens.
#[test]
fn a_bulk_act_includes_only_the_marked_rows_the_table_shows() {
    let mut app = five();
    update(&mut app, key(' ')); // txn5
    update(&mut app, key('j'));
    update(&mut app, key(' ')); // txn4
    type_filter(&mut app, "txn4");
    assert_eq!(app.view.table.marks.shown, ["txn4"]);
    assert_eq!(app.view.table.marks.filtered, ["txn5"]);
    assert_eq!(
        update(&mut app, key('F')),
        vec![IoRequest::LoadBulkPreview(RECOVER, vec!["txn4".into()])]
    );
    let b = app.overlays.dialog().unwrap().bulk().unwrap();
    assert_eq!(
        (b.ids.clone(), b.filtered.clone()),
        (vec!["txn4".into()], vec!["txn5".into()])
    );
    app.overlays.take_dialog();
    // A mark that left the list is counted as such.
    update(
        &mut app,
        Event::Polled(Ok(Box::new(snapshot(vec![txn("txn5", "pending", 50)])))),
    );
    assert_eq!(app.view.table.marks.unlisted, ["txn4"]);
    assert_eq!(app.view.table.marks.filtered, ["txn5"]);
    // Nothing marked is shown: R opens nothing, and says why.
    assert!(update(&mut app, key('R')).is_empty());
    assert!(app.overlays.dialog().is_none());
    let last = last_log(&app);
    assert!(
        last.contains("1 hidden by the filter, 1 no longer listed"),
        "{last}"
    );
}

/// Confirming a bulk act clears only the marks it acted on.
#[test]
fn confirming_clears_only_the_marks_acted_on() {
    let mut app = five();
    update(&mut app, key(' ')); // txn5
    update(&mut app, key('j'));
    update(&mut app, key(' ')); // txn4
    type_filter(&mut app, "txn4");
    update(&mut app, key('R'));
    let det = detail_of(txn("txn4", "pending", 40), vec![]);
    update(
        &mut app,
        Event::BulkPreview {
            on: ROLLBACK,
            plan: Ok(crate::bulk_of(
                estx::protocol::Procedure::Rollback,
                vec![estx::protocol::intervene::TxnPlan::on_transaction(
                    estx::protocol::Procedure::Rollback,
                    det,
                    None,
                )],
            )),
        },
    );
    let p = app
        .overlays
        .dialog()
        .unwrap()
        .bulk()
        .unwrap()
        .plan
        .clone()
        .unwrap();
    assert_eq!(p.runs.len(), 1);
    assert_eq!(p.by_state.get(&Some(TxnState::Pending)), Some(&1));
    update(&mut app, key('y'));
    for c in "outage".chars() {
        update(&mut app, key(c));
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(matches!(cmds.as_slice(), [IoRequest::RunBulk(_, r)] if r.len() == 1));
    assert_eq!(app.selection.marks.iter().collect::<Vec<_>>(), ["txn5"]);
}
