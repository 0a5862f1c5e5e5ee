//! The tool's own files on the operator's machine (the log, the state
//! directory the dashboard's exports go to), private to the user who runs
//! the tool. A leaf: the CLI, the dashboard and `main` use it.
//!
//! The log file by default is
//! `$XDG_STATE_HOME/estx-tui/estx-tui.log` (else
//! `~/.local/state/estx-tui/estx-tui.log`), never a shared file in the
//! temporary directory that another user of a jump host could read or plant
//! first. The directory is created 0700, the file 0600, opened without
//! following a symlink (`O_NOFOLLOW`) and refused unless it belongs to us.
//! [`RotatingFile`] keeps it under [`MAX_BYTES`]: the full file becomes
//! `.1` (`.1` becomes `.2`, ...), [`KEPT`] old files are kept.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Size past which the log is rotated.
pub const MAX_BYTES: u64 = 10 * 1024 * 1024;
/// How many rotated files are kept (`.1` to `.KEPT`).
pub const KEPT: usize = 3;

/// The tool's state directory (default log, exports, bundles' scratch):
/// `$XDG_STATE_HOME/estx-tui` (used only when absolute, as the XDG spec
/// says), else `~/.local/state/estx-tui`; `None` when neither is set.
pub fn state_dir(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let state = match xdg_state_home.filter(|s| Path::new(s).is_absolute()) {
        Some(s) => PathBuf::from(s),
        None => Path::new(home.filter(|h| !h.is_empty())?).join(".local/state"),
    };
    Some(state.join("estx-tui"))
}

/// [`state_dir`] from this process's environment: what `paths` shows.
pub fn state_dir_from_env() -> Option<PathBuf> {
    let var = |k| std::env::var(k).ok();
    state_dir(var("XDG_STATE_HOME").as_deref(), var("HOME").as_deref())
}

/// Whose log a run writes by default: the operator's, or the demo's own
/// (its workload logs every step: kept out of the log an operator reads and
/// `bundle` archives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogOf {
    /// Every command but the demo: `estx-tui.log`.
    Operator,
    /// `estx-tui demo`: `demo.log`.
    Demo,
}

impl LogOf {
    fn file_name(self) -> &'static str {
        match self {
            LogOf::Operator => "estx-tui.log",
            LogOf::Demo => "demo.log",
        }
    }
}

/// The default log file, `estx-tui.log` in the [`state_dir`].
pub fn default_path(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    default_path_of(LogOf::Operator, xdg_state_home, home)
}

/// The default log file of `whose` run in the [`state_dir`].
pub fn default_path_of(
    whose: LogOf,
    xdg_state_home: Option<&str>,
    home: Option<&str>,
) -> Option<PathBuf> {
    Some(state_dir(xdg_state_home, home)?.join(whose.file_name()))
}

/// [`default_path`] from this process's environment.
pub fn default_path_from_env() -> Option<PathBuf> {
    default_path_of_from_env(LogOf::Operator)
}

/// [`default_path_of`] from this process's environment.
pub fn default_path_of_from_env(whose: LogOf) -> Option<PathBuf> {
    let var = |k| std::env::var(k).ok();
    default_path_of(
        whose,
        var("XDG_STATE_HOME").as_deref(),
        var("HOME").as_deref(),
    )
}

/// Creates `dir` (and its parents) private to the user, 0700; refuses one
/// that is a symlink or belongs to someone else, narrows one of ours to 0700.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let m = std::fs::symlink_metadata(dir)?;
    if !m.is_dir() || m.uid() != effective_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a directory of ours", dir.display()),
        ));
    }
    if m.mode() & 0o077 != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Opens `path` for appending, created 0600, without following a symlink;
