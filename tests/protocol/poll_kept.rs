//! What a poll reads once and keeps (issue 30 item 5): a running job's
//! list of transactions and a finished operator record's do not change,
//! so a poller (its `PollMemory`) reads each once. Measured at a proxy: the next
//! poll's `_msearch` answer is smaller by at least the lists, and what the
//! snapshot says of the jobs, the records and the acts finished lately is
//! the same; a job begun or a record finished later is read by the next
//! poll, a job ended is gone.

use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::protocol::read::poll::{PollMemory, Snapshot};
use estx::protocol::read::TableFilter;
use estx::protocol::trail::{
    ActOutcome, ActionKind, Ending, Interface, RecordDraft, RecordId, Trail,
};
use estx::protocol::Protocol;

/// A poll of `p` through `proxy`, with the size of its `_msearch` answer
/// (the largest one it read: discovery's come first and are small).
pub(crate) async fn poll(
    p: &Protocol,
    memory: &PollMemory,
    proxy: &FaultProxy,
) -> (Snapshot, usize) {
    let from = proxy.answered().len();
    let table = TableFilter::default();
    let snap = p.poll_snapshot_listing(500, &table, memory).await.unwrap();
    let bytes = proxy.answered()[from..]
        .iter()
        .filter(|(line, _)| line.contains("_msearch"))
        .map(|(_, n)| *n)
        .max()
        .expect("the poll's _msearch");
    (snap, bytes)
}

/// `n` transaction ids no document has, `width` bytes long each.
pub(crate) fn listed_only(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:06}")).collect()
}

/// A record of `txns` begun as another process would (bulk: running with
/// a fresh heartbeat), the audit index refreshed.
pub(crate) async fn begin(fx: &Fx, txns: &[String], bulk: bool) -> (Trail, RecordId) {
    let trail = Trail::open(&fx.proto).await.unwrap();
    let mut draft = RecordDraft::new(ActionKind::Recover, txns.to_vec(), Interface::Cli);
    draft.bulk = bulk;
    let id = trail.begin(&draft).await.unwrap();
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
    (trail, id)
}

pub(crate) async fn finish(fx: &Fx, trail: &Trail, id: &RecordId) {
    let ending = Ending::of(ActOutcome::Completed, "completed", Vec::new());
    trail.finish(id, ending).await.unwrap();
    fx.cluster().refresh(&fx.ix.audit).await.unwrap();
}

#[tokio::test]
async fn a_live_jobs_list_is_read_once_and_its_rows_stay_marked() {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let (held, _, _) = stage(&fx, "held", 2).await;
    let (later, _, _) = stage(&fx, "later", 2).await;
    fx.refresh().await;
    let mut txns = listed_only("job-only", 2_000);
    txns.push(held.clone());
    let list_bytes: usize = txns.iter().map(|t| t.len() + 3).sum();
    let (trail, job) = begin(&fx, &txns, true).await;
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let memory = PollMemory::default();

    // The first poll reads the ids the run record lists (its first page,
    // `trail::pages::RECORD_BUDGET`), the second the rest (its plan's part),
    // the third none of them.
    let (first, first_bytes) = poll(&p, &memory, &proxy).await;
    let (second, second_bytes) = poll(&p, &memory, &proxy).await;
    let (third_read, third_bytes) = poll(&p, &memory, &proxy).await;
    let by = first.live_jobs.holding("job-only-000000");
    assert_eq!(by.map(|b| b.job.clone()), Some(job.0.clone()));
    for snap in [&second, &third_read] {
        let by = snap.live_jobs.holding(&held).expect("the job's row marked");
        assert_eq!(by.job, job.0);
        assert!(snap.live_jobs.holding("job-only-001999").is_some());
    }
    assert!(
        first_bytes + second_bytes >= 2 * third_bytes + list_bytes,
        "the list ({list_bytes} bytes) read again: {first_bytes}, {second_bytes} then {third_bytes}"
    );

    // A job begun since is read whole by the next poll; one ended is gone.
    let (_, job2) = begin(&fx, std::slice::from_ref(&later), true).await;
    finish(&fx, &trail, &job).await;
    let (third, _) = poll(&p, &memory, &proxy).await;
    assert_eq!(
        third.live_jobs.holding(&later).map(|b| b.job.clone()),
        Some(job2.0)
    );
    assert!(
        third.live_jobs.holding(&held).is_none(),
        "the ended job holds nothing"
    );
    assert_eq!(third.live_jobs.jobs().len(), 1);
    assert_eq!(first.requests, second.requests, "requests per poll");
    assert_eq!(second.requests, third_read.requests, "requests per poll");
    assert_eq!(second.requests, third.requests, "requests per poll");
}

