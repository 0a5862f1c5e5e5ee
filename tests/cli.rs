//! The real `estx-tui` binary, run as an operator would run it, against the
//! test server (osmem-server, or the cluster at `ESTX_TEST_URL`): exit codes,
//! stdout/stderr and the documents left behind, as the README and `--help`
//! describe them.
//!
//! Every invocation names its own unique indices and log file and runs with
//! the `ESTX_*` environment removed, so a developer's settings cannot leak in.
//! Documents are seeded by hand (raw HTTP) or through the library (a transfer
//! stopped after `k` steps, as if its worker died there). osmem-server never
//! refreshes by itself: tests refresh before the search-based commands
//! (`list`, `locks`, `audit`, `recover --all-stuck`, `release-lock --txn`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/mod.rs"]
mod common;

use chrono::{Duration as ChronoDuration, Utc};
use common::{TestIndices, TestServer};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::time::format_timestamp;
use estx::protocol::{
    Indices, NewTransfer, Procedure, Protocol, ProtocolConfig, RunLimits, Verdict,
};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every environment variable the binary reads; removed for each run.
const ESTX_ENV: &[&str] = &[
    "ESTX_URL",
    "ESTX_USER",
    "ESTX_PASSWORD",
    "ESTX_API_KEY",
    "ESTX_CA_CERT",
    "ESTX_INSECURE",
    "ESTX_TRANSACTIONS_INDEX",
    "ESTX_ACCOUNTS_INDEX",
    "ESTX_LOCKS_INDEX",
    "ESTX_RECOVERY_WINDOW",
    "ESTX_INVESTIGATE_AFTER",
    "ESTX_SETTLED_RETENTION",
    "ESTX_TIMEOUT",
    "ESTX_LOG_FILE",
    "ESTX_INTERVAL",
    "ESTX_READ_ONLY",
];

/// The non-terminal states, as `list`/`demo` print them.
const IN_FLIGHT: [&str; 4] = ["created", "pending", "committed", "terminating"];

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

/// What one run of the binary produced.
#[derive(Debug)]
struct Out {
    cmd: String,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    /// Asserts the exit code, showing everything on failure.
    #[track_caller]
    fn code(&self, expected: i32) -> &Out {
        assert_eq!(self.code, expected, "exit code of {self}");
        self
    }

