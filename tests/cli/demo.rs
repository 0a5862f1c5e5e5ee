//! `estx-tui` CLI tests: seed and demo.

use super::*;

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
