//! The cluster under test: an `osmem-server` started through the library's
//! own launcher ([`estx::demo::OsmemServer`], the one `estx-tui demo` uses,
//! which also installs the server into the user's cache on first use), or
//! the real cluster named by `ESTX_TEST_URL`, plus collision-free index
//! names. If no server can be found or installed the test fails with the
//! install command; it never skips.

use estx::demo::{install_command, OsmemServer};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Environment variable naming an external cluster to test against instead of
/// spawning `osmem-server`.
pub const TEST_URL_ENV: &str = "ESTX_TEST_URL";

/// Environment variable naming the `osmem-server` binary explicitly.
pub const SERVER_BIN_ENV: &str = estx::demo::server::BIN_ENV;

/// How long the spawned server may take to answer after announcing its URL.
const STARTUP_DEADLINE: std::time::Duration = estx::demo::server::STARTUP_DEADLINE;

/// A cluster for one test (or, via [`TestServer::shared`], for a whole test
/// binary). A spawned server is killed and reaped when this value is dropped.
pub struct TestServer {
    url: String,
    server: Option<OsmemServer>,
}

impl TestServer {
    /// Returns the cluster to test against.
    ///
    /// If `ESTX_TEST_URL` is set (and non-empty) that cluster is used and
    /// nothing is spawned; otherwise a fresh `osmem-server` is started on
    /// `127.0.0.1:<free port>`. Panics (with install instructions) if the
    /// server cannot be found or does not come up.
    pub fn start() -> TestServer {
        if let Some(url) = external_url() {
            return TestServer { url, server: None };
        }
        let server = OsmemServer::start_binary(server_binary())
            .unwrap_or_else(|e| panic!("{e}\n{}", install_hint()));
        let url = server.url().to_string();
        // The banner is printed once the socket listens; make sure the HTTP
        // layer answers before handing the server to a test.
        super::wait_until_blocking("osmem-server answers GET /", STARTUP_DEADLINE, || {
            matches!(
                super::try_http("GET", &format!("{url}/"), None),
                Ok((200, _))
            )
        });
        TestServer {
            url,
            server: Some(server),
        }
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
        self.server.is_none()
    }

    /// What the spawned server has written to its log so far (empty for an
    /// external cluster); handy in assertion messages.
    pub fn server_log(&self) -> String {
        self.server
            .as_ref()
            .and_then(|s| s.log_path())
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
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
    /// `{prefix}audit`.
    pub audit: String,
    /// `{prefix}acks`.
    pub acks: String,
}

impl TestIndices {
    /// The same names as the library's [`Indices`](estx::protocol::Indices).
    pub fn indices(&self) -> estx::protocol::Indices {
        estx::protocol::Indices {
            transactions: self.transactions.clone(),
            accounts: self.accounts.clone(),
            locks: self.locks.clone(),
            audit: self.audit.clone(),
            acks: self.acks.clone(),
            locks_named: true,
        }
    }

    /// Fresh names under a new random prefix.
    pub fn unique() -> TestIndices {
        let prefix = unique_prefix();
        TestIndices {
            transactions: format!("{prefix}transactions"),
            accounts: format!("{prefix}accounts"),
            locks: format!("{prefix}locks"),
            audit: format!("{prefix}audit"),
            acks: format!("{prefix}acks"),
            prefix,
        }
    }
}

/// The `osmem-server` binary, found (or installed) once per test binary by
/// the library's [`estx::demo::find_or_install`]; what it does goes to stderr.
fn server_binary() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        estx::demo::find_or_install(&mut |step| eprintln!("test harness: {step}"))
            .unwrap_or_else(|e| panic!("{e}\n{}", install_hint()))
    })
}

/// The message every "cannot find / start the server" panic carries.
fn install_hint() -> String {
    format!(
        "the integration tests need osmem-server: install it with `{}` \
         (or set {SERVER_BIN_ENV}=/path/to/osmem-server, or {TEST_URL_ENV}=http://host:9200 to test \
         against a real cluster)",
        install_command()
    )
}

/// `ESTX_TEST_URL` without trailing slashes, if set and non-empty.
fn external_url() -> Option<String> {
    let url = std::env::var(TEST_URL_ENV).ok()?;
    let url = url.trim().trim_end_matches('/');
    (!url.is_empty()).then(|| url.to_string())
}

/// Creates `ix`'s four indices with the mappings `init` ships (the audit
/// index included): the benchmarks' fresh start.
pub async fn create_shipped_indices(
    cluster: &estx::cluster::Cluster,
    ix: &estx::protocol::Indices,
) {
    for (name, body) in
        estx::protocol::setup::index_bodies(ix, &Default::default()).expect("mappings")
    {
        cluster
            .create_index(&name, body)
            .await
            .expect("create index");
    }
}

/// The binary's global options for `url`, the indices `ix` and the log
/// file `log`: what every run of the real binary in the tests and the
/// benchmarks starts with.
pub fn binary_args(url: &str, ix: &estx::protocol::Indices, log: &std::path::Path) -> Vec<String> {
    [
        "--url",
        url,
        "--transactions-index",
        &ix.transactions,
        "--accounts-index",
        &ix.accounts,
        "--locks-index",
        &ix.locks,
        "--audit-index",
        &ix.audit,
        "--acks-index",
        &ix.acks,
        "--log-file",
        &log.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
