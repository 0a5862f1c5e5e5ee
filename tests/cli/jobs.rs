//! Bulk runs as durable jobs (issue 18, items 6 and 7): a job still
//! running (its heartbeat recent) is not resumed; killed with SIGKILL
//! part-way, it is resumed from its audit record to completion once
//! presumed dead (money conserved, nothing applied twice, nothing left
//! pending, one finished record), from the index or from a file trail; a run whose cluster throttles (per `_bulk` item and whole
//! requests) completes with no failed item; Ctrl-C stops a run inside a
//! batch of a thousand without waiting for the batch, and the ids it left
//! feed `--ids-from`. The killed job is listed by `jobs`, presumed dead,
//! with its checkpoints' progress and the command that resumes it.

use super::*;
use std::fs::File;

/// `n` transactions `job-{i}` stuck in `created` for an hour, each between
/// its own two accounts `src-{i}` (100) and `dst-{i}` (100), amount 1.
pub(super) fn stuck(w: &World, n: usize) {
    w.block(w.kit().seed_stuck("job", n, Payers::Own { balance: 100 }));
    w.refresh();
}

impl World {
    /// Every source of `index` by id (after a refresh).
    fn all(&self, index: &str) -> BTreeMap<String, Value> {
        common::refresh(&self.g.url, index);
        let (status, body) = common::http(
            "POST",
            &self.url(index, "_search"),
            Some(r#"{"size":10000,"query":{"match_all":{}}}"#),
        );
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["hits"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["_id"].as_str().unwrap().to_string(), h["_source"].clone()))
            .collect()
    }

    /// After a bulk recovery of [`stuck`]: every transaction finished,
    /// every account moved by exactly one unit (applied once, never twice),
    /// nothing pending anywhere, the money conserved. Returns how many
    /// transactions are finished (all of them).
    pub(super) fn assert_recovered_exactly_once(&self, n: usize) {
        let txns = self.all(&self.ix.transactions);
        let unfinished: Vec<&String> = txns
            .iter()
            .filter(|(_, t)| t["transaction_state"] != "finished")
            .map(|(id, _)| id)
            .collect();
        assert!(unfinished.is_empty(), "not finished: {unfinished:?}");
        let accounts = self.all(&self.ix.accounts);
        assert_eq!(accounts.len(), 2 * n);
        let mut total = 0;
        for (id, a) in &accounts {
            let balance = a["balance"].as_i64().unwrap();
            total += balance;
            let want = if id.starts_with("src-") { 99 } else { 101 };
            assert_eq!(balance, want, "{id}: {a}");
            let pending = a["pending_transactions"].as_array().map_or(0, Vec::len);
            assert_eq!(pending, 0, "{id} still lists a transaction: {a}");
        }
        assert_eq!(total, 200 * n as i64, "money conserved");
    }

    /// How many transactions of [`stuck`] are no longer `created`.
    pub(super) fn moved(&self) -> usize {
        self.all(&self.ix.transactions)
            .values()
            .filter(|t| t["transaction_state"] != "created")
            .count()
    }

    /// The audit documents: run records, and parts (with `run_id`).
    pub(super) fn runs_and_parts(&self) -> (Vec<Value>, Vec<Value>) {
        let docs = self.all(&self.ix.audit);
        docs.into_values().partition(|d| d.get("run_id").is_none())
    }
}

/// A run of the binary in the background, its output in files.
pub(super) struct Background {
    pub(super) child: std::process::Child,
    pub(super) stderr: PathBuf,
    _dir: tempfile::TempDir,
}

