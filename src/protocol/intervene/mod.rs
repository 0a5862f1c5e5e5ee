//! The one definition of each operator act. An [`Intervention`] is what
//! an operator asks for: an act (each its own type implementing [`Act`],
//! one file each in `acts/`: rollback, recovery, a lock release by
//! resource or by transaction, the audit's repair, a reversal, a transfer;
//! and [`BulkAct`], a rollback/recovery over a selection) on its typed
//! target, with the operator's [`Choices`] (force, reason, where from).
//!
//! - [`Intervention::plan`] plans it as the act's own plan type
//!   ([`Act::Plan`]: a rollback's [`ProcedurePlan`], a bulk act's
//!   [`SelectionPlan`], ...; [`AnyPlan`] for [`AnyAct`]), holding only what
//!   that act's plan has; every plan answers [`Planned`] (the steps, typed
//!   and written once, the transactions and targets, the [`ActRefusal`] an
//!   unforced run would meet). [`Intervention::preview`] makes the same plan
//!   with the documents it was judged on. The dashboard's dialog shows it,
//!   `--dry-run` prints it, and the audit record stores its step labels.
//! - [`start`] and [`Started::run`] (or [`run`], both at once) perform the
//!   act and record it: check the reason, open the trail, plan, write the
//!   unfinished record, run, fold the steps and the outcome into it, finish
//!   it. The result is a [`Done`] holding the act's own result type (its
//!   [`Report`]), with one sentence for people.
//!
//! - [`rehearse`] runs a bulk act on a copy of what it selects, in a
//!   cluster the caller started, and audits the copy (`--rehearse`).
//!
//! Front ends (the CLI and the dashboard) never build audit records or plan
//! lines: they build an `Intervention` and print what comes back, so the
//! same act leaves the same record whichever front end made it.

mod act;
mod acts;
mod balance_effect;
mod build;
mod bulk;
mod bulk_done;
mod bulk_preview;
mod bulk_run;
mod done;
mod guard;
mod plan;
mod plan_apply;
mod plan_file;
mod refusal;
mod rehearse;
mod reverse_plan;
mod run;
pub(crate) mod selection;

pub use crate::protocol::report::Tally;
pub use act::{
    reason_missing, Act, Choices, FromPlan, Intervention, Resumed, Runs, Started, Subject,
};
pub use acts::{
    AckDirection, AckOutcome, AckPlan, Acked, Acknowledge, AnyAct, AnyPlan, AuditPlan, AuditRepair,
    JudgedOn, LockPlan, LocksOfActPlan, Recover, ReleaseLock, ReleaseLocksOf, Released, Repaired,
    Reverse, Rollback, Transfer, TransferPlan,
};
pub use balance_effect::{BalanceEffect, EffectKind};
pub use build::unforced_checks;
pub use bulk::{BulkAct, Runner, SelectionPlan, Stop};
pub use bulk_done::BulkDone;
pub use bulk_preview::{ItemPlan, Verdicts, Would};
pub use done::{Done, Report};
pub use guard::Guard;
pub use plan::{
    LocksOfPlan, PlanStep, Planned, Previewed, ProcedurePlan, StepEffect, StepTarget, TxnPlan,
    SWEEP_STEP,
};
pub use plan_apply::{cluster_uuid, plan_file, prepare_apply, Applying, NotApplied};
pub use plan_file::{
    Current, Drift, Found, PlanBody, PlanFile, PlanHere, PlanIndices, PlanItem, PlanLeftOut,
    PlanOrigin, PlanRefusal, PlannedAs, PlannedProcedure, PLAN_FORMAT,
};
pub use refusal::{ActRefusal, ReadOnlyBy, RefusalKind};
pub use rehearse::{
    rehearse, BalanceSums, Copied, CopySet, Rehearsal, RehearsalError, REHEARSAL_REASON,
};
pub use reverse_plan::{JudgedReversal, ReversalPlan};
pub use run::{draft, job_reason, resume, run, start, NotStarted};
pub use selection::{BulkOptions, BulkRun, LeftOut, Selected, Selection};
