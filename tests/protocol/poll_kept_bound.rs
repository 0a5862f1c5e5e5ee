//! What a poller keeps stays bounded in what it sends (issue 30, the
//! kept ids): past `KEPT_IDS_CAP` records read, the poll's `_msearch`
//! body stays under a bound (measured at a proxy), and a record that
//! becomes searchable after newer ones were kept is still read; a big
//! job's part that never arrives stops being asked after `PART_ASKS`
//! polls, with a warning.

use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::poll_kept::{begin, finish, listed_only, poll};
use estx::protocol::jobs::PART_ASKS;
use estx::protocol::read::kept_ids::KEPT_IDS_CAP;
use estx::protocol::read::poll::{PollMemory, Snapshot};
use estx::protocol::trail::pages::part_id;
use serde_json::{json, Map, Value};

/// The size of the body of the last `_msearch` `proxy` received.
fn last_msearch_body(proxy: &FaultProxy) -> usize {
    let sent = proxy.sent();
    let s = sent.iter().rev().find(|s| s.line.contains("_msearch"));
    s.expect("a poll's _msearch").bytes
}

/// The operator records the healing evidence counted.
fn records(s: &Snapshot) -> u64 {
    let r = s.healing_evidence.recoveries.as_ref();
    r.expect("the recoveries read").operator_records
}

fn time(t: chrono::DateTime<chrono::Utc>) -> Value {
    json!(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// `template` (a finished record's source) as record `id`, finished at
/// `at`, listing one transaction of its own.
fn finished_copy(
    template: &Map<String, Value>,
    id: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Value {
    let mut doc = template.clone();
    doc.insert("transactions".into(), json!([format!("{id}-t")]));
    doc.insert("started_at".into(), time(at - chrono::Duration::seconds(1)));
    doc.insert("finished_at".into(), time(at));
    Value::Object(doc)
}

#[tokio::test]
async fn past_the_cap_the_poll_sends_a_bounded_body_and_still_reads_a_late_record() {
    // A healing lookback of 20 minutes: every record below is in it, and
    // in the acts' (10 minutes).
    let fx = Fx::with(|c| c.recovery_window = std::time::Duration::from_secs(600)).await;
    fx.proto.ensure_indices().await.unwrap();
    let (trail, first) = begin(&fx, &listed_only("first", 1), false).await;
    finish(&fx, &trail, &first).await;
    let template = fx.source(&fx.ix.audit, &first.0).await;

    // A script's single acts: 2 500 finished over the last 8 minutes.
    let n = 2_500;
    let now = chrono::Utc::now();
    let at = |i: usize| now - chrono::Duration::milliseconds(480_000 - 190 * i as i64);
    let id = |i: usize| format!("a-script-of-single-acts-record-{i:05}");
    let docs: Vec<(String, Value)> = (0..n)
        .map(|i| (id(i), finished_copy(&template, &id(i), at(i))))
        .collect();
    fx.cluster().bulk_index(&fx.ix.audit, &docs).await.unwrap();
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let memory = PollMemory::default();

    let (_, _) = poll(&p, &memory, &proxy).await;
    let unkept_body = last_msearch_body(&proxy);
    // Read whole: every record counted, the newest act seen (the acts
    // are read oldest first, a search's size a poll).
    let newest = id(n - 1);
    let mut polls = 1;
    loop {
        let (snap, _) = poll(&p, &memory, &proxy).await;
        polls += 1;
        let acts_read = snap.others_acts.iter().any(|a| a.record_id == newest);
        if records(&snap) == n as u64 + 1 && acts_read {
            break;
        }
        assert!(
            polls < 200,
            "not read whole after {polls} polls: {} records",
            records(&snap)
        );
    }
    let (_, _) = poll(&p, &memory, &proxy).await;
    let kept_body = last_msearch_body(&proxy);
    // At most the cap's ids in each of the two searches that keep
    // finished records (the acts', the operator records').
    let bound = unkept_body + 2 * KEPT_IDS_CAP * (id(0).len() + 3);
    assert!(
        kept_body <= bound,
        "{n} records kept: the poll sent {kept_body} bytes, over {bound} (nothing kept: {unkept_body})"
    );

    // Written now, finished before the newest 100 kept (more than the
    // acts a poll reads): searchable late.
    let late = "a-record-searchable-after-newer-ones-were-kept";
    let late_at = at(n - 1) - chrono::Duration::seconds(20);
    assert!(
        chrono::Utc::now() - late_at < chrono::Duration::seconds(45),
        "the polls took too long for the test to mean something"
    );
    fx.put(&fx.ix.audit, late, finished_copy(&template, late, late_at))
        .await;
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let (snap, _) = poll(&p, &memory, &proxy).await;
    assert_eq!(records(&snap), n as u64 + 2, "the late record counted");
    assert!(
        snap.others_acts.iter().any(|a| a.record_id == late),
        "the late act seen"
    );
}

#[tokio::test]
async fn a_big_jobs_part_that_never_arrives_stops_being_asked() {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    // About 400 KB of ids: the record and its parts; its record then says
    // one part more, never written.
    let txns = listed_only("a-big-job-listing-a-transaction-id", 12_000);
    let last = txns.last().unwrap().clone();
    let (_, job) = begin(&fx, &txns, true).await;
    let mut head = fx.source(&fx.ix.audit, &job.0).await;
    let parts = head["parts"].as_u64().unwrap();
    assert!((1..4).contains(&parts), "{parts} parts: all asked at once");
    head.insert("parts".into(), json!(parts + 1));
    fx.put(&fx.ix.audit, &job.0, Value::Object(head)).await;
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    let proxy = FaultProxy::start(&fx.url);
    let missing = u32::try_from(parts + 1).unwrap();
    proxy.watch_bodies_for(&part_id(&job.0, missing));
    let p = fx.proto_via(&proxy.url());
    let memory = PollMemory::default();

    let mut asked = Vec::new();
    let mut snap = None;
    for _ in 0..PART_ASKS + 3 {
        let (s, _) = poll(&p, &memory, &proxy).await;
        let sent = proxy.sent();
        let msearch = sent.iter().rev().find(|s| s.line.contains("_msearch"));
        asked.push(msearch.expect("the poll's _msearch").watched);
        snap = Some(s);
    }
    // The first poll reads the record, the next ask its parts.
    let mut expected = vec![false];
    expected.extend((0..PART_ASKS).map(|_| true));
    expected.extend([false, false]);
    assert_eq!(asked, expected, "polls asking the missing part");
    let snap = snap.unwrap();
    assert_eq!(
        snap.live_jobs.holding(&last).map(|b| b.job.clone()),
        Some(job.0.clone()),
        "the part that arrived is still read"
    );
    assert!(
        snap.read
            .warnings
            .iter()
            .any(|w| w.contains(&job.0) && w.contains("never arrived")),
        "{:?}",
        snap.read.warnings
    );
}
