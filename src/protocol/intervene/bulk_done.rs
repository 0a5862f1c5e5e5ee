//! What a bulk act did ([`BulkDone`]), counted (`report::Tally`), and the
//! one rule of the worst outcome over many verdicts.

use super::selection::LeftOut;
use super::{Planned, Report};
use crate::error::Error;
use crate::protocol::locks::SweptLock;
use crate::protocol::report::Tally;
use crate::protocol::trail::{ActOutcome, Ending, TrailStep};
use crate::protocol::{ProcedureReport, Protocol, Verdict};

/// What a bulk act did.
#[derive(Debug, Default)]
pub struct BulkDone {
    /// One report per transaction that ran, sorted by id.
    pub reports: Vec<ProcedureReport>,
    /// The transactions not started because the run was stopped.
    pub not_started: Vec<String>,
    /// Ids the selection named that were not acted on.
    pub left_out: Vec<LeftOut>,
    /// The locks the sweep released (or was refused).
    pub swept: Vec<SweptLock>,
    /// How the sweep's listing of locks was partial, if it was.
    pub locks_partial: Option<String>,
    /// Whether it swept abandoned locks (`recover --all-stuck`).
    pub sweep: bool,
    /// Who stopped it.
    pub stopped_by: Option<String>,
    /// Why it failed part-way (nothing ran, or the sweep failed).
    pub failed: Option<Error>,
    /// A resume some of whose transactions were refused as modified within
    /// the recovery window (none of them by the job itself, on its
    /// record's evidence): its record stays unfinished, and the resume can
    /// run from this time (the cluster's), when the window ends for all of
    /// them and the job is presumed dead.
    pub resumable_from: Option<chrono::DateTime<chrono::Utc>>,
}

fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

impl BulkDone {
    /// Its verdicts counted, with the transactions a stop left unstarted.
    pub fn tally(&self) -> Tally {
        Tally {
            not_started: self.not_started.len(),
            ..Tally::of(&self.reports)
        }
    }

    /// The record's summary.
    pub(super) fn summary(&self) -> String {
        let n = self.reports.len() + self.not_started.len();
        let mut s = format!(
            "{}: {}",
            plural(n, "selected transaction"),
            Tally::of(&self.reports)
        );
        if !self.left_out.is_empty() {
            s.push_str(&format!("; {} refused before reading", self.left_out.len()));
        }
        if let Some(by) = &self.stopped_by {
            s.push_str(&format!(
                "; stopped by {by}: {} not started",
                self.not_started.len()
            ));
        }
        if self.sweep {
            let partial = self
                .locks_partial
                .as_ref()
                .map(|d| format!(" (locks listing {d})"))
                .unwrap_or_default();
            s.push_str(&format!(
                "; {} stale on evidence released{partial}",
                plural(self.released(), "lock")
            ));
        }
        match &self.failed {
            Some(e) if self.reports.is_empty() => format!("failed: {e}"),
            Some(e) => format!("ran {}, then failed: {e}", self.reports.len()),
            None => s,
        }
    }

    /// The transactions a stop left: not started, then stopped part-way
    /// (what a stopped run writes for `--ids-from`).
    pub fn left(&self) -> Vec<String> {
        self.not_started
            .iter()
            .cloned()
            .chain(
                self.reports
                    .iter()
                    .filter(|r| matches!(r.verdict, Verdict::Stopped(_)))
                    .map(|r| r.txn.clone()),
            )
            .collect()
    }

    /// Locks the sweep released.
    pub fn released(&self) -> usize {
        self.swept.iter().filter(|s| s.outcome.released()).count()
    }

