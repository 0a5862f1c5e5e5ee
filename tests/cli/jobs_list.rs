//! `estx-tui jobs` (issue 18, item 6): the operator who got a crash finds
//! the RUN_ID to resume. Running and unfinished jobs (live, presumed dead,
//! unknown), newest first, with act, operator, start, progress and the
//! exact resume command (forced for one not presumed dead); `--all` adds
//! the finished ones; `--json`; from the audit index or a file trail. (A
//! job killed with SIGKILL is listed presumed dead with its checkpoints'
//! progress in `jobs::a_bulk_job_killed_with_sigkill_is_resumed_to_completion`.)

use super::jobs::stuck;
use super::*;
use estx::protocol::trail::{
    os_operator, ActOutcome, ActionKind, Ending, Interface, RecordDraft, Trail,
};

/// Begins a bulk `action` of `job-0..3` through `proto`'s trail (as a job
/// starting now: its first heartbeat, `proto`'s period). Returns its id.
fn begin(w: &World, proto: &Protocol, action: ActionKind) -> String {
    let trail = w.block(Trail::open(proto)).unwrap();
    let ids = (0..3).map(|i| format!("job-{i}")).collect();
    let mut draft = RecordDraft::new(action, ids, Interface::Cli);
    draft.bulk = true;
    draft.reason = Some("INC-9".into());
    w.block(trail.begin(&draft)).unwrap().0
}

/// `proto` beating every millisecond: silent past four, presumed dead by
/// the time anyone lists it.
fn fast_beating(w: &World, audit_file: Option<PathBuf>) -> Protocol {
    let config = ProtocolConfig {
        job_heartbeat: Duration::from_millis(1),
        audit_file,
        ..w.proto.config().clone()
    };
    Protocol::new(w.proto.cluster().clone(), config)
}

/// The jobs of `--json`, by id.
fn by_id(out: &Out) -> BTreeMap<String, Value> {
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["id"].as_str().unwrap().to_string(), j.clone()))
        .collect()
}

#[test]
fn jobs_lists_live_presumed_dead_and_unknown_jobs_with_the_command_that_resumes_each() {
    let w = World::new();
    stuck(&w, 3);
    let live = begin(&w, &w.proto, ActionKind::Rollback);
    let dead = begin(&w, &fast_beating(&w, None), ActionKind::Recover);
    // A record written before heartbeats existed: its life unknown.
    let unknown = "20260101T000000.000Z-recover-0000beef";
    w.put(
        &w.ix.audit,
        unknown,
        &json!({"record_id": unknown, "action": "recover", "transactions": ["job-0"],
            "targets": [], "reason": null, "forced": false, "bulk": true,
            "interface": "cli", "operator": {"user": "carol", "source": "os", "host": "h"},
            "plan": [], "status": "running", "outcome": null, "summary": null, "steps": [],
            "parts": 0, "started_at": "2026-01-01T00:00:00Z", "finished_at": null,
            "tool_version": "0.0.9"}),
    );
    let finished = {
        let trail = w.block(Trail::open(&w.proto)).unwrap();
        let id = begin(&w, &w.proto, ActionKind::Recover);
        let run = estx::protocol::trail::RecordId(id.clone());
        let done = trail.finish(
            &run,
            Ending::of(
                ActOutcome::Completed,
                "3 selected transactions: 3 completed",
                vec![],
            ),
        );
        w.block(done).unwrap();
        id
    };
    common::refresh(&w.g.url, &w.ix.audit);

    let out = w.run(&["jobs"]);
    eprintln!("{}", out.stdout);
    out.code(0)
        .stdout_has("RUN_ID")
        .stdout_has("DONE/REFUSED/FAILED/LEFT")
        .stdout_has("LIFE")
        .stdout_has(&format!(
            "resume {dead}: estx-tui recover --resume {dead}\n"
        ))
        .stdout_has(&format!(
            "resume {live}: estx-tui rollback --resume {live} --force --reason TEXT\n"
        ))
        .stdout_has(&format!(
            "resume {unknown}: estx-tui recover --resume {unknown} --force --reason TEXT\n"
        ));
    let row = |id: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("no row {id}: {out}"))
            .to_string()
    };
    let me = os_operator().user;
    assert!(row(&live).contains("live, beat"), "{out}");
    assert!(
        row(&live).contains(&me) && row(&live).contains("rollback"),
        "{out}"
    );
    assert!(row(&live).contains("0/0/0/3 of 3"), "{out}");
    assert!(row(&dead).contains("presumed dead, silent"), "{out}");
    assert!(row(unknown).contains("unknown, no heartbeat"), "{out}");
    assert!(row(unknown).contains("carol (OS user) on h"), "{out}");
    assert!(
        !out.stdout.contains(&finished),
        "finished: not without --all: {out}"
    );
    // Newest first: the record of 2026-01-01 last.
    let rows: Vec<&str> = out.stdout.lines().skip(1).take(3).collect();
    assert!(rows[2].starts_with(unknown), "{out}");

    let jobs = by_id(&w.run(&["jobs", "--json"]));
    assert_eq!(jobs.len(), 3, "{jobs:#?}");
    assert_eq!(jobs[&live]["life"], "live");
    assert_eq!(jobs[&dead]["life"], "presumed dead");
    assert_eq!(jobs[unknown]["life"], "unknown");
    assert_eq!(
        jobs[&dead]["resume"],
        format!("estx-tui recover --resume {dead}")
    );
    assert_eq!(jobs[&live]["operator"]["user"], me.as_str());
    assert_eq!(jobs[&live]["action"], "rollback");
    assert_eq!(jobs[&live]["reason"], "INC-9");
    let progress = &jobs[&live]["progress"];
    assert_eq!(
        progress,
        &json!({"total": 3, "done": 0, "refused": 0, "failed": 0,
        "stopped": 0, "left": 3})
    );

    // --all adds the finished one, with its outcome and no resume.
    let all = by_id(&w.run(&["jobs", "--all", "--json"]));
    assert_eq!(all.len(), 4, "{all:#?}");
    assert_eq!(all[&finished]["life"], "finished");
    assert_eq!(all[&finished]["life_detail"], "finished: completed");
    assert_eq!(all[&finished]["resume"], Value::Null);
    let text = w.run(&["jobs", "--all"]);
    text.code(0).stdout_has("finished: completed");
    assert!(
        !text.stdout.contains(&format!("resume {finished}")),
        "{text}"
    );
}

#[test]
fn jobs_reads_a_file_trail_and_its_resume_command_names_the_file() {
    let w = World::new();
    let path = w._dir.path().join("trail.jsonl");
    let dead = begin(
        &w,
        &fast_beating(&w, Some(path.clone())),
        ActionKind::Recover,
    );
    let file = format!("file:{}", path.display());
    // The index knows nothing of it.
    w.run(&["jobs"])
        .code(0)
        .stdout_has("no unfinished bulk run in the audit index");
    let out = w.run(&["jobs", "--audit-trail", &file]);
    out.code(0)
        .stdout_has("presumed dead, silent")
        .stdout_has(&format!(
            "resume {dead}: estx-tui recover --resume {dead} --audit-trail {file}\n"
        ));
}
