//! `estx-tui` CLI tests: seed and demo, the demo's and the dashboard's stop
//! signals (run in tmux, checked like `q`: terminal restored, nothing left
//! running), and option values refused as usage errors.

use super::*;
use crate::tmux::Tmux;
use std::sync::{Arc, Mutex};

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

/// The pid of the running `estx-tui` whose command line holds `marker`
/// (its unique log file), not the shell or `timeout` around it.
fn estx_pid(marker: &str) -> u32 {
    let bin = env!("CARGO_BIN_EXE_estx-tui");
    let mut found = None;
    common::wait_until_blocking("estx-tui is running", Duration::from_secs(30), || {
        let out = Command::new("ps")
            .args(["-A", "-o", "pid=", "-o", "args="])
            .output()
            .expect("run ps");
        found = String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
            let (pid, args) = l.trim_start().split_once(' ')?;
            let args = args.trim_start();
            (args.starts_with(bin) && args.contains(marker))
                .then(|| pid.parse().ok())
                .flatten()
        });
        found.is_some()
    });
    found.unwrap()
}

/// Sends `signal` (e.g. `TERM`) to `pid`.
fn kill(signal: &str, pid: u32) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// After the program in `tui` exited: main screen, cursor shown, mouse off,
/// cooked mode.
#[track_caller]
fn assert_terminal_restored(tui: &Tmux) {
    let screen = tui.wait_for("the terminal state", |s| s.contains("TTY="));
    assert!(screen.contains("TTY=cooked"), "raw mode left on:\n{screen}");
    assert_eq!(
        tui.format("#{alternate_on}"),
        "0",
        "still on the alternate screen:\n{screen}"
    );
    assert_eq!(tui.format("#{cursor_flag}"), "1", "cursor left hidden");
    assert_eq!(
        tui.format("#{mouse_any_flag}"),
        "0",
        "mouse capture left on"
    );
}

/// SIGTERM to the demo under its dashboard: the terminal is restored, the
/// exit code is 143, and its server is gone.
#[test]
fn sigterm_stops_the_demo_and_restores_the_terminal() {
    let w = World::bare();
    let log = w.g.log.display().to_string();
    let args: Vec<String> = ["--log-file", &log, "demo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let tui = Tmux::start(
        "demo-term",
        120,
        36,
        env!("CARGO_BIN_EXE_estx-tui"),
        &args,
        &w.g.log,
    );
    let pid = estx_pid(&log);
    // The dashboard is up on the demo's cluster.
    tui.wait_for_all(&["estx-tui", "http://127.0.0.1:", "q quit"]);
    assert_eq!(tui.format("#{alternate_on}"), "1");
    let server = osmem_processes()
        .into_iter()
        .find(|(_, args)| has_parent(args, pid))
        .map(|(p, _)| p)
        .unwrap_or_else(|| panic!("no osmem-server with -parent-pid {pid}"));

    kill("TERM", pid);
    assert_eq!(tui.wait_exit(), 143);
    assert_terminal_restored(&tui);
    let screen = tui.screen();
    assert!(screen.contains("stopped by SIGTERM"), "{screen}");
    let left: Vec<(u32, String)> = osmem_processes()
        .into_iter()
        .filter(|(p, args)| *p == server || has_parent(args, pid))
        .collect();
    assert!(
        left.is_empty(),
        "the demo left its server running: {left:?}"
    );
}

/// SIGHUP (the terminal went away) to the plain dashboard: it restores the
/// terminal and exits with 129.
#[test]
fn sighup_stops_the_dashboard_and_restores_the_terminal() {
    let w = World::new();
    let args = w.g.args();
    let tui = Tmux::start(
        "dash-hup",
        120,
        36,
        env!("CARGO_BIN_EXE_estx-tui"),
        &args,
        &w.g.log,
    );
    let pid = estx_pid(&w.g.log.display().to_string());
    tui.wait_for_all(&["estx-tui", "q quit"]);
    assert_eq!(tui.format("#{alternate_on}"), "1");
    kill("HUP", pid);
    assert_eq!(tui.wait_exit(), 129);
    assert_terminal_restored(&tui);
}

/// Everything `pipe` says, gathered as it comes by a thread of its own
/// (read it while the process runs; join the thread once it ended).
fn collect(mut pipe: Box<dyn Read + Send>) -> (Arc<Mutex<String>>, std::thread::JoinHandle<()>) {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&text);
    let handle = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    (text, handle)
}