    /// The record's outcome: the worst verdict, stopped when some never
    /// started, refused when ids were left out.
    pub(super) fn outcome(&self) -> ActOutcome {
        if self.failed.is_some() {
            return ActOutcome::Failed;
        }
        match ActOutcome::worst(self.reports.iter().map(|r| &r.verdict)) {
            _ if !self.not_started.is_empty() => ActOutcome::Stopped,
            ActOutcome::NothingToDo if self.released() > 0 => ActOutcome::Completed,
            ActOutcome::NothingToDo | ActOutcome::Completed if !self.left_out.is_empty() => {
                ActOutcome::Refused
            }
            o => o,
        }
    }

    /// The record's steps: every procedure's, then each lock swept.
    pub(super) fn steps(&self, p: &Protocol) -> Vec<TrailStep> {
        let locks = &p.config().indices.locks;
        self.reports
            .iter()
            .flat_map(|r| r.steps.iter().map(TrailStep::from))
            .chain(self.swept.iter().map(|s| {
                let owner = s.view.info.owner.clone().unwrap_or_default();
                s.outcome.trail_step(locks, &owner, &s.view.info.resource)
            }))
            .collect()
    }
}

/// A bulk act's own result.
impl Report for BulkDone {
    fn ending(&self, p: &Protocol, _: &dyn Planned) -> Ending {
        Ending {
            outcome: self.outcome(),
            summary: self.summary(),
            counts: Some(self.tally()),
            steps: self.steps(p),
        }
    }

    fn ok(&self, outcome: ActOutcome) -> bool {
        matches!(outcome, ActOutcome::Completed | ActOutcome::NothingToDo)
    }

    fn what(&self) -> String {
        match &self.failed {
            Some(e) => format!("failed: {e}"),
            None => Tally::of(&self.reports).brief(),
        }
    }
}

impl ActOutcome {
    /// How bad it is, the one order of outcomes: nothing to do, completed,
    /// refused, failed, stopped part-way. A stop ranks above a failure
    /// because it leaves written work for recovery, where a failed
    /// procedure usually failed before writing (one that failed after
    /// writing is reported stopped part-way by the exit codes). The exit
    /// codes are ranked by this order too (`cli::exit::worst`).
    pub fn severity(self) -> u8 {
        match self {
            ActOutcome::NothingToDo => 0,
            ActOutcome::Completed => 1,
            ActOutcome::Refused => 2,
            ActOutcome::Failed => 3,
            ActOutcome::Stopped => 4,
        }
    }

    /// The worst outcome of many verdicts ([`ActOutcome::severity`]; none
    /// at all is nothing to do).
    pub fn worst<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> ActOutcome {
        verdicts
            .map(ActOutcome::from)
            .max_by_key(|o| o.severity())
            .unwrap_or(ActOutcome::NothingToDo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ProcedureRefusal, TxnState};

    fn report(v: Verdict) -> ProcedureReport {
        let mut r = ProcedureReport::new("t");
        r.verdict = v;
        r
    }

    #[test]
    fn tally_counts_each_verdict_and_the_worst_outcome_wins() {
        let t = Tally::of(&[
            report(Verdict::Completed(TxnState::Finished)),
            report(Verdict::Completed(TxnState::RolledBack)),
            report(Verdict::EndedElsewhere(TxnState::Finished)),
            report(Verdict::Refused(ProcedureRefusal::Committed)),
        ]);
        assert_eq!(
            t.to_string(),
            "2 completed, 1 done by another process, 0 nothing to do, 1 refused, 0 stopped, 0 failed"
        );
        let v = [
            Verdict::Completed(TxnState::Finished),
            Verdict::Stopped("x".into()),
            Verdict::NothingToDo(TxnState::Finished),
        ];
        assert_eq!(ActOutcome::worst(v.iter()), ActOutcome::Stopped);
        let failed = Verdict::Failed(Error::Unreachable("x".into()));
        let v = [failed, Verdict::Stopped("x".into())];
        assert_eq!(ActOutcome::worst(v.iter()), ActOutcome::Stopped);
        assert_eq!(ActOutcome::worst([].iter()), ActOutcome::NothingToDo);
    }
}
