//! The article's own deployment: only `transactions` and `accounts`, no
//! locks index, no audit index, and an operator who may not create
//! indices. With `--audit-trail file:PATH` and no `init`, its stuck
//! transactions are repaired and nothing is created on the cluster; only
//! `transfer --locks` needs the locks index, and a `--locks-index` the
//! operator names that does not exist is still refused as a mistake.
//!
//! The deployment uses the default index names (only the default locks
//! index's absence means "no locks"), so it runs on a server of its own.

use super::*;

/// The article's mappings (`src_account`/`dest_account`, as its listing
/// maps them; documents written by its code use `src_acct`/`dest_acct`).
const TRANSACTIONS: &str = r#"{"mappings":{"properties":{"src_account":{"type":"keyword"},"dest_account":{"type":"keyword"},"amount":{"type":"long"},"transaction_state":{"type":"keyword"},"modification_time":{"type":"date"}}}}"#;
const ACCOUNTS: &str = r#"{"mappings":{"properties":{"balance":{"type":"long"},"pending_transactions":{"type":"keyword"}}}}"#;

/// A server holding the article's two indices, and where the binary logs
/// and records.
struct Article {
    server: TestServer,
    dir: tempfile::TempDir,
}

impl Article {
    fn new() -> Article {
        let a = Article {
            server: TestServer::start(),
            dir: tempfile::tempdir().unwrap(),
        };
        for (index, body) in [("transactions", TRANSACTIONS), ("accounts", ACCOUNTS)] {
            let (s, b) = common::http("PUT", &a.url(index), Some(body));
            assert_eq!(s, 200, "{b}");
        }
        a
    }

    fn url(&self, rest: &str) -> String {
        format!("{}/{rest}", self.server.url())
    }

    fn put(&self, index: &str, id: &str, doc: Value) {
        let (s, b) = common::http(
            "PUT",
            &self.url(&format!("{index}/_doc/{id}")),
            Some(&doc.to_string()),
        );
        assert!((200..300).contains(&s), "{b}");
    }

    fn source(&self, index: &str, id: &str) -> Value {
        let (s, b) = common::http("GET", &self.url(&format!("{index}/_doc/{id}")), None);
        assert_eq!(s, 200, "{b}");
        serde_json::from_str::<Value>(&b).unwrap()["_source"].clone()
    }

    /// A transaction stuck in `state` ten minutes ago, its source debited
    /// (and its destination credited when `committed`), as the article's
    /// code leaves it.
    fn stuck(&self, id: &str, src: &str, dest: &str, state: &str) {
        let credited = state == "committed";
        self.put(
            "accounts",
            src,
            json!({"balance": 400, "pending_transactions": [id]}),
        );
        self.put(
            "accounts",
            dest,
            json!({"balance": if credited { 600 } else { 500 },
                "pending_transactions": if credited { vec![id] } else { vec![] }}),
        );
        self.put(
            "transactions",
            id,
            json!({"src_acct": src, "dest_acct": dest, "amount": 100,
                "transaction_state": state, "modification_time": ago(10)}),
        );
    }

