//! Verdicts over evidence (issue 30): pure functions the dashboard, `check`,
//! the exporter and `list --json` share, each over typed evidence read
//! within the poll's budget. [`healing`] says whether the application's
//! own recovery is working; [`evidence`] reads what it judges on.

pub mod evidence;
pub mod healing;

pub use evidence::{HealingSearch, OperatorMark};
pub use healing::{
    judge, rejudge, AppHeartbeat, Healing, HealingEvidence, HealingSign, Previous, Recoveries,
    Unknown,
};
