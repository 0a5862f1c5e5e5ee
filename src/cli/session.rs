//! What every command that talks to the cluster goes through, around its
//! own `run`: the protocol handle built from the global options, the log
//! line naming the command, the refusal of a writing command under
//! `--read-only` (or a read-only profile), and after the run the warning
//! that our clock is off the cluster's.

use super::exit::REFUSED;
use super::global::{DashboardArgs, GlobalArgs};
use super::output::{err, fail};
use crate::protocol::intervene::{ActRefusal, ReadOnlyBy};
use crate::protocol::Protocol;
use std::fmt::Debug;
use std::future::Future;

/// One command's run against the cluster the global options name.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    global: &'a GlobalArgs,
    dashboard: &'a DashboardArgs,
    command: &'a dyn Debug,
    writes: bool,
}

impl<'a> Session<'a> {
    /// The session of `command` (logged as it is), which writes or not.
    pub fn new(
        global: &'a GlobalArgs,
        dashboard: &'a DashboardArgs,
        command: &'a dyn Debug,
        writes: bool,
    ) -> Session<'a> {
        Session {
            global,
            dashboard,
            command,
            writes,
        }
    }

    /// Builds the protocol handle and runs `command` with it; returns its
    /// exit code. Times are taken from the cluster's clock anyway: when ours
    /// is off, says so after the run.
    pub async fn run<F, Fut>(self, command: F) -> i32
    where
        F: FnOnce(Protocol) -> Fut,
        Fut: Future<Output = i32>,
    {
        let p = match super::context::protocol(self.global) {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        tracing::info!(command = ?self.command, "command");
        if let Some(code) = self.refuse_if_read_only() {
            return code;
        }
        let cluster = p.cluster().clone();
        let advice_on = p.clone();
        let code = command(p).await;
        super::missing::advise(&advice_on, self.global.resolved.name.as_deref()).await;
        if let Some(skew) = cluster.clock_skew() {
            err(format_args!("warning: {skew}"));
        }
        code
    }

    /// Refuses (exit 1, nothing written, no audit record) a writing command
    /// under `--read-only` or a read-only profile.
    fn refuse_if_read_only(&self) -> Option<i32> {
        if !self.dashboard.is_read_only() || !self.writes {
            return None;
        }
        let resolved = &self.global.resolved;
        let by = match &resolved.name {
            Some(name) if resolved.production => ReadOnlyBy::ProductionProfile(name.clone()),
            Some(name) => ReadOnlyBy::Profile(name.clone()),
            None => ReadOnlyBy::Setting,
        };
        err(format_args!(
            "refused: {}; nothing was written. Pass --read-only=false to intervene.",
            ActRefusal::ReadOnly(by)
        ));
        Some(REFUSED)
    }
}
