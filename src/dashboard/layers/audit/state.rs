//! The invariant audit as the dashboard knows it: shared (on `App`, read
//! by every layer through the layers' contract), apart from the audit
//! pane's own state and keys (`audit/mod.rs`), which import that contract.

use crate::dashboard::load::Load;
use crate::protocol::audit::pace::AuditCost;
use crate::protocol::audit::{AuditReport, Finding};
use chrono::{DateTime, Utc};

/// The invariant audit as the dashboard knows it (shared: on `App`).
#[derive(Debug, Clone, Default)]
pub struct AuditState {
    /// The last audit's report, or why it failed; kept on screen while
    /// the next one runs (one at a time).
    pub report: Load<Box<AuditReport>>,
    /// When the last audit was asked for.
    pub asked_at: Option<DateTime<Utc>>,
    /// What the last audit cost (requests, CPU, time): it sets the pace.
    pub cost: Option<AuditCost>,
    /// When the next background audit is due (paced by its cost, see
    /// `protocol::audit::pace`); `None`: at once.
    pub next_at: Option<DateTime<Utc>>,
}

impl AuditState {
    /// The findings of the last good report.
    pub fn findings(&self) -> &[Finding] {
        self.report.value().map_or(&[], |r| &r.findings)
    }
}
