//! End-to-end tests of the real `estx-tui` binary: the dashboard runs in a
//! detached tmux session (fixed size) against the test server (osmem-server,
//! or the cluster at `ESTX_TEST_URL`); the test types keys with
//! `tmux send-keys`, reads the screen with `tmux capture-pane`, and checks
//! the documents through the library.
//!
//! Nothing synchronises by sleeping: every wait polls the screen or the
//! documents with a deadline.
//!
//! Visibility: the dashboard's polls are searches, and osmem-server has no
//! automatic refresh (a real cluster refreshes every second). So the tests
//! refresh the three indices after seeding, and — because the dashboard never
//! refreshes anything itself — keep refreshing them while they wait for the
//! screen to show the effect of an action (the writes the dashboard made).
//! The confirmation dialogs do not depend on this: they re-read by id, which
//! is realtime.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/mod.rs"]
mod common;
#[path = "e2e/tmux.rs"]
mod tmux;

use chrono::{Duration as ChronoDuration, Utc};
use estx::cluster::{Cluster, ConnectOptions, VersionedDoc};
use estx::protocol::account::{AccountState, SettledOutcome};
use estx::protocol::time::format_timestamp;
use estx::protocol::{
    Indices, NewTransfer, Protocol, ProtocolConfig, RunLimits, TxnState, Verdict,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;
use tmux::Tmux;

/// Terminal size of every session: the standard (not wide) layout.
const COLS: u16 = 140;
const ROWS: u16 = 40;

/// A test's world: unique indices on the shared server, a protocol handle
/// over them, and a runtime to drive it from these synchronous tests.
struct World {
    rt: tokio::runtime::Runtime,
    proto: Protocol,
    ix: common::TestIndices,
    url: String,
    tmp: tempfile::TempDir,
}

/// A transfer stopped part-way, as its crashed worker left it.
struct Staged {
    id: String,
    src: String,
    dest: String,
}

impl World {
    fn new() -> World {
        let server = common::TestServer::shared();
        let ix = common::TestIndices::unique();
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
            let cluster = Cluster::connect(&ConnectOptions::new(server.url())).unwrap();
            let proto = Protocol::new(cluster, config);
            proto.ensure_indices().await.unwrap();
            proto
        });
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
    fn stage(
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
        self.rt.block_on(async {
            let cluster = self.proto.cluster();
            for acct in [&s.src, &s.dest] {
                cluster
                    .put(
                        &self.ix.accounts,
                        acct,
                        &json!({"balance": 500, "pending_transactions": []}),
                    )
                    .await
                    .unwrap();
            }
            let req = NewTransfer {
                id: Some(s.id.clone()),
                src: s.src.clone(),
                dest: s.dest.clone(),
                amount: 100,
            };
            let report = self
                .proto
                .transfer(
                    &req,
                    with_locks,
                    RunLimits {
                        max_steps: Some(steps),
                    },
                )
                .await;
            assert!(
                matches!(report.verdict, Verdict::Stopped(_)),
                "{:?}",
                report.verdict
            );
            if let Some(minutes) = backdate_minutes {
                let mut src = cluster
                    .get(&self.ix.transactions, &s.id)
                    .await
                    .unwrap()
                    .unwrap()
                    .source;
                let t = format_timestamp(Utc::now() - ChronoDuration::minutes(minutes));
                src.insert("modification_time".into(), Value::String(t));
                cluster
                    .put(&self.ix.transactions, &s.id, &Value::Object(src))
                    .await
                    .unwrap();
            }
        });
        s
    }

    /// Makes every write visible to search (osmem never refreshes by itself).
    fn refresh(&self) {
        for index in [&self.ix.transactions, &self.ix.accounts, &self.ix.locks] {
            common::refresh(&self.url, index);
        }
    }

    /// A document by id (realtime).
    fn doc(&self, index: &str, id: &str) -> Option<VersionedDoc> {
        self.rt
            .block_on(self.proto.cluster().get(index, id))
            .unwrap()
    }

    /// The transaction's state.
    fn state(&self, id: &str) -> Option<TxnState> {
        let (t, _) = self
            .rt
            .block_on(self.proto.read_transaction(id))
            .unwrap()
            .unwrap();
        t.state
    }

    /// The account's protocol fields.
    fn account(&self, id: &str) -> AccountState {
        let doc = self
            .doc(&self.ix.accounts, id)
            .unwrap_or_else(|| panic!("account {id} missing"));
        AccountState::from_source(&doc.source).unwrap()
    }

    /// Whether a lock document exists on `resource`.
    fn lock_exists(&self, resource: &str) -> bool {
        self.doc(&self.ix.locks, resource).is_some()
    }

    /// The transaction and both its accounts as stored (with `_seq_no`), to
    /// prove that something did not change them.
    fn documents_of(&self, s: &Staged) -> [Option<VersionedDoc>; 3] {
        [
            self.doc(&self.ix.transactions, &s.id),
            self.doc(&self.ix.accounts, &s.src),
            self.doc(&self.ix.accounts, &s.dest),
        ]
    }

    fn log_file(&self) -> PathBuf {
        self.tmp.path().join("estx-tui.log")
    }

    /// The dashboard on this world's indices, polling every second.
    fn dashboard(&self, tag: &str, extra: &[&str]) -> Tmux {
        start_dashboard(tag, &self.url, &self.ix, &self.log_file(), extra)
    }
}

