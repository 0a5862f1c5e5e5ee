//! Several operators at once (issue 30 item 4): another process's live
//! bulk job is seen by a poll within one poll at no extra request (its
//! transactions, whose it is, its heartbeat), as are the acts finished
//! since; an act on a transaction such a job holds is refused without
//! force, a bulk selection leaves it out, named, and a forced act runs
//! and its record says which job it overrode. The act's check reads a
//! job's record whole: a transaction listed only in a later part (beyond
//! the run record's first page) is held as well.

use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::intervene::{
    self, ActRefusal, BulkAct, Choices, Intervention, NotStarted, Recover, Rollback, Runner,
    Selection,
};
use estx::protocol::read::poll;
use estx::protocol::trail::{history, ActionKind, Interface, RecordDraft, RecordId, Trail};
use estx::protocol::{Procedure, TxnState};

fn cli(reason: &str) -> Choices {
    Choices::new(Interface::Cli, Some(reason.to_string()))
}

/// A bulk recovery holding `txns`, begun as another process would (its
/// record running, its heartbeat fresh), the audit index refreshed as
/// the product does within a second.
async fn live_job(fx: &Fx, txns: &[&str]) -> (RecordId, String) {
    let trail = Trail::open(&fx.proto).await.unwrap();
    let mut draft = RecordDraft::new(
        ActionKind::Recover,
        txns.iter().map(|t| t.to_string()).collect(),
        Interface::Cli,
    );
    draft.bulk = true;
    draft.reason = Some("INC-7 night run".into());
    let id = trail.begin(&draft).await.unwrap();
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    (id, trail.operator().user.clone())
}

/// `run` was refused as held by `user`'s live job `job`, naming both.
fn refused_as_held<T: std::fmt::Debug>(run: Result<T, NotStarted>, job: &RecordId, user: &str) {
    match run {
        Err(NotStarted::Refused(r @ ActRefusal::HeldByJob { .. })) => {
            let text = r.to_string();
            assert!(text.contains(&job.0) && text.contains(user), "{text}");
        }
        other => panic!("expected the job's refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_poll_sees_another_processs_live_job_and_finished_act_within_one_poll_at_no_extra_request(
) {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let (held, _, _) = stage(&fx, "held", 2).await;
    let (free, _, _) = stage(&fx, "free", 2).await;
    fx.refresh().await;
    let ix = fx.ix.indices();
    let before = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    assert!(before.live_jobs.is_empty());

    let (job, user) = live_job(&fx, &[&held]).await;
    let after = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    let by = after
        .live_jobs
        .holding(&held)
        .expect("the live job's row, in the next poll");
    assert_eq!(by.job, job.0);
    assert_eq!(by.operator.user, user);
    assert!(by.heartbeat_age_s < 60, "{by:?}");
    assert!(after.live_jobs.holding(&free).is_none());
    assert_eq!(after.requests, before.requests, "requests per poll");

    let i = Intervention::new(Rollback::new(free.clone()), cli("INC-9"));
    intervene::run(&fx.proto, i).await.unwrap();
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let later = poll::load(fx.cluster(), &ix, 500).await.unwrap();
    let acts: Vec<String> = later.others_acts.iter().map(ToString::to_string).collect();
    assert_eq!(
        acts,
        [format!("{user}: rollback of {free} completed (INC-9)")]
    );
    assert_eq!(later.requests, before.requests, "requests per poll");
}

#[tokio::test]
async fn an_act_on_a_row_a_live_job_holds_is_refused_unless_forced_and_the_record_says_it_overrode()
{
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let (held, _, _) = stage(&fx, "held", 2).await;
    let (free, _, _) = stage(&fx, "free", 2).await;
    fx.refresh().await;
    let (job, user) = live_job(&fx, &[&held]).await;

    // One act, unforced: refused, saying whose job; nothing written.
    let i = Intervention::new(Rollback::new(held.clone()), cli("INC-9"));
    refused_as_held(intervene::run(&fx.proto, i).await, &job, &user);
    assert_eq!(fx.state(&held).await, TxnState::Pending);
    assert!(
        history(&fx.proto, &held).await.unwrap().len() == 1,
        "the job's only"
    );

    // A bulk selection leaves the held row out, named; the other runs.
    let bulk = |force: bool| {
        let act = BulkAct::on(
            Procedure::Rollback,
            Selection::ids(vec![held.clone(), free.clone()]),
            Runner::OneByOne(1),
        );
        Intervention::new(act, cli("INC-9").forced(force))
    };
    let done = intervene::run(&fx.proto, bulk(false)).await.unwrap();
    let left: Vec<(&str, &str)> = done
        .value
        .left_out
        .iter()
        .map(|l| (l.txn.as_str(), l.why.as_str()))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].0, held);
    assert!(left[0].1.contains(&job.0), "{left:?}");
    assert_eq!(fx.state(&free).await, TxnState::RolledBack);
    assert_eq!(fx.state(&held).await, TxnState::Pending);

    // Forced, with a reason: it runs, and its record names the job.
    let i = Intervention::new(Rollback::new(held.clone()), cli("INC-9").forced(true));
    intervene::run(&fx.proto, i).await.unwrap();
    assert_eq!(fx.state(&held).await, TxnState::RolledBack);
    let records = history(&fx.proto, &held).await.unwrap();
    let forced = records
        .iter()
        .find(|r| r.action == ActionKind::Rollback)
        .expect("the forced rollback's record");
    assert!(forced.forced);
    assert_eq!(forced.overrode, [format!("{} ({user})", job.0)]);
}

