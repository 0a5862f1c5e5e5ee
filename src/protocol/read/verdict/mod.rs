//! Verdicts over evidence (issue 30): pure functions the dashboard, `check`,
//! the exporter and `list --json` share, each over typed evidence read
//! within the poll's budget. [`healing`] says whether the application's
//! own recovery is working; [`cause`] why a stuck transaction (or a
//! by-cause group) is stuck and which act is safe for it; [`evidence`]
//! reads what the healing verdict judges on.

pub mod cause;
pub mod evidence;
pub mod healing;
pub mod runbooks;

pub use cause::{
    stuck_by_account, Cause, CauseEvidence, CauseKind, DeadBy, Refusal, Runbooks, SafeAct,
    UnknownCause, HOT_ACCOUNT,
};
pub use evidence::{HealingSearch, OperatorMark};
pub use healing::{
    judge, rejudge, AppHeartbeat, Healing, HealingEvidence, HealingSign, Previous, Recoveries,
    Unknown,
};
