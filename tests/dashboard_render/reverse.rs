//! The reverse dialog (`V`): every write previewed from the re-read
//! (create, link, the reversal's own steps; a committed original finished
//! first), the balance effect, the required reason; red, Cancel focused;
//! the refusal of an already reversed one; the links in the detail pane.

use crate::drawing::{assert_danger_dialog, draw, find, screen};
use crate::fixtures::{app, detail, now, select, txn};
use estx::dashboard::app::{App, Dialog};
use estx::dashboard::load::Load;
use estx::protocol::intervene::{AnyPlan, JudgedReversal, ReversalPlan};
use estx::protocol::transaction::Transaction;
use serde_json::json;

/// `app()` with a finished `t-paid` (alice -> bob, 100) listed, linked to
/// `reversed_by` if given, and `t-paid-reversal` when `reversal` names its state.
fn with_finished(reversed_by: Option<&str>) -> App {
    let mut a = app();
    let mut t = txn("t-paid", Some("finished"), "alice", "bob", json!(100), 1800);
    t.reversed_by = reversed_by.map(str::to_string);
    a.snapshot.as_mut().unwrap().transactions.push(t);
    a.refresh_view();
    a
}

fn open_reverse(
    a: &mut App,
    id: &str,
    existing: Option<Transaction>,
    refusal: Option<estx::protocol::intervene::ActRefusal>,
) {
    select(a, id);
    // The protocol's plan of the reversal on the re-read documents.
    let mut plan = JudgedReversal::on_reversal(detail(a, id), existing, true, None, now());
    if refusal.is_some() {
        plan.refusal = refusal;
    }
    a.overlays.open_dialog(Dialog {
        preview: Load::Loaded(AnyPlan::Reverse(ReversalPlan::Judged(Box::new(plan)))),
        ..Dialog::new(estx::protocol::intervene::Reverse {
            txn: id.into(),
            finish_committed: true,
        })
    });
}

#[test]
fn reverse_dialog_previews_every_write_and_is_red() {
    let mut a = with_finished(None);
    open_reverse(&mut a, "t-paid", None, None);
    let buf = draw(&a, 100, 30);
    assert_danger_dialog(&buf, "Reverse t-paid?");
    let s = crate::drawing::text(&buf);
    for needle in [
        "compensating transfer t-paid-reversal: bob → alice, amount 100",
        "1. reverse: create reversal — creates t-paid-reversal",
        "2. reverse: link original — sets t-paid.reversed_by = t-paid-reversal",
        "reason (required",
    ] {
        assert!(s.contains(needle), "{needle:?} missing:\n{s}");
    }
    assert_snapshot!("dialog_reverse", s);
}

#[test]
fn reverse_dialog_of_a_committed_one_finishes_it_first() {
    let mut a = app();
    open_reverse(&mut a, "t-commit-1", None, None);
    let s = screen(&a, 100, 40);
    assert!(s.contains("recovery finishes t-commit-1 first"), "{s}");
    assert_snapshot!("dialog_reverse_committed", s);
}

#[test]
fn reverse_dialog_refuses_an_already_reversed_one() {
    let mut a = with_finished(Some("t-paid-reversal"));
    let done = {
        let mut r = txn(
            "t-paid-reversal",
            Some("finished"),
            "bob",
            "alice",
            json!(100),
            60,
        );
        r.reverses = Some("t-paid".into());
        r
    };
    open_reverse(&mut a, "t-paid", Some(done), None);
    let buf = draw(&a, 100, 30);
    assert!(find(&buf, "[ Close ]").is_some());
    assert!(find(&buf, "Confirm").is_none());
    let s = crate::drawing::text(&buf);
    assert!(
        s.contains("reverse refused: transaction is already reversed by `t-paid-reversal`"),
        "{s}"
    );
    assert_snapshot!("dialog_reverse_refused", s);
}

#[test]
fn the_detail_pane_shows_the_links_both_ways() {
    let mut a = with_finished(Some("t-paid-reversal"));
    let mut r = txn(
        "t-paid-reversal",
        Some("finished"),
        "bob",
        "alice",
        json!(100),
        60,
    );
    r.reverses = Some("t-paid".into());
    a.snapshot.as_mut().unwrap().transactions.push(r);
    a.refresh_view();
    select(&mut a, "t-paid");
    let s = screen(&a, 160, 48);
    assert!(s.contains("↩ reversed by t-paid-reversal"), "{s}");
    select(&mut a, "t-paid-reversal");
    let s = screen(&a, 160, 48);
    assert!(s.contains("↩ reverses t-paid"), "{s}");
}
