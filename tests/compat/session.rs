//! One operator's session against a cluster at `url`, with the real binary
//! (and the library for seeding and the dashboard's poll). Stuck
//! transactions are made by the protocol itself (a transfer stopped after
//! `k` steps, as if its worker died there), then aged.

use super::common::proxy::{Difference, Personality};
pub use super::common::world::ago;
use super::common::world::{blocking_protocol, Kit, Stop};
use super::common::{self, unique_prefix};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::{Indices, Protocol};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};

/// Balance of every account at the start.
pub const BALANCE: i64 = 1000;
pub const ACCOUNTS: [&str; 6] = ["A", "B", "C", "D", "E", "F"];

/// What one run of the binary produced.
pub struct Out {
    pub cmd: String,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
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

impl Out {
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Out {
        assert_eq!(self.code, expected, "exit code of {self}");
        self
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self}"))
    }
}

pub struct Session {
    pub url: String,
    pub ix: Indices,
    label: String,
    /// Basic auth the binary and the library present (a secured cluster).
    user: Option<(String, String)>,
    /// Where the session's own set-up and checks (`http`) go: the cluster
    /// itself, or the server behind a secured proxy, as an administrator's
    /// requests would.
    helper_url: String,
    log: tempfile::TempDir,
    pub rt: tokio::runtime::Runtime,
    pub proto: Protocol,
    /// The protocol at `helper_url`, unauthenticated: the session's own
    /// set-up (accounts, backdating) goes through it.
    admin: Protocol,
}

impl Session {
    pub fn new(url: &str, label: &str) -> Session {
        Session::as_user(url, label, None, url)
    }

    /// A session whose binary and library authenticate as `user` (name,
    /// password); its own requests go to `helper_url`. Touches no network.
    pub fn as_user(
        url: &str,
        label: &str,
        user: Option<(&str, &str)>,
        helper_url: &str,
    ) -> Session {
        let prefix = unique_prefix();
        let ix = Indices {
            transactions: format!("{prefix}transactions"),
            accounts: format!("{prefix}accounts"),
            locks: format!("{prefix}locks"),
            audit: format!("{prefix}audit"),
            acks: format!("{prefix}acks"),
            locks_named: true,
        };
        let mut connect = ConnectOptions::new(url);
        connect.user = user.map(|(n, _)| n.to_string());
        connect.password = user.map(|(_, p)| p.to_string());
        let (rt, proto) = blocking_protocol(&connect, ix.clone());
        let admin = rt.block_on(async {
            let cluster = Cluster::connect(&ConnectOptions::new(helper_url)).unwrap();
            Protocol::new(cluster, proto.config().clone())
        });
        Session {
            url: url.to_string(),
            ix,
            label: label.to_string(),
            user: user.map(|(n, p)| (n.to_string(), p.to_string())),
            helper_url: helper_url.to_string(),
            log: tempfile::tempdir().unwrap(),
            rt,
            proto,
            admin,
        }
    }

