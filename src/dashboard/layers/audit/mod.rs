//! The audit pane (`A`), the layer: the selected finding, and what the
//! keys do while the pane is open — move among the findings, act on one
//! (each repair through the same confirmation dialog as every other act),
//! audit now, close. The report itself ([`AuditState`]) is shared: the
//! background audit runs whether the pane is open or not
//! (`dashboard::audit` paces it), and the header counts its findings.

pub mod draw;
mod state;

use super::{hint, Context, Effect, Hint, Outcome};
use crate::dashboard::keymap::{Keymap, Op};
use crate::dashboard::log::LogLevel;
use crate::protocol::audit::FindingKind;
use crate::protocol::intervene::{AuditRepair, ReleaseLock};
use crossterm::event::KeyEvent;
pub use state::AuditState;

/// The audit pane's own state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Audit {
    /// Selected finding.
    pub cursor: usize,
}

impl Audit {
    /// A key while the pane is on top.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        match cx.keys.main_op(key.code) {
            Some(op) => self.on_op(cx.audit, op),
            None => Outcome::stay(),
        }
    }

    /// What `op` does on the pane (a key, or the mouse wheel).
    pub fn on_op(&mut self, audit: &AuditState, op: Op) -> Outcome {
        let last = audit.findings().len().saturating_sub(1);
        match op {
            Op::Down | Op::PageDown => self.cursor = (self.cursor + 1).min(last),
            Op::Up | Op::PageUp => self.cursor = self.cursor.saturating_sub(1),
            Op::Top => self.cursor = 0,
            Op::Bottom => self.cursor = last,
            Op::Refresh => return Outcome::with(Effect::AuditNow),
            Op::Open => return self.act_on_finding(audit),
            Op::Quit => return Outcome::with(Effect::Quit),
            _ => return Outcome::close(),
        }
        Outcome::stay()
    }

    /// A new report arrived: the cursor stays on a finding.
    pub fn clamp(&mut self, audit: &AuditState) {
        self.cursor = self.cursor.min(audit.findings().len().saturating_sub(1));
    }

    fn act_on_finding(&self, audit: &AuditState) -> Outcome {
        let Some(f) = audit.findings().get(self.cursor).cloned() else {
            return Outcome::stay();
        };
        match f.kind {
            FindingKind::StaleLock => Outcome::with(Effect::Confirm(ReleaseLock::new(f.id).into())),
            FindingKind::DanglingPending => {
                let repair = AuditRepair {
                    account: Some(f.id),
                    expect_total: None,
                    allow_partial: false,
                };
                Outcome::with(Effect::Confirm(repair.into()))
            }
            FindingKind::MalformedAccount => Outcome::with(Effect::ShowAccount(f.id)).closing(),
            FindingKind::MissingAccount
            | FindingKind::UnknownState
            | FindingKind::MalformedTransaction => Outcome::with(Effect::ShowTransaction {
                id: f.id,
                pinned: false,
            })
            .closing(),
            FindingKind::PartialLocks
            | FindingKind::TotalMismatch
            | FindingKind::UndatedTransaction => Outcome::with(Effect::Log(
                LogLevel::Info,
                format!("{}: {}", f.kind, f.detail),
            )),
        }
    }

    /// The key bar while the pane is on top.
    pub fn hints(keys: &Keymap) -> Vec<Hint> {
        let label = |op| keys.label(op);
        vec![
            (
                0,
                format!("{} {}", label(Op::Down), label(Op::Up)),
                "select".into(),
            ),
            hint(0, label(Op::Open), "act on it"),
            hint(0, label(Op::Refresh), "audit now"),
            hint(0, label(Op::Back), "close"),
        ]
    }
}
