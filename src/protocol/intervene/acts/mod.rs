//! Each operator act as its own type, one file each (after mini-redis's
//! `cmd/`): the act's target, how it is planned and previewed, how it runs
//! and its own result type. [`Act`] (in `act.rs`) is what every act implements;
//! [`AnyAct`] holds whichever act a front end was given and only forwards.
//!
//! Why a trait with an associated result (and not one enum matched by
//! role): a front end that builds a rollback gets a rollback's result
//! back (`Done<ProcedureReport>`), so it never re-matches what it already
//! knows; the recipe every act shares (reason, trail, record, guard) stays
//! written once, generic over the act, in `run.rs`. The enum remains for
//! the one place that holds an act chosen at run time (the dashboard's
//! dialog): its arms are generated from one list, so a new act is one
//! line there.

mod audit_repair;
mod recover;
mod release_lock;
mod release_locks_of;
mod reverse;
mod rollback;
mod transfer;

pub use audit_repair::{AuditRepair, Repaired};
pub use recover::Recover;
pub use release_lock::{ReleaseLock, Released};
pub use release_locks_of::ReleaseLocksOf;
pub use reverse::Reverse;
pub use rollback::Rollback;
pub use transfer::Transfer;

use super::act::{Act, Subject};
use super::{BulkAct, Done, Plan, Report, Started};
use crate::error::Result;
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

        impl Act for AnyAct {
            type Result = Box<dyn Report>;

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

            async fn plan(&self, p: &Protocol) -> Result<Plan> {
                match self {
                    $(AnyAct::$variant(a) => a.plan(p).await,)*
                }
            }

            async fn preview(&self, p: &Protocol) -> Result<Plan> {
                match self {
                    $(AnyAct::$variant(a) => a.preview(p).await,)*
                }
            }

            async fn run(started: Started<AnyAct>, p: &Protocol) -> Done<Box<dyn Report>> {
                match started.intervention().act.clone() {
                    $(AnyAct::$variant(a) => {
                        $variant::run(started.with_act(a), p).await.boxed()
                    })*
                }
            }
        }
    };
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
        let bulk = BulkAct {
            procedure: Procedure::Rollback,
            selection: Selection::default(),
            ids_source: None,
            allow_partial: false,
            runner: Runner::OneByOne(1),
        };
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
}