    /// Runs the binary with this session's cluster and indices.
    pub fn run(&self, args: &[&str]) -> Out {
        let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        for (k, _) in std::env::vars() {
            if k.starts_with("ESTX_") || k.to_ascii_lowercase().ends_with("_proxy") {
                c.env_remove(k);
            }
        }
        let ix = &self.ix;
        c.env("ESTX_REASON", "compatibility suite")
            .env("XDG_CONFIG_HOME", self.log.path().join("config"))
            .args(["--url", &self.url])
            .args(["--transactions-index", &ix.transactions])
            .args(["--accounts-index", &ix.accounts])
            .args(["--locks-index", &ix.locks])
            .args(["--audit-index", &ix.audit])
            .args(["--acks-index", &ix.acks])
            .arg("--log-file")
            .arg(self.log.path().join("estx-tui.log"))
            .args(args)
            .stdin(Stdio::null());
        if let Some((name, password)) = &self.user {
            c.env("ESTX_USER", name).env("ESTX_PASSWORD", password);
        }
        let output = c.output().expect("run estx-tui");
        let out = Out {
            cmd: format!("[{}] estx-tui {}", self.label, args.join(" ")),
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(
            out.code >= 0 && !out.stderr.contains("panicked"),
            "crashed: {out}"
        );
        out
    }

    /// The five indices the tool reads and writes (the application's three,
    /// the audit and the acks index): what a role is granted on.
    pub fn index_names(&self) -> [&str; 5] {
        let ix = &self.ix;
        [
            &ix.transactions,
            &ix.accounts,
            &ix.locks,
            &ix.audit,
            &ix.acks,
        ]
        .map(String::as_str)
    }

    pub fn http(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let text = body.map(Value::to_string);
        let (status, answer) = common::http(
            method,
            &format!("{}/{path}", self.helper_url),
            text.as_deref(),
        );
        (status, serde_json::from_str(&answer).unwrap_or(Value::Null))
    }

    pub fn refresh(&self) {
        for index in [&self.ix.transactions, &self.ix.accounts, &self.ix.locks] {
            common::refresh(&self.helper_url, index);
        }
    }

    /// A transfer whose worker "died" after `k` core steps.
    pub fn stage(&self, id: &str, src: &str, dest: &str, k: usize) {
        let kit = Kit::new(&self.proto);
        self.rt.block_on(kit.stop(&Stop::new(id, src, dest, 10, k)));
    }

    /// Moves the transaction's `modification_time` `minutes` into the past
    /// (written as the session's own set-up: at the helper's URL).
    pub fn backdate(&self, id: &str, minutes: i64) {
        self.rt
            .block_on(Kit::new(&self.admin).backdate(id, minutes));
    }

    pub fn state(&self, id: &str) -> String {
        let path = format!("{}/_doc/{id}", self.ix.transactions);
        let (_, doc) = self.http("GET", &path, None);
        doc["_source"]["transaction_state"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    }

    pub fn total_balance(&self) -> i64 {
        ACCOUNTS
            .iter()
            .map(|a| {
                let (_, doc) = self.http("GET", &format!("{}/_doc/{a}", self.ix.accounts), None);
                doc["_source"]["balance"].as_i64().unwrap()
            })
            .sum()
    }
}

pub fn ids(rows: &Value) -> BTreeSet<String> {
    rows.as_array()
        .unwrap_or_else(|| panic!("not an array: {rows}"))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

pub fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(ToString::to_string).collect()
}

/// The whole session; `p` is the personality the cluster plays (`None`:
/// the cluster as it is).
pub fn run(url: &str, p: Option<Personality>) {
    run_in(&Session::new(url, p.map_or("as is", Personality::name)), p);
}

/// The whole session in `s`.
pub fn run_in(s: &Session, p: Option<Personality>) {
    s.init();
    session_body(s, p);
}

impl Session {
    /// The three protocol indices as aliases, each over one concrete index
    /// `<alias>-000001` with the shipped mapping (`init` then finds them).
    pub fn behind_aliases(&self) {
        let ix = &self.ix;
        for (alias, mapping) in [
            (
                &ix.transactions,
                include_str!("../../assets/mappings/transactions.json"),
            ),
            (
                &ix.accounts,
                include_str!("../../assets/mappings/accounts.json"),
            ),
            (&ix.locks, include_str!("../../assets/mappings/locks.json")),
        ] {
            let mut body: Value = serde_json::from_str(mapping).unwrap();
            body["aliases"] = json!({ alias.as_str(): {} });
            let (status, answer) = self.http("PUT", &format!("{alias}-000001"), Some(&body));
            assert_eq!(status, 200, "{answer}");
        }
    }

    /// `init`, and the accounts at [`BALANCE`].
    pub fn init(&self) {
        self.run(&["init"]).code(0);
        let kit = Kit::new(&self.admin);
        for a in ACCOUNTS {
            self.rt.block_on(kit.account(a, BALANCE));
        }
    }
}

fn session_body(s: &Session, p: Option<Personality>) {
    let all_staged = seed(s);
    looking(s, p, &all_staged);
    intervening(s);
    closing(s);
}

/// The session's mess: six stuck transactions backdated 10 minutes, and a
/// lock stale on evidence (`R1`); returns the stuck ids.
pub fn seed(s: &Session) -> BTreeSet<String> {
    // Stuck: created (k=0), pending (k=1..3), committed (k=4..6).
    let staged = [
        ("c1", "A", "B", 0),
        ("c2", "B", "C", 0),
        ("p1", "C", "D", 2),
        ("p2", "D", "E", 1),
        ("p3", "E", "F", 3),
        ("m1", "F", "A", 5),
    ];
    for (id, src, dest, k) in staged {
        s.stage(id, src, dest, k);
        s.backdate(id, 10);
    }
    // Stale on evidence: its lease ran out (an owner missing from the
    // transactions is no evidence: it may be a process).
    let stale_lock = json!({"owner": "ghost", "process_id": "w:1", "created_at": ago(30),
                            "expires_at": ago(28)});
    let (status, body) = s.http("PUT", &format!("{}/_doc/R1", s.ix.locks), Some(&stale_lock));
    assert!((200..300).contains(&status), "{body}");
    s.refresh();
    set(&["c1", "c2", "p1", "p2", "p3", "m1"])
}

/// Nothing left stuck, and no unit created or destroyed.
pub fn closing(s: &Session) {
    s.refresh();
    let left = s.run(&["list", "--json"]);
    left.code(0);
    assert_eq!(ids(&left.json()), BTreeSet::new(), "{left}");
    assert_eq!(
        s.total_balance(),
        BALANCE * ACCOUNTS.len() as i64,
        "[{}] units created or destroyed",
        s.label
    );
}

/// Discovery, `doctor`, the poll, the listings, `audit`, `check`, `locks`.
pub fn looking(s: &Session, p: Option<Personality>, staged: &BTreeSet<String>) {
    looking_with(s, p, staged, &[0, 1]);
}

/// [`looking`], `doctor` exiting with one of `doctor_codes` (3: a
/// deployment the tool cannot act on, as with a write block).
pub fn looking_with(
    s: &Session,
    p: Option<Personality>,
    staged: &BTreeSet<String>,
    doctor_codes: &[i32],
) {
    let doctor = s.run(&["doctor", "--json"]);
    assert!(
        doctor_codes.contains(&doctor.code),
        "doctor's exit code: {doctor}"
    );
    if let Some(p) = p {
        let want = if p.is_opensearch() {
            "opensearch"
        } else {
            "elasticsearch"
        };
        assert_eq!(doctor.json()["product"]["distribution"], want, "{doctor}");
        // How scans page there, and why (OpenSearch before 3.3 scrolls).
        let paging = if p.has(Difference::ShardDocUnknown) {
            json!("scroll_shard_doc_refused")
        } else if p.has(Difference::AliasOnlyRole) {
            json!("scroll_point_in_time_forbidden")
        } else {
            json!({"point_in_time": {"opensearch": p.has(Difference::OpenSearchPit)}})
        };
        assert_eq!(doctor.json()["paging"], paging, "{doctor}");
    }
    // `rest.action.multi.allow_explicit_index: false` found and named.
    let refused = p.is_some_and(|p| p.has(Difference::ExplicitIndexRefused));
    assert_eq!(
        doctor.json()["explicit_index_refused"].is_string(),
        refused,
        "{doctor}"
    );
    let text = s.run(&["doctor"]);
    text.code(doctor.code);
    if p.is_some_and(|p| p.has(Difference::AliasOnlyRole)) {
        // The gap behind the alias, named.
        let tx = &s.ix.transactions;
        let gap = format!("may read the alias `{tx}` but not `{tx}-000001`");
        assert!(text.stdout.contains(&gap), "{text}");
    }
    assert_eq!(
        text.stdout
            .contains("rest.action.multi.allow_explicit_index: false"),
        refused,
        "{text}"
    );
    // What an operator of this product sees (`--nocapture` shows it).
    eprintln!("{text}");

    let snap =
        s.rt.block_on(s.proto.poll_snapshot(500))
            .unwrap_or_else(|e| panic!("[{}] the dashboard's poll failed: {e}", s.label));
    assert_eq!(snap.in_flight_total, 6, "[{}] poll", s.label);
    assert!(snap.missing_indices.is_empty(), "[{}]", s.label);

    let listed = s.run(&["list", "--json"]);
    listed.code(0);
    assert_eq!(&ids(&listed.json()), staged, "{listed}");
    let all = s.run(&["list", "--all", "--json"]);
    all.code(0);
    assert_eq!(&ids(&all.json()), staged, "{all}");
    let stuck = s.run(&["list", "--stuck"]);
    stuck.code(0);
    eprintln!("{stuck}");
    for id in staged {
        assert!(stuck.stdout.contains(id.as_str()), "{stuck}");
    }
    let audit = s.run(&["audit", "--json"]);
    assert!(matches!(audit.code, 0 | 1), "{audit}");
    assert!(audit.json().is_object(), "{audit}");
    // CRITICAL: the stale lock is also an audit finding.
    let check = s.run(&["check", "--json"]);
    check.code(2);
    let counts = check.json();
    let metric = |key: &str| {
        counts["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .map(|m| m["count"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(metric("stuck"), 6, "{check}");
    assert_eq!(metric("stale_locks"), 1, "{check}");
    assert_eq!(metric("audit_findings"), 1, "{check}");
    let locks = s.run(&["locks", "--json"]);
    locks.code(0);
    let rows = locks.json();
    assert_eq!(rows[0]["resource"], "R1", "{locks}");
    assert_eq!(rows[0]["stale"], true, "{locks}");
}

/// One intervention of each kind, a bulk rollback, a batched recovery.
pub fn intervening(s: &Session) {
    s.run(&["rollback", "p1"]).code(0);
    assert_eq!(s.state("p1"), "rolled-back");
    s.run(&["recover", "m1"]).code(0);
    assert_eq!(s.state("m1"), "finished");
    s.run(&["release-lock", "R1"]).code(0);
    s.run(&["transfer", "A", "F", "25", "--id", "t1", "--locks"])
        .code(0);
    s.run(&["reverse", "t1"]).code(0);
    assert_eq!(s.state("t1-reversal"), "finished");
    s.refresh();

    let bulk = s.run(&["rollback", "--state", "pending", "--json"]);
    bulk.code(0);
    assert_eq!(s.state("p2"), "rolled-back", "{bulk}");
    assert_eq!(s.state("p3"), "rolled-back", "{bulk}");
    s.refresh();

    let batch = s.run(&["recover", "--all-stuck", "--json"]);
    batch.code(0);
    assert_eq!(s.state("c1"), "finished", "{batch}");
    assert_eq!(s.state("c2"), "finished", "{batch}");
}