fn start_dashboard(
    tag: &str,
    url: &str,
    ix: &common::TestIndices,
    log: &std::path::Path,
    extra: &[&str],
) -> Tmux {
    let mut args: Vec<String> = [
        "--url",
        url,
        "--transactions-index",
        &ix.transactions,
        "--accounts-index",
        &ix.accounts,
        "--locks-index",
        &ix.locks,
        "--log-file",
        &log.display().to_string(),
        "--interval",
        "1s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    Tmux::start(tag, COLS, ROWS, env!("CARGO_BIN_EXE_estx-tui"), &args, log)
}

/// Types `/`, the text, Enter, and waits until the table is filtered to it.
fn filter_to(tui: &Tmux, text: &str) {
    tui.keys(&["/"]);
    tui.type_text(text);
    tui.keys(&["Enter"]);
    let title = format!("· /{text} ");
    tui.wait_for(&format!("the table filtered to {text:?}"), |s| {
        s.contains(&title) && !s.contains('█')
    });
}

/// The text inside the pane whose top border starts with `┌ <title>`, one
/// line per row, or `None` when no such pane is on the screen (tmux renders
/// the box-drawing characters one column wide, so characters are columns).
fn pane(screen: &str, title: &str) -> Option<String> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let head: Vec<char> = format!("┌ {title}").chars().collect();
    let (top, left) = lines.iter().enumerate().find_map(|(i, l)| {
        l.windows(head.len())
            .position(|w| w == head.as_slice())
            .map(|c| (i, c))
    })?;
    let right = (left + 1..lines[top].len()).find(|&c| lines[top][c] == '┐')?;
    let rows: Vec<String> = lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l[left + 1..right.min(l.len())].iter().collect())
        .collect();
    Some(rows.join("\n"))
}