#[tokio::test]
async fn finished_operator_records_are_read_once_and_still_counted() {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let mut list_bytes = 0;
    for r in 0..20 {
        let txns = listed_only(&format!("rec{r:02}"), 100);
        list_bytes += txns.iter().map(|t| t.len() + 3).sum::<usize>();
        let (trail, id) = begin(&fx, &txns, false).await;
        finish(&fx, &trail, &id).await;
    }
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let memory = PollMemory::default();
    let records = |s: &Snapshot| {
        let r = s.healing_evidence.recoveries.as_ref();
        r.expect("the recoveries read").operator_records
    };

    let (first, first_bytes) = poll(&p, &memory, &proxy).await;
    let (second, second_bytes) = poll(&p, &memory, &proxy).await;
    assert_eq!((records(&first), records(&second)), (20, 20));
    let acts =
        |s: &Snapshot| -> Vec<String> { s.others_acts.iter().map(|a| a.to_string()).collect() };
    assert_eq!(acts(&first).len(), 20, "each finished act seen");
    assert_eq!(acts(&first), acts(&second));
    // Each list was read twice by the first poll (as an operator record
    // of the healing evidence, as an act finished lately), by neither
    // search of the second.
    assert!(
        first_bytes >= second_bytes + 2 * list_bytes,
        "the second poll read the records' lists ({list_bytes} bytes) again: {first_bytes} then {second_bytes}"
    );

    // A record finished since is read by the next poll; a running one too.
    let (trail, id) = begin(&fx, &listed_only("new", 1), false).await;
    let (third, _) = poll(&p, &memory, &proxy).await;
    assert_eq!(records(&third), 21, "a running record counts");
    finish(&fx, &trail, &id).await;
    let (fourth, _) = poll(&p, &memory, &proxy).await;
    assert_eq!(
        records(&fourth),
        21,
        "read once finished, not counted twice"
    );
    assert_eq!(acts(&fourth).len(), 21, "the act finished since seen");
    assert_eq!(acts(&fourth)[..20], acts(&first)[..], "oldest first");
}

/// A job over a page of ids lists the rest in parts: the poll that first
/// sees it marks the rows its record lists, the next the rows its parts
/// list too, and the polls after read the parts no more.
#[tokio::test]
async fn a_big_jobs_rows_beyond_its_first_page_are_marked_from_the_next_poll() {
    let fx = Fx::new().await;
    fx.proto.ensure_indices().await.unwrap();
    let (last, _, _) = stage(&fx, "last", 2).await;
    fx.refresh().await;
    // About 400 KB of ids: the record and one part.
    let mut txns = listed_only("a-big-job-listing-a-transaction-id", 12_000);
    txns.push(last.clone());
    let (_, job) = begin(&fx, &txns, true).await;
    let proxy = FaultProxy::start(&fx.url);
    let p = fx.proto_via(&proxy.url());
    let memory = PollMemory::default();

    let (first, _) = poll(&p, &memory, &proxy).await;
    let first_id = &txns[0];
    assert_eq!(
        first.live_jobs.holding(first_id).map(|b| b.job.clone()),
        Some(job.0.clone())
    );
    let (second, second_bytes) = poll(&p, &memory, &proxy).await;
    assert_eq!(
        second.live_jobs.holding(&last).map(|b| b.job.clone()),
        Some(job.0.clone()),
        "the row its part lists, marked by the second poll"
    );
    assert!(second.live_jobs.holding(first_id).is_some());
    let (third, third_bytes) = poll(&p, &memory, &proxy).await;
    assert!(third.live_jobs.holding(&last).is_some());
    assert!(
        second_bytes > third_bytes + 100_000,
        "the part read again: {second_bytes} then {third_bytes}"
    );
}
