//! A test's world: unique indices on the shared test server, a protocol
//! handle to seed transfers stopped part-way and read the documents back, and
//! the `estx-tui` binary started on them in a tmux session of fixed size.

use crate::common;
use crate::common::world::{ago, blocking_protocol, Kit, Lock, Payers, Stop};
use crate::tmux::Tmux;
use estx::cluster::{ConnectOptions, VersionedDoc};
use estx::protocol::account::AccountState;
use estx::protocol::{Protocol, TxnState, Verdict};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Terminal size of every session: the standard (not wide) layout.
const COLS: u16 = 140;
const ROWS: u16 = 40;

/// A test's world: unique indices on the shared server, a protocol handle
/// over them, and a runtime to drive it from these synchronous tests.
pub(crate) struct World {
    rt: tokio::runtime::Runtime,
    proto: Protocol,
    ix: common::TestIndices,
    url: String,
    tmp: tempfile::TempDir,
}

/// A transfer stopped part-way, as its crashed worker left it.
pub(crate) struct Staged {
    pub(crate) id: String,
    pub(crate) src: String,
    pub(crate) dest: String,
}

impl World {
    /// The world-building kit over this world's indices.
    fn kit(&self) -> Kit<'_> {
        Kit::new(&self.proto)
    }

    pub(crate) fn new() -> World {
        let server = common::TestServer::shared();
        let ix = common::TestIndices::unique();
        let (rt, proto) = blocking_protocol(&ConnectOptions::new(server.url()), ix.indices());
        rt.block_on(proto.ensure_indices()).unwrap();
        World {
            rt,
            proto,
            ix,
            url: server.url().to_string(),
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    /// Accounts `src-<tag>` and `dst-<tag>` with 500 each, and a transfer
    /// `e2e-<tag>` of 100 between them stopped after `steps` core steps (as if
    /// its worker died there), optionally under locks, optionally backdated.
    pub(crate) fn stage(
        &self,
        tag: &str,
        steps: usize,
        with_locks: bool,
        backdate_minutes: Option<i64>,
    ) -> Staged {
        let s = Staged {
            id: format!("e2e-{tag}"),
            src: format!("src-{tag}"),
            dest: format!("dst-{tag}"),
        };
        let kit = self.kit();
        self.rt.block_on(async {
            for acct in [&s.src, &s.dest] {
                kit.account(acct, 500).await;
            }
            kit.stop(&Stop::new(&s.id, &s.src, &s.dest, 100, steps).locked(with_locks))
                .await;
            if let Some(minutes) = backdate_minutes {
                kit.backdate(&s.id, minutes).await;
            }
        });
        s
    }

    /// A transfer of 100 from `src-<tag>` to `dst-<tag>` that was rolled
    /// back, yet a late, unfenced worker then applied it to the source
    /// anyway: the source holds 400 and still lists it as pending (a
    /// dangling pending entry; the two accounts sum to 900 instead of 1000).
    pub(crate) fn stage_late_apply(&self, tag: &str) -> Staged {
        let s = Staged {
            id: format!("e2e-{tag}"),
            src: format!("src-{tag}"),
            dest: format!("dst-{tag}"),
        };
        self.rt.block_on(async {
            let cluster = self.proto.cluster();
            let docs = [
                (
                    &self.ix.transactions,
                    &s.id,
                    json!({"src_acct": s.src, "dest_acct": s.dest, "amount": 100,
                           "transaction_state": "rolled-back",
                           "creation_time": ago(60), "modification_time": ago(30)}),
                ),
                (
                    &self.ix.accounts,
                    &s.src,
                    json!({"balance": 400, "pending_transactions": [s.id]}),
                ),
                (
                    &self.ix.accounts,
                    &s.dest,
                    json!({"balance": 500, "pending_transactions": []}),
                ),
            ];
            for (index, id, doc) in docs {
                cluster.put(index, id, &doc).await.unwrap();
            }
        });
        s
    }

    /// Rolls the transfer back (forced: whatever its age), as an operator
    /// or a worker would; its locks are released with it.
    pub(crate) fn roll_back(&self, s: &Staged) {
        let report = self.rt.block_on(self.proto.rollback(&s.id, true));
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::RolledBack)),
            "{:?}",
            report.verdict
        );
    }

    /// Recovers the transfer to its end (forced: whatever its age), as its
    /// worker would have: it is finished.
    pub(crate) fn finish(&self, s: &Staged) {
        let report = self.rt.block_on(self.proto.recover(&s.id, true));
        assert!(
            matches!(report.verdict, Verdict::Completed(TxnState::Finished)),
            "{:?}",
            report.verdict
        );
    }

    /// A lock on `resource` owned by transaction `owner`, taken a minute ago
    /// with a lease of an hour (as a worker that died before releasing it
    /// left it). A minute, not now: locks taken since are stamped on the
    /// cluster's clock, which this process's clock may be ahead of.
    pub(crate) fn put_lock(&self, resource: &str, owner: &str) {
        let lock = Lock::Leased {
            owner,
            process: "worker-9:999",
            created: 1,
            expires_in: 59,
        };
        self.rt.block_on(self.kit().lock(resource, &lock));
    }

    /// `n` transactions `{prefix}-{i}` stuck in `created` for an hour, all
    /// from account `from` (bulk-indexed in chunks: cheap at thousands).
    pub(crate) fn seed_stuck(&self, prefix: &str, n: usize, from: &str) {
        self.rt
            .block_on(self.kit().seed_stuck(prefix, n, Payers::One(from)));
    }

    /// `n` transfers `{prefix}-{i}` of 100 from `{prefix}-src-{i}` to
    /// `{prefix}-dst-{i}` (500 each before), stopped 90 minutes ago right
    /// after the source was debited (`pending`, listed on the source),
    /// bulk-indexed: cheap at hundreds. Returns the ids.
    pub(crate) fn seed_half_applied(&self, prefix: &str, n: usize) -> Vec<String> {
        self.rt.block_on(self.kit().seed_half_applied(prefix, n))
    }

    /// How many transactions are in `state`, as the cluster counts them
    /// (refreshes the transactions index first).
    pub(crate) fn count_in_state(&self, state: &str) -> u64 {
        common::refresh(&self.url, &self.ix.transactions);
        let body = json!({"query": {"term": {"transaction_state": state}}}).to_string();
        let url = format!("{}/{}/_count", self.url, self.ix.transactions);
        let (status, answer) = common::http("POST", &url, Some(&body));
        assert_eq!(status, 200, "{answer}");
        serde_json::from_str::<Value>(&answer).unwrap()["count"]
            .as_u64()
            .unwrap()
    }

    /// The sum of every account's balance and how many accounts still
    /// list a pending transaction (refreshes the accounts index first).
    pub(crate) fn balances(&self) -> (i64, u64) {
        common::refresh(&self.url, &self.ix.accounts);
        let body = json!({"size": 0, "aggs": {"sum": {"sum": {"field": "balance"}}}}).to_string();
        let url = format!("{}/{}/_search", self.url, self.ix.accounts);
        let (status, answer) = common::http("POST", &url, Some(&body));
        assert_eq!(status, 200, "{answer}");
        let sum = serde_json::from_str::<Value>(&answer).unwrap()["aggregations"]["sum"]["value"]
            .as_f64()
            .unwrap() as i64;
        let body = json!({"query": {"exists": {"field": "pending_transactions"}}}).to_string();
        let url = format!("{}/{}/_count", self.url, self.ix.accounts);
        let (status, answer) = common::http("POST", &url, Some(&body));
        assert_eq!(status, 200, "{answer}");
        let pending = serde_json::from_str::<Value>(&answer).unwrap()["count"]
            .as_u64()
            .unwrap();
        (sum, pending)
    }

    /// Makes every write visible to search (osmem never refreshes by itself).
    pub(crate) fn refresh(&self) {
        for index in [
            &self.ix.transactions,
            &self.ix.accounts,
            &self.ix.locks,
            &self.ix.audit,
        ] {
            common::refresh(&self.url, index);
        }
    }

    /// A bulk recovery of `ids` whose process died right after writing its
    /// record: the record stays `running`, nothing of it ran, and its
    /// heartbeat (promised every millisecond) is silent at once: a job
    /// presumed dead, to resume. Returns its id.
    pub(crate) fn unfinished_job(&self, ids: &[&str]) -> String {
        self.job_beating(ids, std::time::Duration::from_millis(1))
    }

    /// The same, its heartbeat promised every `heartbeat`: a job live for
    /// four of them.
    pub(crate) fn job_beating(&self, ids: &[&str], heartbeat: std::time::Duration) -> String {
        use estx::protocol::intervene::{self, BulkAct, Choices, Intervention, Selection};
        let act = BulkAct {
            procedure: estx::protocol::Procedure::Recover,
            selection: Selection {
                ids: Some(ids.iter().map(|s| s.to_string()).collect()),
                ..Selection::default()
            },
            ids_source: Some("a test".into()),
            allow_partial: false,
            runner: intervene::Runner::Batched(Default::default()),
        };
        let choices = Choices::new(
            estx::protocol::trail::Interface::Cli,
            Some("INC-7 the worker died".into()),
        );
        let i = Intervention::new(act, choices);
        let config = estx::protocol::ProtocolConfig {
            job_heartbeat: heartbeat,
            ..self.proto.config().clone()
        };
        let dying = estx::protocol::Protocol::new(self.proto.cluster().clone(), config);
        let started = self.rt.block_on(intervene::start(&dying, i)).unwrap();
        let id = started.record().0.clone();
        drop(started);
        self.refresh();
        id
    }

    /// The audit records naming transaction `id` (refreshes the audit index).
    pub(crate) fn history(&self, id: &str) -> Vec<estx::protocol::trail::Record> {
        common::refresh(&self.url, &self.ix.audit);
        self.rt
            .block_on(estx::protocol::trail::history(&self.proto, id))
            .unwrap()
    }

    /// A document by id (realtime).
    fn doc(&self, index: &str, id: &str) -> Option<VersionedDoc> {
        self.rt
            .block_on(self.proto.cluster().get(index, id))
            .unwrap()
    }

    /// The transaction's state.
    pub(crate) fn state(&self, id: &str) -> Option<TxnState> {
        let (t, _) = self
            .rt
            .block_on(self.proto.read_transaction(id))
            .unwrap()
            .unwrap();
        t.state
    }

    /// The account's protocol fields.
    pub(crate) fn account(&self, id: &str) -> AccountState {
        let doc = self
            .doc(&self.ix.accounts, id)
            .unwrap_or_else(|| panic!("account {id} missing"));
        AccountState::from_source(&doc.source).unwrap()
    }

    /// Asserts `t`'s two accounts ended settled: `balances` (source,
    /// destination; `what` says why those), no pending entry and no
    /// history left on either.
    pub(crate) fn assert_settled(&self, t: &Staged, balances: (i64, i64), what: &str) {
        let (a, b) = (self.account(&t.src), self.account(&t.dest));
        assert_eq!((a.balance, b.balance), balances, "{what}: {a:?} {b:?}");
        assert!(
            a.pending.is_empty() && b.pending.is_empty(),
            "pending left: {a:?} {b:?}"
        );
        assert!(
            a.deltas.is_empty()
                && b.deltas.is_empty()
                && a.settled.is_empty()
                && b.settled.is_empty(),
            "history left: {a:?} {b:?}"
        );
    }

    /// Whether a lock document exists on `resource`.
    pub(crate) fn lock_exists(&self, resource: &str) -> bool {
        self.doc(&self.ix.locks, resource).is_some()
    }

    /// The transaction and both its accounts as stored (with `_seq_no`), to
    /// prove that something did not change them.
    pub(crate) fn documents_of(&self, s: &Staged) -> [Option<VersionedDoc>; 3] {
        [
            self.doc(&self.ix.transactions, &s.id),
            self.doc(&self.ix.accounts, &s.src),
            self.doc(&self.ix.accounts, &s.dest),
        ]
    }

    /// Runs the `estx-tui` command line on this world's indices with
    /// `args` (and `env`): its exit code, stdout and stderr.
    pub(crate) fn cli(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let mut all = common::server::binary_args(&self.url, &self.ix.indices(), &self.log_file());
        all.extend(args.iter().map(|s| s.to_string()));
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        cmd.args(&all).stdin(std::process::Stdio::null());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ESTX_") {
                cmd.env_remove(&key);
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run estx-tui");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A private directory under this world's temporary one (a state
    /// directory for the binary).
    pub(crate) fn dir(&self, name: &str) -> PathBuf {
        let d = self.tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The dashboard's log file.
    pub(crate) fn log_file(&self) -> PathBuf {
        self.tmp.path().join("estx-tui.log")
    }

    /// A proxy in front of this world's server, for a dashboard to talk
    /// through ([`World::dashboard_behind`]).
    pub(crate) fn proxy(&self) -> common::FaultProxy {
        common::FaultProxy::start(&self.url)
    }

    /// What the path of every write of a transaction's state holds
    /// (`POST /{transactions}/_update/{id}`): what a proxy rule matches to
    /// hold a run between two transactions.
    pub(crate) fn transaction_writes(&self) -> String {
        format!("/{}/_update/", self.ix.transactions)
    }

    /// The dashboard on this world's indices, polling every second.
    pub(crate) fn dashboard(&self, tag: &str, extra: &[&str]) -> Tmux {
        start_dashboard(tag, &self.url, &self.ix, &self.log_file(), extra)
    }

    /// [`World::dashboard`] with `env` set for it (`XDG_STATE_HOME`,
    /// `HOME`: where its exports go).
    pub(crate) fn dashboard_with_env(
        &self,
        tag: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Tmux {
        start_dashboard_with_env(tag, &self.url, &self.ix, &self.log_file(), extra, env)
    }

    /// [`World::dashboard_with_env`] talking to the server through `proxy`.
    pub(crate) fn dashboard_behind(
        &self,
        proxy: &common::FaultProxy,
        tag: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Tmux {
        let url = proxy.url();
        start_dashboard_with_env(tag, &url, &self.ix, &self.log_file(), extra, env)
    }
}

/// The end of a test's session: `q` quits the dashboard, which exits
/// cleanly (status 0); the test's time since `started` goes to stderr.
pub(crate) fn quit(tui: &Tmux, test: &str, started: std::time::Instant) {
    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!("{test} took {:?}", started.elapsed());
}

pub(crate) fn start_dashboard(
    tag: &str,
    url: &str,
    ix: &common::TestIndices,
    log: &std::path::Path,
    extra: &[&str],
) -> Tmux {
    start_dashboard_with_env(tag, url, ix, log, extra, &[])
}

fn start_dashboard_with_env(
    tag: &str,
    url: &str,
    ix: &common::TestIndices,
    log: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Tmux {
    let mut args = common::server::binary_args(url, &ix.indices(), log);
    args.extend(["--interval".to_string(), "1s".to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    Tmux::start_with_env(
        tag,
        COLS,
        ROWS,
        env!("CARGO_BIN_EXE_estx-tui"),
        &args,
        log,
        env,
    )
}
