//! A forced resume is on record as forced (issue 18, item 6): resuming a
//! job whose heartbeat is recent (`--resume RUN --force --reason`) sets the
//! run record's `forced`, and notes who resumed it, why, and the job's life
//! then, in the audit index and in a file trail alike; its times are the
//! cluster's, and a file trail's record says which clock it used.

use super::jobs::stuck;
use super::*;
use estx::protocol::trail::{ActionKind, Interface, RecordDraft, Trail};

/// Writes the running record of a bulk recovery of `job-0..n` through
/// `proto`'s trail, as a job starting now does (its first heartbeat in it,
/// ten seconds its period): a job that is live. Returns its id.
fn live_job(w: &World, proto: &Protocol, n: usize) -> String {
    let ids: Vec<String> = (0..n).map(|i| format!("job-{i}")).collect();
    live_job_on(w, proto, ids)
}

/// [`live_job`] of the transactions `ids`, through the world's protocol.
pub fn live_job_of(w: &World, ids: &[&str]) -> String {
    live_job_on(w, &w.proto, ids.iter().map(|i| i.to_string()).collect())
}

fn live_job_on(w: &World, proto: &Protocol, ids: Vec<String>) -> String {
    let trail = w.block(Trail::open(proto)).unwrap();
    let mut draft = RecordDraft::new(ActionKind::Recover, ids, Interface::Cli);
    draft.bulk = true;
    draft.reason = Some("the first run's reason".into());
    w.block(trail.begin(&draft)).unwrap().0
}

/// `recover --resume RUN --force` by `bob`, with a reason.
fn force_resume(w: &World, run: &str, extra: &[&str]) -> Out {
    let mut args = vec![
        "recover",
        "--resume",
        run,
        "--force",
        "--reason",
        "INC-7 the worker is wedged",
    ];
    args.extend_from_slice(extra);
    w.g.run_env(&[("ESTX_REASON", ""), ("USER", "bob")], &args)
}

/// What every forced resume's record says: forced, and who, why and over
/// what life in its `resumed`.
#[track_caller]
fn assert_forced_resume(r: &Value) {
    assert_eq!(r["status"], "finished", "{r:#}");
    assert_eq!(
        r["forced"], true,
        "a forced resume makes the record forced: {r:#}"
    );
    let resumed = r["resumed"].as_array().unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(resumed.len(), 1, "{r:#}");
    let x = &resumed[0];
    assert_eq!(x["forced"], true, "{r:#}");
    assert_eq!(x["reason"], "INC-7 the worker is wedged", "{r:#}");
    assert_eq!(x["operator"]["user"], "bob", "{r:#}");
    assert_eq!(x["interface"], "cli", "{r:#}");
    assert!(x["life"].as_str().unwrap().starts_with("live"), "{r:#}");
    assert!(x["at"].as_str().is_some(), "{r:#}");
    // The first run's reason is kept; the summary says it too.
    assert_eq!(r["reason"], "the first run's reason", "{r:#}");
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.contains("forced while the job was live"),
        "{summary}"
    );
}

#[test]
fn a_forced_resume_of_a_live_job_is_recorded_as_forced_with_who_and_why() {
    let w = World::new();
    stuck(&w, 3);
    let run = live_job(&w, &w.proto, 3);
    // Unforced, it is refused: the job is live.
    w.run(&["recover", "--resume", &run])
        .code(1)
        .stderr_has("is live (heartbeat");
    force_resume(&w, &run, &["--recovery-window", "0s"]).code(0);
    let records = w.audit_records();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_forced_resume(&records[0]);
    // `history` (the record read back) says so as well.
    let h = w.run(&["history", "job-0", "--json"]).json();
    assert_eq!(h[0]["forced"], true, "{h:#}");
    assert_eq!(h[0]["resumed"][0]["operator"]["user"], "bob", "{h:#}");
}