    /// Asserts stdout contains `needle`.
    #[track_caller]
    fn stdout_has(&self, needle: &str) -> &Out {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}: {self}"
        );
        self
    }

    /// Asserts stderr contains `needle`.
    #[track_caller]
    fn stderr_has(&self, needle: &str) -> &Out {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}: {self}"
        );
        self
    }

    /// Stdout parsed as JSON.
    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self}"))
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` exited {}\n--- stdout ---\n{}--- stderr ---\n{}---",
            self.cmd, self.code, self.stdout, self.stderr
        )
    }
}

/// The global options of one invocation.
#[derive(Debug, Clone)]
struct Globals {
    url: String,
    transactions: String,
    accounts: String,
    locks: String,
    log: PathBuf,
}

impl Globals {
    fn args(&self) -> Vec<String> {
        vec![
            "--url".into(),
            self.url.clone(),
            "--transactions-index".into(),
            self.transactions.clone(),
            "--accounts-index".into(),
            self.accounts.clone(),
            "--locks-index".into(),
            self.locks.clone(),
            "--log-file".into(),
            self.log.display().to_string(),
        ]
    }

    /// The binary with these options, a clean environment and no stdin.
    fn command(&self, envs: &[(&str, &str)], args: &[&str]) -> (Command, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        for var in ESTX_ENV {
            c.env_remove(var);
        }
        for (k, v) in envs {
            c.env(k, v);
        }
        c.args(self.args()).args(args).stdin(Stdio::null());
        (c, format!("estx-tui {}", args.join(" ")))
    }

    /// Runs the binary to completion; asserts no panic reached the user.
    fn run_env(&self, envs: &[(&str, &str)], args: &[&str]) -> Out {
        let (mut c, cmd) = self.command(envs, args);
        let output = c.output().expect("run estx-tui");
        let out = Out {
            cmd,
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert_no_panic(&out);
        out
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_env(&[], args)
    }
}

#[track_caller]
fn assert_no_panic(out: &Out) {
    assert!(out.code >= 0, "killed by a signal: {out}");
    assert!(
        !out.stdout.contains("panicked") && !out.stderr.contains("panicked"),
        "a panic reached the user: {out}"
    );
    assert!(
        !out.stderr.contains("RUST_BACKTRACE"),
        "a panic reached the user: {out}"
    );
}

/// One test's world: unique indices on the shared server, a temp log file,
/// and a library handle for seeding and inspection.
struct World {
    g: Globals,
    ix: TestIndices,
    rt: tokio::runtime::Runtime,
    proto: Protocol,
    _dir: tempfile::TempDir,
}

impl World {
    /// Unique indices, created with the shipped mappings.
    fn new() -> World {
        let w = World::bare();
        w.block(w.proto.ensure_indices()).unwrap();
        w
    }

    /// Unique index names; nothing created.
    fn bare() -> World {
        let server = TestServer::shared();
        let ix = TestIndices::unique();
        let dir = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let config = ProtocolConfig {
            indices: Indices {
                transactions: ix.transactions.clone(),
                accounts: ix.accounts.clone(),
                locks: ix.locks.clone(),
            },
            ..ProtocolConfig::default()
        };
        let proto = rt.block_on(async {
            Protocol::new(
                Cluster::connect(&ConnectOptions::new(server.url())).unwrap(),
                config,
            )
        });
        World {
            g: Globals {
                url: server.url().to_string(),
                transactions: ix.transactions.clone(),
                accounts: ix.accounts.clone(),
                locks: ix.locks.clone(),
                log: dir.path().join("estx-tui.log"),
            },
            ix,
            rt,
            proto,
            _dir: dir,
        }
    }

    fn block<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    fn run(&self, args: &[&str]) -> Out {
        self.g.run(args)
    }

    fn url(&self, index: &str, rest: &str) -> String {
        format!("{}/{index}/{rest}", self.g.url)
    }

    /// Writes a raw document (and checks the server took it).
    fn put(&self, index: &str, id: &str, doc: &Value) {
        let (status, body) = common::http(
            "PUT",
            &self.url(index, &format!("_doc/{id}")),
            Some(&doc.to_string()),
        );
        assert!(
            (200..300).contains(&status),
            "PUT {index}/{id}: {status} {body}"
        );
    }

    /// The `_source` of a document, `None` when it does not exist.
    fn source(&self, index: &str, id: &str) -> Option<Value> {
        let (status, body) = common::http("GET", &self.url(index, &format!("_doc/{id}")), None);
        match status {
            404 => None,
            200 => {
                let v: Value = serde_json::from_str(&body).unwrap();
                (v["found"] == json!(true)).then(|| v["_source"].clone())
            }
            other => panic!("GET {index}/{id}: {other} {body}"),
        }
    }

    fn account(&self, id: &str, balance: i64) {
        self.put(
            &self.ix.accounts,
            id,
            &json!({"balance": balance, "pending_transactions": []}),
        );
    }

    fn acct(&self, id: &str) -> Value {
        self.source(&self.ix.accounts, id)
            .unwrap_or_else(|| panic!("account {id} missing"))
    }

    fn balance(&self, id: &str) -> i64 {
        self.acct(id)["balance"].as_i64().unwrap()
    }

    fn pending(&self, id: &str) -> Vec<String> {
        self.acct(id)["pending_transactions"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }

    fn txn(&self, id: &str) -> Value {
        self.source(&self.ix.transactions, id)
            .unwrap_or_else(|| panic!("transaction {id} missing"))
    }

    fn state(&self, id: &str) -> String {
        self.txn(id)["transaction_state"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// A transfer of `amount` from `src` to `dest` whose worker "died" after
    /// `k` core steps (0: created, 1-3: pending, 4-6: committed).
    fn stage(&self, id: &str, src: &str, dest: &str, amount: i64, k: usize) {
        let req = NewTransfer {
            id: Some(id.into()),
            src: src.into(),
            dest: dest.into(),
            amount,
        };
        let report = self.block(
            self.proto
                .transfer(&req, false, RunLimits { max_steps: Some(k) }),
        );
        assert!(
            matches!(report.verdict, Verdict::Stopped(_)),
            "{id}: {:?}",
            report.verdict
        );
        assert_eq!(report.steps.len(), k, "{id}: {:#?}", report.steps);
    }

    /// A rollback of `id` (forced) stopped after `k` steps: `terminating`.
    fn stage_terminating(&self, id: &str, k: usize) {
        let report = self.block(self.proto.run_procedure(
            id,
            Procedure::Rollback,
            true,
            RunLimits { max_steps: Some(k) },
        ));
        assert!(
            matches!(report.verdict, Verdict::Stopped(_)),
            "{id}: {:?}",
            report.verdict
        );
        assert_eq!(self.state(id), "terminating");
    }

    /// Sets the transaction's `modification_time` `minutes` into the past.
    fn backdate(&self, id: &str, minutes: i64) {
        let mut src = self.txn(id);
        src["modification_time"] = json!(ago(minutes));
        self.put(&self.ix.transactions, id, &src);
    }

    fn refresh(&self) {
        for index in [&self.ix.transactions, &self.ix.accounts, &self.ix.locks] {
            common::refresh(&self.g.url, index);
        }
    }

    /// Documents in an index (after a refresh).
    fn count(&self, index: &str) -> u64 {
        common::refresh(&self.g.url, index);
        let (status, body) = common::http("GET", &self.url(index, "_count"), None);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).unwrap()["count"]
            .as_u64()
            .unwrap()
    }

    fn counts(&self) -> [u64; 3] {
        [
            self.count(&self.ix.transactions),
            self.count(&self.ix.accounts),
            self.count(&self.ix.locks),
        ]
    }
}

/// RFC 3339 timestamp `minutes` ago (negative: in the future).
fn ago(minutes: i64) -> String {
    format_timestamp(Utc::now() - ChronoDuration::minutes(minutes))
}

fn ids(rows: &Value) -> BTreeSet<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(ToString::to_string).collect()
}

// ---------------------------------------------------------------------------
// init and transfer
// ---------------------------------------------------------------------------

#[test]
fn init_creates_the_indices_and_is_idempotent() {
    let w = World::bare();
    let first = w.run(&["init"]);
    first.code(0);
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks] {
        first.stdout_has(&format!("{index}: created"));
        let (status, body) = common::http("HEAD", &w.url(index, ""), None);
        assert_eq!(status, 200, "{index} after init: {body}");
    }
    let second = w.run(&["init"]);
    second.code(0);
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks] {
        second.stdout_has(&format!("{index}: already exists"));
    }
    assert!(!second.stdout.contains("created"), "{second}");
}

#[test]
fn transfer_runs_the_seven_core_steps() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let out = w.run(&["transfer", "A", "B", "100", "--id", "t1"]);
    out.code(0).stdout_has("t1").stdout_has("finished");
    let steps: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("core "))
        .collect();
    assert_eq!(steps.len(), 7, "{out}");
    for (i, line) in steps.iter().enumerate() {
        assert!(
            line.trim_start().starts_with(&format!("core {}:", i + 1)),
            "{out}"
        );
        assert!(line.contains("updated"), "{out}");
    }
    assert!(out.stderr.is_empty(), "{out}");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());
    assert_eq!(w.state("t1"), "finished");
    // Logs go to --log-file, never to the terminal.
    let log = std::fs::read_to_string(&w.g.log).unwrap_or_default();
    assert!(!log.is_empty(), "nothing logged to {}", w.g.log.display());

    // A generated id works as well.
    let out = w.run(&["transfer", "B", "A", "50"]);
    out.code(0).stdout_has("completed: transaction is finished");
    assert_eq!((w.balance("A"), w.balance("B")), (450, 550));
}

#[test]
fn invalid_transfers_are_refused_without_writing() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);

    // Same account: the library refuses (Error::Invalid), exit 1 with why.
    let out = w.run(&["transfer", "A", "A", "5", "--id", "same"]);
    out.code(1).stderr_has("both `A`");
    assert!(w.source(&w.ix.transactions, "same").is_none());

    // Unknown account: exit 1 naming it.
    let out = w.run(&["transfer", "A", "nope", "5", "--id", "nope1"]);
    out.code(1).stderr_has("`nope`").stderr_has("not found");
    assert!(w.source(&w.ix.transactions, "nope1").is_none());

    // Non-positive amounts are usage errors (clap's range check).
    for amount in ["0", "-5"] {
        let out = w.run(&["transfer", "A", "B", amount, "--id", "zero"]);
        out.code(2).stderr_has("AMOUNT");
        assert!(w.source(&w.ix.transactions, "zero").is_none());
    }
    let out = w.run(&["transfer", "A", "B", "lots"]);
    out.code(2);
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));
}

#[test]
fn transfer_with_an_existing_id_changes_nothing() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100", "--id", "X"]).code(0);
    let before = (w.acct("A"), w.acct("B"), w.txn("X"));
    let again = w.run(&["transfer", "A", "B", "100", "--id", "X"]);
    again.code(1).stderr_has("already exists");
    assert!(!again.stdout.contains("core 1"), "{again}");
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("X")), before);
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
}

#[test]
fn transfer_with_locks_takes_and_releases_both() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let out = w.run(&["transfer", "A", "B", "25", "--locks", "--id", "L"]);
    out.code(0)
        .stdout_has("holding locks on both accounts")
        .stdout_has("completed: transaction is finished");
    let count = |what: &str| {
        out.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        (count("acquire lock"), count("core "), count("release lock")),
        (2, 7, 2),
        "{out}"
    );
    assert_eq!((w.balance("A"), w.balance("B")), (475, 525));
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
    w.refresh();
    w.run(&["locks"]).code(0).stdout_has("no locks held");
}

// ---------------------------------------------------------------------------
// list and show
// ---------------------------------------------------------------------------

#[test]
fn list_json_shape_and_filters() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.run(&["transfer", "A", "B", "10", "--id", "done"]).code(0);
    w.stage("half", "C", "D", 20, 2); // pending, fresh
    w.stage("old", "A", "C", 30, 0); // created, two hours old
    w.backdate("old", 120);
    w.put(
        &w.ix.transactions,
        "bad",
        &json!({"transaction_state": "pending", "dest_acct": "B", "modification_time": ago(0)}),
    );
    w.refresh();

    let out = w.run(&["list", "--json"]);
    out.code(0);
    let rows = out.json();
    let arr = rows.as_array().expect("list --json prints an array");
    assert_eq!(ids(&rows), set(&["done", "half", "old", "bad"]), "{out}");
    for row in arr {
        for key in [
            "id",
            "state",
            "src_acct",
            "dest_acct",
            "amount",
            "modification_time",
            "age_seconds",
            "stuck",
            "needs_investigation",
            "problems",
        ] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
        assert!(row["problems"].is_array(), "{row}");
    }
    // Oldest modification first.
    assert_eq!(arr[0]["id"], "old", "{out}");
    let by_id = |id: &str| arr.iter().find(|r| r["id"] == id).unwrap().clone();
    let old = by_id("old");
    assert_eq!(old["state"], "created");
    assert_eq!(
        (old["src_acct"].clone(), old["amount"].clone()),
        (json!("A"), json!(30))
    );
    assert!(old["age_seconds"].as_i64().unwrap() >= 7190, "{old}");
    assert_eq!(
        (old["stuck"].clone(), old["needs_investigation"].clone()),
        (json!(true), json!(true))
    );
    let half = by_id("half");
    assert_eq!(half["state"], "pending");
    assert_eq!(half["stuck"], false, "fresh is not stuck: {half}");
    assert_eq!(half["problems"], json!([]));
    let done = by_id("done");
    assert_eq!(
        (done["state"].clone(), done["stuck"].clone()),
        (json!("finished"), json!(false))
    );
    let bad = by_id("bad");
    let problems = bad["problems"].as_array().unwrap();
    assert!(!problems.is_empty(), "{bad}");
    let text = bad["problems"].to_string();
    assert!(
        text.contains("amount") && text.contains("src_acct"),
        "{bad}"
    );

    let out = w.run(&["list", "--json", "--state", "pending"]);
    out.code(0);
    let pending = out.json();
    assert_eq!(ids(&pending), set(&["half", "bad"]), "{out}");
    assert!(pending
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["state"] == "pending"));

    let out = w.run(&[
        "list", "--json", "--state", "created", "--state", "finished",
    ]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["old", "done"]), "{out}");

    let out = w.run(&["list", "--json", "--older-than", "1h"]);
    out.code(0);
    assert_eq!(ids(&out.json()), set(&["old"]), "{out}");

    let out = w.run(&["list", "--json", "--older-than", "3h"]);
    out.code(0);
    assert_eq!(out.json(), json!([]), "{out}");

    // The table: the same rows, `!!` on the old one, a summary line.
    let out = w.run(&["list"]);
    out.code(0)
        .stdout_has("4 transactions")
        .stdout_has("need investigation");
    let old_line = out.stdout.lines().find(|l| l.contains(" old ")).unwrap();
    assert!(old_line.starts_with("!!"), "{out}");

    let out = w.run(&["list", "--state", "terminating"]);
    out.code(0).stdout_has("no transactions match");

    let out = w.run(&["list", "--older-than", "soon"]);
    out.code(2);
}

#[test]
fn show_json_of_a_half_applied_transfer() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("half", "A", "B", 100, 2); // pending, applied to the source only

    let out = w.run(&["show", "half", "--json"]);
    out.code(0);
    let d = out.json();
    for key in ["transaction", "accounts", "locks", "next_step"] {
        assert!(d.get(key).is_some(), "{key} missing: {out}");
    }
    assert_eq!(d["transaction"]["id"], "half");
    assert_eq!(d["transaction"]["state"], "pending");
    assert_eq!(d["transaction"]["amount"], 100);
    let accounts = d["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 2, "{out}");
    for a in accounts {
        for key in [
            "id",
            "balance",
            "pending_transactions",
            "has_this_transaction",
        ] {
            assert!(a.get(key).is_some(), "{key} missing in {a}");
        }
    }
    assert_eq!(accounts[0]["id"], "A");
    assert_eq!(accounts[0]["balance"], 400);
    assert_eq!(accounts[0]["pending_transactions"], json!(["half"]));
    assert_eq!(accounts[0]["has_this_transaction"], true);
    assert_eq!(accounts[1]["id"], "B");
    assert_eq!(accounts[1]["balance"], 500);
    assert_eq!(accounts[1]["has_this_transaction"], false);
    assert_eq!(d["locks"], json!([]));
    let next = d["next_step"].as_str().expect("a next step");
    assert!(next.contains("apply to destination"), "{out}");
    assert_eq!(d["recover"]["ends_in"], "finished", "{out}");
    assert_eq!(d["rollback"]["ends_in"], "rolled-back", "{out}");

    let text = w.run(&["show", "half"]);
    text.code(0)
        .stdout_has("half")
        .stdout_has("pending")
        .stdout_has("next step")
        .stdout_has("apply to destination")
        .stdout_has("recover would:")
        .stdout_has("rollback would:");

    // Read-only: nothing changed.
    assert_eq!((w.balance("A"), w.balance("B")), (400, 500));
    assert_eq!(w.state("half"), "pending");

    for json_flag in [true, false] {
        let mut args = vec!["show", "nope"];
        if json_flag {
            args.push("--json");
        }
        let out = w.run(&args);
        out.code(1).stderr_has("`nope`").stderr_has("not found");
        assert!(out.stdout.is_empty(), "{out}");
    }
}

// ---------------------------------------------------------------------------
// rollback and recover
// ---------------------------------------------------------------------------

#[test]
fn rollback_respects_the_recovery_window_unless_forced() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("live", "A", "B", 100, 2);
    let before = (w.acct("A"), w.acct("B"), w.txn("live"));

    let out = w.run(&["rollback", "live"]);
    out.code(1)
        .stderr_has("recovery window")
        .stderr_has("--force");
    assert_eq!(
        (w.acct("A"), w.acct("B"), w.txn("live")),
        before,
        "a refusal changed something"
    );

    let out = w.run(&["recover", "live"]);
    out.code(1)
        .stderr_has("recovery window")
        .stderr_has("--force");
    assert_eq!(
        (w.acct("A"), w.acct("B"), w.txn("live")),
        before,
        "a refusal changed something"
    );

    let out = w.run(&["rollback", "live", "--force"]);
    out.code(0).stdout_has("rolled-back");
    assert_eq!(w.state("live"), "rolled-back");
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());

    // Once rolled back, both commands have nothing to do.
    w.run(&["rollback", "live"])
        .code(0)
        .stdout_has("nothing to do");
    w.run(&["recover", "live", "--force"])
        .code(0)
        .stdout_has("nothing to do");

    w.run(&["rollback", "nope"]).code(1).stderr_has("`nope`");
}

#[test]
fn rollback_refuses_committed_and_has_nothing_to_do_when_finished() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("com", "A", "B", 100, 4); // committed
    w.backdate("com", 10);
    let before = (w.acct("A"), w.acct("B"), w.txn("com"));
    for force in [false, true] {
        let mut args = vec!["rollback", "com"];
        if force {
            args.push("--force");
        }
        let out = w.run(&args);
        out.code(1).stderr_has("committed");
        assert_eq!((w.acct("A"), w.acct("B"), w.txn("com")), before);
    }

    // Recovery finishes it (three steps from committed).
    let out = w.run(&["recover", "com"]);
    out.code(0)
        .stdout_has("finished")
        .stdout_has("was committed");
    assert_eq!(w.state("com"), "finished");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));

    w.run(&["transfer", "B", "A", "50", "--id", "fin"]).code(0);
    let before = (w.acct("A"), w.acct("B"), w.txn("fin"));
    let out = w.run(&["rollback", "fin"]);
    out.code(0)
        .stdout_has("nothing to do")
        .stdout_has("finished");
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("fin")), before);
}

#[test]
fn recover_one_transaction_with_force() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("r", "A", "B", 100, 3); // pending, applied to both
    let out = w.run(&["recover", "r", "--force"]);
    out.code(0)
        .stdout_has("completed: transaction is finished")
        .stdout_has("was pending");
    assert!(out.stdout.contains("core 4"), "{out}");
    assert_eq!(w.state("r"), "finished");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());

    w.run(&["recover", "r"]).code(0).stdout_has("nothing to do");
    w.run(&["recover", "nope", "--force"])
        .code(1)
        .stderr_has("`nope`");
}

#[test]
fn recover_all_stuck_finishes_every_stuck_transaction() {
    let w = World::new();
    for a in ["A", "B", "C", "D", "E", "F"] {
        w.account(a, 1000);
    }
    w.stage("s-created", "A", "B", 10, 0);
    w.stage("s-pending", "B", "C", 20, 2);
    w.stage("s-committed", "C", "D", 30, 5);
    w.stage("s-terminating", "D", "E", 40, 3);
    w.stage_terminating("s-terminating", 2);
    for id in ["s-created", "s-pending", "s-committed", "s-terminating"] {
        w.backdate(id, 10);
    }
    w.stage("fresh", "E", "F", 50, 2); // within the window: left alone
    w.refresh();

    let out = w.run(&["recover", "--all-stuck", "--concurrency", "2"]);
    out.code(0)
        .stdout_has("4 stuck transactions")
        .stdout_has("4 completed");
    for id in ["s-created", "s-pending", "s-committed", "s-terminating"] {
        assert!(
            out.stdout.contains(&format!("{id}: completed")),
            "{id}: {out}"
        );
    }
    assert!(!out.stdout.contains("fresh"), "{out}");
    assert_eq!(w.state("s-created"), "finished");
    assert_eq!(w.state("s-pending"), "finished");
    assert_eq!(w.state("s-committed"), "finished");
    assert_eq!(w.state("s-terminating"), "rolled-back");
    assert_eq!(w.state("fresh"), "pending");
    let balances: Vec<i64> = ["A", "B", "C", "D", "E", "F"]
        .iter()
        .map(|a| w.balance(a))
        .collect();
    // A->B 10, B->C 20, C->D 30 finished; D->E rolled back; E->F half applied.
    assert_eq!(balances, vec![990, 990, 990, 1030, 950, 1000]);
    assert_eq!(w.pending("E"), vec!["fresh".to_string()]);

    // Nothing stuck any more.
    w.refresh();
    let out = w.run(&["recover", "--all-stuck"]);
    out.code(0).stdout_has("nothing to do");
}

#[test]
fn malformed_and_unknown_transactions_are_refused() {
    let w = World::new();
    w.account("B", 500);
    w.put(
        &w.ix.transactions,
        "bad",
        &json!({"transaction_state": "pending", "dest_acct": "B", "modification_time": ago(600)}),
    );
    w.put(
        &w.ix.transactions,
        "odd",
        &json!({"transaction_state": "paused", "src_acct": "B", "dest_acct": "C", "amount": 5,
                "modification_time": ago(600)}),
    );
    let before = (w.txn("bad"), w.txn("odd"), w.acct("B"));

    // show still shows it, with its problems and no next step.
    let out = w.run(&["show", "bad", "--json"]);
    out.code(0);
    let d = out.json();
    assert!(
        !d["transaction"]["problems"].as_array().unwrap().is_empty(),
        "{out}"
    );
    assert_eq!(d["next_step"], Value::Null, "{out}");
    w.run(&["show", "odd"]).code(0).stdout_has("paused");

    for cmd in ["rollback", "recover"] {
        for force in [false, true] {
            let mut args = vec![cmd, "bad"];
            if force {
                args.push("--force");
            }
            w.run(&args).code(1).stderr_has("malformed");
            args[1] = "odd";
            w.run(&args).code(1).stderr_has("unknown state `paused`");
        }
    }
    w.refresh();
    let out = w.run(&["recover", "--all-stuck"]);
    out.code(1)
        .stdout_has("1 refused")
        .stderr_has("bad: refused");
    let out = w.run(&["audit", "--json"]);
    out.code(1);
    let kinds: BTreeSet<String> = out.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(
        kinds.contains("malformed_transaction") && kinds.contains("unknown_state"),
        "{out}"
    );
    assert_eq!(
        (w.txn("bad"), w.txn("odd"), w.acct("B")),
        before,
        "a refusal changed something"
    );
}

#[test]
fn recover_needs_exactly_one_target() {
    let w = World::new();
    let out = w.run(&["recover"]);
    out.code(2);
    assert!(out.stdout.is_empty(), "{out}");
    w.run(&["recover", "t1", "--all-stuck"]).code(2);
    w.run(&["recover", "--all-stuck", "--force"]).code(2);
    w.run(&["recover", "t1", "--concurrency", "2"]).code(2);
    w.run(&["recover", "--all-stuck", "--concurrency", "0"])
        .code(2);
}

// ---------------------------------------------------------------------------
// locks and release-lock
// ---------------------------------------------------------------------------

#[test]
fn locks_and_release_lock() {
    let w = World::new();
    for a in ["A", "B", "D", "E"] {
        w.account(a, 500);
    }
    w.stage("live", "A", "B", 100, 2);
    w.run(&["transfer", "D", "E", "10", "--id", "fin"]).code(0);
    let lock = |resource: &str, owner: &str, created_min_ago: i64| {
        w.put(
            &w.ix.locks,
            resource,
            &json!({"owner": owner, "process_id": "worker-1", "created_at": ago(created_min_ago),
                    "expires_at": ago(-60)}),
        );
    };
    lock("A", "live", 1); // owner pending: live
    lock("C", "ghost", 30); // owner does not exist: stale
    lock("D", "fin", 20); // owner finished: stale
    lock("E", "fin", 20);
    w.refresh();

    let out = w.run(&["locks", "--json"]);
    out.code(0);
    let rows = out.json();
    let arr = rows.as_array().expect("locks --json prints an array");
    assert_eq!(arr.len(), 4, "{out}");
    for row in arr {
        for key in ["resource", "owner", "age_seconds", "stale"] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
    }
    let by = |r: &str| arr.iter().find(|x| x["resource"] == r).unwrap().clone();
    assert_eq!(
        (by("A")["owner"].clone(), by("A")["stale"].clone()),
        (json!("live"), json!(false))
    );
    assert!(by("A")["age_seconds"].as_i64().unwrap() >= 50, "{out}");
    assert_eq!(by("C")["stale"], true, "{out}");
    assert_eq!(by("D")["stale"], true, "{out}");
    // Oldest first.
    assert_eq!(arr[0]["resource"], "C", "{out}");

    let out = w.run(&["locks"]);
    out.code(0).stdout_has("4 locks: 3 stale");

    // A live lock is refused without --force.
    let out = w.run(&["release-lock", "A"]);
    out.code(1).stderr_has("--force").stderr_has("`A`");
    assert!(w.source(&w.ix.locks, "A").is_some());
    let out = w.run(&["release-lock", "--txn", "live"]);
    out.code(1).stderr_has("--force");
    assert!(w.source(&w.ix.locks, "A").is_some());

    // A stale one is released.
    let out = w.run(&["release-lock", "C"]);
    out.code(0).stdout_has("C: released");
    assert!(w.source(&w.ix.locks, "C").is_none());

    // --force releases a live one.
    let out = w.run(&["release-lock", "A", "--force"]);
    out.code(0).stdout_has("A: released");
    assert!(w.source(&w.ix.locks, "A").is_none());

    // --txn releases every lock of the transaction.
    let out = w.run(&["release-lock", "--txn", "fin"]);
    out.code(0)
        .stdout_has("D: released")
        .stdout_has("E: released");
    assert!(w.source(&w.ix.locks, "D").is_none() && w.source(&w.ix.locks, "E").is_none());

    // Nothing held: nothing to do.
    w.run(&["release-lock", "A"]).code(0).stdout_has("not held");
    w.refresh();
    w.run(&["release-lock", "--txn", "fin"])
        .code(0)
        .stdout_has("no locks held");
    w.run(&["locks", "--json"]).code(0);
    assert_eq!(w.run(&["locks", "--json"]).json(), json!([]));
    w.run(&["locks"]).code(0).stdout_has("no locks held");
    // The transfer's documents were not touched by any of it.
    assert_eq!(w.state("live"), "pending");
    assert_eq!(w.balance("A"), 400);
}

#[test]
fn release_lock_with_txn_and_force_releases_live_locks() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("live", "A", "B", 100, 2);
    for r in ["A", "B"] {
        w.put(
            &w.ix.locks,
            r,
            &json!({"owner": "live", "process_id": "worker-1", "created_at": ago(0), "expires_at": ago(-60)}),
        );
    }
    w.refresh();
    let out = w.run(&["release-lock", "--txn", "live", "--force"]);
    out.code(0)
        .stdout_has("A: released")
        .stdout_has("B: released");
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
}

#[test]
fn release_lock_needs_exactly_one_target() {
    let w = World::new();
    w.run(&["release-lock", "A", "--txn", "t"]).code(2);
    w.run(&["release-lock"]).code(2);
    w.run(&["release-lock", "--force"]).code(2);
}

// ---------------------------------------------------------------------------
// audit
// ---------------------------------------------------------------------------

#[test]
fn audit_of_a_clean_world() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100"]).code(0);
    w.refresh();

    let out = w.run(&["audit", "--json"]);
    out.code(0);
    let r = out.json();
    assert_eq!(r["findings"], json!([]), "{out}");
    assert_eq!(r["total_balance"], 1000, "{out}");

    w.run(&["audit", "--expect-total", "1000"])
        .code(0)
        .stdout_has("no findings")
        .stdout_has("1000");

    let out = w.run(&["audit", "--json", "--expect-total", "999"]);
    out.code(1);
    let r = out.json();
    let kinds: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["total_mismatch"], "{out}");

    w.run(&["audit", "--expect-total", "-3"])
        .code(1)
        .stdout_has("total_mismatch");
}

#[test]
fn audit_finds_and_repairs_a_dangling_pending_entry() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("rb", "A", "B", 100, 2);
    w.run(&["rollback", "rb", "--force"]).code(0);
    assert_eq!(w.state("rb"), "rolled-back");
    // A late, unfenced writer applies the rolled-back transfer to A again.
    w.put(
        &w.ix.accounts,
        "A",
        &json!({"balance": 400, "pending_transactions": ["rb"]}),
    );
    w.refresh();

    let out = w.run(&["audit", "--json"]);
    out.code(1);
    let r = out.json();
    let findings = r["findings"].as_array().unwrap();
    let dangling = findings
        .iter()
        .find(|f| f["kind"] == "dangling_pending")
        .unwrap_or_else(|| panic!("no dangling_pending: {out}"));
    assert_eq!(dangling["id"], "A", "{out}");
    assert!(dangling["detail"].as_str().unwrap().contains("rb"), "{out}");
    assert_eq!(r["total_balance"], 900, "{out}");

    // The text form names it too.
    w.run(&["audit"]).code(1).stdout_has("dangling_pending");

    let out = w.run(&["audit", "--json", "--repair"]);
    out.code(0);
    let r = out.json();
    assert_eq!(r["findings"], json!([]), "{out}");
    assert_eq!(r["repairs"].as_array().map(Vec::len), Some(1), "{out}");
    assert_eq!(r["total_balance"], 1000, "{out}");
    assert_eq!(w.balance("A"), 500);
    assert!(w.pending("A").is_empty());

    w.refresh();
    let out = w.run(&["audit", "--json", "--expect-total", "1000"]);
    out.code(0);
    assert_eq!(out.json()["findings"], json!([]), "{out}");
}

// ---------------------------------------------------------------------------
// connection and usage errors
// ---------------------------------------------------------------------------

#[test]
fn an_unreachable_cluster_exits_3() {
    let w = World::bare();
    let mut g = w.g.clone();
    g.url = "http://127.0.0.1:9".into();
    let started = Instant::now();
    let out = g.run(&["list"]);
    out.code(3).stderr_has("unreachable");
    assert!(out.stdout.is_empty(), "{out}");
    assert!(started.elapsed() < Duration::from_secs(15), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    let w = World::bare();
    w.run(&["frobnicate"]).code(2);
    w.run(&["list", "--frobnicate"]).code(2);
    w.run(&["show"]).code(2);
    w.run(&["list", "--timeout", "soon"]).code(2);
    let help = w.run(&["--help"]);
    help.code(0)
        .stdout_has("release-lock")
        .stdout_has("ESTX_PASSWORD");
}

#[test]
fn a_missing_index_points_at_init() {
    let w = World::new();
    let mut g = w.g.clone();
    g.transactions = format!("{}nosuch", w.ix.prefix);
    let out = g.run(&["list"]);
    assert_ne!(out.code, 0, "{out}");
    out.stderr_has("estx-tui init");
    // README: 3 for a cluster error "including a missing index".
    out.code(3);
    g.run(&["show", "x"]).code(3).stderr_has("estx-tui init");
}

#[test]
fn a_user_without_a_password_is_refused() {
    let w = World::new();
    let out = w.g.run(&["--user", "u", "list"]);
    out.code(1).stderr_has("ESTX_PASSWORD");
    // An empty password counts as none.
    let out =
        w.g.run_env(&[("ESTX_PASSWORD", "")], &["--user", "u", "list"]);
    out.code(1).stderr_has("ESTX_PASSWORD");
}

// ---------------------------------------------------------------------------
// seed and demo
// ---------------------------------------------------------------------------

#[test]
fn seed_refuses_to_mix_with_existing_data_unless_forced() {
    let w = World::bare();
    let out = w.run(&["seed"]);
    out.code(0).stdout_has("seeded 8 accounts");
    let listed = out
        .stdout
        .lines()
        .filter(|l| IN_FLIGHT.iter().any(|s| l.trim_start().starts_with(s)))
        .count();
    assert!(listed > 0, "no transactions listed: {out}");
    let counts = w.counts();
    assert!(counts[0] > 0 && counts[1] >= 8, "{counts:?}");

    let again = w.run(&["seed"]);
    assert_ne!(again.code, 0, "{again}");
    again.code(1).stderr_has("already holds");
    assert_eq!(w.counts(), counts, "a refused seed wrote something");

    let forced = w.run(&["seed", "--force"]);
    forced.code(0).stdout_has("seeded");
    assert!(w.count(&w.ix.transactions) > counts[0]);

    w.refresh();
    w.run(&["list", "--json"]).code(0);
}

/// `(pid, args)` of every running osmem-server.
fn osmem_processes() -> Vec<(u32, String)> {
    let out = Command::new("ps")
        .args(["-A", "-o", "pid=", "-o", "args="])
        .output()
        .expect("run ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("osmem-server"))
        .filter_map(|l| {
            let l = l.trim_start();
            let (pid, args) = l.split_once(' ')?;
            Some((pid.parse().ok()?, args.trim().to_string()))
        })
        .collect()
}

/// Whether `args` carry `-parent-pid <pid>`.
fn has_parent(args: &str, pid: u32) -> bool {
    let words: Vec<&str> = args.split_whitespace().collect();
    words
        .windows(2)
        .any(|w| w[0].trim_start_matches('-') == "parent-pid" && w[1] == pid.to_string())
}

#[test]
fn demo_without_ui_runs_and_leaves_no_server_behind() {
    let w = World::bare();
    let (mut c, cmd) = w.g.command(&[], &["demo", "--no-ui", "--for", "3s"]);
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn estx-tui demo");
    let demo_pid = child.id();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));

    // While it runs, its own server (started with -parent-pid <demo>) exists.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen_server: Option<u32> = None;
    let status = loop {
        if seen_server.is_none() {
            seen_server = osmem_processes()
                .into_iter()
                .find(|(_, args)| has_parent(args, demo_pid))
                .map(|(p, _)| p);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("demo --no-ui --for 3s still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = Out {
        cmd,
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    assert_no_panic(&out);
    out.code(0).stdout_has("transactions by state:");
    let summary = out
        .stdout
        .lines()
        .find(|l| l.starts_with("transactions by state:"))
        .unwrap();
    assert!(
        IN_FLIGHT.iter().any(|s| summary.contains(&format!("{s} "))),
        "no non-terminal state in the summary: {out}"
    );
    let server = seen_server
        .unwrap_or_else(|| panic!("never saw an osmem-server with -parent-pid {demo_pid}: {out}"));

    // Nothing it started survives it.
    let after = osmem_processes();
    let left: Vec<&(u32, String)> = after
        .iter()
        .filter(|(p, args)| *p == server || has_parent(args, demo_pid))
        .collect();
    assert!(
        left.is_empty(),
        "demo left servers running: {left:?}\n{out}"
    );
    // Its URL no longer answers.
    if let Some(url) = out
        .stdout
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
    {
        let url = url.trim_end_matches(';');
        assert!(
            common::try_http("GET", &format!("{url}/"), None).is_err(),
            "the demo cluster at {url} still answers"
        );
    }
    // The demo never touched the cluster at --url.
    let (status, _) = common::http("HEAD", &w.url(&w.ix.transactions, ""), None);
    assert_eq!(status, 404);
}
