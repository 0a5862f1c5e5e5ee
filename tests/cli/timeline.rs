//! `history --since WHEN [--json]` (issue 28, item 9): every intervention
//! in the window, newest first, each with who, what and how it ended (a bulk
//! run by its counts), from the audit index or from a file trail
//! (`--audit-trail file:PATH`); an empty window says so; a WHEN that is
//! neither a duration nor a time is a usage error. And the readers that
//! must honour a file trail too: `history ID` and `bundle`'s interventions.

use super::jobs::stuck;
use super::*;

/// Where the interventions of a test are recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kept {
    /// The audit index.
    Index,
    /// A file trail (`--audit-trail file:PATH`) in the world's temp dir.
    File,
}

impl World {
    /// The file trail's path.
    fn trail_path(&self) -> PathBuf {
        self._dir.path().join("trail.jsonl")
    }

    /// `--audit-trail file:PATH` when the trail is a file.
    fn trail_args(&self, kept: Kept) -> Vec<String> {
        match kept {
            Kept::Index => vec![],
            Kept::File => vec![
                "--audit-trail".into(),
                format!("file:{}", self.trail_path().display()),
            ],
        }
    }

    /// Runs `args` with the trail's arguments.
    fn run_kept(&self, kept: Kept, args: &[&str]) -> Out {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(self.trail_args(kept));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = self.run(&all);
        if kept == Kept::Index {
            common::refresh(&self.g.url, &self.ix.audit);
        }
        out
    }

    /// Moves the start of every record of `txn`'s interventions `minutes`
    /// back, in the index or in the file.
    fn backdate_records(&self, kept: Kept, txn: &str, minutes: i64) {
        let then = ago(minutes);
        let names = |doc: &Value| {
            doc["transactions"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == txn))
        };
        match kept {
            Kept::Index => {
                let (status, body) = common::http(
                    "POST",
                    &self.url(&self.ix.audit, "_search"),
                    Some(r#"{"size":100,"query":{"match_all":{}}}"#),
                );
                assert_eq!(status, 200, "{body}");
                let v: Value = serde_json::from_str(&body).unwrap();
                let mut moved = 0;
                for h in v["hits"]["hits"].as_array().unwrap() {
                    let mut doc = h["_source"].clone();
                    if doc.get("run_id").is_none() && names(&doc) {
                        doc["started_at"] = json!(then);
                        self.put(&self.ix.audit, h["_id"].as_str().unwrap(), &doc);
                        moved += 1;
                    }
                }
                assert_eq!(moved, 1, "{v:#}");
                common::refresh(&self.g.url, &self.ix.audit);
            }
            Kept::File => {
                let path = self.trail_path();
                let lines: Vec<String> = std::fs::read_to_string(&path)
                    .unwrap()
                    .lines()
                    .map(|l| {
                        let mut doc: Value = serde_json::from_str(l).unwrap();
                        if doc.get("record_id").is_some() && names(&doc) {
                            doc["started_at"] = json!(then);
                        }
                        doc.to_string()
                    })
                    .collect();
                std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            }
        }
    }
}

/// Three interventions: a rollback of `t1` three hours ago (backdated),
/// then a recovery of `t2`, then a bulk recovery of three stuck
/// transactions (`job-0..2`), each with its own reason.
fn three_interventions(w: &World, kept: Kept) {
    w.stage_old_pending();
    w.account("C", 500);
    w.account("D", 500);
    w.stage("t2", "C", "D", 10, 2);
    w.backdate("t2", 10);
    stuck(w, 3);
    w.run_kept(kept, &["rollback", "t1", "--reason", "INC-1 old"])
        .code(0);
    w.backdate_records(kept, "t1", 180);
    w.run_kept(kept, &["recover", "t2", "--reason", "INC-2 one"])
        .code(0);
    w.run_kept(kept, &["recover", "--all-stuck", "--reason", "INC-3 bulk"])
        .code(0);
}

