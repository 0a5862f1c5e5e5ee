//! The tool as a well-packaged citizen of an operator's machine, run with no
//! cluster: the per-user private log (0700/0600, a planted symlink refused),
//! and the packaging commands.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// The binary with a clean environment: no `ESTX_*`, HOME and
/// XDG_STATE_HOME/XDG_CONFIG_HOME under `home`, no stdin.
fn bare(home: &Path, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
    for var in super::ESTX_ENV {
        c.env_remove(var);
    }
    c.env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("ESTX_LOG")
        .args(args)
        .stdin(Stdio::null());
    c.output().expect("run estx-tui")
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// An unreachable cluster: the command fails fast, but it logs.
const UNREACHABLE: [&str; 5] = ["--url", "http://127.0.0.1:9", "--timeout", "1s", "check"];

#[test]
fn the_log_is_per_user_and_private() {
    let home = tempfile::tempdir().unwrap();
    let out = bare(home.path(), &UNREACHABLE);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let dir = home.path().join("state/estx-tui");
    let log = dir.join("estx-tui.log");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&log), 0o600);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("exit"), "{text}");
    // --log-level warn: the info lines are gone.
    std::fs::remove_file(&log).unwrap();
    let mut args = vec!["--log-level", "warn"];
    args.extend(UNREACHABLE);
    bare(home.path(), &args);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("WARN") && !text.contains("INFO"), "{text}");
}

#[test]
fn a_planted_log_symlink_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("state/estx-tui");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = home.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("estx-tui.log")).unwrap();
    let out = bare(home.path(), &UNREACHABLE);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot open log file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}