impl Background {
    pub(super) fn start(g: &Globals, args: &[&str]) -> Background {
        let dir = tempfile::tempdir().unwrap();
        let (stdout, stderr) = (dir.path().join("stdout"), dir.path().join("stderr"));
        let (mut c, _) = g.command(&[], args);
        c.stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap());
        Background {
            child: c.spawn().unwrap(),
            stderr,
            _dir: dir,
        }
    }

    pub(super) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Polls (with a deadline) until `ready` says so; panics if the run
    /// ended first.
    pub(super) fn wait_until(
        &mut self,
        what: &str,
        deadline: Duration,
        mut ready: impl FnMut() -> bool,
    ) {
        let end = Instant::now() + deadline;
        loop {
            if ready() {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the run ended ({status}) before {what}: {}", self.stderr());
            }
            assert!(
                Instant::now() < end,
                "no {what} within {deadline:?}: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `recover --resume RUN` (with `extra` options) until it is no longer
/// refused as live: the killed job's heartbeat falls silent, and after
/// four of its periods it is presumed dead. Polls with a deadline.
fn resume_once_dead(g: &Globals, run: &str, extra: &[&str]) -> Out {
    let mut args = vec!["recover", "--resume", run, "--recovery-window", "0s"];
    args.extend_from_slice(extra);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let out = g.run(&args);
        if !out.stderr.contains("is live (heartbeat") {
            return out;
        }
        assert!(Instant::now() < deadline, "still live: {out}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The job `run` as `jobs --json` lists it, once presumed dead (its
/// heartbeat silent for four periods). Polls with a deadline.
fn listed_dead(g: &Globals, run: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let jobs = g.run(&["jobs", "--json"]).json();
        let job = jobs.as_array().unwrap().iter().find(|j| j["id"] == run);
        let job = job.unwrap_or_else(|| panic!("{run} not listed: {jobs:#}"));
        if job["life"] == "presumed dead" {
            return job.clone();
        }
        assert!(Instant::now() < deadline, "still {}", job["life_detail"]);
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_bulk_job_killed_with_sigkill_is_resumed_to_completion() {
    let n = 400;
    let w = World::new();
    stuck(&w, n);
    // Paced, so that the kill lands part-way whatever the machine's speed:
    // some 2 800 writes at 150 a second take over 18 s. Its heartbeat
    // every 2 s: presumed dead 8 s after it stops.
    let mut job = Background::start(
        &w.g,
        &[
            "recover",
            "--all-stuck",
            "--batch-size",
            "50",
            "--max-rate",
            "150",
            "--progress",
            "--job-heartbeat",
            "2s",
        ],
    );
    // The first checkpoint: the transactions of a batch are written down.
    job.wait_until("a checkpoint", Duration::from_secs(120), || {
        !w.runs_and_parts().1.is_empty()
    });
    let (runs, _) = w.runs_and_parts();
    let run = runs[0]["record_id"].as_str().unwrap().to_string();
    assert_eq!(runs[0]["alive_every_ms"], 2000, "{:#}", runs[0]);
    // While it runs, its heartbeat says so: a resume is refused, and
    // forcing it wants a reason.
    let out = w.run(&["recover", "--resume", &run, "--recovery-window", "0s"]);
    out.code(1)
        .stderr_has(&format!("refused: job `{run}` is live (heartbeat"))
        .stderr_has("--force with a reason");
    w.g.run_env(
        &[("ESTX_REASON", "")],
        &["recover", "--resume", &run, "--force"],
    )
    .code(2)
    .stderr_has("needs a reason");
    assert!(job.child.try_wait().unwrap().is_none(), "still running");
    job.child.kill().unwrap(); // SIGKILL
    job.child.wait().unwrap();
    let (runs, parts) = w.runs_and_parts();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "running", "left unfinished by the kill");
    let moved = w.moved();
    assert!(moved < n, "killed part-way: {moved} of {n} moved");
    let checkpointed: BTreeSet<&str> = parts
        .iter()
        .flat_map(|p| p["transactions"].as_array().unwrap())
        .map(|t| t.as_str().unwrap())
        .collect();

    // `jobs` finds it for the operator: presumed dead once its heartbeat
    // fell silent, its progress as its checkpoints say, and the command.
    let listed = listed_dead(&w.g, &run);
    let progress = &listed["progress"];
    let ended = checkpointed.len() as u64;
    let counted: u64 = ["done", "refused", "failed", "stopped"]
        .iter()
        .map(|k| progress[k].as_u64().unwrap())
        .sum();
    assert_eq!(counted, ended, "{listed:#}");
    assert_eq!(progress["left"], n as u64 - ended, "{listed:#}");
    assert_eq!(progress["total"], n, "{listed:#}");
    assert_eq!(listed["resume"], format!("estx-tui recover --resume {run}"));
    w.run(&["jobs"])
        .code(0)
        .stdout_has(&format!("resume {run}: estx-tui recover --resume {run}\n"));

    // Once presumed dead, it resumes unforced. The transactions the dead
    // run was writing were modified moments ago: the run is known dead, so
    // no recovery window holds them back.
    let out = resume_once_dead(&w.g, &run, &[]);
    out.code(0).stderr_has(&format!("resuming job {run}"));
    eprintln!(
        "killed with {moved} of {n} transactions moved, {} checkpointed; resumed: {}",
        checkpointed.len(),
        out.stderr
            .lines()
            .find(|l| l.contains("resuming"))
            .unwrap_or("")
    );
    w.assert_recovered_exactly_once(n);
    let (runs, _) = w.runs_and_parts();
    assert_eq!(runs.len(), 1, "one record, completed by the resumed run");
    assert_eq!(runs[0]["status"], "finished", "{:#}", runs[0]);
    let summary = runs[0]["summary"].as_str().unwrap();
    assert!(summary.starts_with("resumed after"), "{summary}");
    // The resume is on record: unforced, over a job presumed dead.
    assert_eq!(runs[0]["forced"], false, "{:#}", runs[0]);
    let resumed = &runs[0]["resumed"][0];
    assert_eq!(resumed["forced"], false, "{:#}", runs[0]);
    let life = resumed["life"].as_str().unwrap();
    assert!(life.starts_with("presumed dead"), "{life}");
    // Read back whole, the record has every transaction's steps, none twice
    // but those of the transactions in flight at the kill: one the dead run
    // finished after its last checkpoint (a loaded machine is slow to kill)
    // is found finished by the resumed run, with nothing to do and no step.
    let h = w.run(&["history", "job-0", "--json"]).json();
    let records = h.as_array().unwrap();
    assert_eq!(records.len(), 1, "{h:#}");
    let steps = records[0]["steps"].as_array().unwrap();
    let stepped: BTreeSet<&str> = steps.iter().map(|s| s["txn"].as_str().unwrap()).collect();
    let in_flight = moved - checkpointed.len();
    assert!(
        stepped.len() + in_flight >= n,
        "{} of {n} transactions have steps, {in_flight} were in flight at the kill",
        stepped.len()
    );
    let applies = steps
        .iter()
        .filter(|s| s["label"].as_str().unwrap().contains("apply to") && s["result"] == "updated")
        .count();
    // The applies the dead run made after its last checkpoint are in no
    // record (it died before writing them down): the resumed run found them
    // done (no-ops). Every other apply is recorded once, and the balances
    // above show none was made twice.
    assert!(applies <= 2 * n, "{applies}");
    assert!(
        applies >= 2 * (n - in_flight),
        "{applies}, {in_flight} in flight"
    );
    eprintln!(
        "{applies} applies recorded as written ({in_flight} transactions in flight at the kill)"
    );
}

#[test]
fn a_job_recorded_in_a_file_trail_is_resumed_from_that_file() {
    let n = 150;
    let w = World::new();
    stuck(&w, n);
    let trail = w._dir.path().join("trail.jsonl");
    let file = format!("file:{}", trail.display());
    let lines = || -> Vec<Value> {
        std::fs::read_to_string(&trail)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // Some 1 050 writes at 100 a second; a heartbeat line every second.
    let mut job = Background::start(
        &w.g,
        &[
            "recover",
            "--all-stuck",
            "--batch-size",
            "25",
            "--max-rate",
            "100",
            "--audit-trail",
            &file,
            "--job-heartbeat",
            "1s",
        ],
    );
    job.wait_until(
        "a checkpoint and a heartbeat",
        Duration::from_secs(120),
        || {
            let l = lines();
            l.iter().any(|v| v.get("run_id").is_some())
                && l.iter().any(|v| v.get("alive_of").is_some())
        },
    );
    job.child.kill().unwrap(); // SIGKILL
    job.child.wait().unwrap();
    let run = lines()[0]["record_id"].as_str().unwrap().to_string();
    // Not in the index: only that file knows the job.
    let out = resume_once_dead(&w.g, &run, &["--audit-trail", &file]);
    out.code(0).stderr_has(&format!("resuming job {run}"));
    w.assert_recovered_exactly_once(n);
    let last = lines()
        .into_iter()
        .rfind(|v| v["record_id"] == run.as_str())
        .unwrap();
    assert_eq!(last["status"], "finished", "{last:#}");
    assert!(
        last["summary"]
            .as_str()
            .unwrap()
            .starts_with("resumed after"),
        "{last:#}"
    );
    assert!(
        w.runs_and_parts().0.is_empty(),
        "nothing in the audit index"
    );
}

#[test]
fn a_throttled_bulk_recovery_completes_with_no_failed_item() {
    let n = 300;
    let w = World::new();
    stuck(&w, n);
    let proxy = common::FaultProxy::start(&w.g.url);
    // The cluster sheds one `_bulk` item in five, and throttles the first
    // eight `_bulk` requests whole (more than the executor's five unknown
    // outcomes a step may take before it gives up).
    proxy.shed_bulk_items(5);
    proxy.answer("POST", "/_bulk", 8, common::proxy::Canned::throttled("0"));
    let mut via = w.g.clone();
    via.url = proxy.url();
    let admitted = 400;
    let out = via.run(&[
        "recover",
        "--all-stuck",
        "--max-rate",
        &admitted.to_string(),
        "--format",
        "ndjson",
    ]);
    let summary: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["failed"], 0, "{out}");
    assert_eq!(summary["completed"], n, "{out}");
    out.code(0);
    assert!(proxy.shed_items() > 0, "items were shed");
    let pace = out
        .stderr
        .lines()
        .find(|l| l.contains("writes/s achieved"))
        .unwrap_or_else(|| panic!("no pace line: {out}"));
    eprintln!(
        "{n} transactions, {} items shed, 8 requests throttled, 0 failed: {pace}",
        proxy.shed_items()
    );
    w.assert_recovered_exactly_once(n);
}

#[test]
fn ctrl_c_stops_a_large_batch_at_once_and_the_ids_left_feed_ids_from() {
    let n = 1000;
    let w = World::new();
    stuck(&w, n);
    let left = w._dir.path().join("left.ids");
    // One batch of a thousand at 100 writes a second: some 70 s to its end.
    let mut job = Background::start(
        &w.g,
        &[
            "recover",
            "--all-stuck",
            "--batch-size",
            "1000",
            "--max-rate",
            "100",
            "--left-to",
            left.to_str().unwrap(),
        ],
    );
    let stderr_file = job.stderr.clone();
    job.wait_until("the job's line", Duration::from_secs(60), || {
        job_line(&std::fs::read_to_string(&stderr_file).unwrap_or_default())
    });
    job.wait_until("a first write", Duration::from_secs(60), || w.moved() > 0);
    let pid = job.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    // Far less than the batch would take; the stop is between two writes.
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = job.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "still running 15 s after SIGINT: {}",
            job.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = job.stderr();
    assert_eq!(status.code(), Some(exit_stopped()), "{stderr}");
    assert!(stderr.contains("SIGINT: stopping"), "{stderr}");
    let ids = std::fs::read_to_string(&left).unwrap();
    let ids: Vec<&str> = ids.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(!ids.is_empty() && ids.len() <= n, "{}", ids.len());
    assert!(stderr.contains(&left.display().to_string()), "{stderr}");
    let (runs, _) = w.runs_and_parts();
    assert_eq!(runs[0]["status"], "finished");
    assert_eq!(runs[0]["outcome"], "stopped");
    eprintln!("stopped with {} of {n} left", ids.len());

    // The line the stop printed, run at once (under the default two-minute
    // recovery window): the file names the job, whose own writes (the
    // transactions it stopped part-way, seconds ago) are not refused as
    // someone else's live work. The rest completes.
    let file = left.to_str().unwrap();
    assert!(
        stderr.contains(&format!(
            "continue with `estx-tui recover --ids-from {file}`"
        )),
        "{stderr}"
    );
    // As printed: no --reason (none in the environment either); the
    // continuation is recorded with the job's own.
    let job_id = runs[0]["record_id"].as_str().unwrap();
    let job_reason = runs[0]["reason"].clone();
    assert!(job_reason.is_string(), "{:#}", runs[0]);
    let out =
        w.g.run_env(&[("ESTX_REASON", "")], &["recover", "--ids-from", file]);
    out.code(0)
        .stderr_has(&format!("the ids were left by job {job_id}"))
        .stderr_has(&format!("continuing job {job_id} with its own"));
    w.assert_recovered_exactly_once(n);
    let (runs, _) = w.runs_and_parts();
    let next = runs
        .iter()
        .find(|r| r["record_id"] != job_id)
        .expect("the continuation's record");
    assert_eq!(next["reason"], job_reason, "{next:#}");
}

/// Issue 28, item 3: a job stopped on purpose is continued by the line
/// `jobs --all` prints for it, run as printed (no reason given: the job's
/// own), at once; the job's own writes are not refused as recent.
#[test]
fn a_stopped_job_is_continued_by_the_line_jobs_prints() {
    let n = 300;
    let w = World::new();
    stuck(&w, n);
    let mut job = Background::start(
        &w.g,
        &[
            "recover",
            "--all-stuck",
            "--batch-size",
            "300",
            "--max-rate",
            "50",
        ],
    );
    job.wait_until("a first write", Duration::from_secs(60), || w.moved() > 0);
    let pid = job.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while job.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "still running: {}", job.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    let (runs, _) = w.runs_and_parts();
    assert_eq!(runs[0]["outcome"], "stopped", "{}", job.stderr());
    let id = runs[0]["record_id"].as_str().unwrap().to_string();

    let listed = w.run(&["jobs", "--all"]);
    let prefix = format!("continue {id}: estx-tui ");
    let line = listed
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no continue line: {listed}"))
        .to_string();
    assert!(line.starts_with("recover --ids-from "), "{line}");
    let args: Vec<&str> = line.split_whitespace().collect();
    let out = w.g.run_env(&[("ESTX_REASON", "")], &args);
    out.code(0)
        .stderr_has(&format!("the ids were left by job {id}"));
    w.assert_recovered_exactly_once(n);
}

fn job_line(stderr: &str) -> bool {
    stderr
        .lines()
        .any(|l| l.contains(": job ") && l.contains("Ctrl-C"))
}

fn exit_stopped() -> i32 {
    5
}

#[test]
fn a_dry_run_summary_rolls_up_by_state_and_account_and_writes_the_ids() {
    let n = 150;
    let w = World::new();
    stuck(&w, n);
    let ids = w._dir.path().join("would-run.ids");
    let out = w.run(&[
        "recover",
        "--all-stuck",
        "--dry-run",
        "--summary",
        "--left-to",
        ids.to_str().unwrap(),
    ]);
    out.code(0)
        .stdout_has("by state:")
        .stdout_has(&format!("created          {n}: {n} recover"))
        .stdout_has(&format!(
            "by account (balance effect, the largest 20 of {})",
            2 * n
        ))
        .stdout_has(&format!("ids: {n} would run, written to {}", ids.display()));
    assert!(
        !out.stdout.contains("    1. "),
        "no per-transaction plan: {out}"
    );
    assert_eq!(w.moved(), 0, "a dry run writes nothing");
    let listed = std::fs::read_to_string(&ids).unwrap();
    assert_eq!(listed.lines().count(), n);
    // The file feeds the real run.
    w.run(&["recover", "--ids-from", ids.to_str().unwrap()])
        .code(0);
    w.assert_recovered_exactly_once(n);
}

#[test]
fn a_permanent_circuit_breaker_stops_a_bulk_run_at_once_and_names_it() {
    let n = 40;
    let w = World::new();
    stuck(&w, n);
    let proxy = common::FaultProxy::start(&w.g.url);
    // Every `_bulk` meets a parent breaker tripped for good: waiting does
    // not free it, so the run must not ask again (it once sent 201
    // requests in 0.3 s).
    proxy.answer(
        "POST",
        "/_bulk",
        usize::MAX,
        common::proxy::Canned::breaker_permanent(),
    );
    let mut via = w.g.clone();
    via.url = proxy.url();
    let out = via.run(&["recover", "--all-stuck"]);
    let bulks = proxy.log().iter().filter(|l| l.contains("/_bulk")).count();
    assert!(
        bulks <= 3,
        "{bulks} _bulk requests: {out}\n{:#?}",
        proxy.log()
    );
    assert_ne!(out.code, 0, "{out}");
    out.stderr_has("PERMANENT");
}