/// The lines of `out` that begin an entry (a timestamp, then the act).
fn headlines(out: &Out) -> Vec<&str> {
    out.stdout
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

/// The window, newest first, who, what, outcome, as text and JSON.
fn lists_the_window_newest_first(kept: Kept) {
    let w = World::new();
    three_interventions(&w, kept);

    let out = w.run_kept(kept, &["history", "--since", "1h"]);
    out.code(0);
    let heads = headlines(&out);
    assert_eq!(
        heads.len(),
        2,
        "the old rollback is out of the window: {out}"
    );
    assert!(heads[0].contains("recover (bulk)"), "newest first: {out}");
    assert!(heads[1].contains("recover  by "), "{out}");
    for h in &heads {
        assert!(h.contains(" by ") && h.contains("via cli"), "who: {out}");
    }
    out.stdout_has("what:    3 transaction(s); targets: --all-stuck")
        .stdout_has("outcome: 3 completed")
        .stdout_has("what:    1 transaction(s)")
        .stdout_has("reason:  INC-3 bulk")
        .stdout_has("reason:  INC-2 one");
    assert!(!out.stdout.contains("INC-1"), "{out}");
    let bulk_at = out.stdout.find("INC-3").unwrap();
    assert!(bulk_at < out.stdout.find("INC-2").unwrap(), "{out}");

    // A wider window holds the old rollback too, last.
    let out = w.run_kept(kept, &["history", "--since", "4h"]);
    let heads = headlines(&out);
    assert_eq!(heads.len(), 3, "{out}");
    assert!(heads[2].contains("rollback"), "oldest last: {out}");

    let json = w
        .run_kept(kept, &["history", "--since", "1h", "--json"])
        .json();
    let entries = json.as_array().unwrap();
    assert_eq!(entries.len(), 2, "{json:#}");
    let (bulk, one) = (&entries[0], &entries[1]);
    assert_eq!(bulk["action"], "recover", "{json:#}");
    assert_eq!(bulk["bulk"], true);
    assert_eq!(bulk["transactions"], 3);
    assert_eq!(bulk["counts"]["completed"], 3, "{json:#}");
    assert_eq!(bulk["status"], "finished");
    assert_eq!(bulk["reason"], "INC-3 bulk");
    assert_eq!(one["action"], "recover");
    assert_eq!(one["bulk"], false);
    assert_eq!(one["transactions"], 1);
    assert_eq!(one["outcome"], "completed", "{json:#}");
    assert_eq!(one["interface"], "cli");
    assert!(
        one["operator"]["user"]
            .as_str()
            .is_some_and(|u| !u.is_empty()),
        "{json:#}"
    );
    assert!(
        bulk["started_at"].as_str().unwrap() > one["started_at"].as_str().unwrap(),
        "{json:#}"
    );
}

#[test]
fn history_since_lists_the_window_newest_first_from_the_audit_index() {
    lists_the_window_newest_first(Kept::Index);
}

#[test]
fn history_since_lists_the_window_newest_first_from_a_file_trail() {
    lists_the_window_newest_first(Kept::File);
}

#[test]
fn history_since_an_empty_window_says_so() {
    let w = World::new();
    three_interventions(&w, Kept::Index);
    let since = format_timestamp_in(60);
    w.run(&["history", "--since", &since])
        .code(0)
        .stdout_has("no recorded interventions since ");
    let json = w.run(&["history", "--since", &since, "--json"]).json();
    assert_eq!(json, json!([]));
    // Nothing recorded at all: the same, not an error.
    let empty = World::new();
    empty
        .run(&["history", "--since", "24h"])
        .code(0)
        .stdout_has("no recorded interventions since ");
}

/// An RFC 3339 time `minutes` from now.
fn format_timestamp_in(minutes: i64) -> String {
    ago(-minutes)
}

#[test]
fn history_since_a_bad_when_is_a_usage_error() {
    let w = World::new();
    w.run(&["history", "--since", "yesterday"])
        .code(2)
        .stderr_has("yesterday");
    // Neither an id nor a window: what to list is missing.
    w.run(&["history"]).code(2).stderr_has("--since");
}

#[test]
fn history_of_a_transaction_reads_a_file_trail() {
    let w = World::new();
    w.stage_old_pending();
    w.run_kept(Kept::File, &["rollback", "t1", "--reason", "INC-4 file"])
        .code(0);
    let out = w.run_kept(Kept::File, &["history", "t1"]);
    out.code(0)
        .stdout_has("rollback  by ")
        .stdout_has("reason:  INC-4 file");
    let json = w.run_kept(Kept::File, &["history", "t1", "--json"]).json();
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{json:#}");
    assert_eq!(json[0]["reason"], "INC-4 file");
    assert!(
        !json[0]["steps"].as_array().unwrap().is_empty(),
        "with its steps: {json:#}"
    );
    // The index knows nothing of it.
    w.run(&["history", "t1"])
        .code(0)
        .stdout_has("no recorded interventions on transaction `t1`");
}

#[test]
fn bundle_takes_the_interventions_of_a_file_trail() {
    let w = World::new();
    w.stage_old_pending();
    w.run_kept(Kept::File, &["rollback", "t1", "--reason", "INC-5 file"])
        .code(0);
    let out_dir = tempfile::tempdir().unwrap();
    let archive = out_dir.path().join("incident.tar.gz");
    let archive_arg = archive.display().to_string();
    w.run_kept(Kept::File, &["bundle", &archive_arg, "--since", "1h"])
        .code(0);
    let file = std::fs::File::open(&archive).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut interventions = None;
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().ends_with("interventions.txt") {
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            interventions = Some(text);
        }
    }
    let text = interventions.expect("interventions.txt in the archive");
    assert!(text.contains("INC-5 file"), "{text}");
}
