//! What the demo can fail with: the bundled server cannot be found or does
//! not start, the target cluster already holds data, or the cluster fails.

use super::package::install_command;
use std::path::PathBuf;
use thiserror::Error;

/// Everything `demo` and `seed` can fail with.
#[derive(Debug, Error)]
pub enum DemoError {
    /// No `osmem-server` binary was found and none could be installed; the
    /// message gives the install command.
    #[error(
        "osmem-server not found ({detail}); install it with `{}` or set OSMEM_SERVER_BIN",
        install_command()
    )]
    ServerNotFound {
        /// Where it was looked for, and what each place said.
        detail: String,
    },
    /// No `osmem-server` was found and installing it failed.
    #[error(
        "osmem-server not found ({looked}) and installing it failed: {reason}; install it \
         by hand with `{command}` or set OSMEM_SERVER_BIN=/path/to/osmem-server"
    )]
    ServerInstall {
        /// Where it was looked for before installing.
        looked: String,
        /// What the install said.
        reason: String,
        /// The install command to run by hand.
        command: String,
    },
    /// The binary was found but did not come up.
    #[error("osmem-server at {} did not start: {reason}{log}", bin.display())]
    ServerStart {
        /// The binary that was run.
        bin: PathBuf,
        /// What went wrong.
        reason: String,
        /// The tail of its log, prefixed with a newline (empty when none).
        log: String,
    },
    /// Seeding refused: the index already holds documents.
    #[error(
        "index `{index}` already holds {count} document(s); seeding would mix the demo \
         with existing data (use `seed --force` to add to it anyway)"
    )]
    NotEmpty {
        /// The index that is not empty.
        index: String,
        /// How many documents it holds.
        count: u64,
    },
    /// Seeding could not build the mess it meant to (a step was refused, or
    /// a document changed under it).
    #[error("seeding failed: {0}")]
    Seed(String),
    /// The cluster failed.
    #[error(transparent)]
    Cluster(#[from] crate::Error),
}
