//! `K` (issue 30 item 3): acknowledge the selected transaction through the
//! one confirmation flow, for the duration in the dialog's own field (4h
//! unless changed; Tab moves between the reason and it), and, on a
//! transaction a poll shows acknowledged, take the ack back.

use super::*;
use estx::dashboard::event::{ActionOutcome, Expected};
use estx::protocol::acks::{Ack, Acks};
use estx::protocol::intervene::{AckPlan, Acknowledge, AnyAct, AnyPlan};

const HOUR: u64 = 3600;

fn ack(lasts_hours: u64) -> AnyAct {
    Acknowledge::ids(
        vec!["t-old".into()],
        Duration::from_secs(lasts_hours * HOUR),
        None,
    )
    .into()
}

#[test]
fn k_acknowledges_the_selection_for_the_duration_in_its_field_then_takes_it_back() {
    let mut app = app(false);
    let cmds = update(&mut app, key('K'));
    assert_eq!(cmds, vec![IoRequest::LoadPreview(ack(4))]);
    let plan = AckPlan {
        lasts: Some(Duration::from_secs(4 * HOUR)),
        targets: vec![],
        ids: vec!["t-old".into()],
        left_out: vec![],
        acks: Acks::default(),
    };
    update(
        &mut app,
        Event::Preview {
            act: ack(4),
            plan: Ok(AnyPlan::Acknowledge(plan)),
        },
    );
    assert!(app.overlays.dialog().unwrap().can_confirm());
    update(&mut app, key('y'));
    // An ack wants its reason: Enter on an empty one runs nothing.
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    for c in "finance is on it".chars() {
        update(&mut app, key(c));
    }
    // Tab to the duration field (4h to start with), typed over.
    update(&mut app, code(KeyCode::Tab));
    let lasts = |app: &App| app.overlays.dialog().unwrap().lasts.clone().unwrap();
    assert_eq!(lasts(&app).text, "4h");
    assert!(lasts(&app).focused);
    for _ in 0..2 {
        update(&mut app, code(KeyCode::Backspace));
    }
    // Not a duration: Enter runs nothing and the dialog stays.
    for c in "soon".chars() {
        update(&mut app, key(c));
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(app.overlays.dialog().is_some());
    for _ in 0.."soon".len() {
        update(&mut app, code(KeyCode::Backspace));
    }
    for c in "8h".chars() {
        update(&mut app, key(c));
    }
    // Tab back: the reason is as typed, the duration kept.
    update(&mut app, code(KeyCode::Tab));
    assert!(!lasts(&app).focused);
    assert_eq!(app.overlays.dialog().unwrap().reason, "finance is on it");
    let cmds = update(&mut app, code(KeyCode::Enter));
    let expected = Expected {
        state: None,
        modified: None,
    };
    assert_eq!(
        cmds,
        vec![IoRequest::Run(Run::new(
            ack(8),
            false,
            Some("finance is on it".into()),
            None,
            expected,
        ))]
    );
    update(
        &mut app,
        Event::ActionDone(ActionOutcome {
            act: ack(8),
            summary: "1 acknowledged".into(),
            ok: true,
            receipts: None,
            record: None,
        }),
    );
    // The next poll shows it acknowledged: K offers to take it back.
    let mut snap = snapshot(vec![txn("t-old", "pending", 90)]);
    let until = now() + chrono::Duration::hours(8);
    let acked = Ack {
        txn: "t-old".into(),
        by: "ana".into(),
        reason: "finance is on it".into(),
        ticket: None,
        since: now(),
        until,
    };
    snap.acks = Acks::live([acked], now());
    update(&mut app, Event::Polled(Ok(Box::new(snap))));
    let cmds = update(&mut app, key('K'));
    assert_eq!(
        cmds,
        vec![IoRequest::LoadPreview(
            Acknowledge::take_back(vec!["t-old".into()]).into()
        )]
    );
}
