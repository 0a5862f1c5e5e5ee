//! The cluster under test: a spawned `osmem-server`, or the real cluster
//! named by `ESTX_TEST_URL`, plus collision-free index names.
//!
//! The binary is looked up in this order: `$OSMEM_SERVER_BIN`, `osmem-server`
//! on `PATH`, then the `osmem_server` Python package
//! (`python3 -c 'import osmem_server; print(osmem_server.resolve_binary())'`).
//! If none is found the test fails with install instructions; it never skips.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Environment variable naming an external cluster to test against instead of
/// spawning `osmem-server`.
pub const TEST_URL_ENV: &str = "ESTX_TEST_URL";

/// Environment variable naming the `osmem-server` binary explicitly.
pub const SERVER_BIN_ENV: &str = "OSMEM_SERVER_BIN";

/// The pinned `osmem-server` release the tests are written against.
pub const OSMEM_SERVER_PIP_SPEC: &str = "osmem-server==0.1.6";

/// How long the spawned server may take to announce its URL.
const STARTUP_DEADLINE: Duration = Duration::from_secs(20);

/// A cluster for one test (or, via [`TestServer::shared`], for a whole test
/// binary). A spawned server is killed and reaped when this value is dropped.
pub struct TestServer {
    url: String,
    child: Option<Child>,
    stderr: Arc<Mutex<String>>,
}

impl TestServer {
    /// Returns the cluster to test against.
    ///
    /// If `ESTX_TEST_URL` is set (and non-empty) that cluster is used and
    /// nothing is spawned; otherwise a fresh `osmem-server` is started on
    /// `127.0.0.1:<free port>`. Panics (with install instructions) if the
    /// server cannot be found or does not come up within 20 s.
    pub fn start() -> TestServer {
        if let Some(url) = external_url() {
            return TestServer {
                url,
                child: None,
                stderr: Arc::default(),
            };
        }
        spawn(&find_binary())
    }

    /// One server per test binary, started on first use and shared by every
    /// test in it. It is never dropped; it exits with the test process
    /// because it is started with `-parent-pid`. Tests sharing it must use
    /// [`TestIndices::unique`] names.
    pub fn shared() -> &'static TestServer {
        static SHARED: OnceLock<TestServer> = OnceLock::new();
        SHARED.get_or_init(TestServer::start)
    }

    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:40113`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `true` when this is the cluster from `ESTX_TEST_URL` rather than a
    /// server spawned (and owned) by this process.
    pub fn is_external(&self) -> bool {
        self.child.is_none()
    }

    /// Everything the spawned server has written to stderr so far (empty for
    /// an external cluster); handy in assertion messages.
    pub fn server_log(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A short random lowercase prefix such as `t3k9x2-`, distinct per call, so
/// that tests sharing one real cluster never touch each other's indices.
pub fn unique_prefix() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    // Index names must not start with `-`, `_` or `+`: always start with a letter.
    let mut prefix = String::from("t");
    for _ in 0..6 {
        prefix.push(ALPHABET[rand::random_range(0..ALPHABET.len())] as char);
    }
    prefix.push('-');
    prefix
}

/// The three index names a test works with, all under one [`unique_prefix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestIndices {
    /// The prefix shared by all three names, e.g. `t3k9x2-`.
    pub prefix: String,
    /// `{prefix}transactions`.
    pub transactions: String,
    /// `{prefix}accounts`.
    pub accounts: String,
    /// `{prefix}locks`.
    pub locks: String,
}

impl TestIndices {
    /// Fresh names under a new random prefix.
    pub fn unique() -> TestIndices {
        let prefix = unique_prefix();
        TestIndices {
            transactions: format!("{prefix}transactions"),
            accounts: format!("{prefix}accounts"),
            locks: format!("{prefix}locks"),
            prefix,
        }
    }
}

/// The message every "cannot find / start the server" panic carries.
fn install_hint() -> String {
    format!(
        "the integration tests need osmem-server: install it with `pip install {OSMEM_SERVER_PIP_SPEC}` \
         (or set {SERVER_BIN_ENV}=/path/to/osmem-server, or {TEST_URL_ENV}=http://host:9200 to test \
         against a real cluster)"
    )
}

