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

/// `--log-file /dev/null` is "no log file": no warning, nothing created in
/// the state directory, and `paths` says there is none.
#[test]
fn log_file_dev_null_means_no_log() {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["--log-file", "/dev/null"];
    args.extend(UNREACHABLE);
    let out = bare(home.path(), &args);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("log file"), "{stderr}");
    assert!(!home.path().join("state/estx-tui/estx-tui.log").exists());
    let text = stdout(&bare(home.path(), &["paths", "--log-file", "/dev/null"]));
    assert!(
        text.contains("log      (none: --log-file /dev/null)\n"),
        "{text}"
    );
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

/// `completions bash | head -1`: a reader that stops early ends the
/// script's writing quietly (exit 0), no "internal error" panic. The script
/// is larger than a pipe's buffer, so the write meets the closed pipe.
#[test]
fn completions_into_a_closed_pipe_exit_quietly() {
    use std::io::Read;
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_estx-tui"))
        .args(["--log-file", "/dev/null", "completions", "bash"])
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
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

/// `cargo install --path .` from a fresh clone of this checkout's HEAD
/// installs a binary that runs and names the commit. Ignored by default:
/// it builds every dependency again (minutes on 2 cores, past what CI
/// affords per run); `--debug` keeps it to a debug build (the release
/// profile's LTO is measured in BENCHMARKS.md instead). Run it with
/// `cargo test --test cli -- --ignored cargo_install`; set
/// `ESTX_INSTALL_TARGET_DIR` to reuse a build directory between runs.
#[test]
#[ignore = "a full build of a fresh clone: run with --ignored (see docs/src/install.md)"]
fn cargo_install_from_a_fresh_clone() {
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("clone");
    let root = dir.path().join("root");
    let ok = |c: &mut Command| {
        let out = c.output().expect("run");
        assert!(out.status.success(), "{c:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let here = env!("CARGO_MANIFEST_DIR");
    ok(Command::new("git")
        .args(["clone", "--quiet", "--no-hardlinks", here])
        .arg(&clone));
    let head = ok(Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(&clone));
    let target = std::env::var_os("ESTX_INSTALL_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("target"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    ok(Command::new(cargo)
        .args(["install", "--quiet", "--locked", "--debug", "--path"])
        .arg(&clone)
        .arg("--root")
        .arg(&root)
        .env("CARGO_TARGET_DIR", target));
    let bin = root.join("bin/estx-tui");
    let version = ok(Command::new(&bin).arg("--version"));
    assert!(version.contains(&head), "{version} names {head}");
    let home = dir.path().join("home");
    let out = Command::new(&bin)
        .arg("paths")
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// The Debian package: `packaging/build-deb deb-check` builds it with
/// cargo-deb, `dpkg-deb --contents` lists the binary, the man page, the
/// three completions, the licence and the changelog in their system places,
/// `dpkg -i` installs it, and the installed binary, man page and bash
/// completion work; `dpkg -r` removes it again. Ignored by default: it
/// builds every dependency in the deb-check profile (minutes on 2 cores)
/// and needs cargo-deb (`cargo install cargo-deb`), dpkg, man and root.
/// Run it with `cargo test --test cli -- --ignored deb_package`.
#[test]
#[ignore = "builds and installs the .deb (minutes, cargo-deb, root): run with --ignored (see docs/src/install.md)"]
fn deb_package_installs_the_binary_man_page_and_completions() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |c: &mut Command| {
        let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
        assert!(out.status.success(), "{c:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(Command::new(here.join("packaging/build-deb"))
        .arg("deb-check")
        .current_dir(here));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| here.join("target"));
    let deb = std::fs::read_dir(target.join("debian"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(&format!("estx-tui_{}-", env!("CARGO_PKG_VERSION")))
                && name.ends_with(".deb")
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .expect("a .deb in target/debian");
    let contents = run(Command::new("dpkg-deb").arg("--contents").arg(&deb));
    for path in [
        "./usr/bin/estx-tui",
        "./usr/share/man/man1/estx-tui.1.gz",
        "./usr/share/bash-completion/completions/estx-tui",
        "./usr/share/zsh/vendor-completions/_estx-tui",
        "./usr/share/fish/vendor_completions.d/estx-tui.fish",
        "./usr/share/doc/estx-tui/copyright",
        "./usr/share/doc/estx-tui/changelog.gz",
        "./usr/share/doc/estx-tui/README.md",
    ] {
        assert!(
            contents.lines().any(|l| l.ends_with(&format!(" {path}"))),
            "{path} not in the package:\n{contents}"
        );
    }
    run(Command::new("dpkg").arg("-i").arg(&deb));
    let version = run(Command::new("/usr/bin/estx-tui").arg("--version"));
    assert!(
        version.starts_with(&format!("estx-tui {}", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    let page = run(Command::new("man").args(["-w", "estx-tui"]));
    assert_eq!(page.trim(), "/usr/share/man/man1/estx-tui.1.gz");
    // The installed completion: sourced, it completes `estx-tui rel` to
    // the subcommand release-lock.
    let words = run(Command::new("bash").arg("-c").arg(
        "source /usr/share/bash-completion/completions/estx-tui && \
         COMP_WORDS=(estx-tui rel) COMP_CWORD=1 COMP_LINE='estx-tui rel' COMP_POINT=12 && \
         f=$(complete -p estx-tui | grep -o -- '-F [^ ]*' | cut -d' ' -f2) && \
         $f estx-tui rel estx-tui && echo \"${COMPREPLY[@]}\"",
    ));
    assert!(words.contains("release-lock"), "{words}");
    run(Command::new("dpkg").args(["-r", "estx-tui"]));
}
