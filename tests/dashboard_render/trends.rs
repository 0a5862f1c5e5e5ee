//! The header's trends: sparklines of in flight, stuck, needing
//! investigation, the oldest age and finishes per minute with a rising or
//! falling marker, all five at 200 columns, four at 160, and at 80 only
//! what leaves the profile or URL and the freshness on screen.

use crate::drawing::{draw, find, is_red, text};
use crate::fixtures::{app, now, snapshot};
use estx::dashboard::app::App;
use estx::dashboard::view::Attention;
use estx::protocol::transaction::TxnState;
use ratatui::style::Color;

/// Ten polls two seconds apart: stuck rising 1..=10, needing
/// investigation falling, in flight steady, finishes flowing at 30 a
/// minute then stopping.
fn with_trends(mut a: App) -> App {
    for i in 0..10u64 {
        let mut s = snapshot();
        s.taken_at = now() - chrono::Duration::seconds(2 * (10 - i as i64));
        let finished = 1204 + if i < 6 { i } else { 6 };
        for c in &mut s.state_counts {
            if c.state == Some(TxnState::Finished) {
                c.count = finished;
            }
        }
        let attention = Attention {
            stuck: 1 + i,
            needs_investigation: 10 - i,
            odd: 2,
        };
        a.trends.record(&s, attention);
    }
    a
}

#[test]
fn the_header_draws_the_trends_that_fit() {
    let a = with_trends(app());
    let wide = draw(&a, 160, 48);
    assert_snapshot!("trends_160x48", text(&wide));
    let header = text(&wide).lines().next().unwrap().to_string();
    // The header's text (health, freshness, the clock's source, the poll's
    // cost) comes before any sparkline (issue 28, item 6): at 160 columns
    // the poll's cost stays and the trends take the room left.
    assert!(header.contains("poll 42ms · 3 req"), "{header}");
    for label in ["stuck", "!!", "fin/min"] {
        assert!(header.contains(label), "{label}: {header}");
    }
    assert!(
        header.contains("http://es.example:9200") && header.contains("● yellow"),
        "{header}"
    );
    let all = text(&draw(&a, 200, 48)).lines().next().unwrap().to_string();
    assert!(
        all.contains("in flight ") && all.contains("fin/min") && all.contains("oldest"),
        "{all}"
    );
    // Stuck rising is bad news (red ↑10), investigate falling good (green ↓1).
    let (x, y) = find(&wide, "↑10").unwrap();
    assert!(is_red(wide[(x, y)].fg), "{:?}", wide[(x, y)]);
    let (x, y) = find(&wide, "↓1 ").unwrap();
    assert_eq!(wide[(x, y)].fg, Color::Green);
    // Finishes stopped: falling, a warning.
    let (x, y) = find(&wide, "↓0").unwrap();
    assert_eq!(wide[(x, y)].fg, Color::Yellow);

    // At 80 columns beside a URL: no room after the URL and the freshness.
    let header = text(&draw(&a, 80, 24)).lines().next().unwrap().to_string();
    assert!(!header.contains("stuck"), "{header}");
    assert!(
        header.contains("http://es.example:9200") && header.contains("as of"),
        "{header}"
    );
    // A profile names the cluster in fewer columns, but a health that is
    // not green comes before a sparkline (it gave way to `stuck` before:
    // issue 28, item 6).
    let mut a = a;
    a.settings.profile = Some("prod-eu".into());
    let narrow = draw(&a, 80, 24);
    assert_snapshot!("trends_80x24", text(&narrow));
    let header = text(&narrow).lines().next().unwrap().to_string();
    assert!(header.contains("● yellow"), "{header}");
    assert!(!header.contains("↑10"), "{header}");
    assert!(
        header.contains("[prod-eu]") && header.contains("as of"),
        "{header}"
    );
}

#[test]
fn a_long_url_keeps_its_place_before_any_trend() {
    let mut a = with_trends(app());
    a.settings.url = "https://search-payments-prod-7f3a9c.eu-west-1.es.amazonaws.com:443".into();
    a.settings.read_only = true;
    let header = text(&draw(&a, 80, 24)).lines().next().unwrap().to_string();
    assert!(
        header.contains("search-payments-prod") && header.contains("READ-ONLY"),
        "{header}"
    );
}

#[test]
fn no_trend_before_two_polls() {
    let mut a = app();
    a.trends.record(&snapshot(), Attention::default());
    let header = text(&draw(&a, 160, 48)).lines().next().unwrap().to_string();
    assert!(
        !header.contains("fin/min") && !header.contains("stuck"),
        "{header}"
    );
}
