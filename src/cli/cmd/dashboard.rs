//! No command: the dashboard, with the same connection options. It opens
//! even when the cluster is unreachable (and keeps retrying).

use crate::cli::context;
use crate::cli::exit::{self, TERMINAL};
use crate::cli::global::{DashboardArgs, GlobalArgs};
use crate::cli::output::{err, fail};
use crate::dashboard::{DashboardOptions, Ended};
use crate::protocol::read::poll::DEFAULT_CAP;

/// Runs the dashboard until the operator quits (0; 5 when quitting stopped
/// a bulk run that left transactions) or a signal stops it (128 + its
/// number); 4 when the terminal fails.
pub async fn run(g: &GlobalArgs, d: &DashboardArgs) -> i32 {
    let p = match context::protocol(g) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let opts = DashboardOptions {
        interval: d.interval,
        read_only: d.is_read_only(),
        cap: DEFAULT_CAP,
        profile: g.resolved.name.clone(),
        mark: g.resolved.mark.clone(),
        expect_total: d.expect_total,
        theme: d.theme(),
        keys: d.keys.clone(),
    };
    match crate::dashboard::run(p, opts).await {
        Ok(Ended::Quit) => exit::DONE,
        Ok(Ended::RunStopped) => exit::STOPPED,
        Ok(Ended::Signal(signal)) => signal.exit_code(),
        Err(e) => {
            err(format_args!("terminal error: {e}"));
            TERMINAL
        }
    }
}
