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

#[path = "../common/mod.rs"]
mod common;

use chrono::{Duration as ChronoDuration, Utc};
use common::world::{ago, blocking_protocol, Kit, Lock, Payers, Stop};
use common::{tmux, TestIndices, TestServer};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::{Protocol, ProtocolConfig, Verdict};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
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
    "ESTX_BEARER_TOKEN",
    "ESTX_CLOUD_ID",
    "ESTX_AWS_SIGV4",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
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
    "ESTX_AUDIT_INDEX",
    "ESTX_ACKS_INDEX",
    "ESTX_AUDIT_TRAIL",
    "ESTX_PROFILE",
    "ESTX_REASON",
    // The HTTP client honours proxy variables: a developer's proxy must not
    // stand between the tests and the local server.
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
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
    audit: String,
    acks: String,
    log: PathBuf,
}

impl Globals {
    fn args(&self) -> Vec<String> {
        let ix = estx::protocol::Indices {
            transactions: self.transactions.clone(),
            accounts: self.accounts.clone(),
            locks: self.locks.clone(),
            audit: self.audit.clone(),
            acks: self.acks.clone(),
            locks_named: true,
        };
        common::server::binary_args(&self.url, &ix, &self.log)
    }

    /// The binary with these options, a clean environment and no stdin.
    fn command(&self, envs: &[(&str, &str)], args: &[&str]) -> (Command, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        for var in ESTX_ENV {
            c.env_remove(var);
        }
        // Interventions need a reason; tests about reasons override this.
        // No developer's config file (profiles) may leak in.
        // Nor may files the tool keeps (ids a stopped run left) land in the
        // developer's state directory.
        c.env("ESTX_REASON", "test harness")
            .env("XDG_CONFIG_HOME", self.log.with_file_name("config"))
            .env("XDG_STATE_HOME", self.log.with_file_name("state"));
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
    /// A pending transfer `t1` (A -> B, 100, both accounts at 500), ten
    /// minutes old: old enough for every intervention.
    pub fn stage_old_pending(&self) {
        self.account("A", 500);
        self.account("B", 500);
        self.stage("t1", "A", "B", 100, 2);
        self.backdate("t1", 10);
    }

    /// Up to `size` documents of `index` as hits (`_id`, `_source`), read
    /// from the server directly after a refresh: what the tests that look
    /// at stored documents read.
    fn stored_hits(&self, index: &str, size: usize) -> Vec<Value> {
        common::refresh(&self.g.url, index);
        let query = format!(r#"{{"size":{size},"query":{{"match_all":{{}}}}}}"#);
        let (status, body) = common::http("POST", &self.url(index, "_search"), Some(&query));
        assert_eq!(status, 200, "{body}");
        let mut v: Value = serde_json::from_str(&body).unwrap();
        match v["hits"]["hits"].take() {
            Value::Array(hits) => hits,
            other => panic!("no hits: {other}"),
        }
    }

    /// Every record in the audit index, read from the server directly
    /// (after a refresh), in the full form (`trail::unpacked`).
    fn audit_records(&self) -> Vec<Value> {
        self.stored_hits(&self.ix.audit, 100)
            .iter()
            .map(|h| match h["_source"].clone() {
                Value::Object(doc) => {
                    Value::Object(estx::protocol::trail::unpacked(doc).expect("readable record"))
                }
                other => other,
            })
            .collect()
    }

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
        let (rt, proto) = blocking_protocol(&ConnectOptions::new(server.url()), ix.indices());
        World {
            g: Globals {
                url: server.url().to_string(),
                transactions: ix.transactions.clone(),
                accounts: ix.accounts.clone(),
                locks: ix.locks.clone(),
                audit: ix.audit.clone(),
                acks: ix.acks.clone(),
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
        self.block(self.kit().account(id, balance));
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

    /// The world-building kit over this world's indices.
    fn kit(&self) -> Kit<'_> {
        Kit::new(&self.proto)
    }

    /// A transfer of `amount` from `src` to `dest` whose worker "died" after
    /// `k` core steps (0: created, 1-3: pending, 4-6: committed).
    fn stage(&self, id: &str, src: &str, dest: &str, amount: i64, k: usize) {
        self.block(self.kit().stop(&Stop::new(id, src, dest, amount, k)));
    }

    /// A rollback of `id` (forced) stopped after `k` steps: `terminating`.
    fn stage_terminating(&self, id: &str, k: usize) {
        self.block(self.kit().stop_rollback(id, k, true));
        assert_eq!(self.state(id), "terminating");
    }

    /// Sets the transaction's `modification_time` `minutes` into the past.
    fn backdate(&self, id: &str, minutes: i64) {
        self.block(self.kit().backdate(id, minutes));
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

mod acks;
mod audit;
mod blocks;
mod bulk;
mod bundle;
mod check;
mod connections;
mod coverage;
mod demo;
mod deployed;
mod errors;
mod export;
mod exporter;
mod first_contact;
mod inspect;
mod jobs;
mod jobs_forced;
mod jobs_list;
mod locks;
mod no_locks;
mod operators;
mod packaging;
mod plan_files;
mod procedures;
mod profile;
mod receipts;
mod rehearse;
mod reverse;
mod reverse_links;
mod same_plan;
mod same_record;
mod schema;
mod security;
mod timeline;
mod trail;
mod trail_lost_answers;
mod trail_pages;
mod transfer;
mod transport;
