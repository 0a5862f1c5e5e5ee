//! The demo's own cluster: a spawned `osmem-server` (an in-memory server that
//! speaks the Elasticsearch/OpenSearch document API) on a free local port.
//!
//! The binary is found, or installed on first use, by [`find_or_install`].
//! The server is started
//! with `-parent-pid <our pid>`, so it exits with us even if we crash; it is
//! also killed and reaped on [`OsmemServer::stop`] and on drop. Its output
//! never reaches our terminal (the dashboard owns it): stdout is drained
//! after the banner, stderr goes to a log file in the temporary directory.

use super::error::DemoError;
use super::install::find_or_install;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use super::install::BIN_ENV;

/// How long the server may take to print its URL and accept connections.
pub const STARTUP_DEADLINE: Duration = Duration::from_secs(20);

/// A running `osmem-server`, killed and reaped when dropped.
#[derive(Debug)]
pub struct OsmemServer {
    url: String,
    child: Option<Child>,
    log: Option<PathBuf>,
}

impl OsmemServer {
    /// Finds the binary, installing it on first use ([`find_or_install`]),
    /// and starts it on `127.0.0.1:<free port>`, waiting up to 20 s for it to
    /// announce its URL. What it does goes to the log.
    pub fn start() -> Result<OsmemServer, DemoError> {
        OsmemServer::start_reporting(&mut |step| tracing::info!("{step}"))
    }

    /// [`OsmemServer::start`], telling `progress` what it does (finding,
    /// installing, starting), one line per step.
    pub fn start_reporting(progress: &mut dyn FnMut(&str)) -> Result<OsmemServer, DemoError> {
        let bin = find_or_install(progress)?;
        progress(&format!("starting osmem-server ({})...", bin.display()));
        OsmemServer::start_binary(&bin)
    }

    /// Starts the given binary (see [`OsmemServer::start`]).
    pub fn start_binary(bin: &Path) -> Result<OsmemServer, DemoError> {
        let log = log_file();
        let stderr = log
            .as_ref()
            .and_then(|(_, f)| f.try_clone().ok())
            .map_or_else(Stdio::null, Stdio::from);
        let pid = std::process::id().to_string();
        let spawned = Command::new(bin)
            .args([
                "-addr",
                "127.0.0.1:0",
                "-no-stdin-watch",
                "-parent-pid",
                &pid,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn();
        let log = log.map(|(p, _)| p);
        // The log's tail goes into the error, so the file is not kept.
        let start_error = |reason: String, log: &Option<PathBuf>| DemoError::ServerStart {
            bin: bin.to_path_buf(),
            reason,
            log: log.as_deref().map(take_log_tail).unwrap_or_default(),
        };
        let mut child = spawned.map_err(|e| start_error(format!("cannot run it: {e}"), &log))?;
        let started = read_banner(&mut child).and_then(|url| wait_listening(&url).map(|()| url));
        let url = match started {
            Ok(url) => url,
            Err(reason) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(start_error(reason, &log));
            }
        };
        let server = OsmemServer {
            url,
            child: Some(child),
            log,
        };
        tracing::info!(url = %server.url, log = ?server.log, "osmem-server started");
        Ok(server)
    }

    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:40113`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the server's stderr goes while it runs (removed on stop and drop).
    pub fn log_path(&self) -> Option<&Path> {
        self.log.as_deref()
    }

    /// Kills the server and waits for it to exit.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(log) = self.log.take() {
            let _ = std::fs::remove_file(log);
        }
    }
}

impl Drop for OsmemServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A fresh log file for one server's stderr, if the temp dir is writable.
fn log_file() -> Option<(PathBuf, File)> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("estx-osmem-{}-{n}.log", std::process::id()));
    File::create(&path).ok().map(|f| (path, f))
}

/// The last lines of the log, prefixed with a newline (empty when there is
/// none); the file is removed.
fn take_log_tail(path: &Path) -> String {
    const TAIL: u64 = 2000;
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    drop(f);
    let _ = std::fs::remove_file(path);
    let text = String::from_utf8_lossy(&buf);
    if text.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- osmem-server stderr ---\n{}", text.trim_end())
    }
}

/// Reads the first stdout line (`{"url": ...}`) within the deadline, then
/// keeps draining stdout on a thread so the server never blocks on a pipe.
fn read_banner(child: &mut Child) -> Result<String, String> {
    let pipe = child.stdout.take().ok_or("its stdout was not captured")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = String::new();
        let result = reader.read_line(&mut line).map(|_| line);
        let _ = tx.send(result);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = match rx.recv_timeout(STARTUP_DEADLINE) {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(Ok(_)) => return Err("it exited without printing its URL".into()),
        Ok(Err(e)) => return Err(format!("reading its stdout failed: {e}")),
        Err(_) => return Err(format!("no URL on stdout within {STARTUP_DEADLINE:?}")),
    };
    let banner: serde_json::Value = serde_json::from_str(line.trim())
        .map_err(|e| format!("first stdout line {line:?} is not JSON: {e}"))?;
    banner
        .get("url")
        .and_then(serde_json::Value::as_str)
        .map(|u| u.trim_end_matches('/').to_string())
        .ok_or_else(|| format!("first stdout line {line:?} has no \"url\""))
}

/// Waits until the announced address accepts TCP connections.
fn wait_listening(url: &str) -> Result<(), String> {
    let parsed =
        url::Url::parse(url).map_err(|e| format!("announced URL {url:?} is invalid: {e}"))?;
    let host = parsed.host_str().unwrap_or("127.0.0.1").to_string();
    let port = parsed.port_or_known_default().unwrap_or(9200);
    let deadline = Instant::now() + STARTUP_DEADLINE;
    loop {
        let addrs = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {url}: {e}"))?;
        for addr in addrs {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
        }
        if Instant::now() >= deadline {
            return Err(format!("{url} does not accept connections"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_the_install_command() {
        let e = DemoError::ServerNotFound {
            detail: "nowhere".into(),
        };
        assert!(e.to_string().contains("pip install --target "), "{e}");
    }

    #[test]
    fn a_binary_that_prints_no_banner_is_reported() {
        let Some(bin) = super::super::install::find_on_path("true") else {
            return;
        };
        let e = OsmemServer::start_binary(&bin).unwrap_err();
        assert!(e.to_string().contains("without printing its URL"), "{e}");
    }
}
