//! A tiny driver for a program running in a detached tmux session: type
//! keys, read the screen, and wait (by polling, never by sleeping) until the
//! screen shows something.
//!
//! Every [`Tmux`] runs its own tmux *server* on a private socket in a
//! temporary directory, started with `-f /dev/null`: the operator's tmux
//! sessions and `~/.tmux.conf` can neither disturb the test nor be disturbed
//! by it. Dropping the value kills that server (and with it the program
//! under test) — on success and on panic alike; on panic it first prints the
//! last screen and the program's log file, which is what one needs to see
//! why a wait timed out.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// How long any wait on the screen may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// A detached tmux session running one shell command on a private server.
pub struct Tmux {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    session: String,
    log_file: PathBuf,
}

/// Quotes `s` for `sh`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Panics with install instructions unless `tmux` can be run.
pub fn require_tmux() {
    match Command::new("tmux").arg("-V").stdin(Stdio::null()).output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`tmux -V` failed ({}): {}; the end-to-end tests need tmux: apt-get install tmux",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            panic!("tmux not found ({e}); the end-to-end tests need tmux: apt-get install tmux")
        }
    }
}

impl Tmux {
    /// Starts `program args...` in a new `cols`×`rows` session named after
    /// `tag`. When the program exits the pane prints `EXITED=<code>` and the
    /// state of the terminal (`TTY=cooked` or `TTY=raw`), then lingers so the
    /// test can read them. `log_file` is where the program was told to log
    /// (shown when the test fails).
    pub fn start(
        tag: &str,
        cols: u16,
        rows: u16,
        program: &str,
        args: &[String],
        log_file: &Path,
    ) -> Tmux {
        Tmux::start_with_env(tag, cols, rows, program, args, log_file, &[])
    }

    /// [`Tmux::start`] with `env` set for the program (e.g. `XDG_STATE_HOME`,
    /// where the dashboard's export goes).
    pub fn start_with_env(
        tag: &str,
        cols: u16,
        rows: u16,
        program: &str,
        args: &[String],
        log_file: &Path,
        env: &[(&str, &str)],
    ) -> Tmux {
        require_tmux();
        let dir = tempfile::Builder::new()
            .prefix("estx-e2e-tmux")
            .tempdir()
            .expect("temporary directory for the tmux socket");
        let socket = dir.path().join("sock");
        let session = format!("estx-e2e-{tag}-{}", std::process::id());
        // `timeout --foreground` (which keeps the program in the terminal's
        // foreground process group) is only a safety net: should the test
        // process die without running `Drop`, nothing runs for ever. Where
        // `timeout` lacks `--foreground` (busybox) the program runs bare.
        let mut line = String::from(
            "if timeout --foreground 5 true 2>/dev/null; then T='timeout --foreground 120'; else T=; fi; $T ",
        );
        line.push_str(&shell_quote(program));
        for a in args {
            line.push(' ');
            line.push_str(&shell_quote(a));
        }
        line.push_str(
            "; echo EXITED=$?; \
             if stty -a | grep -q -- ' -icanon'; then echo TTY=raw; else echo TTY=cooked; fi; \
             sleep 60",
        );
        let t = Tmux {
            _dir: dir,
            socket,
            session,
            log_file: log_file.to_path_buf(),
        };
        let mut cmd = t.command();
        cmd.args(["new-session", "-d", "-s", &t.session, "-x"])
            .arg(cols.to_string())
            .arg("-y")
            .arg(rows.to_string())
            .arg(&line);
        // The new server (and so the pane) inherits this environment: no
        // ESTX_* variable of the developer's shell may change what the
        // dashboard does, and a surrounding tmux must not be noticed.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ESTX_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env_remove("TMUX").env_remove("TMUX_PANE");
        for (key, value) in env {
            cmd.env(key, value);
        }
        let out = cmd.output().expect("run tmux new-session");
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // tmux waits `escape-time` (500 ms by default) after an Esc typed
        // at its client to tell it from an Alt-<key>; keys sent here go
        // straight to the pane, and the dashboard handles an Esc that
        // arrives glued to the next key (as Alt-<key>) itself. Zero keeps
        // the harness from depending on that timing.
        t.run(&["set-option", "-s", "escape-time", "0"]);
        t
    }

    /// `tmux -u -S <socket> -f /dev/null` with no environment surprises.
    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = self
            .command()
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("tmux {args:?}: {e}"));
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Presses keys given by tmux name (`Enter`, `Escape`, `Tab`, ...).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Resizes the session's window to `cols`×`rows` (the program sees a
    /// terminal resize).
    pub fn resize(&self, cols: u16, rows: u16) {
        let (x, y) = (cols.to_string(), rows.to_string());
        self.run(&["resize-window", "-t", &self.session, "-x", &x, "-y", &y]);
    }

    /// Closes the session's window as an operator closes a terminal: the
    /// program's terminal goes away (SIGHUP), the server stays up.
    pub fn close_window(&self) {
        // A second window keeps the server (and so this value) alive.
        self.run(&["new-window", "-d", "-t", &self.session, "sleep 60"]);
        self.run(&["kill-window", "-t", &format!("{}:0", self.session)]);
    }

    /// Types `text` literally (each character one key press).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", &self.session, "-l", "--", text]);
    }

    /// The visible screen as text, one line per row.
    pub fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The visible screen with its colours and attributes as escape
    /// sequences (`capture-pane -e`).
    pub fn screen_styled(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-e", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A tmux format evaluated for the pane, e.g. `#{alternate_on}`.
    pub fn format(&self, format: &str) -> String {
        let out = self.run(&["display-message", "-p", "-t", &self.session, format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Polls the screen until `cond` holds (panics after [`DEADLINE`]) and
    /// returns the screen that satisfied it. `before` runs before every
    /// capture (e.g. to refresh the indices).
    pub fn wait_for_with(
        &self,
        what: &str,
        mut before: impl FnMut(),
        cond: impl Fn(&str) -> bool,
    ) -> String {
        let mut last = String::new();
        super::wait_until_blocking(&format!("the screen shows {what}"), DEADLINE, || {
            before();
            last = self.screen();
            cond(&last)
        });
        last
    }

    /// [`Tmux::wait_for_with`] without a `before`.
    pub fn wait_for(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        self.wait_for_with(what, || {}, cond)
    }

    /// Waits until every one of `needles` is on the screen.
    pub fn wait_for_all(&self, needles: &[&str]) -> String {
        self.wait_for(&format!("{needles:?}"), |s| {
            needles.iter().all(|n| s.contains(n))
        })
    }

    /// Waits for the program to exit and returns its exit code.
    pub fn wait_exit(&self) -> i32 {
        let screen = self.wait_for("EXITED=<code>", |s| {
            s.lines().any(|l| l.starts_with("EXITED="))
        });
        screen
            .lines()
            .find_map(|l| l.strip_prefix("EXITED="))
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("no exit code on the screen:\n{screen}"))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let screen = self
                .command()
                .args(["capture-pane", "-p", "-t", &self.session])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_else(|e| format!("(cannot capture: {e})"));
            eprintln!(
                "----- screen of tmux session {} -----\n{screen}-----",
                self.session
            );
            let log = std::fs::read_to_string(&self.log_file).unwrap_or_default();
            let tail: String = {
                let lines: Vec<&str> = log.lines().collect();
                lines[lines.len().saturating_sub(40)..].join("\n")
            };
            eprintln!(
                "----- {} (last 40 lines) -----\n{tail}\n-----",
                self.log_file.display()
            );
        }
        let _ = self
            .command()
            .arg("kill-server")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // `self._dir` (the socket's directory) is removed after this.
    }
}
