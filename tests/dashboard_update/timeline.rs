//! The timeline view in `update`: `T` reads the last hour's interventions
//! (the window counted back from the cluster's clock by the read); their
//! answer lands in the view, open or kept closed; `r` reads again, any
//! other key closes it, and `T` shows the kept list while it reads again.

use super::jobs::job;
use super::*;
use estx::dashboard::layers::timeline::{TimelineView, WINDOW};
use estx::dashboard::layers::OverlayKind;
use estx::protocol::trail::Entry;

fn view(app: &App) -> &TimelineView {
    app.overlays
        .state::<TimelineView>()
        .expect("the timeline's state")
}

fn entries(ids: &[&str]) -> Vec<Entry> {
    ids.iter().map(|id| Entry::of(&job(id))).collect()
}

#[test]
fn t_reads_the_last_hours_interventions_into_the_timeline() {
    let mut app = app(false);
    assert_eq!(WINDOW, Duration::from_secs(3600));
    assert_eq!(
        update(&mut app, key('T')),
        vec![IoRequest::LoadTimeline(WINDOW)]
    );
    assert!(app.overlays.is_open(OverlayKind::Timeline));
    assert!(view(&app).list.is_loading());
    let since = now() - chrono::Duration::hours(1);
    update(
        &mut app,
        Event::Timeline {
            since,
            entries: Ok(entries(&["run-2", "run-1"])),
        },
    );
    let ids: Vec<&str> = view(&app)
        .entries()
        .iter()
        .map(|e| e.record_id.as_str())
        .collect();
    assert_eq!(ids, ["run-2", "run-1"], "as read: newest first");
    assert_eq!(view(&app).list.value().map(|r| r.since), Some(since));
    update(&mut app, key('j'));
    assert_eq!(view(&app).selected().unwrap().record_id, "run-1");
    // `r` reads again; the list stays shown meanwhile.
    assert_eq!(
        update(&mut app, key('r')),
        vec![IoRequest::LoadTimeline(WINDOW)]
    );
    assert_eq!(view(&app).entries().len(), 2);
    // Another key closes it; a late answer still lands in the kept view.
    update(&mut app, code(KeyCode::Esc));
    assert!(!app.overlays.is_open(OverlayKind::Timeline));
    update(
        &mut app,
        Event::Timeline {
            since,
            entries: Ok(entries(&["run-3", "run-2", "run-1"])),
        },
    );
    assert_eq!(view(&app).entries().len(), 3);
    assert_eq!(
        view(&app).selected().unwrap().record_id,
        "run-1",
        "the cursor stays on its intervention"
    );
    // Reopened: the kept list, read again.
    assert_eq!(
        update(&mut app, key('T')),
        vec![IoRequest::LoadTimeline(WINDOW)]
    );
    assert_eq!(view(&app).entries().len(), 3);
    // A failed read says why.
    update(
        &mut app,
        Event::Timeline {
            since,
            entries: Err(estx::Error::Invalid("audit index missing".into())),
        },
    );
    assert!(matches!(view(&app).list.last(), Some(Err(e)) if e.contains("audit index missing")));
}