/// R on a half-applied pending transaction rolls it back (balances restored,
/// shown in the log and gone from the in-flight list); R on a committed one
/// is refused, `y` there changes nothing, and Esc closes the dialog.
#[test]
fn rollback_from_the_dashboard() {
    let started = Instant::now();
    let w = World::new();
    // Worker died after "apply to source": pending, source debited, destination not credited.
    let pend = w.stage("pend", 2, false, Some(90));
    let comm = w.stage("comm", 4, false, Some(90));
    let new = w.stage("new", 0, false, Some(90));
    assert_eq!(w.state(&pend.id), Some(TxnState::Pending));
    assert_eq!(w.state(&comm.id), Some(TxnState::Committed));
    assert_eq!(w.state(&new.id), Some(TxnState::Created));
    assert_eq!(
        (w.account(&pend.src).balance, w.account(&pend.dest).balance),
        (400, 500)
    );
    w.refresh();

    let tui = w.dashboard("rollback", &[]);
    tui.wait_for_all(&[&pend.id, &comm.id, &new.id, "transactions 3/3"]);

    filter_to(&tui, &pend.id);
    tui.wait_for_all(&["transactions 1/3"]);
    tui.keys(&["R"]);
    let title = format!("Roll back {}?", pend.id);
    // Every expectation is part of the wait: a capture may catch a frame
    // half written, so what the final frame must show is waited for.
    let dialog = tui.wait_for_all(&[
        &title,
        "rollback would run these steps:",
        " 1. rollback 1: pending -> terminating",
        " 2. rollback 2: undo on source",
        " 3. rollback 3: undo on destination",
        " 4. rollback 4: terminating -> rolled-back",
        "ends in: rolled-back",
        "balance effect:",
        "src-pend: 400 → 500 (+100)",
        "dst-pend: 500 → 500 (±0)",
        "[ Cancel ]",
        "[ Confirm (y) ]",
    ]);
    assert!(
        !dialog.contains("WARNING"),
        "a 90-minute-old transaction is not recent:\n{dialog}"
    );

    tui.keys(&["y"]);
    common::wait_until_blocking("the transaction is rolled-back", tmux::DEADLINE, || {
        w.state(&pend.id) == Some(TxnState::RolledBack)
    });
    let (a, b) = (w.account(&pend.src), w.account(&pend.dest));
    assert_eq!(
        (a.balance, b.balance),
        (500, 500),
        "balances restored: {a:?} {b:?}"
    );
    assert!(
        a.pending.is_empty() && b.pending.is_empty(),
        "pending left: {a:?} {b:?}"
    );
    assert_eq!(
        a.settled_of(&pend.id).map(|s| s.outcome),
        Some(SettledOutcome::Undone)
    );
    assert_eq!(
        b.settled_of(&pend.id).map(|s| s.outcome),
        Some(SettledOutcome::Undone)
    );
    // The log says so at once; the row leaves the in-flight list with the
    // first poll that sees the writes (we refresh, the dashboard does not).
    let done = format!(
        "Roll back {}: completed: transaction is rolled-back",
        pend.id
    );
    let screen = tui.wait_for_with(
        "the rollback in the log and the row gone",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && s.contains("transactions 0/2")
                && s.contains("no transaction matches the filter")
        },
    );
    assert!(!screen.contains(&title), "the dialog closed:\n{screen}");

    // A committed transaction: refused, and `y` does nothing.
    tui.keys(&["Escape"]);
    tui.wait_for("the filter cleared", |s| {
        s.contains("transactions 2/2") && !s.contains("· /")
    });
    filter_to(&tui, &comm.id);
    let before = w.documents_of(&comm);
    tui.keys(&["R"]);
    let title = format!("Roll back {}?", comm.id);
    let refused = [
        title.as_str(),
        "rollback refused: transaction is committed",
        "nothing will be changed.",
        "[ Close ]",
    ];
    tui.wait_for("the refusal with only a Close button", |s| {
        refused.iter().all(|n| s.contains(n)) && !s.contains("[ Confirm (y) ]")
    });
    tui.keys(&["y"]);
    let nothing = format!("Roll back {}: nothing to confirm", comm.id);
    tui.wait_for(&format!("{nothing:?} and the dialog closed"), |s| {
        s.contains(&nothing) && !s.contains(&title)
    });
    // `y` issued no command at all (the log line proves it was handled).
    assert_eq!(
        w.documents_of(&comm),
        before,
        "`y` on a refusal changed the documents"
    );
    assert_eq!(w.state(&comm.id), Some(TxnState::Committed));

    tui.keys(&["R"]);
    tui.wait_for_all(&refused);
    tui.keys(&["Escape"]);
    tui.wait_for("the dialog closed by Esc", |s| {
        !s.contains(&title) && s.contains(&format!("· /{} ", comm.id))
    });
    assert_eq!(w.documents_of(&comm), before, "Esc changed the documents");

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!("rollback_from_the_dashboard took {:?}", started.elapsed());
}

