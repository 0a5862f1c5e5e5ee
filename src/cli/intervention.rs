//! The headless side of the operator audit trail: `--reason`, refusing
//! writes under `--read-only`, and recording each intervention (written
//! before the first step, completed after the last) through
//! [`crate::protocol::trail`]. The commands call [`begin`] and then
//! [`Recording::finish`]; a refusal here means nothing was written at all.

use super::args::{Cli, Command, ReleaseLockArgs};
use super::output::{err, fail};
use super::EXIT_USAGE;
use crate::error::Error;
use crate::protocol::audit::AuditReport;
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::trail::run::procedure_intervention;
use crate::protocol::trail::{
    release_outcome, ActionKind, Interface, Intervention, Outcome, RecordId, Trail, TrailStep,
};
use crate::protocol::{Procedure, ProcedureReport, Protocol, Verdict};
use clap::Args;

/// Exit code of an intervention refused before anything was written.
pub const EXIT_REFUSED: i32 = super::exit::REFUSED;

/// `--reason`, shared by every command that writes.
#[derive(Debug, Clone, Default, Args)]
pub struct ReasonArgs {
    /// Why you intervene, recorded in the audit trail (required for
    /// rollbacks and forced or bulk actions).
    #[arg(long, env = "ESTX_REASON", value_name = "TEXT")]
    pub reason: Option<String>,
}

/// Whether `command` writes to the cluster (and so is refused read-only).
pub fn writes(command: &Command) -> bool {
    match command {
        Command::Init(_)
        | Command::Seed(_)
        | Command::Transfer(_)
        | Command::ReleaseLock(_)
        | Command::Reverse(_) => true,
        // A dry run reads and decides only.
        Command::Rollback(a) => !a.select.dry_run,
        Command::Recover(a) => !a.select.dry_run,
        Command::Audit(a) => a.repair,
        _ => false,
    }
}

/// Refuses (exit 1, nothing written, no audit record) a writing command
/// under `--read-only` or a read-only profile.
pub fn refuse_if_read_only(cli: &Cli, command: &Command) -> Option<i32> {
    if !cli.dashboard.is_read_only() || !writes(command) {
        return None;
    }
    let why = match &cli.global.resolved.name {
        Some(name) if cli.global.resolved.production => {
            format!("profile `{name}` is production, so read-only")
        }
        Some(name) => format!("read-only (profile `{name}` or --read-only)"),
        None => "read-only (--read-only / ESTX_READ_ONLY)".to_string(),
    };
    err(format_args!(
        "refused: {why}; nothing was written. Pass --read-only=false to intervene."
    ));
    Some(EXIT_REFUSED)
}

/// A written, unfinished audit record of a running intervention.
#[derive(Debug)]
pub struct Recording {
    trail: Trail,
    id: RecordId,
}

/// Checks the reason, opens the trail (refusing when the audit index is
/// missing) and writes the unfinished record. `Err` carries the exit code
/// after the refusal was printed; nothing was written then.
pub async fn begin(p: &Protocol, mut i: Intervention, why: &ReasonArgs) -> Result<Recording, i32> {
    i.reason = why.reason.clone();
    if let Some(refusal) = i.missing_reason() {
        err(format_args!(
            "refused: {refusal}: pass --reason TEXT (or set ESTX_REASON); nothing was done"
        ));
        return Err(EXIT_USAGE);
    }
    let trail = match Trail::open(p).await {
        Ok(t) => t,
        Err(Error::IndexMissing(index)) => {
            err(format_args!(
                "refused: the audit index `{index}` does not exist, so the intervention \
                 cannot be recorded: run `estx-tui init` first; nothing was done"
            ));
            return Err(EXIT_REFUSED);
        }
        Err(e) => return Err(fail(&e)),
    };
    match trail.begin(&i).await {
        Ok(id) => {
            tracing::info!(record = %id, action = %i.action, operator = %trail.operator(), "audit record written");
            Ok(Recording { trail, id })
        }
        Err(e) => {
            err("cannot write the audit record; nothing was done");
            Err(fail(&e))
        }
    }
}

/// [`begin`] for a rollback or recovery of one transaction, with the plan
/// as previewed from the transaction's current state.
pub async fn begin_procedure(
    p: &Protocol,
    procedure: Procedure,
    id: &str,
    force: bool,
    why: &ReasonArgs,
) -> Result<Recording, i32> {
    let i = procedure_intervention(p, procedure, id, force, Interface::Cli).await;
    begin(p, i, why).await
}

