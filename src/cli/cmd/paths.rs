//! `paths`: where the configuration, log and state files are for this
//! invocation (the flags and environment in force), and the cluster URL it
//! would talk to (a Cloud ID decoded), as `k9s info` does, so an operator
//! can find the log or the profiles without reading the docs.

use crate::cli::global::{GlobalArgs, LogTarget, NO_LOG};
use crate::cli::output::out;
use crate::cli::profile::config_path;
use crate::local_files;
use std::path::Path;

fn shown(p: Option<&Path>) -> String {
    match p {
        None => "(none: no $HOME)".into(),
        Some(p) if p.exists() => p.display().to_string(),
        Some(p) => format!("{} (not there yet)", p.display()),
    }
}

/// Prints one `name  path` line each; exit 0.
pub fn run(g: &GlobalArgs) -> i32 {
    let log = match g.log_target() {
        LogTarget::File(p) => shown(Some(&p)),
        LogTarget::Off => format!("(none: --log-file {NO_LOG})"),
        LogTarget::NoHome => shown(None),
    };
    let state = local_files::state_dir_from_env();
    let profile = g.resolved.name.as_deref().unwrap_or("(none)");
    out(format_args!("config   {}", shown(config_path().as_deref())));
    out(format_args!("profile  {profile}"));
    // The URL in force (a Cloud ID shows decoded here, without a request).
    out(format_args!("cluster  {}", g.url));
    out(format_args!("log      {log}"));
    out(format_args!("state    {}", shown(state.as_deref())));
    0
}
