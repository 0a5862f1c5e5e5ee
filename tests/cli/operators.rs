//! Several operators at once (issue 30 item 4), the command line's side:
//! `list --json`, its CSV and `show --json` say which live job holds a row
//! (`in_job`) beside the row's cause; a rollback of
//! a row another operator's live job holds is refused (exit 1, naming the
//! job and its operator) and runs forced with a reason, its record naming
//! the job; `recover --all-stuck` leaves the held row out, named; `jobs`
//! lists every operator's jobs.

use super::jobs_forced::live_job_of;
use super::*;

fn state(w: &World, id: &str) -> String {
    w.source(&w.ix.transactions, id).unwrap()["transaction_state"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_row_anothers_live_job_holds_is_listed_in_job_refused_unforced_and_left_out_of_bulk() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    for (id, src, dest) in [("s1", "A", "B"), ("s2", "C", "D")] {
        w.stage(id, src, dest, 10, 2);
        w.backdate(id, 10);
    }
    w.refresh();
    let job = live_job_of(&w, &["s1"]);
    common::refresh(&w.g.url, &w.ix.audit);
    let me = w
        .block(estx::protocol::trail::Trail::open(&w.proto))
        .unwrap();
    let user = me.operator().user.clone();

    // `list --json`: in_job on the held row, null on the other.
    let rows = w.run(&["list", "--json"]).code(0).json();
    let row = |id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {rows:#}"))
            .clone()
    };
    assert_eq!(row("s1")["in_job"]["job"], job.as_str(), "{rows:#}");
    assert_eq!(row("s1")["in_job"]["operator"], user.as_str(), "{rows:#}");
    assert!(row("s1")["in_job"]["heartbeat_age_s"].is_i64(), "{rows:#}");
    assert!(row("s2")["in_job"].is_null(), "{rows:#}");
    // The audit index is read: the others' jobs are seen, nothing said.
    assert!(row("s2").get("others_unavailable").is_none(), "{rows:#}");

    // `show --json` carries the same two: the transaction is list's row.
    let shown = w.run(&["show", "s1", "--json"]).code(0).json()["transaction"].clone();
    for k in ["job", "operator", "action"] {
        assert_eq!(shown["in_job"][k], row("s1")["in_job"][k], "{shown:#}");
    }
    assert!(shown["in_job"]["heartbeat_age_s"].is_i64(), "{shown:#}");
    assert_eq!(
        shown["cause"]["cause"],
        row("s1")["cause"]["cause"],
        "{shown:#}"
    );
    assert!(shown["cause"]["cause"].is_string(), "{shown:#}");
    let free = w.run(&["show", "s2", "--json"]).code(0).json()["transaction"].clone();
    assert!(free["in_job"].is_null(), "{free:#}");

    // The CSV has both columns: the cause's name, the job and its operator.
    let csv_out = w.run(&["list", "--format", "csv"]).code(0).stdout.clone();
    let mut csv = csv::Reader::from_reader(csv_out.as_bytes());
    let header = csv.headers().unwrap().clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name} column: {csv_out}"))
    };
    let (id, cause, in_job) = (col("id"), col("cause"), col("in_job"));
    let csv_rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    let csv_row = |want: &str| {
        csv_rows
            .iter()
            .find(|r| &r[id] == want)
            .unwrap_or_else(|| panic!("{want}: {csv_out}"))
            .clone()
    };
    assert_eq!(
        &csv_row("s1")[in_job],
        format!("{job} ({user})"),
        "{csv_out}"
    );
    assert_eq!(
        &csv_row("s1")[cause],
        row("s1")["cause"]["cause"],
        "{csv_out}"
    );
    assert_eq!(&csv_row("s2")[in_job], "", "{csv_out}");

    // One act, unforced: refused, saying whose job it is; nothing done.
    w.g.run_env(&[("USER", "bob")], &["rollback", "s1", "--reason", "INC-9"])
        .code(1)
        .stderr_has(&job)
        .stderr_has(&format!("{user}'s live recover job"));
    assert_eq!(state(&w, "s1"), "pending");

    // A bulk selection leaves it out, named (a refusal: exit 1); the
    // other runs.
    w.run(&["recover", "--all-stuck", "--reason", "INC-9"])
        .code(1)
        .stderr_has(&format!(
            "s1: refused: held by {user}'s live recover job `{job}`"
        ));
    assert_eq!(state(&w, "s1"), "pending");
    assert_eq!(state(&w, "s2"), "finished");

    // Forced, with a reason: it runs, and the record names the job.
    w.g.run_env(
        &[("USER", "bob")],
        &[
            "rollback",
            "s1",
            "--force",
            "--reason",
            "INC-9 the job is wedged",
        ],
    )
    .code(0);
    assert_eq!(state(&w, "s1"), "rolled-back");
    let forced = w
        .audit_records()
        .into_iter()
        .find(|r| r["action"] == "rollback" && r["transactions"][0] == "s1")
        .expect("the forced rollback's record");
    assert_eq!(
        forced["overrode"][0],
        format!("{job} ({user})"),
        "{forced:#}"
    );

    // `jobs` lists the job whoever asks.
    w.g.run_env(&[("USER", "bob")], &["jobs"])
        .code(0)
        .stdout_has(&job)
        .stdout_has(&user);
}

#[test]
fn with_a_file_trail_list_and_show_say_other_operators_jobs_are_unavailable() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("s1", "A", "B", 10, 2);
    w.backdate("s1", 10);
    w.refresh();
    let trail = format!("file:{}", w._dir.path().join("trail.jsonl").display());
    let file = ["--audit-trail", trail.as_str()];

    // Not silently empty: each row says why no other operator's job can
    // show, and stderr says it in words.
    let out = w.run(&[&["list", "--json"][..], &file[..]].concat());
    out.code(0)
        .stderr_has("other operators' jobs")
        .stderr_has("file");
    let rows = out.json();
    let row = &rows[0];
    assert_eq!(row["id"], "s1", "{rows:#}");
    assert!(row["in_job"].is_null(), "{rows:#}");
    assert_eq!(row["others_unavailable"], "file_trail", "{rows:#}");
    let shown = w
        .run(&[&["show", "s1", "--json"][..], &file[..]].concat())
        .code(0)
        .json()["transaction"]
        .clone();
    assert_eq!(shown["others_unavailable"], "file_trail", "{shown:#}");
}