/// `ESTX_TEST_URL` without trailing slashes, if set and non-empty.
fn external_url() -> Option<String> {
    let url = std::env::var(TEST_URL_ENV).ok()?;
    let url = url.trim().trim_end_matches('/');
    (!url.is_empty()).then(|| url.to_string())
}

/// Finds the `osmem-server` binary or panics with [`install_hint`].
fn find_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os(SERVER_BIN_ENV).filter(|v| !v.is_empty()) {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "{SERVER_BIN_ENV}={} does not name a file; {}",
            bin.display(),
            install_hint()
        );
        return bin;
    }
    if let Some(bin) = find_on_path("osmem-server") {
        return bin;
    }
    let mut problems = Vec::new();
    for python in ["python3", "python"] {
        let output = Command::new(python)
            .args([
                "-c",
                "import osmem_server; print(osmem_server.resolve_binary())",
            ])
            .stdin(Stdio::null())
            .output();
        match output {
            Ok(out) if out.status.success() => {
                let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
                let bin = PathBuf::from(&path);
                if bin.is_file() {
                    return bin;
                }
                problems.push(format!("{python} reported {path:?}, which is not a file"));
            }
            Ok(out) => problems.push(format!(
                "{python}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => problems.push(format!("{python}: {e}")),
        }
    }
    panic!(
        "osmem-server not found ({SERVER_BIN_ENV} unset, not on PATH, Python package missing: {}); {}",
        problems.join("; "),
        install_hint()
    );
}

/// Looks for an executable file called `name` in the directories of `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Spawns `bin`, waits (up to [`STARTUP_DEADLINE`]) for its JSON banner and
/// returns the running server.
fn spawn(bin: &Path) -> TestServer {
    let mut child = Command::new(bin)
        .args([
            "-addr",
            "127.0.0.1:0",
            "-no-stdin-watch",
            "-parent-pid",
            &std::process::id().to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {}", bin.display(), install_hint()));

    // Collect stderr in the background so failures can show it and the child
    // can never block on a full pipe.
    let stderr = Arc::new(Mutex::new(String::new()));
    if let Some(mut pipe) = child.stderr.take() {
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut s) = sink.lock() {
                    if s.len() < 1 << 20 {
                        s.push_str(&String::from_utf8_lossy(&buf[..n]));
                    }
                }
            }
        });
    }

    // Read the banner line on a thread so that we can apply a deadline, then
    // keep draining stdout for the lifetime of the child.
    let (tx, rx) = mpsc::channel();
    if let Some(pipe) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut line = String::new();
            let result = reader.read_line(&mut line).map(|_| line);
            let _ = tx.send(result);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
    }

    let started = Instant::now();
    let fail = |child: &mut Child, why: String| -> ! {
        let _ = child.kill();
        let _ = child.wait();
        // Give the stderr thread a moment to collect what the child printed.
        let log_deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < log_deadline && stderr.lock().map(|s| s.is_empty()).unwrap_or(false)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let log = stderr.lock().map(|s| s.clone()).unwrap_or_default();
        panic!(
            "osmem-server at {} did not start: {why}\n--- server stderr ---\n{log}\n---\n{}",
            bin.display(),
            install_hint()
        );
    };
    let line = match rx.recv_timeout(STARTUP_DEADLINE) {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(Ok(_)) => fail(&mut child, "it exited without printing its URL".into()),
        Ok(Err(e)) => fail(&mut child, format!("reading its stdout failed: {e}")),
        Err(_) => fail(
            &mut child,
            format!("no URL on stdout within {:?}", started.elapsed()),
        ),
    };
    let banner: serde_json::Value = match serde_json::from_str(line.trim()) {
        Ok(v) => v,
        Err(e) => fail(
            &mut child,
            format!("first stdout line {line:?} is not JSON: {e}"),
        ),
    };
    let url = match banner.get("url").and_then(|u| u.as_str()) {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => fail(
            &mut child,
            format!("first stdout line {line:?} has no \"url\""),
        ),
    };

    let server = TestServer {
        url,
        child: Some(child),
        stderr,
    };
    // The banner is printed once the socket listens, but make sure the HTTP
    // layer answers before handing the server to a test.
    super::wait_until_blocking("osmem-server answers GET /", STARTUP_DEADLINE, || {
        matches!(
            super::try_http("GET", &format!("{}/", server.url), None),
            Ok((200, _))
        )
    });
    server
}
