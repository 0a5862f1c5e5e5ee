//! Each operator act as its own type, one file each (after mini-redis's
//! `cmd/`): the act's target, its own plan type and how it is planned and
//! previewed, how it runs and its own result type. [`Act`] and [`Runs`] (in
//! `act.rs`) are what every act implements; [`AnyAct`] holds whichever act
//! a front end was given and only forwards: its plan is [`AnyPlan`] (one
//! variant per act, holding that act's own plan), and it runs the act it
//! holds as that act's own type ([`Intervention::run_any`]), so a plan is
//! never matched with its act again.
//!
//! Why traits with an associated plan and result (and not one enum matched
//! by role): a front end that builds a rollback gets a rollback's plan and
//! result back (`ProcedurePlan`, `Done<ProcedureReport>`), so it never
//! probes what the act could not have set nor re-matches what it already
//! knows; the recipe every act shares (reason, trail, record, guard) stays
//! written once, generic over the act, in `run.rs`. The enums remain for
//! the one place that holds an act chosen at run time (the dashboard's
//! dialog): their arms are generated from one list, so a new act is one
//! line there (and one arm in [`AnyPlan::judged`] if its preview reads
//! documents to confirm).

mod ack;
mod audit_repair;
mod recover;
mod release_lock;
mod release_locks_of;
mod reverse;
mod rollback;
mod transfer;

pub use ack::{AckDirection, AckOutcome, AckPlan, Acked, Acknowledge};
pub use audit_repair::{AuditPlan, AuditRepair, Repaired};
pub use recover::Recover;
pub use release_lock::{LockPlan, ReleaseLock, Released};
pub use release_locks_of::{LocksOfActPlan, ReleaseLocksOf};
pub use reverse::Reverse;
pub use rollback::Rollback;
pub use transfer::{Transfer, TransferPlan};

use super::act::{Act, Intervention, Runs, Subject};
use super::plan::{LocksOfPlan, ProcedurePlan, TxnPlan};
use super::plan::{PlanStep, Planned};
use super::reverse_plan::{JudgedReversal, ReversalPlan};
use super::run::{run, NotStarted};
use super::{ActRefusal, BulkAct, Done, Report};
use crate::error::Result;
use crate::protocol::audit::AuditReport;
use crate::protocol::trail::ActionKind;
use crate::protocol::Protocol;