/// F on a transaction modified just now warns that a worker may still run
/// it, then finishes it (money moved once, its locks released); L on a
/// stuck locked transaction deletes its lock documents and the locks pane
/// empties.
#[test]
fn force_recovery_and_lock_release_from_the_dashboard() {
    let started = Instant::now();
    let w = World::new();
    // Modified just now (within the 2-minute recovery window), under locks.
    let live = w.stage("live", 2, true, None);
    // Stuck for 90 minutes after its first step, under locks.
    let stuck = w.stage("stuck", 1, true, Some(90));
    for s in [&live, &stuck] {
        assert_eq!(w.state(&s.id), Some(TxnState::Pending));
        assert!(
            w.lock_exists(&s.src) && w.lock_exists(&s.dest),
            "the transfer left its locks"
        );
    }
    w.refresh();

    let tui = w.dashboard("recover", &[]);
    let all_locks = [&live.src, &live.dest, &stuck.src, &stuck.dest];
    tui.wait_for("both transactions and their four locks", |s| {
        s.contains(&live.id)
            && s.contains(&stuck.id)
            && pane(s, "locks 4 (0 stale)")
                .is_some_and(|p| all_locks.iter().all(|r| p.contains(r.as_str())))
    });

    // F: forced recovery of the recent one.
    filter_to(&tui, &live.id);
    tui.keys(&["F"]);
    let title = format!("Force recovery of {}?", live.id);
    // The transaction was modified moments ago: the dialog must say so.
    tui.wait_for_all(&[
        &title,
        "WARNING",
        "ago: a worker may still be running it",
        "forced: the recovery window is not enforced",
        "recovery would run these steps:",
        "core 3: apply to destination",
        "ends in: finished",
        "dst-live: 500 → 600 (+100)",
        "[ Cancel ]",
        "[ Confirm (y) ]",
    ]);
    tui.keys(&["y"]);
    common::wait_until_blocking(
        "the transaction is finished and its locks are gone",
        tmux::DEADLINE,
        || {
            w.state(&live.id) == Some(TxnState::Finished)
                && !w.lock_exists(&live.src)
                && !w.lock_exists(&live.dest)
        },
    );
    let (a, b) = (w.account(&live.src), w.account(&live.dest));
    assert_eq!(
        (a.balance, b.balance),
        (400, 600),
        "moved exactly once: {a:?} {b:?}"
    );
    assert!(
        a.pending.is_empty() && b.pending.is_empty(),
        "pending left: {a:?} {b:?}"
    );
    assert_eq!(
        a.settled_of(&live.id).map(|s| s.outcome),
        Some(SettledOutcome::Applied)
    );
    assert_eq!(
        b.settled_of(&live.id).map(|s| s.outcome),
        Some(SettledOutcome::Applied)
    );
    assert!(
        w.lock_exists(&stuck.src) && w.lock_exists(&stuck.dest),
        "other locks untouched"
    );
    let done = format!(
        "Force recovery of {}: completed: transaction is finished",
        live.id
    );
    tui.wait_for_with(
        "the recovery in the log and two locks left",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && pane(s, "locks 2 (0 stale)").is_some_and(|p| {
                    p.contains(stuck.src.as_str())
                        && p.contains(stuck.dest.as_str())
                        && !p.contains(live.src.as_str())
                        && !p.contains(live.dest.as_str())
                })
        },
    );

    // L: release the locks of the stuck one.
    tui.keys(&["Escape"]);
    tui.wait_for("the filter cleared", |s| !s.contains("· /"));
    filter_to(&tui, &stuck.id);
    let before = w.documents_of(&stuck);
    tui.keys(&["L"]);
    let title = format!("Release the locks of {}?", stuck.id);
    tui.wait_for_all(&[
        &title,
        "locks that would be released:",
        &format!(" {} — ", stuck.src),
        &format!(" {} — ", stuck.dest),
        "2 lock(s) not stale",
        "[ Confirm (y) ]",
    ]);
    tui.keys(&["y"]);
    common::wait_until_blocking("the lock documents are deleted", tmux::DEADLINE, || {
        !w.lock_exists(&stuck.src) && !w.lock_exists(&stuck.dest)
    });
    assert_eq!(
        w.documents_of(&stuck),
        before,
        "releasing locks touched the transaction or accounts"
    );
    let done = format!(
        "Release the locks of {}: {} released, {} released",
        stuck.id, stuck.dest, stuck.src
    );
    // The locks pane (not the accounts pane, which still lists the accounts
    // of the transaction in flight) empties once a poll sees the deletes.
    tui.wait_for_with(
        "the release in the log and an empty locks pane",
        || w.refresh(),
        |s| {
            s.contains(&done)
                && pane(s, "locks 0 (0 stale)").is_some_and(|p| {
                    p.contains("no locks held") && all_locks.iter().all(|r| !p.contains(r.as_str()))
                })
        },
    );

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "force_recovery_and_lock_release_from_the_dashboard took {:?}",
        started.elapsed()
    );
}

