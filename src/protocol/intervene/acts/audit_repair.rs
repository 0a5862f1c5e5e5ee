//! The audit's repair of dangling entries: its target (the account of the
//! finding acted on, if any; the repair covers every account), its plan
//! and preview on a fresh audit, its run, and its result ([`Repaired`]).

use super::super::{Done, PlanStep, Planned, Report, Started};
use super::{Act, Runs, Subject};
use crate::error::Result;
use crate::protocol::audit::AuditReport;
use crate::protocol::trail::{ActOutcome, ActionKind, Ending, TrailStep};
use crate::protocol::Protocol;

/// The audit's repair of dangling entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRepair {
    /// The account of the finding acted on.
    pub account: Option<String>,
    /// The total of all balances the audit is to expect, if known.
    pub expect_total: Option<i64>,
    /// Audit a partial view (some shards failed).
    pub allow_partial: bool,
}

impl Act for AuditRepair {
    type Plan = AuditPlan;

    fn action(&self) -> ActionKind {
        ActionKind::AuditRepair
    }

    fn title(&self) -> &'static str {
        "Repair the dangling entries of"
    }

    fn subject(&self) -> Subject {
        Subject::Account(self.account.clone())
    }

    async fn plan(&self, _: &Protocol) -> Result<AuditPlan> {
        Ok(AuditPlan {
            account: self.account.clone(),
            report: None,
        })
    }

    async fn preview(&self, p: &Protocol) -> Result<AuditPlan> {
        let report = p.audit(None, false).await?;
        Ok(AuditPlan {
            account: self.account.clone(),
            report: Some(Box::new(report)),
        })
    }
}

impl Runs for AuditRepair {
    type Result = Repaired;

    async fn run(started: Started<AuditRepair>, p: &Protocol) -> Done<Repaired> {
        let a = &started.intervention().act;
        let repaired = p.audit_with(a.expect_total, true, a.allow_partial).await;
        started.finish(p, repaired).await
    }
}

/// The audit's repair: an audit, then the repairs that are safe; previewed,
/// on a fresh audit (what its repair would address and the money it moves).
#[derive(Debug, Clone)]
pub struct AuditPlan {
    /// The account of the finding acted on.
    pub account: Option<String>,
    /// The fresh audit, when previewed (`None`: planned for the record,
    /// which does not run the audit twice).
    pub report: Option<Box<AuditReport>>,
}

impl AuditPlan {
    /// The balance change per account (non-zero only) of the repairs the
    /// previewed audit found unambiguous: what the repair would move.
    pub fn balance_change(&self) -> Vec<(String, i64)> {
        self.report.as_deref().map_or_else(Vec::new, repair_change)
    }
}

impl Planned for AuditPlan {
    fn transactions(&self) -> Vec<String> {
        Vec::new()
    }

    fn targets(&self) -> Vec<String> {
        self.account.iter().cloned().collect()
    }

    fn steps(&self) -> Vec<PlanStep> {
        vec![PlanStep::Audit, PlanStep::Repair]
    }
}

/// The balance change per account (non-zero only) of the repairs `report`
/// found unambiguous: what the audit's repair would move.
fn repair_change(report: &AuditReport) -> Vec<(String, i64)> {
    let mut by: std::collections::BTreeMap<&str, i64> = Default::default();
    for e in &report.repair_effect {
        *by.entry(e.account.as_str()).or_default() += e.delta;
    }
    by.into_iter()
        .filter(|(_, d)| *d != 0)
        .map(|(a, d)| (a.to_string(), d))
        .collect()
}

/// What the audit's repair did: the audit after its repairs, or why it
/// failed.
pub type Repaired = Result<AuditReport>;

impl Report for Repaired {
    fn ending(&self, _: &Protocol, _: &dyn Planned) -> Ending {
        match self {
            Ok(r) => {
                let outcome = if r.repairs.is_empty() {
                    ActOutcome::NothingToDo
                } else {
                    ActOutcome::Completed
                };
                let summary = format!(
                    "{} repairs, {} findings left",
                    r.repairs.len(),
                    r.findings.len()
                );
                let steps = r.repair_steps.iter().map(TrailStep::from).collect();
                Ending::of(outcome, summary, steps)
            }
            Err(e) => Ending::of(ActOutcome::Failed, format!("failed: {e}"), Vec::new()),
        }
    }

    fn ok(&self, _: ActOutcome) -> bool {
        self.is_ok()
    }

    fn what(&self) -> String {
        match self {
            Err(e) => format!("failed: {e}"),
            Ok(r) if r.repairs.is_empty() => "nothing was repairable".into(),
            Ok(r) => format!("repaired: {}", r.repairs.join("; ")),
        }
    }
}