#[tokio::test]
async fn an_act_on_a_row_listed_only_beyond_a_live_jobs_first_page_is_refused_unless_forced() {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let (held, _, _) = stage(&fx, "deep", 2).await;
    fx.refresh().await;
    // Enough ids before it that the job's list fills the run record's
    // first page (the trail's `RECORD_BUDGET`) and a part's (256 KB,
    // `PAGE_BUDGET`): `held` lands in a later part (asserted below).
    let filler: Vec<String> = (0..256 * 1024 / 40)
        .map(|n| format!("night-run-transaction-{n:012}-padding"))
        .collect();
    let mut listed: Vec<&str> = filler.iter().map(String::as_str).collect();
    listed.push(&held);
    let (job, user) = live_job(&fx, &listed).await;

    // The job's run record (its first page) does not list `held`; a part does.
    let head = fx.cluster().get(&fx.ix.audit, &job.0).await.unwrap();
    let head = head.expect("the job's run record").source;
    let first: Vec<&str> = head["transactions"]
        .as_array()
        .expect("the first page's transactions")
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(!first.is_empty() && !first.contains(&held.as_str()));
    assert!(
        head["parts"].as_u64().unwrap_or(0) >= 1,
        "{}",
        head["parts"]
    );

    // Unforced: refused, naming the job and its operator; nothing written.
    let i = Intervention::new(Recover::new(held.clone()), cli("INC-9"));
    refused_as_held(intervene::run(&fx.proto, i).await, &job, &user);
    assert_eq!(fx.state(&held).await, TxnState::Pending);

    // Forced, with a reason: it runs, and its record names the job.
    let i = Intervention::new(Recover::new(held.clone()), cli("INC-9").forced(true));
    intervene::run(&fx.proto, i).await.unwrap();
    assert_ne!(fx.state(&held).await, TxnState::Pending);
    let records = history(&fx.proto, &held).await.unwrap();
    let forced = records
        .iter()
        .find(|r| r.action == ActionKind::Recover && !r.bulk)
        .expect("the forced recovery's record");
    assert!(forced.forced);
    assert_eq!(forced.overrode, [format!("{} ({user})", job.0)]);
}
