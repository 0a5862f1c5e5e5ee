//! Bulk `rollback`/`recover` from the command line (issue 10): each
//! selector picks what it says, `--dry-run` writes nothing (every
//! `_seq_no` unchanged, no audit record), `--format ndjson` prints lines
//! that parse, and a bulk run needs a reason and is recorded as one
//! intervention flagged `bulk`.

use super::*;
use std::io::Write;

/// Accounts A-H with 1000 each and five transactions: `old-pending`,
/// `old-created` and `old-committed` untouched for two hours, `mid-pending`
/// for ten minutes, `fresh` (pending) just now.
fn mess(w: &World) {
    for a in ["A", "B", "C", "D", "E", "F", "G", "H"] {
        w.account(a, 1000);
    }
    w.stage("old-pending", "A", "B", 10, 2);
    w.stage("old-created", "C", "D", 20, 0);
    w.stage("old-committed", "E", "F", 30, 4);
    w.stage("mid-pending", "G", "H", 40, 3);
    w.stage("fresh", "H", "A", 50, 1);
    for id in ["old-pending", "old-created", "old-committed"] {
        w.backdate(id, 120);
    }
    w.backdate("mid-pending", 10);
    w.refresh();
}

const ALL: [&str; 5] = [
    "old-pending",
    "old-created",
    "old-committed",
    "mid-pending",
    "fresh",
];
const ACCOUNTS: [&str; 8] = ["A", "B", "C", "D", "E", "F", "G", "H"];

impl World {
    /// The `_seq_no` of every transaction and account of [`mess`].
    fn seq_nos(&self) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        for (index, ids) in [
            (&self.ix.transactions, &ALL[..]),
            (&self.ix.accounts, &ACCOUNTS[..]),
        ] {
            for id in ids {
                let (status, body) =
                    common::http("GET", &self.url(index, &format!("_doc/{id}")), None);
                assert_eq!(status, 200, "{body}");
                let v: Value = serde_json::from_str(&body).unwrap();
                out.insert(format!("{index}/{id}"), v["_seq_no"].as_i64().unwrap());
            }
        }
        out
    }

    /// Runs with `input` on standard input.
    fn run_stdin(&self, args: &[&str], input: &str) -> Out {
        let (mut c, cmd) = self.g.command(&[], args);
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        let out = Out {
            cmd,
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert_no_panic(&out);
        out
    }
}

