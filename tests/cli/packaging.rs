//! The tool as a well-packaged citizen of an operator's machine, run with no
//! cluster: the per-user private log (0700/0600, a planted symlink refused),
//! shell completions, the man page, `paths`, `--version` with the commit,
//! and subcommand help apart from the global options.

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

fn stdout(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// bash sources the completion script and registers it for `estx-tui`;
/// every shell gets a script.
#[test]
fn bash_sources_the_completion_script() {
    let bin = env!("CARGO_BIN_EXE_estx-tui");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{bin}' completions bash) && complete -p estx-tui"
        ))
        .output()
        .expect("run bash");
    let text = stdout(&out);
    assert!(
        text.contains("complete ") && text.trim_end().ends_with(" estx-tui"),
        "{text}"
    );
    let home = tempfile::tempdir().unwrap();
    for shell in ["zsh", "fish", "powershell"] {
        let script = stdout(&bare(home.path(), &["completions", shell]));
        assert!(
            script.contains("recover") && script.contains("release-lock"),
            "{shell}"
        );
    }
}

/// The man page renders with `man -l` when man is installed; it is roff
/// naming every command either way.
#[test]
fn the_man_page_renders() {
    let home = tempfile::tempdir().unwrap();
    let roff = stdout(&bare(home.path(), &["man"]));
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH estx-tui 1"),
        "{roff}"
    );
    assert!(
        roff.contains("release\\-lock") && roff.contains("completions"),
        "{roff}"
    );
    let page = home.path().join("estx-tui.1");
    std::fs::write(&page, &roff).unwrap();
    let man = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output();
    if let Ok(man) = man {
        let text = stdout(&man);
        assert!(text.contains("NAME") && text.contains("estx-tui"), "{text}");
        assert!(text.contains("two-phase-commit"), "{text}");
    }
}

#[test]
fn paths_prints_the_locations_in_force() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();
    let text = stdout(&bare(home.path(), &["paths"]));
    assert!(
        text.contains(&format!(
            "config   {h}/config/estx-tui/config.toml (not there yet)\n"
        )),
        "{text}"
    );
    assert!(text.contains("profile  (none)\n"), "{text}");
    assert!(text.contains("cluster  http://localhost:9200\n"), "{text}");
    // This very run created the log.
    assert!(
        text.contains(&format!("log      {h}/state/estx-tui/estx-tui.log\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("state    {h}/state/estx-tui\n")),
        "{text}"
    );
    let other = home.path().join("other.log");
    let text = stdout(&bare(
        home.path(),
        &["paths", "--log-file", &other.display().to_string()],
    ));
    assert!(
        text.contains(&format!("log      {}\n", other.display())),
        "{text}"
    );
}

#[test]
fn paths_shows_the_url_a_cloud_id_names() {
    let home = tempfile::tempdir().unwrap();
    // Elastic's published example Cloud ID (Beats docs, `cloud.id`).
    let id = "staging:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRjZWM2ZjI2MWE3NGJmMjRjZTMzYmI4ODExYjg0Mjk0ZiRjNmMyY2E2ZDA0MjI0OWFmMGNjN2Q3YTllOTYyNTc0Mw==";
    let text = stdout(&bare(home.path(), &["paths", "--cloud-id", id]));
    assert!(
        text.contains(
            "cluster  https://cec6f261a74bf24ce33bb8811b84294f.us-east-1.aws.found.io/\n"
        ),
        "{text}"
    );
}

/// `--version` is `estx-tui X.Y.Z (commit)` in a git checkout, the bare
/// version outside one.
#[test]
fn version_carries_the_commit() {
    let home = tempfile::tempdir().unwrap();
    let text = stdout(&bare(home.path(), &["--version"]));
    let line = text.trim_end();
    let rest = line
        .strip_prefix(&format!("estx-tui {} ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let in_git = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .is_ok_and(|o| o.status.success());
    if in_git {
        let commit = rest.trim_start_matches('(').trim_end_matches(')');
        assert!(rest.starts_with('(') && rest.ends_with(')'), "{line}");
        assert!(
            commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{line}"
        );
    }
}

/// `list --help`: the command's own options first, the global and
/// dashboard ones under their own headings.
#[test]
fn subcommand_help_keeps_its_own_options_apart() {
    let home = tempfile::tempdir().unwrap();
    let text = stdout(&bare(home.path(), &["list", "--help"]));
    let (own, rest) = text
        .split_once("\nGlobal options:\n")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(own.contains("--state") && !own.contains("--url"), "{own}");
    let (global, dashboard) = rest
        .split_once("\nDashboard options:\n")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        global.contains("--url") && global.contains("--log-level"),
        "{global}"
    );
    assert!(
        !global.contains("--state") && dashboard.contains("--interval"),
        "{dashboard}"
    );
}