/// Declares [`AnyAct`], one variant per act type, and its forwarding.
macro_rules! any_act {
    ($($variant:ident),* $(,)?) => {
        /// Whichever act a front end holds (the dashboard's pending act):
        /// each variant is an act's own type, and every method forwards.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum AnyAct {
            $(
                #[doc = concat!("A [`", stringify!($variant), "`].")]
                $variant($variant),
            )*
        }

        $(impl From<$variant> for AnyAct {
            fn from(act: $variant) -> AnyAct {
                AnyAct::$variant(act)
            }
        })*

        /// Whichever act's plan (what [`AnyAct`] plans): each variant is
        /// the plan of the act of the same name, its own type.
        #[derive(Debug, Clone)]
        pub enum AnyPlan {
            $(
                #[doc = concat!("A [`", stringify!($variant), "`]'s plan.")]
                $variant(<$variant as Act>::Plan),
            )*
        }

        impl Planned for AnyPlan {
            fn transactions(&self) -> Vec<String> {
                match self {
                    $(AnyPlan::$variant(p) => p.transactions(),)*
                }
            }

            fn targets(&self) -> Vec<String> {
                match self {
                    $(AnyPlan::$variant(p) => p.targets(),)*
                }
            }

            fn steps(&self) -> Vec<PlanStep> {
                match self {
                    $(AnyPlan::$variant(p) => p.steps(),)*
                }
            }

            fn refusal(&self) -> Option<ActRefusal> {
                match self {
                    $(AnyPlan::$variant(p) => p.refusal(),)*
                }
            }
        }

        impl Act for AnyAct {
            type Plan = AnyPlan;

            fn action(&self) -> ActionKind {
                match self {
                    $(AnyAct::$variant(a) => a.action(),)*
                }
            }

            fn title(&self) -> &'static str {
                match self {
                    $(AnyAct::$variant(a) => a.title(),)*
                }
            }

            fn subject(&self) -> Subject {
                match self {
                    $(AnyAct::$variant(a) => a.subject(),)*
                }
            }

            fn destructive(&self) -> bool {
                match self {
                    $(AnyAct::$variant(a) => a.destructive(),)*
                }
            }

            fn reports_on(&self, txn: &str) -> bool {
                match self {
                    $(AnyAct::$variant(a) => a.reports_on(txn),)*
                }
            }

            fn is_bulk(&self) -> bool {
                match self {
                    $(AnyAct::$variant(a) => a.is_bulk(),)*
                }
            }

            fn updates_documents(&self) -> bool {
                match self {
                    $(AnyAct::$variant(a) => a.updates_documents(),)*
                }
            }

            fn forced(&mut self, forced: bool) {
                match self {
                    $(AnyAct::$variant(a) => a.forced(forced),)*
                }
            }

            async fn plan(&self, p: &Protocol) -> Result<AnyPlan> {
                match self {
                    $(AnyAct::$variant(a) => a.plan(p).await.map(AnyPlan::$variant),)*
                }
            }

            async fn preview(&self, p: &Protocol) -> Result<AnyPlan> {
                match self {
                    $(AnyAct::$variant(a) => a.preview(p).await.map(AnyPlan::$variant),)*
                }
            }
        }

        impl Intervention<AnyAct> {
            /// Starts and runs the act it holds as that act's own type
            /// ([`super::run`]): planned, recorded and run as any act of
            /// that type is; its result held as any act's.
            pub async fn run_any(self, p: &Protocol) -> std::result::Result<Done<Box<dyn Report>>, NotStarted> {
                let choices = self.choices;
                match self.act {
                    $(AnyAct::$variant(a) => {
                        run(p, Intervention::new(a, choices)).await.map(Done::boxed)
                    })*
                }
            }
        }
    };
}

