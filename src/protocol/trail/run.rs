//! Recorded runs: a procedure or a lock release wrapped in its audit record
//! (check the reason, write the record, run, complete the record), for
//! callers that print nothing in between, like the dashboard's R/F/L.

use super::record::{
    plan_labels, release_outcome, ActionKind, Interface, Intervention, Outcome, TrailStep,
};
use super::{RecordId, Trail};
use crate::error::{Error, Result};
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::{Procedure, ProcedureReport, Protocol, RunLimits};

/// How a recorded run is made: the operator's choices the record keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// Override the recovery window / staleness check.
    pub force: bool,
    /// Why (required for rollbacks, forced and bulk runs).
    pub reason: Option<String>,
    /// Where the run was started from.
    pub interface: Interface,
    /// Whether it is one item of a bulk action (flags the record `bulk`,
    /// which makes the reason required).
    pub bulk: bool,
}

impl RunAs {
    /// A single (not bulk), unforced run from `interface` with `reason`.
    pub fn new(interface: Interface, reason: Option<String>) -> RunAs {
        RunAs {
            force: false,
            reason,
            interface,
            bulk: false,
        }
    }
}

/// What a recorded run did, and whether its record was completed.
#[derive(Debug)]
pub struct RecordedRun<T> {
    /// The run's own result.
    pub value: T,
    /// The audit record written before it.
    pub record: RecordId,
    /// Why the record could not be completed (it stays unfinished).
    pub record_error: Option<Error>,
}

/// The intervention a rollback or recovery of `id` is, with its plan as
/// previewed from the transaction's current state (empty when it cannot be
/// read: the procedure itself then says why it cannot run).
pub async fn procedure_intervention(
    p: &Protocol,
    procedure: Procedure,
    id: &str,
    force: bool,
    interface: Interface,
) -> Intervention {
    let action = match procedure {
        Procedure::Rollback => ActionKind::Rollback,
        Procedure::Recover => ActionKind::Recover,
    };
    let mut i = Intervention::new(action, vec![id.to_string()], interface);
    i.forced = force;
    if let Ok(Some((t, _))) = p.read_transaction(id).await {
        i.plan = plan_labels(procedure, t.state.as_ref());
    }
    i
}

impl Trail {
    /// Rolls back or recovers `id` as a recorded intervention. Refuses
    /// ([`Error::Invalid`], nothing written) when the reason is required
    /// and missing; fails when the record cannot be written (nothing run).
    pub async fn run_procedure(
        &self,
        p: &Protocol,
        procedure: Procedure,
        id: &str,
        how: RunAs,
    ) -> Result<RecordedRun<ProcedureReport>> {
        let force = how.force;
        let mut i = procedure_intervention(p, procedure, id, force, how.interface).await;
        i.reason = how.reason;
        i.bulk = how.bulk;
        if let Some(why) = i.missing_reason() {
            return Err(Error::Invalid(format!("{why}; nothing was done")));
        }
        let record = self.begin(&i).await?;
        let report = p
            .run_procedure(id, procedure, force, RunLimits::default())
            .await;
        let steps = report.steps.iter().map(TrailStep::from).collect();
        let record_error = self
            .finish(
                &record,
                Outcome::from(&report.verdict),
                &report.verdict.to_string(),
                steps,
            )
            .await
            .err();
        Ok(RecordedRun {
            value: report,
            record,
            record_error,
        })
    }

    /// Releases every lock of transaction `txn` as a recorded intervention
    /// (refusals and failures as in [`Trail::run_procedure`]).
    pub async fn run_release(
        &self,
        p: &Protocol,
        txn: &str,
        how: RunAs,
    ) -> Result<RecordedRun<Result<Vec<(String, ReleaseOutcome)>>>> {
        let force = how.force;
        let mut i = Intervention::new(
            ActionKind::ReleaseLock,
            vec![txn.to_string()],
            how.interface,
        );
        i.forced = force;
        i.reason = how.reason;
        i.bulk = how.bulk;
        i.plan = vec!["release lock".into()];
        if let Some(why) = i.missing_reason() {
            return Err(Error::Invalid(format!("{why}; nothing was done")));
        }
        let record = self.begin(&i).await?;
        let released = p.release_transaction_locks(txn, force).await;
        let locks = &p.config().indices.locks;
        let (outcomes, failed) = match &released {
            Ok(v) => (v.as_slice(), false),
            Err(_) => (&[][..], true),
        };
        let steps = outcomes
            .iter()
            .map(|(r, o)| TrailStep::release(locks, txn, r, o))
            .collect();
        let (outcome, mut summary) = release_outcome(outcomes, failed);
        if let Err(e) = &released {
            summary = format!("failed: {e}");
        }
        let record_error = self.finish(&record, outcome, &summary, steps).await.err();
        Ok(RecordedRun {
            value: released,
            record,
            record_error,
        })
    }
}
