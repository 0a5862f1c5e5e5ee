//! Small things from the incident walk (issue 18, item 10): which cluster
//! this is stays on screen at 80 columns, `V` is advertised in the detail
//! and the key bar when it applies (and only then), and the detail says
//! what the next step does rather than its number in the protocol.

use crate::drawing::screen;
use crate::fixtures::{app, detail};
use estx::dashboard::app::Pane;
use estx::protocol::transaction::TxnState;

#[test]
fn a_long_url_stays_on_screen_at_80_columns() {
    let mut a = app();
    a.settings.url = "https://search-payments-prod-7f3a9c.eu-west-1.es.amazonaws.com:443".into();
    a.settings.read_only = true;
    a.poll.paused = true;
    let s = screen(&a, 80, 24);
    let header = s.lines().next().unwrap();
    assert!(
        header.contains("search-payments-prod") && header.contains(":443"),
        "{header}"
    );
    assert!(header.contains("READ-ONLY"), "{header}");
    assert!(
        !header.contains("https://"),
        "the scheme gives way: {header}"
    );
}

#[test]
fn v_is_advertised_when_it_applies_and_only_then() {
    let mut a = app();
    let s = screen(&a, 160, 48);
    let bar = s.lines().last().unwrap();
    assert!(!bar.contains("V reverse"), "a pending row: {bar}");
    assert!(!s.contains("V reverse:"), "{s}");

    // A finished transfer looked up with #: the keys' target, reversible.
    let mut d = detail(&a, "t-pend-2");
    d.txn.state = Some(TxnState::Finished);
    d.txn.id = "t-done".into();
    a.selection.txn = Some("t-done".into());
    a.selection.pinned = Some("t-done".into());
    a.focus = Pane::Detail;
    a.reads.looked_up = Some(("t-done".into(), Ok(Some(Box::new(d)))));
    let s = screen(&a, 160, 48);
    let bar = s.lines().last().unwrap();
    assert!(bar.contains("V reverse"), "{bar}");
    assert!(
        s.contains("V reverse: a compensating transfer"),
        "the detail says what V would do:\n{s}"
    );
}

#[test]
fn the_detail_says_what_the_next_step_does() {
    let s = screen(&app(), 160, 48);
    assert!(s.contains("next: credit the destination"), "{s}");
    assert!(!s.contains("next: core"), "{s}");
}
