//! The real binary beside the application, as an operator runs it: a
//! profile naming the application's indices, the tool's recovery window,
//! the application's heartbeats (`[profiles.app.liveness]`) and, for an
//! application with names of its own, its schema map
//! (`[profiles.app.schema]`), then
//! `init` (the audit index), `recover --all-stuck --json` among the
//! interventions, and the final `audit`.

use crate::common::app::names::Names;
use crate::common::app::AppIndices;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// The binary with a profile of its own.
pub struct Binary {
    dir: tempfile::TempDir,
}

/// What a run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// What the profile `app` says.
pub struct Profile<'a> {
    pub url: &'a str,
    pub ix: &'a AppIndices,
    pub audit: &'a str,
    /// The tool's recovery window.
    pub window: Duration,
    /// The application's heartbeat timeout.
    pub timeout: Duration,
    pub names: &'static Names,
    /// Whether to give the application's names as a schema map.
    pub schema: bool,
}

impl Binary {
    /// Writes the profile `app` and runs `init` (the audit index; the
    /// application's indices exist and are left as they are).
    pub async fn new(p: &Profile<'_>) -> Binary {
        let dir = tempfile::tempdir().unwrap();
        let (url, ix, audit, window, timeout) = (p.url, p.ix, p.audit, p.window, p.timeout);
        let mut config = format!(
            "[profiles.app]\nurl = \"{url}\"\ntransactions_index = \"{}\"\naccounts_index = \"{}\"\n\
             locks_index = \"{}\"\naudit_index = \"{audit}\"\nrecovery_window = \"{}ms\"\n\
             [profiles.app.liveness]\nindex = \"{}\"\ninstance_field = \"{}.keyword\"\n\
             time_field = \"{}\"\ntimeout = \"{}ms\"\n",
            ix.transactions, ix.accounts, ix.locks, window.as_millis(), ix.heartbeats,
            p.names.instance, p.names.heartbeat, timeout.as_millis()
        );
        if p.schema {
            config.push_str(&p.names.schema_toml("app"));
        }
        std::fs::create_dir_all(dir.path().join("estx-tui")).unwrap();
        std::fs::write(dir.path().join("estx-tui/config.toml"), config).unwrap();
        let b = Binary { dir };
        let init = b.run(&["init"]).await;
        assert_eq!(init.code, 0, "{init:?}");
        b
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("estx-tui.log")
    }

    /// Runs `estx-tui --profile app ARGS` to its end.
    pub async fn run(&self, args: &[&str]) -> Run {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_estx-tui"));
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("ESTX_")) {
            c.env_remove(k);
        }
        c.env("XDG_CONFIG_HOME", self.dir.path())
            .env("ESTX_REASON", "live test beside the article's application")
            .args(["--profile", "app", "--log-file"])
            .arg(self.log())
            .args(args)
            .stdin(Stdio::null());
        let out = c.output().await.unwrap();
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(!run.stderr.contains("panicked"), "{run:?}");
        run
    }
}