/// The transactions a `--dry-run --json` plans.
fn planned(out: &Out) -> BTreeSet<String> {
    out.json()["plan"]
        .as_array()
        .unwrap_or_else(|| panic!("no plan: {out}"))
        .iter()
        .map(|r| r["txn"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn each_selector_picks_what_it_says() {
    let w = World::new();
    mess(&w);
    let dry = |args: &[&str]| {
        let mut a = vec!["rollback", "--dry-run", "--json"];
        a.extend_from_slice(args);
        w.run(&a)
    };
    // Stuck: outside the 2m recovery window, in flight.
    let out = dry(&["--all-stuck"]);
    assert_eq!(
        planned(&out),
        set(&["old-pending", "old-created", "old-committed", "mid-pending"])
    );
    // The committed one would be refused: the dry run says so (exit 1).
    out.code(1);
    let s = &out.json()["summary"];
    assert_eq!(s["would_run"], 3, "{out}");
    assert_eq!(s["refused"]["committed"], 1, "{out}");
    // States: repeatable or a comma list, validated.
    assert_eq!(
        planned(&dry(&["--state", "pending"])),
        set(&["old-pending", "mid-pending", "fresh"])
    );
    assert_eq!(
        planned(&dry(&["--state", "created,committed"])),
        set(&["old-created", "old-committed"])
    );
    assert_eq!(
        planned(&dry(&["--state", "created", "--state", "committed"])),
        set(&["old-created", "old-committed"])
    );
    w.run(&["rollback", "--state", "pendng", "--dry-run"])
        .code(2)
        .stderr_has("valid states");
    // Age (compound durations), and filters intersect.
    assert_eq!(
        planned(&dry(&["--older-than", "1h30m"])),
        set(&["old-pending", "old-created", "old-committed"])
    );
    assert_eq!(
        planned(&dry(&["--all-stuck", "--state", "pending"])),
        set(&["old-pending", "mid-pending"])
    );
    assert_eq!(
        planned(&dry(&["--state", "pending", "--older-than", "1h"])),
        set(&["old-pending"])
    );
    // Ids from a file: its own set; comments and blanks ignored; unknown
    // ids refused; narrowed by filters when given.
    let file = w.g.log.with_file_name("ids.txt");
    std::fs::write(&file, "# INC-10\nold-pending\n\n  fresh \nnope\n").unwrap();
    let path = file.display().to_string();
    let out = dry(&["--ids-from", &path]);
    assert_eq!(planned(&out), set(&["old-pending", "fresh"]));
    let j = out.json();
    assert_eq!(j["left_out"][0]["txn"], "nope", "{out}");
    assert_eq!(j["left_out"][0]["verdict"]["kind"], "refused");
    // `fresh` is within the recovery window: refused, like `rollback fresh`.
    let fresh = j["plan"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["txn"] == "fresh")
        .unwrap()
        .clone();
    assert_eq!(fresh["would"], "refused", "{out}");
    assert!(fresh["refusal"]
        .as_str()
        .unwrap()
        .contains("recovery window"));
    out.code(1);
    let out = dry(&["--ids-from", &path, "--older-than", "1h"]);
    assert_eq!(planned(&out), set(&["old-pending"]));
    assert!(
        out.stdout.contains("not selected by --older-than="),
        "{out}"
    );
    // `-`: standard input.
    let out = w.run_stdin(
        &["rollback", "--dry-run", "--json", "--ids-from", "-"],
        "old-created\n",
    );
    assert_eq!(planned(&out), set(&["old-created"]));
    // An unreadable file is a usage error.
    w.run(&["rollback", "--ids-from", "/nonexistent/ids", "--dry-run"])
        .code(2)
        .stderr_has("cannot read --ids-from");
    // A selector and an id do not mix; force is for one transaction.
    w.run(&["rollback", "t1", "--all-stuck"]).code(2);
    w.run(&["rollback", "--all-stuck", "--force"]).code(2);
    w.run(&["rollback"]).code(2);
}

#[test]
fn a_dry_run_writes_nothing_and_says_what_would_happen() {
    let w = World::new();
    mess(&w);
    let before = (w.seq_nos(), w.audit_records().len(), w.counts());
    // No reason needed, and allowed read-only: nothing is written.
    let out = w.g.run_env(
        &[("ESTX_REASON", "")],
        &["rollback", "--all-stuck", "--dry-run", "--read-only"],
    );
    out.code(1)
        .stdout_has("dry run: rollback of 4 transactions selected by --all-stuck")
        .stdout_has("3 roll back, 1 refused: committed")
        // A +10 (undo of the source), G +40 and H -40 (both undone).
        .stdout_has("net balance effect +10 over 3 accounts")
        .stdout_has("old-committed  committed, modified ")
        .stdout_has(": refused: transaction is committed");
    // Step by step: the half-applied pending one undoes its source.
    assert!(
        out.stdout
            .lines()
            .any(|l| l.contains("old-pending") && l.contains("roll back in")),
        "{out}"
    );
    let out = w.run(&["recover", "--all-stuck", "--dry-run", "--format", "ndjson"]);
    out.code(0);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(lines[..4].iter().all(|l| l["type"] == "plan"), "{out}");
    assert_eq!(lines[4]["type"], "plan_summary");
    assert_eq!(lines[4]["would_run"], 4);
    // Completing the half-applied one credits B; the rest net to zero.
    assert_eq!(lines[4]["net_balance_effect"], 10, "{out}");
    w.run(&["rollback", "old-pending", "--dry-run"])
        .code(0)
        .stdout_has("1 roll back");
    assert_eq!(
        (w.seq_nos(), w.audit_records().len(), w.counts()),
        before,
        "a dry run wrote something"
    );
}

#[test]
fn a_bulk_rollback_needs_a_reason_is_recorded_bulk_and_reports_ndjson() {
    let w = World::new();
    mess(&w);
    let before = w.seq_nos();
    w.g.run_env(&[("ESTX_REASON", "")], &["rollback", "--all-stuck"])
        .code(2)
        .stderr_has("--reason");
    w.g.run_env(&[("ESTX_REASON", "")], &["recover", "--state", "pending"])
        .code(2)
        .stderr_has("bulk needs a reason");
    assert_eq!(w.seq_nos(), before);
    assert!(w.audit_records().is_empty());

    let out = w.g.run_env(
        &[("ESTX_REASON", "")],
        &[
            "rollback",
            "--all-stuck",
            "--format",
            "ndjson",
            "--concurrency",
            "2",
            "--reason",
            "INC-77 outage",
        ],
    );
    // The committed one is refused: the worst item is 1.
    out.code(1);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 5, "{out}");
    let items: BTreeMap<String, Value> = lines[..4]
        .iter()
        .map(|l| {
            assert_eq!(l["type"], "transaction", "{l}");
            (l["txn"].as_str().unwrap().to_string(), l.clone())
        })
        .collect();
    assert_eq!(items["old-committed"]["verdict"]["kind"], "refused");
    for id in ["old-pending", "old-created", "mid-pending"] {
        assert_eq!(items[id]["final_state"], "rolled-back", "{out}");
        assert_eq!(w.state(id), "rolled-back");
    }
    let summary = &lines[4];
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["completed"], 3);
    assert_eq!(summary["refused"], 1);
    assert_eq!(summary["exit_code"], 1);
    assert_eq!(w.state("fresh"), "pending");
    assert_eq!(w.state("old-committed"), "committed");
    // Money: the half-applied one undone, nothing in flight but `fresh`
    // (not applied yet): the seeded total.
    let total: i64 = ACCOUNTS.iter().map(|a| w.balance(a)).sum();
    assert_eq!(total, 1000 * 8, "{out}");

    let records = w.audit_records();
    assert_eq!(records.len(), 1, "{records:#?}");
    let r = &records[0];
    assert_eq!(r["bulk"], true, "{r:#}");
    assert_eq!(r["action"], "rollback");
    assert_eq!(r["reason"], "INC-77 outage");
    assert_eq!(r["targets"], json!(["--all-stuck"]));
    assert_eq!(r["status"], "finished");
    assert_eq!(r["outcome"], "refused");
    let txns: BTreeSet<String> = r["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        txns,
        set(&["old-pending", "old-created", "old-committed", "mid-pending"])
    );
    // `history` finds it under each transaction.
    w.run(&["history", "old-created", "--json"])
        .code(0)
        .stdout_has("INC-77 outage");
    // Issue 28, item 7: outcomes counted, not reduced to the worst (the
    // exit code and `outcome` keep the worst-of rule).
    assert_eq!(r["counts"]["completed"], 3, "{r:#}");
    assert_eq!(r["counts"]["refused"], 1, "{r:#}");
    w.run(&["history", "old-created"])
        .code(0)
        .stdout_has("rollback (bulk)")
        .stdout_has("outcome: 3 completed, 1 refused (ended");
    let jobs = w.run(&["jobs", "--all"]);
    jobs.code(0).stdout_has("finished: 3 completed, 1 refused");
    let json = w.run(&["jobs", "--all", "--json"]).json();
    assert_eq!(
        json[0]["progress"],
        json!({"total": 4, "done": 3, "refused": 1, "failed": 0, "stopped": 0, "left": 0}),
        "{json:#}"
    );
}

#[test]
fn a_bulk_recovery_of_a_selection_runs_batched_or_sequential() {
    for extra in [&[][..], &["--sequential"][..]] {
        let w = World::new();
        mess(&w);
        let mut args = vec![
            "recover",
            "--state",
            "pending",
            "--older-than",
            "1h",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = w.run(&args);
        out.code(0);
        let j = out.json();
        assert_eq!(j["action"], "recover");
        let txns = j["transactions"].as_array().unwrap();
        assert_eq!(txns.len(), 1, "{out}");
        assert_eq!(txns[0]["txn"], "old-pending");
        assert_eq!(w.state("old-pending"), "finished");
        // Not selected: left alone, and no lock sweep for a narrowed selection.
        assert_eq!(w.state("mid-pending"), "pending");
        assert_eq!(w.state("old-created"), "created");
        assert_eq!(j["released_locks"], json!([]));
        assert_eq!(w.audit_records()[0]["bulk"], true);
    }
}

/// SIGINT, then SIGTERM, part-way through a bulk rollback: the running
/// transaction finishes, nothing new starts, the summary says what was not
/// started, exit 5, every transaction in a protocol state (rolled back or
/// still pending as staged), the money conserved.
#[test]
fn a_signal_stops_starting_new_items_and_finishes_the_running_ones() {
    use std::io::{BufRead, BufReader};
    const N: usize = 120;
    let w = World::new();
    w.account("A", 100_000);
    w.account("B", 100_000);
    let ids: Vec<String> = (0..N).map(|i| format!("sig-{i:03}")).collect();
    for id in &ids {
        w.stage(id, "A", "B", 5, 1);
        w.backdate(id, 10);
    }
    w.refresh();
    for signal in ["INT", "TERM"] {
        let (mut c, cmd) = w.g.command(
            &[],
            &[
                "rollback",
                "--state",
                "pending",
                "--concurrency",
                "1",
                "--format",
                "ndjson",
            ],
        );
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        // The first transaction has ended: the run is under way.
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let code = child.wait().unwrap().code();
        let all = format!("{first}{rest}");
        let ctx = format!("{cmd} (SIG{signal}): {all}\n{stderr}");
        let lines: Vec<Value> = all
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{ctx}")))
            .collect();
        let summary = lines.last().unwrap();
        assert_eq!(summary["type"], "summary", "{ctx}");
        assert_eq!(summary["stopped_by"], format!("SIG{signal}"), "{ctx}");
        let ran = lines.len() - 1;
        assert!(summary["not_started"].as_u64().unwrap() > 0, "{ctx}");
        assert_eq!(
            summary["completed"].as_u64().unwrap() as usize,
            ran,
            "{ctx}"
        );
        assert_eq!(code, Some(5), "{ctx}");
        assert!(
            stderr.contains("stopping: no new transaction starts"),
            "{ctx}"
        );
        for l in &lines[..ran] {
            assert_eq!(l["final_state"], "rolled-back", "{l}");
        }
        w.refresh();
    }
    // Every transaction rolled back or still as staged; nothing half-done.
    let mut rolled_back = 0;
    for id in &ids {
        match w.state(id).as_str() {
            "rolled-back" => rolled_back += 1,
            "pending" => {}
            s => panic!("{id} left {s}"),
        }
    }
    assert!((2..N).contains(&rolled_back), "{rolled_back}");
    assert_eq!(w.balance("A") + w.balance("B"), 200_000);
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());
}

/// A dry run lists every write the run will make, the lock releases that
/// follow a transaction's end included, and the run then makes exactly those.
#[test]
fn a_dry_run_plans_the_lock_releases_the_run_then_makes() {
    let w = World::new();
    for a in ["A", "B"] {
        w.account(a, 500);
    }
    w.stage("held", "A", "B", 100, 2);
    w.backdate("held", 120);
    for resource in ["A", "B"] {
        w.put(
            &w.ix.locks,
            resource,
            &json!({"owner": "held", "process_id": "worker-1", "created_at": ago(120),
                    "expires_at": ago(-60)}),
        );
    }
    w.refresh();
    let steps = |line: &Value| -> Vec<(String, String)> {
        line["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let label = s["label"].as_str().unwrap().to_string();
                (label, s["target"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let out = w.run_stdin(
        &[
            "rollback",
            "--ids-from",
            "-",
            "--dry-run",
            "--format",
            "ndjson",
        ],
        "held\n",
    );
    out.code(0);
    let planned = serde_json::from_str::<Value>(out.stdout.lines().next().unwrap()).unwrap();
    let planned = steps(&planned);
    // One id is planned through the same act as a selection of it.
    let out = w.run(&["rollback", "held", "--dry-run", "--format", "ndjson"]);
    out.code(0);
    let one = serde_json::from_str::<Value>(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(steps(&one), planned, "one id plans otherwise: {out}");
    let releases: Vec<&(String, String)> = planned
        .iter()
        .filter(|(l, _)| l == "release lock")
        .collect();
    assert_eq!(
        releases.len(),
        2,
        "the dry run omits the lock releases: {out}"
    );
    let out = w.run_stdin(
        &[
            "rollback",
            "--ids-from",
            "-",
            "--format",
            "ndjson",
            "--reason",
            "test",
        ],
        "held\n",
    );
    out.code(0);
    let ran = serde_json::from_str::<Value>(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(
        steps(&ran),
        planned,
        "the run differs from its dry run: {out}"
    );
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
}
