//! Trends are recorded when a snapshot arrives: one sample per good poll
//! (none for a failed one), finishes per minute from the `finished` count
//! between two polls, bounded rings, and the rising/falling marker.

use super::*;
use estx::dashboard::trends::{Direction, Series, TREND_CAPACITY};
use estx::protocol::read::state_counts::StateCount;

fn poll(app: &mut App, secs: i64, stuck_rows: usize, finished: u64) {
    let txns = (0..stuck_rows)
        .map(|i| txn(&format!("t-{i}"), "pending", 90))
        .collect();
    let mut s = snapshot(txns);
    s.taken_at = now() + chrono::Duration::seconds(secs);
    s.state_counts = vec![
        StateCount {
            state: Some(TxnState::Pending),
            count: stuck_rows as u64,
            oldest: Some(s.taken_at - chrono::Duration::minutes(90)),
        },
        StateCount {
            state: Some(TxnState::Finished),
            count: finished,
            oldest: None,
        },
    ];
    update(app, Event::Polled(Ok(Box::new(s))));
}

#[test]
fn each_good_poll_adds_a_sample_and_finishes_are_a_rate() {
    let mut app = app(false);
    let before = app.trends.samples(Series::Stuck).len();
    poll(&mut app, 10, 2, 100);
    poll(&mut app, 40, 3, 130); // 30 finished in 30 s: 60 a minute
    update(
        &mut app,
        Event::Polled(Err(PollFailure::Transient(estx::Error::Unreachable(
            "down".into(),
        )))),
    );
    poll(&mut app, 70, 1, 120); // fewer finished (deleted): 0, not negative
    let stuck: Vec<u64> = app.trends.samples(Series::Stuck).iter().copied().collect();
    assert_eq!(&stuck[before..], [2, 3, 1], "one sample per good poll");
    let fin: Vec<u64> = app
        .trends
        .samples(Series::FinishesPerMinute)
        .iter()
        .copied()
        .collect();
    assert_eq!(fin, [60, 0]);
    assert_eq!(app.trends.latest(Series::OldestAge), Some(90 * 60));
    assert_eq!(app.trends.direction(Series::Stuck), Direction::Falling);
    // From the fixture's first poll (no in-flight counts: 0) to 90 minutes.
    assert_eq!(app.trends.direction(Series::OldestAge), Direction::Rising);
    poll(&mut app, 100, 4, 200);
    assert_eq!(app.trends.direction(Series::Stuck), Direction::Rising);
}

#[test]
fn the_rings_are_bounded() {
    let mut app = app(false);
    for i in 0..(TREND_CAPACITY as i64 + 20) {
        poll(&mut app, i, 1, i as u64);
    }
    for s in Series::ALL {
        assert_eq!(app.trends.samples(s).len(), TREND_CAPACITY, "{s:?}");
    }
}