/// refuses a file that is not a regular file of ours and narrows an
/// existing one to 0600.
pub fn open_private(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let m = file.metadata()?;
    if !m.is_file() || m.uid() != effective_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a file of ours", path.display()),
        ));
    }
    if m.mode() & 0o077 != 0 {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Where the ids a stopped bulk run `name` left go unless told otherwise:
/// `ids/NAME.ids` in the [`state_dir`] (`None`: no state directory).
pub fn left_ids_path(name: &str) -> Option<PathBuf> {
    Some(
        state_dir_from_env()?
            .join("ids")
            .join(format!("{name}.ids")),
    )
}

/// The first line of a stopped job's ids file, before the job's id: the
/// file names its job, so `--ids-from` it recognises the job's own writes
/// (a comment line: any other reader skips it).
const JOB_LINE: &str = "# estx-tui job ";

/// The job whose stopped run wrote the ids file `text`, as its first line
/// says.
pub fn job_of(text: &str) -> Option<String> {
    let rest = text.lines().next()?.strip_prefix(JOB_LINE)?;
    let id = rest.split(':').next()?.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// Writes `left` one id a line (what `--ids-from` reads) to `to`, or to
/// [`left_ids_path`] (its directory 0700; the file 0600, no symlink
/// followed), after a comment line naming the `job` that left them, if any
/// ([`job_of`]); returns where. The command line's stopped run and the
/// dashboard's both write them so (a dry run's names no job).
pub fn write_left_ids(
    name: &str,
    job: Option<&str>,
    left: &[String],
    to: Option<&Path>,
) -> io::Result<PathBuf> {
    let path = match to {
        Some(p) => p.to_path_buf(),
        None => {
            let path = left_ids_path(name)
                .ok_or_else(|| io::Error::other("no state directory (set HOME)"))?;
            if let Some(dir) = path.parent() {
                private_dir(dir)?;
            }
            path
        }
    };
    let mut file = open_private(&path)?;
    file.set_len(0)?;
    let mut text = job.map_or(String::new(), |job| {
        format!("{JOB_LINE}{job}: the transactions it left when stopped\n")
    });
    text.push_str(&left.join("\n"));
    text.push('\n');
    file.write_all(text.as_bytes())?;
    Ok(path)
}

/// An appending log file that rotates itself past `max` bytes.
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    file: File,
    size: u64,
    max: u64,
}

impl RotatingFile {
    /// Opens `path` with [`open_private`], rotating first if it is full.
    pub fn open(path: &Path, max: u64) -> io::Result<RotatingFile> {
        let file = open_private(path)?;
        let size = file.metadata()?.len();
        let mut f = RotatingFile {
            path: path.to_path_buf(),
            file,
            size,
            max,
        };
        if size >= max {
            f.rotate()?;
        }
        Ok(f)
    }

    fn rotated(&self, n: usize) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    }

    /// `.KEPT-1` → `.KEPT`, ..., the log → `.1`, then a fresh log.
    fn rotate(&mut self) -> io::Result<()> {
        for n in (1..KEPT).rev() {
            let from = self.rotated(n);
            if from.exists() {
                std::fs::rename(&from, self.rotated(n + 1))?;
            }
        }
        std::fs::rename(&self.path, self.rotated(1))?;
        self.file = open_private(&self.path)?;
        self.size = 0;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.size > 0 && self.size + buf.len() as u64 > self.max {
            self.rotate()?;
        }
        let n = self.file.write(buf)?;
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_stopped_jobs_ids_file_names_its_job_on_its_first_line() {
        let text = "# estx-tui job 20260101T000000.000Z-recover-0000beef: the transactions it left when stopped\nt-1\n";
        assert_eq!(
            job_of(text).as_deref(),
            Some("20260101T000000.000Z-recover-0000beef")
        );
        assert_eq!(job_of("t-1\n# estx-tui job x: later\n"), None);
        assert_eq!(job_of("# incident 42\nt-1\n"), None);
        assert_eq!(job_of(""), None);
    }

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).map_or(0, |m| m.permissions().mode() & 0o777)
    }

    #[test]
    fn the_default_is_per_user_state() {
        assert_eq!(
            default_path(Some("/s"), Some("/h")),
            Some(PathBuf::from("/s/estx-tui/estx-tui.log"))
        );
        assert_eq!(
            default_path(Some("relative"), Some("/h")),
            Some(PathBuf::from("/h/.local/state/estx-tui/estx-tui.log"))
        );
        assert_eq!(
            default_path(None, Some("/h")),
            Some(PathBuf::from("/h/.local/state/estx-tui/estx-tui.log"))
        );
        assert_eq!(default_path(None, None), None);
    }

    #[test]
    fn created_private() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("state/estx-tui");
        private_dir(&dir)?;
        let path = dir.join("estx-tui.log");
        let mut f = RotatingFile::open(&path, MAX_BYTES)?;
        f.write_all(b"hello\n")?;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&path), 0o600);
        // An existing file left readable by others is narrowed.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        drop(open_private(&path)?);
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        private_dir(&dir)?;
        assert_eq!(mode(&dir), 0o700);
        Ok(())
    }

    /// Another user plants a symlink where the log goes: refused, and the
    /// file it points to is left alone.
    #[test]
    fn a_planted_symlink_is_refused() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let target = tmp.path().join("victim");
        std::fs::write(&target, "precious\n")?;
        let path = tmp.path().join("estx-tui.log");
        std::os::unix::fs::symlink(&target, &path)?;
        assert!(open_private(&path).is_err());
        assert!(RotatingFile::open(&path, MAX_BYTES).is_err());
        assert_eq!(std::fs::read_to_string(&target)?, "precious\n");
        let dir_link = tmp.path().join("linked-dir");
        std::os::unix::fs::symlink(tmp.path(), &dir_link)?;
        assert!(private_dir(&dir_link).is_err());
        Ok(())
    }

    #[test]
    fn rotated_past_the_cap_keeping_a_few() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("l.log");
        let mut f = RotatingFile::open(&path, 10)?;
        for i in 0..6 {
            f.write_all(format!("line {i}..\n").as_bytes())?;
        }
        f.flush()?;
        assert_eq!(std::fs::read_to_string(&path)?, "line 5..\n");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("l.log.1"))?,
            "line 4..\n"
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("l.log.3"))?,
            "line 2..\n"
        );
        assert!(!tmp.path().join("l.log.4").exists());
        assert_eq!(mode(&tmp.path().join("l.log.1")), 0o600);
        Ok(())
    }
}