/// `q` exits with 0 and leaves the terminal as it found it: main screen
/// (nothing of the dashboard left on it), cooked mode, mouse reporting off.
#[test]
fn q_quits_with_0_and_restores_the_terminal() {
    let started = Instant::now();
    let w = World::new();
    let s = w.stage("quit", 2, false, Some(90));
    w.refresh();
    let tui = w.dashboard("quit", &[]);
    tui.wait_for_all(&[&s.id, "estx-tui"]);
    assert_eq!(
        tui.format("#{alternate_on}"),
        "1",
        "the dashboard draws on the alternate screen"
    );
    assert_eq!(
        tui.format("#{mouse_any_flag}"),
        "1",
        "the dashboard captures the mouse"
    );

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    let screen = tui.wait_for("the terminal state", |s| s.contains("TTY="));
    assert!(screen.contains("TTY=cooked"), "raw mode left on:\n{screen}");
    assert_eq!(
        tui.format("#{alternate_on}"),
        "0",
        "still on the alternate screen:\n{screen}"
    );
    assert_eq!(
        tui.format("#{mouse_any_flag}"),
        "0",
        "mouse capture left on"
    );
    assert_eq!(tui.format("#{cursor_flag}"), "1", "cursor left hidden");
    let leftovers: Vec<&str> = screen
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("EXITED=") && !l.starts_with("TTY="))
        .collect();
    assert!(
        leftovers.is_empty(),
        "the dashboard left output behind:\n{screen}"
    );
    eprintln!(
        "q_quits_with_0_and_restores_the_terminal took {:?}",
        started.elapsed()
    );
}

/// `--read-only` says so, and R opens no dialog and writes nothing.
#[test]
fn read_only_disables_the_actions() {
    let started = Instant::now();
    let w = World::new();
    let s = w.stage("ro", 2, false, Some(90));
    w.refresh();
    let before = w.documents_of(&s);
    let tui = w.dashboard("readonly", &["--read-only"]);
    let screen = tui.wait_for_all(&[&s.id, "READ-ONLY"]);
    assert!(screen.contains("read-only: actions disabled"), "{screen}");
    assert!(screen.contains("R F L read-only"), "{screen}");

    for key in ["R", "F", "L"] {
        tui.keys(&[key]);
    }
    let refused = "read-only mode: rollback, recovery and lock release are disabled";
    let screen = tui.wait_for(&format!("{refused:?} three times"), |s| {
        s.matches(refused).count() == 3
    });
    for title in ["Roll back", "Force recovery of", "Release the locks of"] {
        assert!(
            !screen.contains(&format!("{title} {}?", s.id)),
            "a dialog opened:\n{screen}"
        );
    }
    assert_eq!(w.documents_of(&s), before, "read-only mode wrote");

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(w.documents_of(&s), before, "read-only mode wrote");
    eprintln!(
        "read_only_disables_the_actions took {:?}",
        started.elapsed()
    );
}

/// Against an unreachable cluster the dashboard opens, says it cannot reach
/// it, keeps retrying (and answering keys) instead of exiting, and quits
/// with `q`.
#[test]
fn an_unreachable_cluster_is_shown_and_retried() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("estx-tui.log");
    let url = "http://127.0.0.1:9";
    let ix = common::TestIndices::unique();
    let tui = start_dashboard("unreachable", url, &ix, &log, &[]);
    let screen = tui.wait_for_all(&[&format!("cannot reach {url}"), "retrying", "no data yet"]);
    assert!(!screen.contains("EXITED="), "{screen}");

    // Still polling: the poller logs every failed attempt (1 s, then backoff).
    common::wait_until_blocking("two failed polls in the log", tmux::DEADLINE, || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.matches("poll failed").count() >= 2)
    });
    // Still running and answering keys.
    tui.keys(&["?"]);
    tui.wait_for_all(&["any key closes help"]);
    tui.keys(&["Escape"]);
    let screen = tui.wait_for("help closed", |s| !s.contains("any key closes help"));
    assert!(screen.contains(&format!("cannot reach {url}")), "{screen}");
    assert!(!screen.contains("EXITED="), "{screen}");

    tui.keys(&["q"]);
    assert_eq!(tui.wait_exit(), 0);
    eprintln!(
        "an_unreachable_cluster_is_shown_and_retried took {:?}",
        started.elapsed()
    );
}