/// Waits up to 60 s for `child` (`what`) to end after `signal`; kills it
/// and fails the test past that.
fn wait_exit(
    child: &mut std::process::Child,
    what: &str,
    signal: &str,
) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running 60 s after {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ctrl-C (SIGINT) to `demo --no-ui`: it stops the workload, still prints
/// its summary, exits with 130 and leaves no server behind.
#[test]
fn sigint_to_the_headless_demo_prints_the_summary() {
    let w = World::bare();
    let (mut c, cmd) = w.g.command(&[], &["demo", "--no-ui", "--for", "10m"]);
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn estx-tui demo");
    let pid = child.id();
    let (stdout, out_thread) = collect(Box::new(child.stdout.take().unwrap()));
    let (stderr, err_thread) = collect(Box::new(child.stderr.take().unwrap()));
    let waited = std::panic::catch_unwind(|| {
        common::wait_until_blocking("the workload runs", Duration::from_secs(60), || {
            stdout.lock().unwrap().contains("running the workload")
        })
    });
    if waited.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "the demo never started its workload\n{}\n{}",
            stdout.lock().unwrap(),
            stderr.lock().unwrap()
        );
    }
    kill("INT", pid);
    let status = wait_exit(&mut child, "demo --no-ui", "SIGINT");
    out_thread.join().unwrap();
    err_thread.join().unwrap();
    let out = Out {
        cmd,
        code: status.code().unwrap_or(-1),
        stdout: stdout.lock().unwrap().clone(),
        stderr: stderr.lock().unwrap().clone(),
    };
    assert_no_panic(&out);
    out.code(130)
        .stdout_has("workload: ")
        .stdout_has("transactions by state:")
        .stderr_has("stopped by SIGINT");
    let left: Vec<(u32, String)> = osmem_processes()
        .into_iter()
        .filter(|(_, args)| has_parent(args, pid))
        .collect();
    assert!(
        left.is_empty(),
        "the demo left its server running: {left:?}"
    );
}

/// Values out of range are usage errors (exit 2) that say what is accepted.
#[test]
fn option_values_out_of_range_are_refused() {
    let w = World::bare();
    w.run(&["demo", "--crash-rate", "2"])
        .code(2)
        .stderr_has("expected 0 to 1");
    w.run(&["list", "--state", "pendng"]).code(2).stderr_has(
        "valid states: created, pending, committed, terminating, finished, rolled-back",
    );
    w.run(&["list", "--older-than", "1h30x"])
        .code(2)
        .stderr_has("unknown unit `x`");
}

/// `demo --serve` keeps its cluster and workload up headless, printing the
/// URL the other commands can be pointed at, until SIGTERM ends it (exit 0,
/// no server left); and the demo logs into its own `demo.log`, never into
/// the operator's `estx-tui.log` (which `bundle` archives).
#[test]
fn demo_serve_stays_up_for_the_headless_commands_and_logs_apart() {
    let state = tempfile::tempdir().unwrap();
    let state_home = state.path().display().to_string();
    let estx = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        for var in ESTX_ENV {
            c.env_remove(var);
        }
        c.env("XDG_STATE_HOME", &state_home)
            .env("XDG_CONFIG_HOME", state.path().join("config"))
            .args(args)
            .stdin(Stdio::null());
        c
    };
    let mut child = estx(&["demo", "--serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn estx-tui demo --serve");
    let pid = child.id();
    let (stdout, reader) = collect(Box::new(child.stdout.take().unwrap()));
    let url_of = |text: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("demo cluster at "))
            .and_then(|rest| rest.split(';').next())
            .map(str::to_string)
    };
    let waited = std::panic::catch_unwind(|| {
        common::wait_until_blocking(
            "demo --serve prints its URL",
            Duration::from_secs(90),
            || url_of(&stdout.lock().unwrap()).is_some(),
        )
    });
    if waited.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "demo --serve never printed its URL: {}",
            stdout.lock().unwrap()
        );
    }
    let url = url_of(&stdout.lock().unwrap()).unwrap();
    assert!(
        stdout
            .lock()
            .unwrap()
            .contains(&format!("estx-tui --url {url} list --stuck")),
        "no command to point at it: {}",
        stdout.lock().unwrap()
    );

    // Still up after the seeding: a headless command works against it.
    let listed = estx(&["--url", &url, "list", "--json"]).output().unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(listed.status.code(), Some(0), "{text}");
    let rows: Vec<Value> = serde_json::from_str(&text).expect("list --json");
    assert!(!rows.is_empty(), "the demo cluster lists no transactions");
    assert!(
        child.try_wait().unwrap().is_none(),
        "demo --serve ended by itself"
    );

    kill("TERM", pid);
    let status = wait_exit(&mut child, "demo --serve", "SIGTERM");
    reader.join().unwrap();
    assert_eq!(status.code(), Some(0), "{}", stdout.lock().unwrap());
    assert!(
        common::try_http("GET", &format!("{url}/"), None).is_err(),
        "the demo cluster at {url} still answers after the demo ended"
    );

    let logs = state.path().join("estx-tui");
    let demo_log = std::fs::read_to_string(logs.join("demo.log")).expect("the demo's own log");
    assert!(
        demo_log.contains("Demo"),
        "demo.log does not name the demo: {demo_log}"
    );
    let operator_log = std::fs::read_to_string(logs.join("estx-tui.log")).unwrap_or_default();
    assert!(
        operator_log.contains("List") && !operator_log.contains("Demo"),
        "the operator's log holds the demo's lines:\n{operator_log}"
    );
}
