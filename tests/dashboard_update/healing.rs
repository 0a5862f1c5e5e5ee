//! The healing verdict across polls: the dashboard judges each poll again
//! with what it remembers of the one before (the slope of the oldest stuck
//! age, the last recovery seen), and logs, with the evidence in words,
//! when the verdict turns to an alarm or away from one.

use super::*;
use estx::protocol::read::verdict::{Healing, HealingEvidence, HealingSign, Recoveries};

/// A poll `secs` after [`now`] whose evidence is `stuck` transactions, the
/// oldest modified `oldest_mins` before `now`, with no recovery seen.
fn poll(secs: i64, stuck: u64, oldest_mins: i64) -> Event {
    let mut s = snapshot(vec![]);
    s.taken_at = now() + chrono::Duration::seconds(secs);
    s.healing_evidence = HealingEvidence {
        stuck: Some(stuck),
        oldest_stuck: Some(now() - chrono::Duration::minutes(oldest_mins)),
        recoveries: Some(Recoveries::default()),
        ..HealingEvidence::default()
    };
    Event::Polled(Ok(Box::new(s)))
}

fn verdict(app: &App) -> Healing {
    app.snapshot.as_ref().unwrap().healing
}

#[test]
fn the_oldest_leaving_between_polls_reads_healing_and_the_alarm_is_logged() {
    let mut app = app(false);
    // Stuck for 30 minutes, nothing moves: stalled, and a log line says why.
    update(&mut app, poll(2, 5, 30));
    assert_eq!(verdict(&app).word(), "stalled");
    let last = app.log.back().unwrap();
    assert_eq!(last.level, LogLevel::Error);
    assert!(
        last.text.starts_with("recovery stalled since ") && last.text.contains("5 stuck"),
        "{last:?}"
    );
    let lines = app.log.len();
    update(&mut app, poll(4, 5, 30));
    assert_eq!(verdict(&app).word(), "stalled");
    assert_eq!(app.log.len(), lines, "one line per change, not per poll");
    // The oldest left (the next oldest is 20 minutes old) with no operator
    // record: the application is at work.
    update(&mut app, poll(6, 4, 20));
    assert_eq!(
        verdict(&app),
        Healing::Healing {
            sign: HealingSign::OldestLeft,
            stuck: 4
        }
    );
    let last = app.log.back().unwrap();
    assert_eq!(last.level, LogLevel::Info);
    assert!(
        last.text.starts_with("recovery healing: the oldest"),
        "{last:?}"
    );
    // Nothing stuck any more: idle.
    update(&mut app, poll(8, 0, 20));
    assert_eq!(verdict(&app), Healing::Idle);
}