/// What a previewed plan was judged on, by act: what a front end shows
/// and confirms beside the plan. `None` from [`AnyPlan::judged`]: nothing
/// was read (the subject does not exist, or the act re-reads nothing).
#[derive(Debug, Clone, Copy)]
pub enum JudgedOn<'a> {
    /// A rollback's or recovery's plan on its transaction's documents.
    Procedure(&'a TxnPlan),
    /// The release of a transaction's locks, on its documents.
    LocksOf(&'a LocksOfPlan),
    /// The release of one lock, on the lock as judged now.
    Lock(&'a LockPlan),
    /// The audit's repair, on a fresh audit.
    Audit(&'a AuditReport),
    /// A reversal, on the original and whatever sits under its
    /// reversal's id.
    Reversal(&'a JudgedReversal),
    /// An ack or unack, on the transactions selected and their acks now.
    Acks(&'a AckPlan),
}

impl AnyPlan {
    /// What it was judged on, if anything was read.
    pub fn judged(&self) -> Option<JudgedOn<'_>> {
        match self {
            AnyPlan::Rollback(p) | AnyPlan::Recover(p) => match p {
                ProcedurePlan::Judged(t) => Some(JudgedOn::Procedure(t)),
                ProcedurePlan::Missing(_) | ProcedurePlan::Unread(_) => None,
            },
            AnyPlan::ReleaseLocksOf(p) => match p {
                LocksOfActPlan::Judged(l) => Some(JudgedOn::LocksOf(l)),
                LocksOfActPlan::Missing(_) | LocksOfActPlan::Unread(_) => None,
            },
            AnyPlan::ReleaseLock(l) => Some(JudgedOn::Lock(l)),
            AnyPlan::AuditRepair(a) => a.report.as_deref().map(JudgedOn::Audit),
            AnyPlan::Reverse(p) => match p {
                ReversalPlan::Judged(j) => Some(JudgedOn::Reversal(j)),
                ReversalPlan::Missing(_) | ReversalPlan::Unread(_) => None,
            },
            AnyPlan::Acknowledge(a) => Some(JudgedOn::Acks(a)),
            AnyPlan::Transfer(_) | AnyPlan::Bulk(_) => None,
        }
    }
}

/// The bulk act is declared beside its selection (`bulk.rs`).
type Bulk = BulkAct;

any_act!(
    Rollback,
    Recover,
    ReleaseLock,
    ReleaseLocksOf,
    AuditRepair,
    Reverse,
    Transfer,
    Bulk,
    Acknowledge,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::intervene::{Choices, Intervention, Runner, Selection};
    use crate::protocol::trail::Interface;
    use crate::protocol::Procedure;

    /// A bulk act held as any act (the dashboard's pending act) is still a
    /// bulk act to the trail's rule: it wants a reason, and records as one.
    #[test]
    fn any_act_forwards_what_the_trail_asks_of_the_act_it_holds() {
        let bulk = BulkAct::on(
            Procedure::Rollback,
            Selection::default(),
            Runner::OneByOne(1),
        );
        let held = Intervention::new(
            AnyAct::from(bulk.clone()),
            Choices::new(Interface::Dashboard, None),
        );
        assert!(held.is_bulk());
        assert_eq!(held.action(), ActionKind::Rollback);
        assert!(held.missing_reason().is_some());
        let one = AnyAct::from(ReleaseLock::new("A"));
        assert!(!one.is_bulk());
        assert_eq!(one.action(), ActionKind::ReleaseLock);
    }

    /// Each act's own plan, as the record stores it when nothing could be
    /// judged (the subject missing, or not read for the record): the
    /// transactions it is filed under, its targets, its step labels (the
    /// words old records hold) and the refusal an unforced run meets.
    #[test]
    fn each_plan_records_what_the_one_plan_of_optional_parts_recorded() {
        use crate::protocol::NewTransfer;
        let no_such = |id: &str| Some(ActRefusal::NoSuchTransaction(id.into()));
        let recorded = |p: &dyn Planned| (p.transactions(), p.targets(), p.labels(), p.refusal());
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cases: Vec<(AnyPlan, _)> = vec![
            (
                AnyPlan::Rollback(ProcedurePlan::Missing("t".into())),
                (s(&["t"]), s(&[]), s(&[]), no_such("t")),
            ),
            (
                AnyPlan::Recover(ProcedurePlan::Unread("t".into())),
                (s(&["t"]), s(&[]), s(&[]), None),
            ),
            (
                AnyPlan::ReleaseLocksOf(LocksOfActPlan::Missing("t".into())),
                (s(&["t"]), s(&[]), s(&["release lock"]), no_such("t")),
            ),
            (
                AnyPlan::ReleaseLocksOf(LocksOfActPlan::Unread("t".into())),
                (s(&["t"]), s(&[]), s(&["release lock"]), None),
            ),
            (
                AnyPlan::ReleaseLock(LockPlan::on_lock("A", None)),
                (s(&[]), s(&["A"]), s(&["release lock A"]), None),
            ),
            (
                AnyPlan::AuditRepair(AuditPlan {
                    account: Some("A".into()),
                    report: None,
                }),
                (
                    s(&[]),
                    s(&["A"]),
                    s(&["audit", "repair what is safe"]),
                    None,
                ),
            ),
            (
                AnyPlan::Reverse(ReversalPlan::Missing("t".into())),
                (s(&["t", "t-reversal"]), s(&[]), s(&[]), no_such("t")),
            ),
            (
                AnyPlan::Transfer(TransferPlan {
                    transfer: NewTransfer {
                        id: Some("t".into()),
                        src: "A".into(),
                        dest: "B".into(),
                        amount: 5,
                    },
                }),
                (
                    s(&["t"]),
                    s(&["A", "B"]),
                    crate::protocol::steps::plan(
                        Procedure::Recover,
                        &crate::protocol::TxnState::Created,
                    )
                    .unwrap()
                    .iter()
                    .map(|st| st.label().to_string())
                    .collect(),
                    None,
                ),
            ),
        ];
        for (plan, want) in cases {
            assert_eq!(recorded(&plan), want, "{plan:?}");
        }
    }
}