#[test]
fn a_forced_resume_in_a_file_trail_is_recorded_as_forced_and_its_clock_named() {
    let w = World::new();
    stuck(&w, 3);
    let path = w._dir.path().join("trail.jsonl");
    let config = ProtocolConfig {
        audit_file: Some(path.clone()),
        ..w.proto.config().clone()
    };
    let proto = Protocol::new(w.proto.cluster().clone(), config);
    let run = live_job(&w, &proto, 3);
    let file = format!("file:{}", path.display());
    force_resume(
        &w,
        &run,
        &["--recovery-window", "0s", "--audit-trail", &file],
    )
    .code(0);
    let last = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .rfind(|v| v["record_id"] == run.as_str())
        .unwrap();
    assert_forced_resume(&last);
    // A file trail's record names the clock its times come from: the
    // cluster's, as the heartbeat's.
    assert_eq!(last["clock"], "cluster", "{last:#}");
    assert!(w.audit_records().is_empty(), "nothing in the audit index");
}

#[test]
fn a_job_begun_and_finished_on_a_machine_whose_clock_is_off_is_in_the_clusters_time() {
    use estx::protocol::trail::{ActOutcome, Ending};
    let w = World::new();
    // This machine's clock half an hour behind the cluster's (the server
    // runs here: its clock is the test's).
    let skewed = w
        .proto
        .cluster()
        .with_local_clock_skew(-ChronoDuration::minutes(30));
    let proto = Protocol::new(skewed, w.proto.config().clone());
    let trail = w.block(Trail::open(&proto)).unwrap();
    let mut draft = RecordDraft::new(ActionKind::Recover, vec!["job-0".into()], Interface::Cli);
    draft.bulk = true;
    let id = w.block(trail.begin(&draft)).unwrap();
    w.block(trail.finish(&id, Ending::of(ActOutcome::Completed, "done", vec![])))
        .unwrap();
    let r = &w.audit_records()[0];
    let at = |field: &str| {
        let t: chrono::DateTime<Utc> = r[field].as_str().unwrap().parse().unwrap();
        (t - Utc::now()).num_seconds().abs()
    };
    // Written in the cluster's time, as the heartbeat is: started_at and
    // alive_at one instant, not half an hour apart (the life rule and the
    // jobs view compare them).
    assert!(
        at("started_at") < 60,
        "started_at in the local clock: {r:#}"
    );
    assert!(
        at("finished_at") < 60,
        "finished_at in the local clock: {r:#}"
    );
    assert_eq!(r["started_at"], r["alive_at"], "{r:#}");
}