    /// The names of every index on the cluster, sorted.
    fn indices(&self) -> Vec<String> {
        let (s, b) = common::http("GET", &self.url("_cat/indices?h=index&format=json"), None);
        assert_eq!(s, 200, "{b}");
        let rows: Vec<Value> = serde_json::from_str(&b).unwrap();
        let mut v: Vec<String> = rows
            .iter()
            .map(|r| r["index"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    }

    fn refresh(&self) {
        let (s, b) = common::http("POST", &self.url("_refresh"), None);
        assert_eq!(s, 200, "{b}");
    }

    fn trail(&self) -> PathBuf {
        self.dir.path().join("trail.jsonl")
    }

    /// The binary with the default index names (no `--locks-index`), a
    /// file trail, and `extra` before the command's own arguments.
    fn run_with(&self, extra: &[&str], args: &[&str]) -> Out {
        let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        for var in ESTX_ENV {
            c.env_remove(var);
        }
        let log = self.dir.path().join("estx-tui.log").display().to_string();
        let trail = format!("file:{}", self.trail().display());
        c.env("ESTX_REASON", "test harness")
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .args(["--url", self.server.url(), "--log-file", &log])
            .args(["--audit-trail", &trail])
            .args(extra)
            .args(args)
            .stdin(Stdio::null());
        let output = c.output().expect("run estx-tui");
        let out = Out {
            cmd: format!("estx-tui {} {}", extra.join(" "), args.join(" ")),
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert_no_panic(&out);
        out
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_with(&[], args)
    }
}

#[test]
fn the_articles_two_index_deployment_is_repaired_with_a_file_trail_and_no_init() {
    let a = Article::new();
    a.stuck("t1", "A", "B", "pending");
    a.stuck("t2", "C", "D", "pending");
    a.stuck("t3", "E", "F", "committed");
    a.stuck("t4", "G", "H", "pending");
    a.refresh();
    let before = a.indices();
    assert_eq!(before, ["accounts", "transactions"]);

    a.run(&["doctor"])
        .code(0)
        .stdout_has("`locks`: does not exist: this deployment takes no locks")
        .stdout_has("only `transfer --locks` is refused")
        .stdout_has("(--audit-trail): interventions are recorded there")
        .stdout_has("everything the tool needs works here");
    let doctor = a.run(&["doctor"]);
    assert!(
        !doctor.stdout.contains("is refused until it does"),
        "a file trail is no missing audit index: {doctor}"
    );
    a.run(&["locks"]).code(0).stdout_has("no locks index");
    a.run(&["recover", "--all-stuck", "--dry-run"])
        .code(0)
        .stdout_has("nothing to do, no locks index `locks`")
        .stdout_has("releases no lock (no locks index `locks`)");

    a.run(&["rollback", "t1"]).code(0);
    a.run(&["recover", "t2"]).code(0);
    a.refresh();
    a.run(&["recover", "--all-stuck"])
        .code(0)
        .stdout_has("2 completed");
    a.refresh();
    a.run(&["check"]).code(0);
    a.run(&["audit"]).code(0).stdout_has("no findings");

    let state = |id| a.source("transactions", id)["transaction_state"].clone();
    assert_eq!(state("t1"), json!("rolled-back"));
    for id in ["t2", "t3", "t4"] {
        assert_eq!(state(id), json!("finished"), "{id}");
    }
    let balance = |id| a.source("accounts", id)["balance"].as_i64().unwrap();
    assert_eq!((balance("A"), balance("B")), (500, 500), "rolled back");
    for (src, dest) in [("C", "D"), ("E", "F"), ("G", "H")] {
        assert_eq!((balance(src), balance(dest)), (400, 600), "{src} -> {dest}");
    }
    let records = std::fs::read_to_string(a.trail()).unwrap();
    assert!(records.lines().count() >= 3, "{records}");

    a.run(&["transfer", "--locks", "A", "B", "5"])
        .code(1)
        .stderr_has("the locks index `locks` does not exist")
        .stderr_has("`transfer --locks` is the one command");
    // The locks index named by the operator and absent: a typo or the
    // wrong cluster, refused before anything is written.
    a.put(
        "transactions",
        "t5",
        json!({"src_acct": "A", "dest_acct": "B", "amount": 100,
            "transaction_state": "pending", "modification_time": ago(10)}),
    );
    a.run_with(&["--locks-index", "locks"], &["rollback", "t5"])
        .code(1)
        .stderr_has("index `locks` does not exist");
    assert_eq!(state("t5"), json!("pending"));
    a.run_with(&["--locks-index", "lcks"], &["doctor"])
        .code(3)
        .stdout_has("locks index `lcks` does not exist");

    assert_eq!(a.indices(), before, "nothing created");
}
