//! Starting an act from the command line: `--reason`, and starting each act
//! through [`crate::protocol::intervene`] (which records it), with the
//! refusals printed and turned into exit codes. The commands call
//! [`start`], then run the act and pass its [`Done`] to [`recorded`]; a
//! refusal here means nothing was written at all.

use crate::cli::exit::{REFUSED, REFUSED_WHOLE, USAGE};
use crate::cli::output::{err, fail};
use crate::protocol::intervene::{
    self, Act, ActRefusal, Choices, Done, Intervention, NotStarted, Report, Started,
};
use crate::protocol::trail::Interface;
use crate::protocol::Protocol;
use clap::Args;

/// `--reason`, shared by every command that writes.
#[derive(Debug, Clone, Default, Args)]
pub struct ReasonArgs {
    /// Why you intervene, recorded in the audit trail (required for
    /// rollbacks and forced or bulk actions).
    #[arg(long, env = "ESTX_REASON", value_name = "TEXT")]
    pub reason: Option<String>,

    /// On a profile marked `production = true`: confirms a bulk act by its
    /// count of transactions (as `--dry-run` prints it) or by the profile's
    /// name, a forced act by the profile's name. Without it such acts are
    /// refused before anything is written.
    #[arg(long, value_name = "COUNT|PROFILE")]
    pub confirm: Option<String>,
}

impl ReasonArgs {
    /// The operator's choices from `interface` with `--reason` and `--confirm`.
    pub fn choices(&self) -> Choices {
        Choices::new(Interface::Cli, self.reason.clone()).confirmed(self.confirm.clone())
    }
}

/// Starts `act` from the command line with `force` and `--reason`: checks
/// the reason, opens the trail, plans and writes the unfinished record.
/// `Err` carries the exit code after the refusal was printed; nothing was
/// written then.
pub async fn start<A: Act>(
    p: &Protocol,
    act: A,
    force: bool,
    why: &ReasonArgs,
) -> Result<Started<A>, i32> {
    let choices = why.choices().forced(force);
    intervene::start(p, Intervention::new(act, choices))
        .await
        .map_err(|n| not_started_code(&n))
}

/// Prints why an act did not start; returns its exit code.
pub fn not_started_code(n: &NotStarted) -> i32 {
    match n {
        NotStarted::Refused(r @ ActRefusal::ReasonMissing { .. }) => {
            err(format_args!(
                "refused: {r}: pass --reason TEXT (or set ESTX_REASON); nothing was done"
            ));
            USAGE
        }
        NotStarted::Refused(r @ ActRefusal::Unconfirmed(g)) => {
            let by_count = g
                .count
                .map(|n| format!("--confirm {n} or "))
                .unwrap_or_default();
            err(format_args!(
                "refused: {r}: pass {by_count}--confirm {}; nothing was done",
                g.profile
            ));
            USAGE
        }
        NotStarted::Refused(
            r @ (ActRefusal::NeedsPlan(_)
            | ActRefusal::OwnPlan { .. }
            | ActRefusal::ResumeNeedsPlan { .. }),
        ) => {
            err(format_args!("refused: {r}; nothing was done"));
            REFUSED_WHOLE
        }
        NotStarted::Refused(r) => {
            err(format_args!("refused: {r}; nothing was done"));
            REFUSED
        }
        NotStarted::Plan(e) | NotStarted::Trail(e) => fail(e),
        NotStarted::Record(e) => {
            err("cannot write the audit record; nothing was done");
            fail(e)
        }
    }
}

/// The exit code of a performed act: `code`, or 3 when its record could
/// not be completed (the act itself ran: said on stderr).
pub fn recorded<R: Report>(done: &Done<R>, index: &str, code: i32) -> i32 {
    match &done.record_error {
        None => code,
        Some(e) => {
            err(format_args!(
                "the intervention ran, but its audit record `{}` in `{index}` could not be \
                 completed ({e}); it stays marked unfinished",
                done.record
            ));
            code.max(3)
        }
    }
}
