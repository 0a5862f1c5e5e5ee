//! Several operators at once (issue 30 item 4), the dashboard's side: the
//! others' acts the polls show are logged once each, a bulk run as one
//! line, never this dashboard's own nor those finished before it started;
//! a row another operator's live job holds is marked, this dashboard's
//! own job's rows are not.

use super::*;
use estx::dashboard::event::ActionOutcome;
use estx::protocol::jobs::{LiveJobs, SeenAct};
use estx::protocol::trail::{ActOutcome, ActionKind, Operator};

fn alice() -> Operator {
    Operator::os("alice", "h")
}

fn act(id: &str, txn: &str, minutes_ago: i64) -> SeenAct {
    SeenAct {
        record_id: id.into(),
        operator: alice(),
        action: ActionKind::Rollback,
        transactions: vec![txn.to_string()].into(),
        bulk: false,
        forced: false,
        overrode: vec![],
        outcome: Some(ActOutcome::Completed),
        counts: None,
        reason: Some("INC-9".into()),
        finished_at: Some(now() - chrono::Duration::minutes(minutes_ago)),
    }
}

fn polled(app: &mut App, acts: Vec<SeenAct>, jobs: LiveJobs) {
    let mut s = snapshot(vec![
        txn("t-old", "pending", 90),
        txn("t-mid", "committed", 10),
        txn("t-new", "created", 1),
    ]);
    s.taken_at = app.now;
    s.others_acts = acts;
    s.live_jobs = jobs;
    update(app, Event::Polled(Ok(Box::new(s))));
}

fn logged(app: &App) -> Vec<String> {
    app.log
        .iter()
        .filter(|e| e.text.starts_with("alice:"))
        .map(|e| e.text.clone())
        .collect()
}

#[test]
fn others_acts_are_logged_once_each_and_never_this_dashboards_own() {
    let mut app = app(false);
    // Finished before the dashboard's first poll: history, not news.
    polled(
        &mut app,
        vec![act("r-old", "t-mid", 5)],
        LiveJobs::default(),
    );
    assert!(logged(&app).is_empty(), "{:?}", app.log);
    // This dashboard's own act, then one of alice's, seen by two polls.
    update(
        &mut app,
        Event::ActionDone(ActionOutcome {
            act: recover("t-new"),
            summary: "completed".into(),
            ok: true,
            receipts: None,
            record: Some("r-own".into()),
        }),
    );
    app.now = now() + chrono::Duration::seconds(30);
    let seen = vec![act("r-own", "t-new", 0), act("r-1", "t-old", 0)];
    let seen: Vec<SeenAct> = seen
        .into_iter()
        .map(|mut a| {
            a.finished_at = Some(now() + chrono::Duration::seconds(10));
            a
        })
        .collect();
    polled(&mut app, seen.clone(), LiveJobs::default());
    polled(&mut app, seen, LiveJobs::default());
    assert_eq!(logged(&app), ["alice: rollback of t-old completed (INC-9)"]);
}

/// Alice's live recover jobs, each `(job, the transaction it holds)`, as
/// the poll reads them (the heads and the lists in one answer here; the
/// poll asks them apart).
fn alices_live_jobs(jobs: &[(&str, &str)]) -> LiveJobs {
    let beat = estx::protocol::time::format_timestamp(now());
    let hits: Vec<serde_json::Value> = jobs
        .iter()
        .map(|(id, txn)| {
            serde_json::json!({"_id": id, "_source": {"operator": alice(),
                "action": "recover", "status": "running", "transactions": [txn],
                "alive_at": beat, "alive_every_ms": 10000}})
        })
        .collect();
    let answer = serde_json::json!({"hits": {"hits": hits}});
    let lists = &mut estx::protocol::jobs::JobLists::default();
    LiveJobs::from_answers(&answer, &answer, lists, now()).unwrap()
}

#[test]
fn a_row_anothers_live_job_holds_is_marked_this_dashboards_own_job_not() {
    let mut app = app(false);
    let jobs = alices_live_jobs(&[("job-a", "t-old"), ("job-own", "t-mid")]);
    update(
        &mut app,
        Event::BulkStarted {
            run: "job-own".into(),
            left_file: None,
        },
    );
    polled(&mut app, vec![], jobs);
    let by = app.held_by("t-old").expect("alice's job holds t-old");
    assert_eq!(by.job, "job-a");
    assert!(app.held_by("t-mid").is_none(), "this dashboard's own job");
    assert!(app.held_by("t-new").is_none());
}

/// The row view of transaction `id`: its signs and cause's words.
fn row_note(app: &App, id: &str) -> (String, Option<&'static str>) {
    let snap = app.snapshot.as_ref().unwrap();
    let v = &app.view.table;
    let at = v
        .rows
        .iter()
        .position(|&i| snap.transactions[i].id == id)
        .unwrap_or_else(|| panic!("{id} not a row"));
    let note = &v.notes[at];
    (note.signs(), note.cause_word())
}

#[test]
fn each_rows_signs_and_cause_are_derived_with_the_view_when_the_data_changes() {
    let mut app = app(false);
    let jobs = alices_live_jobs(&[("job-a", "t-old")]);
    // Five stuck on account A (a hot account), one young row not stuck.
    let mut rows: Vec<Transaction> = (1..=4)
        .map(|n| txn(&format!("t-hot{n}"), "pending", 30 + n))
        .collect();
    rows.push(txn("t-old", "pending", 90));
    rows.push(txn("t-new", "created", 1));
    let mut s = snapshot(rows);
    s.taken_at = app.now;
    s.live_jobs = jobs;
    s.acks = estx::protocol::acks::Acks::live(
        [estx::protocol::acks::Ack {
            txn: "t-hot1".into(),
            by: "alice".into(),
            reason: "finance".into(),
            ticket: None,
            since: now(),
            until: now() + chrono::Duration::hours(1),
        }],
        now(),
    );
    update(&mut app, Event::Polled(Ok(Box::new(s.clone()))));
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
    update(&mut app, key(' '));

    assert_eq!(row_note(&app, "t-old"), ("✓@".into(), Some("hot acct")));
    assert_eq!(row_note(&app, "t-hot1"), ("~".into(), Some("hot acct")));
    assert_eq!(row_note(&app, "t-hot2"), (String::new(), Some("hot acct")));
    assert_eq!(row_note(&app, "t-new"), (String::new(), None));

    // The next poll: the job has ended, two rows left; the view follows.
    let mut s2 = s;
    s2.transactions
        .retain(|t| t.id != "t-hot3" && t.id != "t-hot4");
    s2.live_jobs = LiveJobs::default();
    update(&mut app, Event::Polled(Ok(Box::new(s2))));
    assert_eq!(row_note(&app, "t-old"), ("✓".into(), Some("unkn.")));
}