/// [`begin`] for `release-lock`: the lock's owner (or `--txn`) is the
/// transaction the record is filed under; a lock's record names its holder
/// ([`Intervention::lock_release`]).
pub async fn begin_release(p: &Protocol, a: &ReleaseLockArgs) -> Result<Recording, i32> {
    if let Some(resource) = &a.resource {
        let view = p.lock_view(resource).await.ok().flatten();
        let i = Intervention::lock_release(resource, view.as_ref(), a.force, Interface::Cli);
        return begin(p, i, &a.why).await;
    }
    let mut i = Intervention::new(
        ActionKind::ReleaseLock,
        a.txn.iter().cloned().collect(),
        Interface::Cli,
    );
    i.forced = a.force;
    i.plan = vec!["release lock".into()];
    begin(p, i, &a.why).await
}

/// [`begin`] for `audit --repair`.
pub async fn begin_repair(p: &Protocol, why: &ReasonArgs) -> Result<Recording, i32> {
    let mut i = Intervention::new(ActionKind::AuditRepair, vec![], Interface::Cli);
    i.plan = vec!["audit".into(), "repair what is safe".into()];
    begin(p, i, why).await
}

impl Recording {
    /// Completes the record of a lock release.
    pub async fn finish_release(
        self,
        p: &Protocol,
        a: &ReleaseLockArgs,
        outcomes: &[(String, ReleaseOutcome)],
        code: i32,
    ) -> i32 {
        let locks = &p.config().indices.locks;
        let txn = a.txn.clone().unwrap_or_default();
        let steps: Vec<TrailStep> = outcomes
            .iter()
            .map(|(r, o)| TrailStep::release(locks, &txn, r, o))
            .collect();
        let (outcome, summary) = release_outcome(outcomes, code != 0 && outcomes.is_empty());
        self.finish(outcome, &summary, steps, code).await
    }

    /// Completes the record of `audit --repair`.
    pub async fn finish_repair(self, result: &crate::error::Result<AuditReport>, code: i32) -> i32 {
        match result {
            Ok(r) => {
                let steps: Vec<TrailStep> =
                    r.repairs.iter().map(|x| TrailStep::repair(x)).collect();
                let outcome = if steps.is_empty() {
                    Outcome::NothingToDo
                } else {
                    Outcome::Completed
                };
                let summary = format!(
                    "{} repairs, {} findings left",
                    r.repairs.len(),
                    r.findings.len()
                );
                self.finish(outcome, &summary, steps, code).await
            }
            Err(e) => {
                let summary = format!("failed: {e}");
                self.finish(Outcome::Failed, &summary, vec![], code).await
            }
        }
    }

    /// Completes the record; returns `code`, or 3 when the record could not
    /// be completed (the intervention itself ran: said on stderr).
    pub async fn finish(
        self,
        outcome: Outcome,
        summary: &str,
        steps: Vec<TrailStep>,
        code: i32,
    ) -> i32 {
        match self.trail.finish(&self.id, outcome, summary, steps).await {
            Ok(()) => code,
            Err(e) => {
                err(format_args!(
                    "the intervention ran, but its audit record `{}` in `{}` could not be \
                     completed ({e}); it stays marked unfinished",
                    self.id,
                    self.trail.index()
                ));
                code.max(3)
            }
        }
    }

    /// Completes the record of one procedure from its report.
    pub async fn finish_report(self, report: &ProcedureReport, code: i32) -> i32 {
        let steps = report.steps.iter().map(TrailStep::from).collect();
        let outcome = Outcome::from(&report.verdict);
        self.finish(outcome, &report.verdict.to_string(), steps, code)
            .await
    }

    /// Completes the record of many procedures (the worst outcome wins).
    pub async fn finish_batch(self, reports: &[ProcedureReport], summary: &str, code: i32) -> i32 {
        let steps = reports
            .iter()
            .flat_map(|r| r.steps.iter().map(TrailStep::from))
            .collect();
        let outcome = worst(reports.iter().map(|r| &r.verdict));
        self.finish(outcome, summary, steps, code).await
    }
}

/// The worst outcome of many verdicts: failed, stopped, refused, completed,
/// nothing to do (none at all is nothing to do).
pub fn worst<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> Outcome {
    let rank = |o: Outcome| match o {
        Outcome::NothingToDo => 0,
        Outcome::Completed => 1,
        Outcome::Refused => 2,
        Outcome::Stopped => 3,
        Outcome::Failed => 4,
    };
    verdicts
        .map(Outcome::from)
        .max_by_key(|o| rank(*o))
        .unwrap_or(Outcome::NothingToDo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TxnState;

    #[test]
    fn the_worst_outcome_wins() {
        let v = [
            Verdict::Completed(TxnState::Finished),
            Verdict::Stopped("x".into()),
            Verdict::NothingToDo(TxnState::Finished),
        ];
        assert_eq!(worst(v.iter()), Outcome::Stopped);
        assert_eq!(worst([].iter()), Outcome::NothingToDo);
    }
}
