//! Which `osmem-server` the demo and the tests run, and where its private
//! install lives: a leaf that both the installer and the error messages
//! (which tell a user how to install it by hand) read.

use std::path::PathBuf;

/// Environment variable naming the `osmem-server` binary explicitly.
pub const BIN_ENV: &str = "OSMEM_SERVER_BIN";

/// The server version this crate is tested against.
pub const VERSION: &str = "0.1.6";

/// The pip requirement installed on first use.
pub const REQUIREMENT: &str = "osmem-server==0.1.6";

/// Where the private install lives: `<cache>/estx-tui/osmem-server-<VERSION>`,
/// `<cache>` being `$XDG_CACHE_HOME` or `~/.cache`. `None` when neither is set.
pub fn install_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(
        cache
            .join("estx-tui")
            .join(format!("osmem-server-{VERSION}")),
    )
}

/// The command that installs the server where `find_or_install` looks for
/// it, for messages that tell a user how to do it by hand.
pub fn install_command() -> String {
    let dir = install_dir().map_or_else(
        || "~/.cache/estx-tui/osmem-server-0.1.6".to_string(),
        |d| d.display().to_string(),
    );
    format!("python3 -m pip install --target {dir} {REQUIREMENT}")
}