/// Issue 28, item 3: a job killed with SIGKILL and resumed at once, forced
/// (its heartbeat is still recent), carries on its own record and parts
/// (no "part already exists"). What it cannot run yet (transactions
/// modified within the recovery window that its record does not show it
/// wrote: those in flight at the kill) it refuses in one line, not one per
/// transaction, and leaves the job resumable, saying from when; the line it
/// prints, run from then, finishes the job.
#[test]
fn a_job_killed_with_sigkill_and_resumed_at_once_stays_resumable_until_it_finishes() {
    use super::jobs::Background;
    let n = 300;
    let w = World::new();
    stuck(&w, n);
    let mut job = Background::start(
        &w.g,
        &[
            "recover",
            "--all-stuck",
            "--batch-size",
            "50",
            "--max-rate",
            "150",
            "--job-heartbeat",
            "1s",
        ],
    );
    job.wait_until("two checkpoints", Duration::from_secs(120), || {
        w.runs_and_parts().1.len() >= 2
    });
    job.child.kill().unwrap(); // SIGKILL
    job.child.wait().unwrap();
    let (runs, _) = w.runs_and_parts();
    let run = runs[0]["record_id"].as_str().unwrap().to_string();
    assert!(w.moved() < n, "killed part-way");
    // At once, forced: its heartbeat is recent. A recovery window of 20 s.
    let window = ["--recovery-window", "20s", "--job-heartbeat", "1s"];
    let out = force_resume(&w, &run, &window);
    eprintln!("{out}");
    assert!(!out.stderr.contains("already exists"), "{out}");
    let refusals = out.stderr.lines().filter(|l| l.contains("refused")).count();
    assert!(refusals <= 1, "one line per cause: {out}");
    let line = format!("run `estx-tui recover --resume {run}` from ");
    if out.code != 0 {
        // Some transactions in flight at the kill: not finished, resumable.
        out.code(1)
            .stderr_has(&line)
            .stderr_has("modified within the recovery window");
        let (runs, _) = w.runs_and_parts();
        assert_eq!(runs[0]["status"], "running", "{:#}", runs[0]);
        let listed = w.run(&["jobs", "--json"]).json();
        assert!(
            listed
                .as_array()
                .unwrap()
                .iter()
                .any(|j| j["id"] == run.as_str()),
            "still listed: {listed:#}"
        );
        // The line it printed, run until it is no longer early.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let again = w.run(&[&["recover", "--resume", &run][..], &window].concat());
            if again.code == 0 {
                break;
            }
            assert!(
                again.stderr.contains(&line) || again.stderr.contains("is live (heartbeat"),
                "early, it says when: {again}"
            );
            assert!(Instant::now() < deadline, "never finished: {again}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    w.assert_recovered_exactly_once(n);
    let (runs, _) = w.runs_and_parts();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "finished", "{:#}", runs[0]);
    assert_eq!(runs[0]["outcome"], "completed", "{:#}", runs[0]);
}

/// Issue 28, item 3: two runs of one job writing its parts (a resume forced
/// over a job whose process still ran) do not fail on each other's part
/// numbers: a number another run took is skipped, and the record finished
/// counts every part, which all read back.
#[test]
fn a_part_number_another_run_of_the_job_took_is_skipped_not_fatal() {
    use estx::protocol::trail::pages::{Listed, Page};
    use estx::protocol::trail::{ActOutcome, Ending, RecordId, TrailStep};
    let w = World::new();
    stuck(&w, 3);
    let run = live_job(&w, &w.proto, 3);
    let id = RecordId(run.clone());
    let trail = w.block(Trail::open(&w.proto)).unwrap();
    let page = |txn: &str| Page {
        transactions: vec![txn.to_string()],
        ..Page::default()
    };
    // The job's own process wrote its first checkpoint...
    assert_eq!(w.block(trail.checkpoint(&id, 1, page("job-0"))).unwrap(), 1);
    // ...and the forced resume, which had read none, writes its own: the
    // next free number.
    assert_eq!(w.block(trail.checkpoint(&id, 1, page("job-1"))).unwrap(), 2);
    // Its completion counts one checkpoint of its own: its step page skips
    // the number taken too.
    let step = TrailStep {
        txn: "job-2".into(),
        label: "core 1: created -> pending".into(),
        target: format!("{}/job-2", w.ix.transactions),
        result: "updated".into(),
        detail: "state created -> pending".into(),
        wrote_state: Some("pending".into()),
        receipt: None,
    };
    w.block(trail.finish_after(
        &id,
        1,
        Ending::of(ActOutcome::Completed, "done", vec![step]),
        &Listed::default(),
    ))
    .unwrap();
    let (records, parts): (Vec<Value>, Vec<Value>) = w
        .audit_records()
        .into_iter()
        .partition(|d| d.get("run_id").is_none());
    assert_eq!((records.len(), parts.len()), (1, 3), "{records:#?}");
    assert_eq!(records[0]["status"], "finished", "{:#}", records[0]);
    assert_eq!(records[0]["parts"], 3, "{:#}", records[0]);
    let h = w.run(&["history", "job-2", "--json"]).json();
    assert_eq!(h[0]["steps"][0]["txn"], "job-2", "{h:#}");
}
